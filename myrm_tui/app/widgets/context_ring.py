"""``ContextUsageIndicator``: a ring of block characters showing how full the context is.

Usage is the next request's input (cached + uncached), clamped to 100%; the dot is green below the
amber threshold, amber below red, red above. Clicking the ring asks for a compaction.
"""

from __future__ import annotations

import math

from rich.text import Text
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Static

# 12 cells around a 5x3 ring, clockwise from the top centre.
_RING_CELLS = [(0, 2), (0, 3), (1, 4), (2, 4), (3, 4), (4, 3), (4, 2), (4, 1), (3, 0), (2, 0), (1, 0), (0, 1)]


class ContextUsageIndicator(Static):
    DEFAULT_CSS = """
    ContextUsageIndicator { width: 100%; height: 7; content-align: center middle; }
    """

    ratio: reactive[float] = reactive(0.0)
    tokens: reactive[int] = reactive(0)
    window: reactive[int] = reactive(0)
    busy: reactive[bool] = reactive(False)

    class CompactRequested(Message):
        pass

    def __init__(self, amber: float = 0.5, red: float = 0.75, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.amber = amber
        self.red = red

    def level(self) -> str:
        if self.ratio >= self.red:
            return "red"
        if self.ratio >= self.amber:
            return "amber"
        return "green"

    def render(self) -> Text:
        ratio = max(0.0, min(self.ratio, 1.0))
        color = {"green": "green", "amber": "yellow", "red": "red"}[self.level()]
        filled = math.ceil(ratio * len(_RING_CELLS)) if ratio > 0 else 0
        grid = [[" "] * 5 for _ in range(5)]
        lit = set(_RING_CELLS[:filled])
        for cell in _RING_CELLS:
            grid[cell[0]][cell[1]] = "█" if cell in lit else "░"
        pct = f"{ratio * 100:3.0f}%"
        grid[2][1:4] = list(pct[-3:])
        out = Text()
        for r, row in enumerate(grid):
            for c, ch in enumerate(row):
                style = color if (r, c) in lit else ("bold" if r == 2 and 1 <= c <= 3 else "grey37")
                out.append(ch, style=style)
            if r == 1:
                out.append(f"   ● {self.level()}", style=color)
            if r == 2:
                out.append(f"   {self.tokens:,} / {self.window:,} tok")
            if r == 3:
                out.append("   compacting…" if self.busy else "   ctrl+k compact", style="italic grey50")
            out.append("\n")
        return out

    def on_click(self) -> None:
        self.post_message(self.CompactRequested())
