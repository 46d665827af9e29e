"""Issue 45.1: keys that arrive together are applied in the order they came, always. A property: random
sequences of printable keys, Backspace, Delete, arrows, Home/End, Ctrl+J / Alt+Enter / Shift+Enter and
small pastes, sent to the prompt box in one burst (as the driver posts one read) and one at a time, leave the
box as a plain model of a text editor says. Then the issue's own cases, in the real app."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from textual import events
from textual.app import App, ComposeResult

from myrm_tui.app.key_router import RoutedKeys
from myrm_tui.app.widgets.prompt_input import PromptInput
from myrm_tui.testing.emulator import ProviderEmulator
from tests.app.test_focus_keys import app_for, key_event, send
from tests.helpers import SMALL_SCREEN, make_app, wait_until

TYPED = "abcXYZ019 .,-"  # no "/" or "@": those open menus (test_focus_keys.py)
NEWLINE = ("ctrl+j", "alt+enter", "shift+enter")  # shift+enter: a terminal with the kitty keyboard protocol
MOVES = ("backspace", "delete", "left", "right", "up", "down", "home", "end", *NEWLINE)


@dataclass
class Editor:
    """What a text editor does with these keys: TextArea's rules, written out plainly."""

    lines: list[str] = field(default_factory=lambda: [""])
    row: int = 0
    col: int = 0
    remembered: int = 0  # the column Up/Down aim for: set by the last edit or horizontal move

    def insert(self, text: str) -> None:
        line = self.lines[self.row]
        before, after = line[: self.col], line[self.col :]
        new = (before + text + after).split("\n")
        self.lines[self.row : self.row + 1] = new
        self.row += len(new) - 1
        self.col = len(new[-1]) - len(after)
        self.remembered = self.col  # TextArea records the cursor's column after every edit

    def apply(self, op: tuple[str, str]) -> None:
        kind, value = op
        if kind in ("type", "paste"):
            self.insert(value)
        else:
            self.key(value)

    def key(self, key: str) -> None:
        lines, row, col = self.lines, self.row, self.col
        if key in NEWLINE:
            self.insert("\n")
        elif key == "backspace":
            if col:
                lines[row] = lines[row][: col - 1] + lines[row][col:]
                self.col -= 1
            elif row:
                self.col = len(lines[row - 1])
                lines[row - 1 : row + 1] = [lines[row - 1] + lines[row]]
                self.row -= 1
            if (row, col) != (0, 0):
                self.remembered = self.col
        elif key == "delete":
            if col < len(lines[row]):
                lines[row] = lines[row][:col] + lines[row][col + 1 :]
                self.remembered = self.col
            elif row < len(lines) - 1:
                lines[row : row + 2] = [lines[row] + lines[row + 1]]
                self.remembered = self.col
        elif key in ("left", "right", "home", "end"):
            if key == "left" and (row, col) != (0, 0):
                self.row, self.col = (row, col - 1) if col else (row - 1, len(lines[row - 1]))
            elif key == "right" and (row, col) != (len(lines) - 1, len(lines[-1])):
                self.row, self.col = (row, col + 1) if col < len(lines[row]) else (row + 1, 0)
            elif key == "home":  # "smart home": the first non-blank column, then column 0
                first = next((i for i, ch in enumerate(lines[row]) if not ch.isspace()), 0)
                self.col = first if col == 0 or col > first else 0
            elif key == "end":
                self.col = len(lines[row])
            self.remembered = self.col
        elif key == "up":
            if row == 0:
                self.col = 0
            else:
                self.row, self.col = row - 1, min(self.remembered, len(lines[row - 1]))
        elif key == "down":
            if row == len(lines) - 1:
                self.col = len(lines[row])
            else:
                self.row, self.col = row + 1, min(self.remembered, len(lines[row + 1]))

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


OPS = st.lists(
    st.one_of(
        st.tuples(st.just("type"), st.sampled_from(TYPED)),
        st.tuples(st.just("key"), st.sampled_from(MOVES)),
        st.tuples(st.just("paste"), st.text(alphabet="ab \n", min_size=1, max_size=5)),
    ),
    min_size=1,
    max_size=30,
)


