"""A bracketed paste holding an ESC (copied coloured output, a log with escape codes, a hyperlink: xterm and
tmux pass them on) is one paste of the text a user saw: its complete CSI and OSC sequences are dropped and
any other ESC is shown as ␛. Textual's parser took such an ESC for the start of a key sequence and the
pasted text after it arrived as key presses (found pasting a log into ``myrm`` in tmux: it opened the
transcript search and typed into it); shown as ␛ it was safe, but a coloured log arrived as
``␛[31mFAILED␛[0m``. Checked on the decoder the terminal's bytes go through, over every way the reads may
cut them, and through Textual's own parser."""

from __future__ import annotations

import codecs
import itertools
import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from textual import events
from textual._xterm_parser import XTermParser

from myrm_tui.app.terminal_guard import PASTE_END, PASTE_START, SHOWN_ESC, PasteGuard

# Pasted text: anything but the end marker itself (which ends a paste whatever the terminal meant), and
# NUL (Textual drops it from pastes). Whole sequences and every piece they are made of, so the lists
# also build broken ones: a CSI without its final byte, an OSC without its end or cut by a line break.
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
    "\x1b[38;2;255;0;0m",
    "\x1b[?25h",
    "\x1b[0m",
    "\x1b]8;;https://x.example\x1b\\",
    "\x1b]0;title\x07",
    "\x1b]",
    "\x1b\\",
    "[201~",
    "[",
    ";",
    "m",
    "~",
    "\x07",
    "\\",
    "\r",
    "\n",
    "\x03",
    "x" * 1500,  # three make an OSC longer than a terminal's title: not a sequence
]
pasted = st.lists(st.sampled_from(PIECES), max_size=12).map("".join).filter(lambda t: PASTE_END not in t)
# Typed around it: keys and their escape sequences (an arrow, Esc alone, Alt+x) pass on as they are.
typed = st.lists(st.sampled_from(["a", "é", "\r", "\x1b", "\x1b[A", "\x1bx", "\x7f"]), max_size=6).map(
    "".join
)

# What a terminal reads as one sequence: CSI (ESC [, parameters, intermediates, a final byte) and OSC
# (ESC ], printable text, BEL or ESC \), as long as copied output holds them.
CSI = r"\x1b\[[\x30-\x3f]{0,64}[\x20-\x2f]{0,8}[\x40-\x7e]"
OSC = r"\x1b\][^\x00-\x1f]{0,4096}(?:\x07|\x1b\\)"


def shown(text: str) -> str:
    """What a paste of ``text`` should give: its sequences gone, every ESC left shown as ␛."""
    return re.sub(f"{CSI}|{OSC}", "", text).replace("\x1b", SHOWN_ESC)


def decoded(stream: bytes, cuts: list[int]) -> str:
    guard = PasteGuard(codecs.getincrementaldecoder("utf-8")(errors="replace"))
    bounds = [0, *sorted({c % (len(stream) + 1) for c in cuts}), len(stream)]
    parts = [stream[a:b] for a, b in itertools.pairwise(bounds)]
    return "".join(guard.decode(p, final=i == len(parts) - 1) for i, p in enumerate(parts))


@pytest.mark.parametrize(
    ("text", "seen"),
    [
        ("log \x1b[31mFAILED\x1b[0m\rnext", "log FAILED\rnext"),
        ("\x1b[1;38;5;196mbold\x1b[22;39m", "bold"),
        ("\x1b]8;;https://x.example\x1b\\link\x1b]8;;\x1b\\ after", "link after"),
        ("\x1b]0;title\x07ok", "ok"),
        ("a\x1bb", f"a{SHOWN_ESC}b"),
        ("\x1b\x1b[1m!", f"{SHOWN_ESC}!"),
        ("\x1b[中", f"{SHOWN_ESC}[中"),
        ("\x1b]no end", f"{SHOWN_ESC}]no end"),
        ("\x1b]two\nlines\x07", f"{SHOWN_ESC}]two\nlines\x07"),
        ("\x1b]" + "t" * 5000 + "\x07", f"{SHOWN_ESC}]" + "t" * 5000 + "\x07"),
        ("\x1b[20", f"{SHOWN_ESC}[20"),
    ],
)
def test_a_pasted_sequence_is_dropped_and_a_lone_esc_shown_wherever_a_read_cuts_it(
    text: str, seen: str
) -> None:
    stream = (PASTE_START + text + PASTE_END).encode()
    for cut in range(0, len(stream) + 1, max(1, len(stream) // 64)):
        assert decoded(stream, [cut]) == PASTE_START + seen + PASTE_END, cut
    assert decoded(stream, list(range(len(stream)))[:200]) == PASTE_START + seen + PASTE_END  # byte by byte


@settings(max_examples=300, deadline=None, derandomize=True)
@given(before=typed, text=pasted, after=typed, cuts=st.lists(st.integers(0, 5000), max_size=8))
@example(before="", text="log \x1b[31mred\x1b[0m\rnext", after="", cuts=[7, 8, 9, 30, 31])
@example(before="\x1b", text="\x1b[20", after="a", cuts=[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12])
@example(before="", text="\x1b]0;t\x1b\x1b\\x", after="", cuts=[8, 9, 10, 11, 12, 13, 14])
def test_only_the_escs_inside_a_paste_change_however_the_reads_cut_it(
    before: str, text: str, after: str, cuts: list[int]
) -> None:
    stream = (before + PASTE_START + text + PASTE_END + after).encode()
    assert decoded(stream, cuts) == before + PASTE_START + shown(text) + PASTE_END + after


@settings(max_examples=100, deadline=None, derandomize=True)
@given(text=pasted, cuts=st.lists(st.integers(0, 5000), max_size=8))
@example(text="log \x1b[31mred\x1b[0m\rnext\x07", cuts=[])
@example(text="\x1b\x1b]", cuts=[])
def test_textuals_parser_sees_one_paste_and_no_key(text: str, cuts: list[int]) -> None:
    parser = XTermParser()
    got = list(parser.feed(decoded((PASTE_START + text + PASTE_END).encode(), cuts)))
    got += list(parser.tick())
    assert [type(e) for e in got] == [events.Paste], got
    assert isinstance(got[0], events.Paste) and got[0].text == shown(text)
