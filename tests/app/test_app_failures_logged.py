"""A failure the app shows the user is in the log with its traceback too (start-up here: an error the
user sees as one line, ``Could not start: TypeError: …``, is debugged from the log)."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from myrm_tui.app.app import MyrmApp
from myrm_tui.app.controller import Controller
from myrm_tui.testing.emulator import ProviderEmulator


class _Recorder(logging.Handler):
    """Keeps the records and wakes the test when one arrives (no polling)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []
        self.arrived = asyncio.Event()
        self.loop = loop

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)
        self.loop.call_soon_threadsafe(self.arrived.set)


async def test_a_start_up_failure_is_logged_with_its_traceback(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken(self: Controller) -> None:
        raise TypeError("ensure_agent() got an unexpected keyword argument 'x'")

    monkeypatch.setattr(Controller, "ensure_agent", broken)
    recorder = _Recorder(asyncio.get_running_loop())
    logger = logging.getLogger("myrm_tui.app")  # whichever module of the app logs it
    logger.addHandler(recorder)
    try:
        cli = {"model": "openai/gpt-4o-mini", "api_base": emulator.openai_base, "api_key": "sk-test"}
        app = MyrmApp(db_path=tmp_path / "tui.db", workspace=workspace, cli=cli)
        async with app.run_test():
            await asyncio.wait_for(recorder.arrived.wait(), 30)
    finally:
        logger.removeHandler(recorder)
    (record,) = recorder.records
    assert record.exc_info is not None and record.exc_info[0] is TypeError
    assert "unexpected keyword argument" in str(record.exc_info[1])
    assert not app.ready.is_set()
