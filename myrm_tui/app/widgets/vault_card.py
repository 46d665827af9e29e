"""``VaultArtifactCard``: shown under a tool call whose output went to the vault; Enter or a click
opens the full output in the vault pane."""

from __future__ import annotations

from textual.widgets import Button

from myrm_tui.app.widgets.plain import plain
from myrm_tui.app.widgets.vault_pane import VaultPane


class VaultArtifactCard(Button):
    DEFAULT_CSS = """
    VaultArtifactCard {
        margin: 0 0 0 4; min-width: 0; height: 1; border: none; background: $boost; color: $accent;
    }
    VaultArtifactCard:focus { text-style: bold reverse; }
    """

    def __init__(self, uri: str, note: str = "") -> None:
        super().__init__(plain(f"⧉ full output in the vault {note}— open"), compact=True)
        self.uri = uri

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.post_message(VaultPane.OpenRequested(self.uri))
