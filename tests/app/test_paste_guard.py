"""A bracketed paste holding an ESC (copied coloured output, a log with escape codes: xterm and tmux pass it
on) is one paste, its ESCs shown as ␛: Textual's parser took such an ESC for the start of a key sequence and
the pasted text after it arrived as key presses (found pasting a log into ``myrm`` in tmux: it opened the
transcript search and typed into it). Checked on the decoder the terminal's bytes go through, over every way
the reads may cut them, and through Textual's own parser."""

from __future__ import annotations

import codecs
import itertools

from hypothesis import example, given, settings
from hypothesis import strategies as st
from textual import events
from textual._xterm_parser import XTermParser

from myrm_tui.app.terminal_guard import PASTE_END, PASTE_START, SHOWN_ESC, PasteGuard

# Pasted text: anything but the end marker itself (which ends a paste whatever the terminal meant), and
# NUL (Textual drops it from pastes).
PIECES = [
    "a",
    "é",
    "中",
    "\x1b",
    "\x1b[",
    "\x1b[2",
    "\x1b[20",
    "\x1b[200~",
    "\x1b[31m",
    "[201~",
    "~",
    "\r",
    "\n",
    "\x03",
]
pasted = st.lists(st.sampled_from(PIECES), max_size=12).map("".join).filter(lambda t: PASTE_END not in t)
# Typed around it: keys and their escape sequences (an arrow, Esc alone, Alt+x) pass on as they are.
typed = st.lists(st.sampled_from(["a", "é", "\r", "\x1b", "\x1b[A", "\x1bx", "\x7f"]), max_size=6).map(
    "".join
)


def decoded(stream: bytes, cuts: list[int]) -> str:
    guard = PasteGuard(codecs.getincrementaldecoder("utf-8")(errors="replace"))
    bounds = [0, *sorted({c % (len(stream) + 1) for c in cuts}), len(stream)]
    parts = [stream[a:b] for a, b in itertools.pairwise(bounds)]
    return "".join(guard.decode(p, final=i == len(parts) - 1) for i, p in enumerate(parts))


@settings(max_examples=300, deadline=None, derandomize=True)
@given(before=typed, text=pasted, after=typed, cuts=st.lists(st.integers(0, 400), max_size=8))
@example(before="", text="log \x1b[31mred\x1b[0m\rnext", after="", cuts=[7, 8, 9, 30, 31])
@example(before="\x1b", text="\x1b[20", after="a", cuts=[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12])
def test_only_the_escs_inside_a_paste_change_however_the_reads_cut_it(
    before: str, text: str, after: str, cuts: list[int]
) -> None:
    stream = (before + PASTE_START + text + PASTE_END + after).encode()
    assert decoded(stream, cuts) == before + PASTE_START + text.replace("\x1b", SHOWN_ESC) + PASTE_END + after


@settings(max_examples=100, deadline=None, derandomize=True)
@given(text=pasted, cuts=st.lists(st.integers(0, 400), max_size=8))
@example(text="log \x1b[31mred\x1b[0m\rnext\x07", cuts=[])
def test_textuals_parser_sees_one_paste_and_no_key(text: str, cuts: list[int]) -> None:
    parser = XTermParser()
    got = list(parser.feed(decoded((PASTE_START + text + PASTE_END).encode(), cuts)))
    got += list(parser.tick())
    assert [type(e) for e in got] == [events.Paste], got
    assert isinstance(got[0], events.Paste) and got[0].text == text.replace("\x1b", SHOWN_ESC)
