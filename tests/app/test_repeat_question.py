"""A model repeating one call: the TUI asks through its approval dialog, answered with real keys."""

from __future__ import annotations

import json
from pathlib import Path

from textual.widgets import Static

from myrm_tui.app.screens.approval import ApprovalScreen
from myrm_tui.app.widgets.chat_message import Notice
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.helpers import SMALL_SCREEN, approval_open, make_app, started, type_and_send, wait_until


def _steps(emulator: ProviderEmulator) -> int:
    """The turn's requests (not a preheat or a title's)."""
    return sum(1 for r in emulator.requests if r.body.get("tools") and "find the text" in json.dumps(r.body))


def _notices(app: object) -> list[str]:
    return [str(n.render()) for n in app.screen_stack[0].query(Notice)]  # type: ignore[attr-defined]


async def test_the_dialog_asks_about_a_repeated_call_and_n_stops_the_turn(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    emulator.default = Reply(tool_calls=[("glob", {"pattern": "*.txt"})])
    app = make_app(emulator, tmp_path, workspace)  # approval "auto": the loop question is asked anyway
    async with started(app, size=SMALL_SCREEN) as pilot:
        await type_and_send(pilot, "find the text files")
        await wait_until(pilot, lambda: approval_open(app), 60)
        screen = app.screen
        assert isinstance(screen, ApprovalScreen)
        assert str(screen.query_one("#command", Static).render()) == 'glob {"pattern": "*.txt"}'
        assert _steps(emulator) == 3  # asked before the third call runs
        await pilot.press("y")  # goes on: the next question comes two calls later
        await wait_until(pilot, lambda: approval_open(app) and _steps(emulator) == 5, 60)
        await pilot.press("n")
        await wait_until(pilot, lambda: not app.busy, 60)
        assert any(n.startswith("Stopped: the model asked for the same call 3 times") for n in _notices(app))
        assert _steps(emulator) == 5
