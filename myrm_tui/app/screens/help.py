"""Keys and slash commands at a glance (F1), one row each, generated from the bindings themselves (the
app's command table, the chat screen's, the prompt box's, the transcript's, search's, the vault pane's) so
the list cannot drift."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from myrm_tui.app.commands import EDITING_KEYS, binding_rows, command_key_rows, key_label, slash_rows

Section = tuple[str, list[tuple[str, str]]]


def help_sections() -> list[Section]:
    """(title, rows) of the help screen: the prompt box's own keys, every binding of the chat, the keys of
    the transcript (after Shift+Tab), of search and of the vault pane, the slash commands."""
    from myrm_tui.app.screens.main import MainScreen
    from myrm_tui.app.widgets.chat_log import ChatLog
    from myrm_tui.app.widgets.compaction_row import CompactionRow
    from myrm_tui.app.widgets.prompt_input import PromptInput
    from myrm_tui.app.widgets.transcript_search import TranscriptSearch
    from myrm_tui.app.widgets.vault_pane import VaultPane

    palette = [(key_label(App.COMMAND_PALETTE_BINDING), "Command palette (every action)")]
    return [
        (
            "Keys",
            [
                *EDITING_KEYS,
                *binding_rows(PromptInput.BINDINGS),
                # guard: help-the-chat-screens-own-bindings-are
                *binding_rows(MainScreen.BINDINGS),
                *palette,
                *command_key_rows(),
            ],
        ),
        ("In the transcript (Shift+Tab)", binding_rows([*ChatLog.BINDINGS, *CompactionRow.BINDINGS])),
        ("In search (Ctrl+G)", binding_rows(TranscriptSearch.BINDINGS)),
        ("In the vault pane (F4)", binding_rows(VaultPane.BINDINGS)),
        ("Slash commands", slash_rows()),
    ]


def _table(title: str, rows: list[tuple[str, str]]) -> Table:
    table = Table(title=title, title_justify="left", box=None, show_header=False, pad_edge=False, expand=True)
    table.add_column(style="bold", no_wrap=True)
    table.add_column(ratio=1)
    for key, text in rows:
        table.add_row(Text(key), Text(text))  # not markup: "/mode [full|lean…]" is text
    return table


class HelpScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll {
        width: 100; max-width: 95%; height: 80%; border: thick $accent; background: $surface; padding: 0 1;
    }
    HelpScreen Static { margin-bottom: 1; }
    """
    BINDINGS = [Binding("escape,f1,q", "dismiss", "Close")]

    def compose(self) -> ComposeResult:
        with VerticalScroll() as box:
            box.border_title = "myrm — keys"
            # the footer under it shows the chat's keys, none that closes this
            box.border_subtitle = "Esc closes"
            for title, rows in help_sections():
                yield Static(_table(title, rows), classes="help-section")
