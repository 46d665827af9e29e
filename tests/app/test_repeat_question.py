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
    stuck, other = ("glob", {"pattern": "*.txt"}), ("glob", {"pattern": "*.md"})
    emulator.enqueue(*[Reply(tool_calls=[stuck])] * 5, Reply(tool_calls=[other]))
    emulator.default = Reply(tool_calls=[stuck])
    app = make_app(emulator, tmp_path, workspace)  # approval "auto": the loop question is asked anyway
    async with started(app, size=SMALL_SCREEN) as pilot:
        await type_and_send(pilot, "find the text files")
        await wait_until(pilot, lambda: approval_open(app), 60)
        screen = app.screen
        assert isinstance(screen, ApprovalScreen)
        assert str(screen.query_one("#command", Static).render()) == 'glob {"pattern": "*.txt"}'
        assert _steps(emulator) == 3  # asked before the third call runs
        # goes on while the model repeats it (it was asked again two calls later, round 21); the *.md call
        # ends that run, and the next run of three is asked about
        await pilot.press("y")
        await wait_until(pilot, lambda: approval_open(app) and _steps(emulator) > 3, 60)
        assert _steps(emulator) == 9
        await pilot.press("n")
        await wait_until(pilot, lambda: not app.busy, 60)
        assert any(n.startswith("Stopped: the model asked for the same call 3 times") for n in _notices(app))
        assert _steps(emulator) == 9


async def test_always_is_kept_when_a_settings_change_rebuilds_the_agent(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    """F2, a new model, saved: the agent is rebuilt, and a user who answered "always" is not asked about
    the next loop (round 21: the rebuilt agent asked again)."""
    from textual.widgets import Input

    from myrm_tui.app.screens.settings import SettingsScreen
    from myrm_tui.app.widgets.prompt_input import PromptInput

    stuck = Reply(tool_calls=[("glob", {"pattern": "*.txt"})])
    emulator.enqueue(*[stuck] * 4, Reply(text="Done."))
    app = make_app(emulator, tmp_path, workspace)
    async with started(app, size=(120, 44)) as pilot:
        await type_and_send(pilot, "find the text files")
        await wait_until(pilot, lambda: approval_open(app), 60)
        await pilot.press("a")
        await wait_until(pilot, lambda: not app.busy and not approval_open(app), 60)
        await pilot.press("f2")
        await wait_until(pilot, lambda: isinstance(app.screen, SettingsScreen))
        app.screen.query_one("#f-model", Input).value = "openai/gpt-4o"
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: not isinstance(app.screen, SettingsScreen))
        emulator.enqueue(*[stuck] * 4, Reply(text="Done again."))
        prompt = app.screen.query_one(PromptInput)
        await type_and_send(pilot, "once more")
        await wait_until(pilot, lambda: not prompt.text and (approval_open(app) or not app.busy), 60)
        assert not approval_open(app)
        assert app.controller.cache.rebuilds >= 1
        assert emulator.accepted[-1].body["model"] == "gpt-4o"
        tool_results = [m for m in emulator.accepted[-1].body["messages"] if m["role"] == "tool"]
        assert len(tool_results) == 8 and "not run" not in json.dumps(tool_results)
