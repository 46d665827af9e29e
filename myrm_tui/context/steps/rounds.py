"""How large the next round (the tokens one request adds) is expected to be, from the last ones: read by
Pre-Compact's band and by where a compaction lands (``compress.planned_tail``)."""

from __future__ import annotations

from collections.abc import Sequence


def predicted_round(growth: Sequence[int], rounds: int, margin: float = 1.0) -> int:
    """The next request's growth: the largest of the last ``rounds`` (a tool step that dumped a file once
    will again; an average would let it jump the band), times ``margin`` (the next one may be a little
    larger than any seen)."""
    return int(max(growth[-rounds:], default=0) * margin) if rounds > 0 else 0


def usual_round(growth: Sequence[int], rounds: int, quantile: float, margin: float) -> int:
    """A round as large as most recent ones: the ``quantile`` of the last ``rounds`` growths, times
    ``margin``."""
    recent = sorted(growth[-rounds:]) if rounds > 0 else []
    if not recent:
        return 0
    return int(recent[min(len(recent) - 1, int(len(recent) * quantile))] * margin)
