"""``ContextUsageIndicator``: a ring of twelve segments showing how full the context is.

Usage is the next request's input (cached + uncached, tool schemas included), clamped to 100%; segments
light clockwise from the top. The colour (and dot) is green below the pipeline's light level, amber below
its full level, red from it: the levels the pipeline compacts at, in the ring's own tokens (``WindowUse``),
not shares of the window. Until the agent is built the window is not known and the ring says so. Clicking
the ring asks for a compaction. ``live`` and ``busy`` are bound from the side panel.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from rich.text import Text
from textual.message import Message
from textual.reactive import reactive, var
from textual.widgets import Static

from myrm_tui.app.live import LiveContext

# (row, col, glyph) clockwise from the top centre of a 3x7 ring.
_SEGMENTS = [
    (0, 3, "▄"),
    (0, 4, "▄"),
    (0, 5, "▖"),
    (1, 6, "▌"),
    (2, 5, "▘"),
    (2, 4, "▀"),
    (2, 3, "▀"),
    (2, 2, "▀"),
    (2, 1, "▝"),
    (1, 0, "▐"),
    (0, 1, "▗"),
    (0, 2, "▄"),
]
COLORS = {"green": "green", "amber": "yellow", "red": "red"}


class ContextUsageIndicator(Static):
    DEFAULT_CSS = """
    ContextUsageIndicator { width: 100%; height: 4; padding: 1 0 0 0; }
    """

    ratio: reactive[float] = reactive(0.0)
    tokens: reactive[int] = reactive(0)
    window: reactive[int] = reactive(0)
    busy: reactive[bool] = reactive(False)
    colour: reactive[str] = reactive("green")  # "green" | "amber" | "red": LiveContext.colour
    compact: reactive[bool] = reactive(False)  # one line (the side panel collapsed)
    live: var[LiveContext] = var(LiveContext, init=False)

    @dataclass
    class CompactRequested(Message):
        """The ring was clicked: compact now."""

    def watch_live(self, live: LiveContext) -> None:
        self.tokens, self.window, self.ratio, self.colour = live.tokens, live.window, live.ratio, live.colour

    def level(self) -> str:
        return self.colour

    def render(self) -> Text:
        ratio = max(0.0, min(self.ratio, 1.0))
        color = COLORS[self.level()]
        if self.compact:
            return self._line(ratio, color)
        lit = math.ceil(ratio * len(_SEGMENTS)) if ratio > 0 else 0
        grid = [[" "] * 7 for _ in range(3)]
        styles = [[""] * 7 for _ in range(3)]
        for k, (r, c, glyph) in enumerate(_SEGMENTS):
            grid[r][c] = glyph
            styles[r][c] = color if k < lit else "grey30"
        pct = (f"{ratio * 100:.0f}%" if self.window else "…").center(5)
        for c, ch in enumerate(pct, start=1):
            grid[1][c], styles[1][c] = ch, "bold"
        side = [
            Text.assemble(("● ", color), (f"context {self.level()}", color)),
            Text(
                f"{self.tokens:,} / {self.window:,} tokens" if self.window else "counting tokens…",
                style="" if self.window else "italic grey50",
            ),
            Text("compacting…" if self.busy else "ctrl+k to compact", style="italic grey50"),
        ]
        out = Text()
        for r in range(3):
            for c in range(7):
                out.append(grid[r][c], style=styles[r][c])
            out.append("  ")
            out.append_text(side[r])
            if r < 2:
                out.append("\n")
        return out

    def _line(self, ratio: float, color: str) -> Text:
        """The one-line form, as much as fits: whole parts, the least needed left out first (at 80
        columns ``· ctrl+b panel`` was cut mid-word)."""
        parts = [
            Text.assemble(
                ("● ", color),
                (f"context {self.level()} {ratio * 100:.0f}%" if self.window else "context …", color),
            ),
            Text(f"  {self.tokens:,} / {self.window:,} tokens" if self.window else ""),
            Text("  ·  compacting…" if self.busy else "  ·  ctrl+k compacts", "italic grey50"),
            Text("  ·  ctrl+b panel", "italic grey50"),
        ]
        room = self.size.width or sum(p.cell_len for p in parts)
        while len(parts) > 1 and sum(p.cell_len for p in parts) > room:
            parts.pop()
        return Text("").join(parts)

    def on_click(self) -> None:
        self.post_message(self.CompactRequested())
