"""Which lines of a text a pattern hits, without running the pattern over every character.

``re`` tries an unanchored pattern at every position: over a 60,000-character output, five such passes
were most of what reading an output cost. Two exact shortcuts, for patterns whose matches never span a
line and that read a line's ends as they read the string's (``^``/``$`` under ``re.M``, ``\\b``,
lookaheads that do not look for a newline):

- a pattern that only matches where one of a few literals occurs is run only on the lines holding one
  (``str.find`` finds them at C speed), each line on its own (``pos``/``endpos``);
- a pattern anchored at a line's start is run as ``\\n`` + the pattern, a literal ``re`` jumps to.

The lines a pattern hits are the lines where it matches at least once: one ``finditer`` over the text and
these give the same set (tests/context/text/test_line_scan.py checks them against the plain pass).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from itertools import accumulate


def line_starts(lines: Sequence[str]) -> list[int]:
    """Where each of ``lines`` starts in ``"\\n".join(lines)``."""
    return [0, *accumulate(len(ln) + 1 for ln in lines[:-1])] if lines else [0]


def hit_lines(rx: re.Pattern[str], text: str, starts: Sequence[int]) -> set[int]:
    """The lines where ``rx`` matches (a match's first character is in the line): one pass over ``text``."""
    return {bisect_right(starts, mt.start()) - 1 for mt in rx.finditer(text)}


def holding(text: str, starts: Sequence[int], needles: Iterable[str]) -> set[int]:
    """The lines of ``text`` holding one of ``needles`` (none holds a newline)."""
    out: set[int] = set()
    n = len(starts)
    for needle in needles:
        i = text.find(needle)
        while i >= 0:
            k = bisect_right(starts, i) - 1
            out.add(k)
            if k + 1 >= n:
                break
            i = text.find(needle, starts[k + 1])
    return out


def starting(
    text: str, starts: Sequence[int], at_start: re.Pattern[str], after_newline: re.Pattern[str]
) -> set[int]:
    """The lines where a pattern anchored at a line's start matches: ``at_start`` (the pattern, tried at 0)
    and ``after_newline`` (``\\n`` + the pattern without its ``^``) over the rest."""
    out = {bisect_right(starts, mt.start() + 1) - 1 for mt in after_newline.finditer(text)}
    if at_start.match(text):
        out.add(0)
    return out


def confirmed(
    rx: re.Pattern[str], text: str, starts: Sequence[int], ends: Sequence[int], ks: Iterable[int]
) -> set[int]:
    """Of the lines ``ks``, those where ``rx`` matches within the line."""
    return {k for k in ks if rx.search(text, starts[k], ends[k])}
