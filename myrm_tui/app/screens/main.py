"""The chat screen: conversation, side panel, status line, prompt box, footer."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Footer, Header, Static

from myrm_tui.app.widgets.chat_log import ChatLog
from myrm_tui.app.widgets.prompt_input import PromptInput
from myrm_tui.app.widgets.side_panel import SidePanel


class MainScreen(Screen[None]):
    CSS_PATH = "main.tcss"

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False, icon="◉")
        with Horizontal(id="body"):
            yield ChatLog(id="chat")
            yield SidePanel(id="panel")
        yield Static("starting…", id="status", markup=False)
        yield PromptInput(id="prompt")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(PromptInput).focus()
