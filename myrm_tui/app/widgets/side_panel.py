"""The right-hand column: context ring, a few live numbers, the fork suggestion."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from myrm_tui.app.widgets.context_ring import ContextUsageIndicator


class SidePanel(Vertical):
    DEFAULT_CSS = """
    SidePanel { width: 38; border-left: vkey $panel-lighten-2; padding: 0 1; }
    SidePanel #model { color: $text-muted; height: auto; }
    SidePanel #stats { height: auto; margin-top: 1; }
    SidePanel #fork-hint { color: $warning; display: none; height: auto; margin-top: 1; }
    SidePanel.-suggest-fork #fork-hint { display: block; }
    """

    def compose(self) -> ComposeResult:
        yield ContextUsageIndicator(id="ring")
        yield Static("", id="model", markup=False)
        yield Static("", id="stats", markup=False)
        yield Static("Context is getting full: ctrl+f forks this session with a summary.", id="fork-hint")

    def show_model(self, text: str) -> None:
        self.query_one("#model", Static).update(text)

    def show_stats(self, lines: list[str]) -> None:
        self.query_one("#stats", Static).update("\n".join(lines))
