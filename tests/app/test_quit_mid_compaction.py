"""A quit while a compaction's summary is being written (round 22 left it untested): ctrl+q, or ctrl+c
twice, during a ctrl+k compaction or a background summary. The app exits in bounded time, the database
holds the state from before the compaction or the whole new one (``test_hangup.compaction_facts``: the
state's count, the committed checkpoints and the compaction rows move together, none left pending), and
the folder's newest session (``myrm -c``) opens again and answers. The summarizer is the provider
emulator, holding each summary until the test ends. SIGHUP at that moment: ``test_hangup``'s
``MID_COMPACTION`` example (a real process)."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from pathlib import Path
from typing import Any

import pytest

from myrm_tui.app.app import MyrmApp
from myrm_tui.app.screens.compact_preview import CompactPreviewScreen
from myrm_tui.cli import _continued, _session_problem
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.agent.test_summary_prep import is_summary_request, llm_summary, scripted, write_files
from tests.app.test_fork import route_holding_summaries
from tests.app.test_hangup import assert_old_or_whole, compaction_facts
from tests.helpers import make_app, send_turn, started, type_and_send, wait_until

QUITS = {"ctrl+q": ["ctrl+q"], "ctrl+c twice": ["ctrl+c", "ctrl+c"]}


async def _quit(pilot: Any, app: MyrmApp, keys: list[str]) -> None:
    for key in keys:
        await pilot.press(key)
    await wait_until(pilot, lambda: not app.is_running, 30)  # a bound, not a speed target


async def _resumes(emulator: ProviderEmulator, tmp_path: Path, workspace: Path, sid: str) -> None:
    """``myrm -c`` in the folder: its newest session is this one, free, and it opens and answers."""
    db = tmp_path / "tui.db"
    assert await asyncio.to_thread(_continued, db, workspace.resolve(), None) == sid
    assert await _session_problem(db, sid, workspace.resolve()) is None
    emulator.default = Reply(text="resumed fine")
    cli = {"model": "openai/gpt-4o-mini", "api_base": emulator.openai_base, "api_key": "sk-test"}
    again = MyrmApp(db, workspace, {**cli, "preheat": False, "keepalive": False}, session_id=sid)
    async with started(again) as pilot:
        assert again.controller.session is not None and again.controller.session.id == sid
        await send_turn(pilot, again, "are you still there?")
        assert emulator.accepted[-1].body["messages"][-1]["content"] == "are you still there?"
        await pilot.press("ctrl+q")


@pytest.mark.parametrize("quit_keys", list(QUITS))
async def test_a_quit_while_a_ctrl_k_summary_is_written_keeps_the_old_state_and_resumes(
    quit_keys: str,
    emulator: ProviderEmulator,
    tmp_path: Path,
    workspace: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    gate = threading.Event()

    emulator.default = route_holding_summaries(gate)
    app = make_app(emulator, tmp_path, workspace, context_window=8000, preheat=False, keepalive=False)
    try:
        with caplog.at_level(logging.ERROR, logger="myrm_tui"):
            async with started(app) as pilot:
                for i in range(3):
                    await send_turn(pilot, app, f"count {i}")
                assert app.controller.session is not None
                sid = app.controller.session.id
                db = tmp_path / "tui.db"
                before = compaction_facts(db, sid)
                asked = len(emulator.requests)
                await pilot.press("ctrl+k")
                await wait_until(pilot, lambda: isinstance(app.screen, CompactPreviewScreen))
                await pilot.press("enter")
                await wait_until(
                    pilot, lambda: any(is_summary_request(r.body) for r in emulator.requests[asked:])
                )
                assert app.compacting
                await _quit(pilot, app, QUITS[quit_keys])
        assert app.return_code == 0
        assert_old_or_whole(before, compaction_facts(db, sid))
        assert not [r for r in caplog.records if r.exc_info], [r.getMessage() for r in caplog.records]
    finally:
        gate.set()
    await _resumes(emulator, tmp_path, workspace, sid)


async def test_a_quit_while_a_background_summary_is_written_keeps_the_old_state_and_resumes(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path, caplog: pytest.LogCaptureFixture
) -> None:
    write_files(workspace)
    gate = threading.Event()
    log: list[str] = []
    emulator.default = scripted(40, Reply(text=json.dumps(llm_summary().to_json()), gate=gate), log)  # type: ignore[assignment]
    app = make_app(
        emulator,
        tmp_path,
        workspace,
        preheat=False,
        keepalive=False,
        summarizer_model="openai/gpt-4o-mini",
        context_window=16_000,
        max_steps=60,
    )
    try:
        with caplog.at_level(logging.ERROR, logger="myrm_tui"):
            async with started(app, size=(140, 42)) as pilot:
                assert app.controller.session is not None
                sid = app.controller.session.id
                db = tmp_path / "tui.db"
                await type_and_send(pilot, "read the files")
                await wait_until(pilot, lambda: "summary asked" in log, 60)
                agent = app.controller.agent
                assert agent is not None and agent.session.preparer.busy
                before = compaction_facts(db, sid)
                await _quit(pilot, app, ["ctrl+q"])
        assert app.return_code == 0
        assert_old_or_whole(before, compaction_facts(db, sid))
        assert not [r for r in caplog.records if r.exc_info], [r.getMessage() for r in caplog.records]
    finally:
        gate.set()
    await _resumes(emulator, tmp_path, workspace, sid)
