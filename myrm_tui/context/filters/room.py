"""When a lossy cut of a tool output is worth making: the room model of the smart filter.

A cut on arrival (the filter's extract, summary, or head and tail) buys two things: fewer tokens re-read
from the cache on each later request (a tenth of the input price), and a later compaction (the view grows
more slowly towards the compaction point). It costs what the agent may still need from lines it has not
read yet: the original is in the vault, but a fact missed is a round spent fetching it back, or a wrong
step. The first gain is cents; the second is the one a session needs, and only a session that will reach
its compaction point gets it. So a lossy cut is made only where the output would **crowd the view**: where
the view, with the output whole and grown at its mean round for the rest of the session, reaches the
compaction point. The rest of the session is not known ahead: one that has made n requests is taken to make
n more (it is as likely to end before as after; the answered trim's estimate). Where it does not crowd, the
output stays whole: the answered trim shortens it after its reply, keeping the lines the reply refers to,
and a compaction folds it with the rest (the prefix is rewritten then anyway: the deferred cut costs the
cache nothing). The budget guard still cuts whatever the budget cannot afford, and the shell compressors,
the rules and a JSON skeleton run on every large output.
"""

from __future__ import annotations

from collections.abc import Sequence

from myrm_tui.context.types import Message

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
