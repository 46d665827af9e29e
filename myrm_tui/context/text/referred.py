"""The lines of a tool output that later messages refer to.

A line qualifies when a later assistant message — its text or its calls' arguments — holds one of the
line's fact-like tokens (an identifier, a path, a number: ``ledger.fact_tokens``), or quotes the whole line
(an edit's ``old_string``, a code block; a file view's line-number prefix aside). One line a token is
enough: the token is what the agent acts on, and a name used on many lines would otherwise take them all.
Shortening an output keeps these lines first, within its share: the agent has shown it uses them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from myrm_tui.context import memo
from myrm_tui.context.summary import ledger
from myrm_tui.context.types import Message

QUOTED_MIN_CHARS = 12  # shorter lines (``end``, ``return None``) are quoted by chance
# A file view's line-number prefix: ``cat -n``'s tab, Claude Code's ``→``, ``grep -n``'s colon.
_NUMBERED = re.compile(r"^\s*\d+(?:→|\t|:)")


def _said(m: Message) -> str:
    return "\n".join([m.text, *(ledger._argument_text(c.arguments) for c in m.tool_calls)])


def referred_lines(source: str, later: Sequence[Message], tokens: bool = True) -> list[ledger.Line]:
    """The lines of ``source`` (an output's text) that the assistant messages ``later`` refer to, in their
    order, at the priority of a line the reply quoted (``ledger.P_CALL``); without ``tokens``, only the
    lines they quote whole."""
    said = [m for m in later if m.role == "assistant" and not m.synthetic]
    rows = source.splitlines()
    if not said or not rows:
        return []
    quoted = {q.strip() for m in said for q in _said(m).splitlines() if len(q.strip()) >= QUOTED_MIN_CHARS}
    keep = {
        i
        for i, r in enumerate(rows)
        if len(body := _NUMBERED.sub("", r, count=1).strip()) >= QUOTED_MIN_CHARS and body in quoted
    }
    use = ledger.LaterUse(said)
    pending = use.used_of(source, -1) if tokens else []
    for i, r in enumerate(rows):
        if not pending:
            break
        held = [t for t in pending if t in r]
        if held:
            keep.add(i)
            pending = [t for t in pending if t not in held]
    return [ledger.Line(ledger._clip(rows[i]), ledger.P_CALL) for i in sorted(keep)]


def merged(lines: Sequence[ledger.Line], extra: Sequence[ledger.Line], source: str) -> list[ledger.Line]:
    """``lines`` with the ``extra`` lines they lack, each in its place in ``source`` (a line of ``lines``
    that ``source`` lacks stays after the one before it); a line both hold takes the higher priority."""
    if not extra:
        return list(lines)
    more = {ln.text: ln for ln in extra}
    where = {r: i for i, r in reversed(list(enumerate(ledger._clip(r) for r in source.splitlines())))}
    placed: list[tuple[float, ledger.Line]] = []
    at = -1.0
    for ln in lines:
        at = where.get(ln.text, at + 1e-3)
        x = more.pop(ln.text, None)
        placed.append((at, ln if x is None or x.priority <= ln.priority else x))
    placed += [(float(where.get(t, len(where))), ln) for t, ln in more.items()]
    return [ln for _, ln in sorted(placed, key=lambda p: p[0])]


# Claude Code's Read numbers a file's lines with an arrow (``    12→code``) where ``cat -n`` puts a tab;
# the ledger knows a file view by the tab (its lines are code: an ``{:error, reason} ->`` clause there is
# no failure). An imported session's reads are read as the ledger reads ``cat -n``.
_ARROW = re.compile(r"^([ \t]*\d+)→", re.M)
_TAB = re.compile(r"^([ \t]*\d+)\t", re.M)


def as_numbered_view(text: str) -> tuple[str, bool]:
    """``text`` with an arrow-numbered file view's prefixes as tabs, and whether there were any."""
    out, n = _ARROW.subn("\\1\t", text)
    return out, n > 0


def with_arrows(text: str) -> str:
    """The prefixes ``as_numbered_view`` made tabs, arrows again."""
    return _TAB.sub("\\1→", text)


# A file's first and last lines say what it is (its module, imports, constants: ``@batch_size 500``) and
# where it ends; kept with its located lines. 8 and 20 measured (tune halves): 20 kept one more fact at
# foreign 64K, the same elsewhere.
FILE_VIEW_ENDS = 20


def is_file_view(text: str) -> bool:
    """Whether most of ``text``'s lines are a numbered file view's (``cat -n``, a tab-numbered ``Read``:
    ``as_numbered_view``)."""
    rows = [r for r in text.splitlines() if r.strip()]
    return 2 * sum(1 for r in rows if _NUMBERED.match(r)) > len(rows)


def _holds_fact(row: str) -> bool:
    """Whether a line holds a fact-like token, its line number aside: every line of a view has one."""
    return ledger.holds_fact_token(_NUMBERED.sub("", row, count=1))


def file_view_cut(view: str, max_chars: int) -> str:
    """A numbered file view (tab-numbered) cut to ``max_chars``, its fact-bearing lines first, as lines of
    the view in its order (a line over ``ledger.MAX_LINE_CHARS`` clipped): a line the ledger finds salient
    at its rank, the first and last ``FILE_VIEW_ENDS`` lines with the located ones, then every line holding
    a fact-like token, then the rest; a line inside another goes first, then of one rank the longest
    (``ledger.fit``: the same room keeps more names and numbers). A head and a tail keep none of a file's
    middle, where a report that draws on the file finds its names and numbers as often as anywhere."""
    rows = [r for r in view.splitlines() if r.strip()]
    ends = set(rows[:FILE_VIEW_ENDS]) | set(rows[-FILE_VIEW_ENDS:])
    salient: dict[str, int] = {}
    for ln in ledger.salient_lines(view):
        salient[ln.text.strip()] = max(ln.priority, salient.get(ln.text.strip(), 0))
    texts = [ledger._clip(r) for r in rows]
    ranks = [
        max(
            ledger.P_LOCATED if r in ends else ledger.P_FILL if _holds_fact(r) else ledger.P_OTHER,
            salient.get(t.strip(), 0),
        )
        for r, t in zip(rows, texts, strict=True)
    ]
    lines = [ledger.Line(t, rank) for t, rank in zip(texts, ranks, strict=True)]
    # Each row's shape (``ledger.redundant``) is read for this cut only: the Record reads the output's own
    # lines, other strings. Kept in the session memo they were most of its entries on a long file's read.
    with memo.suspended():
        return "\n".join(ledger.fit(lines, max_chars))
