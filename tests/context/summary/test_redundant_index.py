"""``ledger.redundant`` compares a line only with the lines holding its rarest word (a word count and an
inverted index of the words some line needs): a pure speed-up. Over generated Records whose lines share
words, contain each other, repeat but for numbers and start as commands, it marks exactly the lines the
rule marks when every line is compared with every other."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from myrm_tui.context import memo
from myrm_tui.context.summary import ledger
from myrm_tui.context.summary.ledger import Line

WORDS = ["a", "ab", "b", "x.py", "def", "if", "Error:", "12", "7", "foo(bar)", "→", "$", "  ", "\t", "é", "İ"]
# Slices of one sentence: lines inside other lines, whose rarest word many lines hold.
BASE = ["if", "x.py", "raised", "Error:", "12", "then", "def", "foo(bar)", "returns", "a", "ab", "b", "7"]
LONG = "the harness says: found 12 actions, run them in order and report back on each one of them"


def _norm(text: str) -> str:
    return " ".join(text.split())


def _words(text: str) -> frozenset[str]:
    return frozenset(re.findall(r"[a-z0-9]+", text.lower()))


def plain_redundant(lines: list[Line], seen: list[str]) -> list[bool]:
    """The rule of ``redundant``'s docstring, each line against every other and every earlier block's."""
    out: list[bool] = []
    templates = {re.sub(r"\d+", "#", _norm(t)) for t in seen if len(_norm(t)) >= ledger.TEMPLATE_MIN_CHARS}
    for i, ln in enumerate(lines):
        ws, n = _words(ln.text), _norm(ln.text)
        if not ws or ln.text.lstrip().startswith(("→", "$")):
            out.append(False)
            continue
        if len(n) >= ledger.TEMPLATE_MIN_CHARS:
            t = re.sub(r"\d+", "#", n)
            if t in templates:
                out.append(True)
                continue
            templates.add(t)
        out.append(
            any(ws <= _words(s) and n in _norm(s) for s in seen)
            or any(
                j != i
                and o.priority >= ln.priority
                and ws <= _words(o.text)
                and n in _norm(o.text)
                and (n != _norm(o.text) or j > i)
                for j, o in enumerate(lines)
            )
        )
    return out


texts = st.one_of(
    st.tuples(st.integers(0, len(BASE)), st.integers(1, 6)).map(lambda s: " ".join(BASE[s[0] : s[0] + s[1]])),
    st.lists(st.sampled_from(WORDS), max_size=6).map(" ".join),
    st.lists(st.sampled_from(WORDS), max_size=4).map("".join),
    st.integers(0, 300).map(lambda n: LONG.replace("12", str(n))),
    st.text(alphabet="ab 1.$→\n", max_size=12),
)
lines_st = st.lists(st.builds(Line, texts, st.integers(1, 9)), max_size=24)


@settings(max_examples=300)
@given(lines_st, st.lists(texts, max_size=4), st.sampled_from(["none", "cold", "warm"]))
def test_redundant_marks_what_comparing_every_pair_marks(
    lines: list[Line], seen: list[str], memo_: str
) -> None:
    """The same marks with the lines' shapes read from a warm session memo, put into a cold one
    (``memo.each``) or computed on the spot with no memo."""
    expected = plain_redundant(lines, seen)
    if memo_ == "none":
        assert ledger.redundant(lines, seen) == expected
        return
    with memo.active(memo.Memo()):
        if memo_ == "warm":
            for ln in lines:
                ledger.redundant_shape(ln.text)
        assert ledger.redundant(lines, seen) == expected
        assert ledger.redundant(lines, seen) == expected  # and from what the first call kept
