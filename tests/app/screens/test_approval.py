"""No approval by accident (issue 44, item 4): a key that reaches the approval dialog before it opened, or
within ``GRACE`` of its opening, does nothing — y, a, n, Enter on its focused button, Esc, a click —; the
same keys answer once the user has had the time to read it; a message queued in the prompt never answers
it. Times are the key events' own stamps against the dialog's injectable clock: no test sleeps."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual import events
from textual.app import App
from textual.widgets import Button

from myrm_tui.agent.permissions import Assessment, ParsedCommand
from myrm_tui.app.screens import approval
from myrm_tui.app.screens.approval import GRACE, ApprovalScreen
from myrm_tui.app.widgets.prompt_input import PromptInput
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.helpers import SMALL_SCREEN, make_app, started, type_text, wait_until

T0 = 1000.0  # the dialog's clock when it opens


class Dialog(App[None]):
    """The dialog alone, its answer kept."""

    def __init__(self) -> None:
        super().__init__()
        self.answers: list[str | None] = []

    def on_mount(self) -> None:
        touch = ParsedCommand("touch PWN", ("touch", "PWN"), rememberable=True)
        self.push_screen(
            ApprovalScreen("bash", "touch PWN", Assessment("touch PWN", (touch,))), self.answers.append
        )


async def press_at(pilot: Any, key: str, at: float) -> None:
    """``key`` as the terminal sends it, stamped ``at`` (the time the user typed it)."""
    char = {"enter": "\r", "escape": "\x1b"}.get(key, key)
    event = events.Key(key, char)
    event.time = at
    event.set_sender(pilot.app)
    pilot.app._driver.send_message(event)
    await pilot.pause()


@pytest.fixture
def frozen(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ApprovalScreen, "clock", staticmethod(lambda: T0))


@pytest.mark.parametrize("key", ["y", "a", "n", "enter", "escape"])
async def test_a_key_within_the_grace_period_or_typed_before_the_dialog_does_nothing(
    frozen: None, key: str
) -> None:
    app = Dialog()
    async with app.run_test() as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen) and app.screen.shown_at == T0)
        screen = app.screen
        assert isinstance(app.focused, Button)  # Enter would press it
        for at in (T0 - 0.3, T0 - 0.001, T0, T0 + 0.1, T0 + GRACE - 0.01):  # typed before it, then too soon
            await press_at(pilot, key, at)
            assert app.screen is screen and app.answers == []
        await press_at(pilot, key, T0 + GRACE)  # the user had the time to read it
        assert app.answers == [{"y": "yes", "a": "always", "enter": "yes"}.get(key, "no")]


async def test_a_click_as_the_dialog_appears_does_nothing_and_a_later_one_answers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    now = [T0]
    monkeypatch.setattr(ApprovalScreen, "clock", staticmethod(lambda: now[0]))
    app = Dialog()
    async with app.run_test() as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen) and app.screen.shown_at == T0)
        screen = app.screen
        assert isinstance(screen, ApprovalScreen)
        early = Button.Pressed(screen.query_one("#yes", Button))
        early.time = T0 + 0.2
        screen.post_message(early)
        await pilot.pause()
        assert app.answers == []
        late = Button.Pressed(screen.query_one("#no", Button))
        late.time = T0 + GRACE + 0.1
        screen.post_message(late)
        await pilot.pause()
        assert app.answers == ["no"]


async def test_a_message_typed_as_the_dialog_opens_neither_approves_nor_answers_it(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The report: a follow-up typed while the dialog opened approved ``touch PWN_TYPEAHEAD`` with its first
    ``y``. Here the user queues "yes, always" (Enter while the turn runs), the dialog opens, the user goes
    on typing "yay" and Enter: nothing answers it, the command does not run, the message stays queued.
    The grace period is made an hour, so however slow the machine the keys land within it; then the hour
    passes (the dialog's opening moved back) and "n" declines; the queued message is sent after the turn."""
    monkeypatch.setattr(approval, "GRACE", 3600.0)
    import threading

    gate = threading.Event()
    emulator.enqueue(
        Reply(tool_calls=[("bash", {"command": "touch PWN_TYPEAHEAD"})], gate=gate),
        Reply(text="Declined, fine."),
        Reply(text="Answer to the queued message."),
    )
    app = make_app(emulator, tmp_path, workspace, approval="ask", preheat=False)
    async with started(app, size=SMALL_SCREEN) as pilot:
        await type_text(pilot, "make the file")
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.busy)
        await type_text(pilot, "yes, always")
        await pilot.press("enter")  # queued: the turn runs
        prompt = app.query_one(PromptInput)
        await wait_until(pilot, lambda: len(prompt.queued) == 1)
        gate.set()
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), 30)
        screen = app.screen
        assert isinstance(screen, ApprovalScreen)
        await type_text(pilot, "yay")
        await pilot.press("enter", "a", "y")
        assert app.screen is screen and not (workspace / "PWN_TYPEAHEAD").exists()
        assert len(prompt.queued) == 1
        assert isinstance(screen, ApprovalScreen) and screen.shown_at is not None
        screen.shown_at -= 3600.0  # the hour passed: the user has read it
        await pilot.press("n")
        await wait_until(pilot, lambda: not isinstance(app.screen, ApprovalScreen))
        await wait_until(
            pilot, lambda: not app.busy and not prompt.queued and len(emulator.accepted) >= 3, 30
        )
        await wait_until(pilot, lambda: not app.busy)
    assert not (workspace / "PWN_TYPEAHEAD").exists()
    users = [m["content"] for m in emulator.accepted[-1].body["messages"] if m["role"] == "user"]
    assert any("yes, always" in str(u) for u in users)
