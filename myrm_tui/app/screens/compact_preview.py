"""The compaction preview (ctrl+k, ``/compact``): what a compaction would remove, before it runs.

Computed on a copy of the context state with the extractive summary (free and quick); Enter compacts,
Esc leaves everything as it is."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from myrm_tui.context.compaction.record import Compaction, short_tokens

SHOWN_ITEMS = 40


class CompactPreviewScreen(ModalScreen[bool]):
    DEFAULT_CSS = """
    CompactPreviewScreen { align: center middle; }
    CompactPreviewScreen > VerticalScroll {
        width: 100; height: auto; max-height: 80%; border: thick $accent; background: $surface; padding: 0 2;
    }
    CompactPreviewScreen #preview-head { text-style: bold; margin-bottom: 1; }
    CompactPreviewScreen #preview-keys { color: $text-muted; margin-top: 1; }
    """
    BINDINGS = [
        Binding("enter", "confirm", "Compact", priority=True),
        Binding("escape", "cancel", "Cancel"),
    ]

    def __init__(self, record: Compaction, summarizer: str) -> None:
        super().__init__()
        self.record = record
        self.summarizer = summarizer

    def compose(self) -> ComposeResult:
        r = self.record
        head = (
            f"Compact now? {short_tokens(r.tokens_before)} → about {short_tokens(r.tokens_after)} tokens "
            f"({len(r.left)} items leave the view; each stays readable in the vault)"
        )
        items = [
            f"· {i.role:<9} {short_tokens(i.tokens):>6}  {i.gist}"
            for i in sorted(r.left, key=lambda i: -i.tokens)[:SHOWN_ITEMS]
        ]
        if len(r.left) > SHOWN_ITEMS:
            items.append(f"… and {len(r.left) - SHOWN_ITEMS} more")
        # the LLM's note ends in "…" already: "writing the summary with M…." read as a typo
        note = self.summarizer if self.summarizer.endswith("…") else self.summarizer.rstrip(".") + "."
        with VerticalScroll():
            yield Static(head, id="preview-head", markup=False)
            yield Static("\n".join(items), id="preview-items", markup=False)
            yield Static(f"Summary: {note} Enter compacts · Esc cancels", id="preview-keys", markup=False)

    def action_confirm(self) -> None:
        self.dismiss(True)

    def action_cancel(self) -> None:
        self.dismiss(False)
