"""A large paste shows as one label (``[pasted 40 lines]``) and is edited as one: Backspace or Delete
that reaches it removes the whole label. One character less, the label no longer named the paste and
the message sent the broken label instead of the text (seen in tmux after a 5 MB paste)."""

from __future__ import annotations

import asyncio

from hypothesis import given, settings
from hypothesis import strategies as st
from textual import events

from myrm_tui.app.widgets.prompt_input import PromptInput
from tests.app.test_focus_keys import key_event
from tests.app.test_prompt_input_order import ORDER_SETTINGS, Host
from tests.helpers import wait_until

PASTE = "\n".join(f"line {i}" for i in range(40))
LABEL = "[pasted 40 lines]"
KEYS = st.lists(st.sampled_from(["backspace", "delete", "left", "right", "home", "end"]), max_size=25)


def editor(keys: list[str], text: str, col: int) -> tuple[str, int]:
    """A one-line editor in which the label is deleted whole by a Backspace or Delete that touches it."""
    for key in keys:
        at = text.find(LABEL)
        end = at + len(LABEL)
        if (key == "backspace" and at >= 0 and at < col <= end) or (
            key == "delete" and at >= 0 and at <= col < end
        ):
            text, col = text[:at] + text[end:], at
        elif key == "backspace" and col > 0:
            text, col = text[: col - 1] + text[col:], col - 1
        elif key == "delete":
            text = text[:col] + text[col + 1 :]
        elif key in ("left", "right"):
            col = max(0, min(len(text), col + (1 if key == "right" else -1)))
        elif key in ("home", "end"):
            col = 0 if key == "home" else len(text)
    return text, col


async def run_keys(keys: list[str], one_by_one: bool) -> tuple[str, tuple[int, int], str]:
    app = Host()
    async with app.run_test(size=(220, 40)) as pilot:
        box = app.query_one(PromptInput)
        await wait_until(pilot, lambda: app.focused is box)
        driver = app._driver
        assert driver is not None
        for part in ("ab", events.Paste(PASTE), "cd"):
            for event in [part] if isinstance(part, events.Paste) else [key_event(c) for c in part]:
                driver.send_message(event)
                await pilot.pause()
        await wait_until(pilot, lambda: box.text == f"ab{LABEL}cd" and not app.key_router.keys_waiting)
        for key in keys:
            driver.send_message(key_event(key))
            if one_by_one:
                await pilot.pause()
        await pilot.pause()
        await wait_until(pilot, lambda: not app.key_router.keys_waiting)
        await pilot.pause()
        return box.text, box.cursor_location, box.expand_pastes(box.text)


@settings(ORDER_SETTINGS, max_examples=15)
@given(keys=KEYS, one_by_one=st.booleans())
def test_backspace_or_delete_reaching_a_paste_label_removes_it_whole(
    keys: list[str], one_by_one: bool
) -> None:
    text, cursor, sent = asyncio.run(run_keys(keys, one_by_one))
    want, col = editor(keys, f"ab{LABEL}cd", len(f"ab{LABEL}cd"))
    assert (text, cursor) == (want, (0, col)), keys
    # What is sent holds the whole paste or none of it, never a broken label.
    assert (PASTE in sent) == (LABEL in text) and "[pasted" not in sent


def test_backspace_after_a_paste_label_removes_the_paste() -> None:
    text, cursor, sent = asyncio.run(run_keys(["left", "left", "backspace"], one_by_one=True))
    assert (text, cursor, sent) == ("abcd", (0, 2), "abcd")