class Host(RoutedKeys, App[None]):
    """The prompt box alone, keys routed as in the app (wide: no line wraps)."""

    def compose(self) -> ComposeResult:
        yield PromptInput()

    def on_mount(self) -> None:
        self.query_one(PromptInput).focus()


def event_for(op: tuple[str, str]) -> events.Event:
    kind, value = op
    return events.Paste(value) if kind == "paste" else key_event(value)


async def run_ops(ops: list[tuple[str, str]], one_by_one: bool) -> tuple[str, tuple[int, int]]:
    app = Host()
    async with app.run_test(size=(220, 40)) as pilot:
        box = app.query_one(PromptInput)
        await wait_until(pilot, lambda: app.focused is box)
        driver = app._driver
        assert driver is not None
        for op in ops:
            driver.send_message(event_for(op))
            if one_by_one:
                await pilot.pause()  # each key on its own: the app idle before the next
        await pilot.pause()
        await wait_until(pilot, lambda: not app.key_router.keys_waiting)
        await pilot.pause()
        return box.text, box.cursor_location


ORDER_SETTINGS = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])


# Each example starts an app (~0.2 s): make test runs a fixed 15, the long twin 40 new ones.
@settings(ORDER_SETTINGS, max_examples=15)
@given(ops=OPS, one_by_one=st.booleans())
def test_the_box_is_what_an_editor_makes_of_the_keys_in_the_order_sent(
    ops: list[tuple[str, str]], one_by_one: bool
) -> None:
    box_matches_the_editor(ops, one_by_one)


@pytest.mark.long
@settings(ORDER_SETTINGS, max_examples=40)
@given(ops=OPS, one_by_one=st.booleans())
def test_long_the_box_is_what_an_editor_makes_of_the_keys_in_the_order_sent(
    ops: list[tuple[str, str]], one_by_one: bool
) -> None:
    """The same property over 40 key sequences (``make test-long``)."""
    box_matches_the_editor(ops, one_by_one)


def box_matches_the_editor(ops: list[tuple[str, str]], one_by_one: bool) -> None:
    model = Editor()
    for op in ops:
        model.apply(op)
    text, cursor = asyncio.run(run_ops(ops, one_by_one))
    assert (text, cursor) == (model.text, (model.row, model.col)), ops


async def test_the_issues_bursts_in_a_fresh_session(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    """``abc`` BSpace BSpace ``Z`` gives ``aZ``; ``ab`` Left ``X`` gives ``aXb`` (both were wrong)."""
    app = make_app(emulator, tmp_path, workspace, preheat=False)
    async with app.run_test(size=SMALL_SCREEN) as pilot:
        await wait_until(pilot, app.ready.is_set, 60)
        box = app.query_one(PromptInput)
        await send(app, [*"abc", "backspace", "backspace", "Z"], 0)
        await wait_until(pilot, lambda: box.text == "aZ" and not app.key_router.keys_waiting)
        await send(app, ["ctrl+u", *"ab", "left", "X"], 0)
        await wait_until(pilot, lambda: box.text == "aXb" and not app.key_router.keys_waiting)
        assert box.cursor_location == (0, 2)


async def test_backspace_then_a_sentence_in_a_long_session(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path, long_db: Any
) -> None:
    """The issue's loaded session: Backspace then "hello after 10k" in one read gave ``xhello after 10``."""
    app = app_for(emulator, tmp_path, workspace, long_db)
    async with app.run_test(size=SMALL_SCREEN) as pilot:
        await wait_until(pilot, app.ready.is_set, 60)
        box = app.query_one(PromptInput)
        await send(app, ["x"], 0)
        await wait_until(pilot, lambda: box.text == "x")
        await send(app, ["backspace", *"hello after 10k"], 0)
        await wait_until(pilot, lambda: box.text == "hello after 10k" and not app.key_router.keys_waiting)
