"""Key bindings and slash commands at a glance (F1)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

HELP = """\
# myrm — keys

| key | action |
|---|---|
| Enter | send the message |
| Ctrl+J / Alt+Enter | new line in the message |
| Up / Down | previous / next sent message |
| Esc | cancel the running turn |
| Ctrl+K | compact the context now |
| Ctrl+F | fork this session |
| Ctrl+N | new session |
| Ctrl+S | sessions (open, delete) |
| Ctrl+B | show / hide the side panel |
| Ctrl+P | command palette |
| F1 | this help |
| Ctrl+Q | quit |

# Slash commands

`/compact [focus]` · `/fork` · `/vault` · `/health` · `/model NAME` · `/mode full|lean|naked|search` · `/notes` · `/clear` (new session) · `/sessions` · `/help`
"""


class HelpScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 80; height: 80%; border: thick $accent; background: $surface; }
    """
    BINDINGS = [Binding("escape,f1,q", "dismiss", "Close")]

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Markdown(HELP)
