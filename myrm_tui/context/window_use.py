"""What fills the window now, by category (``/context`` and the health panel's "Window now" card).

The parts add up to the ring's figure (our count of the request's view plus the tool schemas); free and
reserved-for-the-reply complete the window.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from myrm_tui.context.tokens import REQUEST_OVERHEAD, TokenCounter
from myrm_tui.context.types import Message

CATEGORIES = (
    "system prompt",
    "tool schemas",
    "workspace rules",
    "notes",
    "summary",
    "pinned",
    "messages",
    "tool outputs",
)
BAR_WIDTH = 20


def category(m: Message) -> str:
    kind = m.meta.get("kind")
    if m.role == "system":
        return "system prompt"
    if kind == "environment":
        return "workspace rules"
    if kind == "session_notes":
        return "notes"
    if kind == "summary":
        return "summary"
    if kind == "pinned":
        return "pinned"
    if m.role == "tool":
        return "tool outputs"
    return "messages"


@dataclass(frozen=True, slots=True)
class WindowUse:
    window: int
    reserved: int  # kept for the reply
    parts: tuple[tuple[str, int], ...]  # (category, tokens), every category, in ``CATEGORIES`` order

    @property
    def used(self) -> int:
        return sum(n for _, n in self.parts)

    @property
    def free(self) -> int:
        return max(self.window - self.used - self.reserved, 0)

    def rows(self) -> list[tuple[str, int]]:
        return [*self.parts, ("free", self.free), ("reserved for reply", self.reserved)]

    def lines(self, width: int = BAR_WIDTH) -> list[str]:
        """One line per category: name, tokens, share of the window, a bar; then the total."""
        w = max(self.window, 1)
        out = []
        for name, n in self.rows():
            cells = round(n / w * width)
            bar = "█" * cells + "·" * (width - cells)
            out.append(f"{name:<18} {n:>8,} {n / w:>4.0%} {bar}")
        out.append(f"{'in use (the ring)':<18} {self.used:>8,} of {self.window:,}")
        return out


def window_use(
    messages: Sequence[Message], counter: TokenCounter, schema_tokens: int, window: int, reserved: int
) -> WindowUse:
    totals = dict.fromkeys(CATEGORIES, 0)
    totals["system prompt"] += REQUEST_OVERHEAD  # the request's own framing, counted once
    totals["tool schemas"] = schema_tokens
    for m in messages:
        totals[category(m)] += counter.message(m)
    return WindowUse(window, reserved, tuple(totals.items()))
