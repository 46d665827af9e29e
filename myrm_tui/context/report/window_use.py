"""What fills the window now, by category, and the pipeline's levels in the same tokens: the one figure
for "context now" that the ring, the lines under it, the health panel and ``/context`` all read.

The parts add up to the ring's figure (our count of the request's view plus the tool schemas); free and
reserved-for-the-reply complete the window. The levels are the pipeline's (shares of the input budget,
``ContextConfig``), moved into these tokens by adding the tool schemas, so a ring at the full level's figure
is where Pre-Compact sees the full level.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from myrm_tui.context.config import ContextConfig
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
class Levels:
    """The pipeline's levels in the ring's tokens (the view plus the tool schemas)."""

    light: int
    full: int
    emergency: int
    budget: int  # the input budget: past it the request is cut to fit, whatever else

    @classmethod
    def of(cls, config: ContextConfig, schema_tokens: int) -> Levels:
        c = replace(config, overhead_tokens=schema_tokens)  # the budget is the window less these schemas
        return cls(
            c.compress_threshold + schema_tokens,
            c.compress_force_threshold + schema_tokens,
            c.summarize_trigger_threshold + schema_tokens,
            c.input_budget + schema_tokens,
        )

    def colour(self, tokens: int) -> str:
        """green below the light level, amber below the full level, red from it."""
        return "red" if tokens >= self.full else "amber" if tokens >= self.light else "green"

    def short(self) -> str:
        """``4.3K / 6.0K / 7.7K of 8.6K``: light / full / emergency of the budget."""
        k = [f"{n / 1000:.1f}K" for n in (self.light, self.full, self.emergency, self.budget)]
        return f"{k[0]} / {k[1]} / {k[2]} of {k[3]}"


@dataclass(frozen=True, slots=True)
class WindowUse:
    window: int
    reserved: int  # kept for the reply
    parts: tuple[tuple[str, int], ...]  # (category, tokens), every category, in ``CATEGORIES`` order
    levels: Levels | None = None

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
        if self.levels is not None:  # in the same tokens: where the ring turns amber, red, and the net
            lv = self.levels
            out.append(f"{'light · full at':<18} {lv.light:,} · {lv.full:,}")
            out.append(f"{'emergency · budget':<18} {lv.emergency:,} · {lv.budget:,}")
        return out


def window_use(
    messages: Sequence[Message], counter: TokenCounter, schema_tokens: int, config: ContextConfig
) -> WindowUse:
    """``messages`` (a request's view) by category, with the tool schemas and ``config``'s levels."""
    totals = dict.fromkeys(CATEGORIES, 0)
    totals["system prompt"] += REQUEST_OVERHEAD  # the request's own framing, counted once
    totals["tool schemas"] = schema_tokens
    for m in messages:
        totals[category(m)] += counter.message(m)
    return WindowUse(
        config.max_context_tokens,
        config.output_reserve,
        tuple(totals.items()),
        Levels.of(config, schema_tokens),
    )
