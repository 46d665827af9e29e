"""Issue 33, driven by Pilot with real keys: pastes with CR line endings, the prompt queue, edit cards and
their approval, the approval wait, the footer's keys, plain words on screen."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual import events

from myrm_tui.app.widgets.chat_message import AssistantMessage
from myrm_tui.app.widgets.prompt_input import PromptInput
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.test_tui import make_app, wait_until


async def wait(pilot: Any, cond: Any, timeout: float = 60.0) -> None:
    await wait_until(pilot, cond, timeout)


def sixty_lines() -> list[str]:
    return [f"log line {i}: value={i * 7}" for i in range(60)]


async def user_texts(app: Any) -> list[str]:
    return [m.text for m in await app.controller.messages() if m.role == "user"]


@pytest.mark.parametrize("ending", ["\r", "\r\n"])
async def test_a_bracketed_paste_with_cr_line_endings_is_stored_line_by_line(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path, ending: str
) -> None:
    lines = sixty_lines()
    app = make_app(emulator, tmp_path, workspace)
    emulator.enqueue(Reply(text="Read it."))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait(pilot, app.ready.is_set)
        box = app.query_one(PromptInput)
        app.post_message(events.Paste(ending.join(lines)))  # as tmux paste-buffer -p sends it
        await wait(pilot, lambda: box.text == "[pasted 60 lines]")
        await pilot.press("enter")
        await wait(pilot, lambda: not app.busy and bool(app.query(AssistantMessage)))
        assert any(r.body["messages"][-1]["content"] == "\n".join(lines) for r in emulator.accepted)
        stored = (await user_texts(app))[-1]
        assert stored.split("\n") == lines and "\r" not in stored


async def test_a_small_crlf_paste_keeps_its_lines_in_the_box(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    app = make_app(emulator, tmp_path, workspace)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait(pilot, app.ready.is_set)
        box = app.query_one(PromptInput)
        app.post_message(events.Paste("one\r\ntwo\rthree"))
        await wait(pilot, lambda: box.document.line_count == 3)
        assert box.text == "one\ntwo\nthree"


async def test_an_unbracketed_paste_typed_out_with_cr_is_one_message_of_sixty_lines(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    """A terminal without bracketed paste types the paste out, each line end an Enter (CR) in one read:
    those Enters are new lines; the user's own Enter afterwards sends the message."""
    lines = sixty_lines()
    app = make_app(emulator, tmp_path, workspace)
    emulator.enqueue(Reply(text="Read it."))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait(pilot, app.ready.is_set)
        box = app.query_one(PromptInput)
        driver = app._driver
        assert driver is not None
        for ch in "\r".join(lines):  # all at once, as the driver posts one read's keys
            key = "enter" if ch == "\r" else "space" if ch == " " else ch
            if ch in ":=":
                key = {":": "colon", "=": "equals_sign"}[ch]
            driver.send_message(events.Key(key, ch))
        await wait(pilot, lambda: box.document.line_count == 60 and box.text.endswith(lines[-1]))
        assert not app.busy and emulator.requests == []
        await pilot.press("enter")
        await wait(pilot, lambda: not app.busy and bool(app.query(AssistantMessage)))
        assert (await user_texts(app))[-1] == "\n".join(lines)
