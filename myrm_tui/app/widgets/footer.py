"""The footer: the chat screen's keys, each shown whole.

Textual's footer clips what does not fit mid-word (``f4 Vau▏^p palette`` at 120 columns). This one
leaves out whole keys instead, the least needed first (``DROP_FIRST``), so what shows can be read;
``^p palette`` always stays: every command is there, and F1 lists every key."""

from __future__ import annotations

from textual import events
from textual.app import ComposeResult
from textual.widget import Widget
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

# Left out in this order when the width is short (the others stay in the footer's order).
DROP_FIRST = (
    "quit",
    "new_session",
    "sessions",
    "help",
    "fork",
    "settings",
    "show_tab('health-tab')",
    "show_tab('vault-tab')",
    "cancel_turn",
)


def key_width(key: FooterKey) -> int:
    """Cells a key takes in the footer: `` key `` then ``description `` (Textual's padding)."""
    return len(key.key_display) + 2 + (len(key.description) + 1 if key.description else 0)


class KeysFooter(Footer):
    def __init__(self) -> None:
        super().__init__()
        self._width = 0

    def compose(self) -> ComposeResult:
        keys: list[Widget] = list(super().compose())
        room = self.app.size.width - 1  # the palette key's left border
        dropped = iter(DROP_FIRST)
        while sum(key_width(k) for k in keys if isinstance(k, FooterKey)) > room:
            action = next(dropped, None)
            if action is None:
                break
            keys = [k for k in keys if not (isinstance(k, FooterKey) and k.action == action)]
        yield from keys

    def on_resize(self, event: events.Resize) -> None:
        if event.size.width != self._width:
            self._width = event.size.width
            self.call_after_refresh(self.recompose)
