"""The ledger's patterns run only where they can match (``text/line_scan.py``, ``ledger._line_priorities``):
a pure speed-up. Over generated outputs, each line's priority is the one a pass of every pattern over the
whole text gives (``_line_priorities_plain``), and so are the salient lines made from them."""

from __future__ import annotations

import re
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from myrm_tui.context.summary import ledger
from myrm_tui.context.text import line_scan

# Lines with what each pattern looks for, near misses of it, and what the shortcuts must not get wrong: a
# line that is "e" alone (``^e\s+`` runs on into the next line), upper case, characters whose lower case
# is longer ("İ"), a numbered view with tabs and arrows, ``ok``/``=`` at a line start and inside one.
PIECES = [
    "    12\tdef parse_date(s):",
    "    13→        return x",
    "  480\t",
    "src/app.py:42:    raise ValueError('bad')",
    "tests/test_x.py:4310: AssertionError",
    'File "/usr/lib/python3/x.py", line 12, in f',
    "see line 7",
    "line x",
    "a/b.py",
    "-/x.rs",
    "/etc/hosts.txt",
    "//x.y",
    "config.toml",
    ".py",
    "x.pyc",
    "3 passed, 1 failed in 0.2s",
    "FAILED (failures=2)",
    "Ran 3 tests in 0.01s",
    "ok",
    "OK",
    "okay then",
    "look ok",
    "===== 2 errors =====",
    "= x =",
    "E       AssertionError: 1 != 2",
    "e",
    "E  ",
    "ValueError: invalid literal",
    "valueerror(",
    "error",
    "error_message = 1",
    "Error: not enough seats",
    "warning: deprecated",
    "RemovedInDjango60Warning",
    "no such file",
    "Permission denied",
    "cannot open",
    "can't",
    "success",
    "unsuccessful",
    "Traceback (most recent call last):",
    "fatal: not a git repository",
    "skipped 2 deselected",
    "mismatch",
    "İstanbul FAILED",
    "async def run():",
    "class Foo:",
    "x = compute(y)",
    "---",
    "}",
    "",
    "   ",
    "plain words here",
]
lines_of = st.lists(
    st.lists(st.sampled_from(PIECES), min_size=1, max_size=3).map(" ".join), min_size=1, max_size=60
)


def _priorities(lines: list[str]) -> tuple[dict[int, int], dict[int, int]]:
    text = "\n".join(lines)
    starts = line_scan.line_starts(lines)
    low = text.lower()
    return (
        ledger._line_priorities(lines, text, low, starts),
        ledger._line_priorities_plain(lines, text, low, starts),
    )


@settings(max_examples=300)
@given(lines_of)
def test_each_line_has_the_priority_one_pass_per_pattern_gives(lines: list[str]) -> None:
    fast, plain = _priorities(lines)
    assert fast == plain


@settings(max_examples=150)
@given(lines_of, st.sampled_from([4, 24]))
def test_the_salient_lines_are_those_of_the_plain_pass(lines: list[str], max_lines: int) -> None:
    """What the ledger keeps of an output is unchanged (the Lines are made only for the lines kept)."""
    text = "\n".join(lines)
    got = ledger._salient_lines(text, max_lines)
    with mock.patch.object(ledger, "_line_priorities", ledger._line_priorities_plain):
        assert ledger._salient_lines(text, max_lines) == got


def test_a_line_that_is_e_alone_is_read_the_plain_way() -> None:
    """``^e\\s+`` of the result pattern takes the next line with it: line 0 is a result line, line 1 not
    (its error was matched from line 0), which a line-by-line search cannot see."""
    lines = ["e ", "valueerror: bad", "x " * 30] * 5
    fast, plain = _priorities(lines)
    assert fast == plain
    assert plain.get(0) == ledger.P_RESULT


@settings(max_examples=200)
@given(st.lists(st.sampled_from(["ab", "x", "abc def", "", "  ab", "b"]), min_size=1, max_size=30))
def test_the_scan_helpers_find_the_lines_a_pass_finds(lines: list[str]) -> None:
    text = "\n".join(lines)
    starts = line_scan.line_starts(lines)
    ends = [s + len(ln) for s, ln in zip(starts, lines, strict=True)]
    rx = re.compile(r"ab|b\b")
    assert line_scan.holding(text, starts, ("ab", "b")) == {k for k, ln in enumerate(lines) if "b" in ln}
    every = range(len(lines))
    assert line_scan.confirmed(rx, text, starts, ends, every) == line_scan.hit_lines(rx, text, starts)
    at, after_newline = re.compile(r"^[ \t]*ab", re.M), re.compile(r"\n[ \t]*ab")
    assert line_scan.starting(text, starts, at, after_newline) == line_scan.hit_lines(at, text, starts)
