"""When a lossy cut of a tool output is worth making: the room model of the smart filter.

A cut on arrival (the filter's extract, summary, or head and tail) buys two things: fewer tokens re-read
from the cache on each later request (a tenth of the input price), and a later compaction (the view grows
more slowly towards the compaction point). It costs what the agent may still need from lines it has not
read yet: the original is in the vault, but a fact missed is a round spent fetching it back, or a wrong
step. The first gain is cents; the second is the one a session needs, and only a session that will reach
its compaction point gets it. So a lossy cut of **prose** (a subagent's report, an explanation: every line
of it is written to be read, and head and tail keep none of its middle) is made only where the output would
**crowd the view**: where the view, with the output whole and grown at its mean round for the rest of the
session, reaches the compaction point. The rest of the session is not known ahead: one that has made n
requests is taken to make n more (it is as likely to end before as after; the answered trim's estimate).
Where it does not crowd, the report stays whole: the answered trim shortens it after its reply, and a
compaction folds it with the rest (the prefix is rewritten then anyway: the deferred cut costs the cache
nothing). Code, logs and listings are cut on arrival wherever they are large, as before the model: deferred,
a young session's reads came whole and the answered trim later kept fewer of their facts than head and tail
had (measured: ``bench/foreign/README.md``). The budget guard still cuts whatever the budget cannot afford,
and the shell compressors, the rules and a JSON skeleton run on every large output.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from myrm_tui.context.types import Message

PROSE_SHARE = 0.5  # of the written characters in lines of words: a report, not a listing with comments
WRITTEN_SHARE = 0.25  # a text that is mostly quoted code (fenced) is code
SHAPE_CHARS = 20_000  # a text's shape shows in its first pages: a long one is not read to the end
DEFAULT_ROUND_TOKENS = 600  # what one round adds, before a session has shown its own
RECENT_ROUNDS = 16


def mean_round(growth: Sequence[int]) -> float:
    """What a request adds to the view, on average over the recent ``growth`` (a session's own, once it has
    one)."""
    recent = growth[-RECENT_ROUNDS:]
    return max(sum(recent) / len(recent), 1.0) if len(recent) >= 2 else float(DEFAULT_ROUND_TOKENS)


def requests_so_far(raw: Sequence[Message], cap: float) -> int:
    """The requests a session has made (its assistant messages), counted up to ``cap``: a long history is
    not walked to the end."""
    n = 0
    for m in raw:
        if n >= cap:
            break
        n += m.role == "assistant"
    return n


def crowds(view_tokens: int, point: int, growth: Sequence[int], raw: Sequence[Message]) -> bool:
    """Whether a view of ``view_tokens`` (the output in it whole) reaches the compaction ``point`` before the
    session is expected to end: the requests left before the point, at the mean round of ``growth``, are no
    more than the session has made so far (``raw``)."""
    if view_tokens >= point:
        return True
    left = (point - view_tokens) / mean_round(growth)
    return requests_so_far(raw, left) >= left


_FENCE = re.compile(r"^\s*(?:```|~~~)")
_WORD = re.compile(r"^\(?[A-Za-z][a-z']*[,.;:!?)]*$")  # a word of a sentence, not an identifier or a path
_NOT_WRITTEN = re.compile(
    r"^(?:\s*\d+(?:→|\t|:|\|)"  # a numbered file view
    r"|[ \t]{4}|\t"  # indented: code
    r"|\s*\|"  # a table row
    r"|\S+:\d+[:-]|\S+\.\w+:"  # grep's path:line: or path:
    r"|\s*\[?\d{2,4}[-/:.]\d{2}|\s*\[?(?:DEBUG|INFO|WARN|WARNING|ERROR|TRACE|FATAL)\b"  # a log
    r"|\s*File \"|Traceback|\s*[\w.]*(?:Error|Exception|Warning)\b"  # a traceback
    r"|@@ |diff --git|[+-](?![-\s]))"  # a diff
)
_BOX = re.compile("[│├└┌┐┘┬┴┼─]")  # a tree or a box
_MARKUP = re.compile(r"^\s*(?:[-*+>]|\d+[.)]|#+)\s+|\*\*|__|`")


def is_prose(text: str) -> bool:
    """Whether ``text`` is written prose (a report, an explanation, a document) by its shape: at least half
    of its characters outside fenced code are in lines mostly of words, not lines that look like code, a
    log, a listing, a table or a numbered file view. An escaped text (a JSON string) is read by its lines;
    a long one by its first ``SHAPE_CHARS``."""
    written = prose = fenced_chars = 0
    fenced = False
    for line in text[:SHAPE_CHARS].replace("\\n", "\n").splitlines():
        n = len(line.strip())
        if not n:
            continue
        if _FENCE.match(line):
            fenced = not fenced
        elif fenced:
            fenced_chars += n
        else:
            written += n
            if not _NOT_WRITTEN.match(line) and not _BOX.search(line):
                tokens = _MARKUP.sub("", line).split()
                words = sum(1 for t in tokens if _WORD.match(t))
                prose += n if words >= 3 and 2 * words >= len(tokens) else 0
    return written >= WRITTEN_SHARE * (written + fenced_chars) and prose >= PROSE_SHARE * written > 0
