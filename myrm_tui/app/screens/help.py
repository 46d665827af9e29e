"""Key bindings and slash commands at a glance (F1), generated from the command table."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

from myrm_tui.app.commands import help_markdown
from myrm_tui.app.widgets.chat_message import warm_markdown_urls


class HelpScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 90; height: 80%; border: thick $accent; background: $surface; }
    """
    BINDINGS = [Binding("escape,f1,q", "dismiss", "Close")]

    def compose(self) -> ComposeResult:
        warm_markdown_urls()  # its parse may run beside a message's, in another thread
        with VerticalScroll():
            yield Markdown(help_markdown())
