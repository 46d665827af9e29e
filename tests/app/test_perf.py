"""docs/perf.md is written by the perf script: each mode replaces its own section and keeps the others."""

from __future__ import annotations

from pathlib import Path

import pytest

from myrm_tui.app.perf import DOC_HEAD, PHASE_NAMES, phases_of, write_section
from myrm_tui.testing.emulator import ProviderEmulator


def test_each_perf_mode_replaces_its_own_section_of_the_doc(tmp_path: Path) -> None:
    doc = tmp_path / "docs" / "perf.md"
    write_section(doc, "start", "## Start-up\n\n| a |\n")
    write_section(doc, "sessions", "## Long sessions\n\n| b |")
    doc.write_text(doc.read_text().replace(DOC_HEAD, "# an older head\n"))
    write_section(doc, "start", "## Start-up\n\n| c |")
    text = doc.read_text()
    assert text.startswith(DOC_HEAD)  # the head is the script's too
    assert "| a |" not in text and "older head" not in text
    assert text.index("| c |") < text.index("| b |")  # replaced where it was, the other section kept
    assert text.count("<!-- perf:start -->") == text.count("<!-- perf:sessions -->") == 1


async def test_a_reopen_logs_the_phases_the_perf_script_reads(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The start-up's steps and the transcript's first page, as the app logs them, are what
    ``make perf-sessions`` reads back from each run's log: every step, with the items built."""
    from myrm_tui.app.app import MyrmApp
    from myrm_tui.logs import setup_logging
    from tests.helpers import package_log_kept, wait_until, write_long_session

    db = tmp_path / "perf.db"
    sid = await write_long_session(db, 30)
    log = tmp_path / "myrm.log"
    cli = {"model": "openai/gpt-4o-mini", "api_base": emulator.openai_base, "api_key": "sk-test"}
    monkeypatch.setenv("MYRM_LOG", str(log))
    with package_log_kept():
        setup_logging()
        app = MyrmApp(db_path=db, workspace=workspace, session_id=sid, cli={**cli, "preheat": False})
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_until(pilot, lambda: app.ready.is_set() and bool(phases_of(log).keys() >= PHASES))
    got = phases_of(log)
    assert all(got[name] >= 0 for name in PHASE_NAMES)
    assert 1 <= got["items built"] < 3 * 30


PHASES = {*PHASE_NAMES, "items built"}
