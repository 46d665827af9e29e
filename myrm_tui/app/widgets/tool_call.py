"""A tool call and its result, collapsed by default; vaulted outputs offer to open the vault pane."""

from __future__ import annotations

import re

from textual.widgets import Collapsible, Static

from myrm_tui.context.types import ToolCall
from myrm_tui.safe_text import sanitize

_VAULT = re.compile(r"vault://[\w./-]+")
PREVIEW_CHARS = 4_000


class ToolCallView(Collapsible):
    DEFAULT_CSS = """
    ToolCallView { margin: 0 0 0 2; padding: 0; border: none; background: $boost; }
    ToolCallView .output { color: $text-muted; padding: 0 1; }
    ToolCallView.-error CollapsibleTitle { color: $error; }
    ToolCallView.-running CollapsibleTitle { color: $warning; }
    """

    def __init__(self, call: ToolCall) -> None:
        super().__init__(
            Static("running…", classes="output", markup=False),
            title=self._heading(call, "…"),
            collapsed=True,
            classes="-running",
        )
        self.call = call
        self.vault_uris: list[str] = []

    @staticmethod
    def _heading(call: ToolCall, status: str) -> str:
        args = call.arguments if len(call.arguments) < 90 else call.arguments[:87] + "…"
        return sanitize(f"{status} {call.name} {args}")

    def set_result(self, text: str, is_error: bool) -> None:
        self.remove_class("-running")
        self.set_class(is_error, "-error")
        self.title = self._heading(self.call, "✗" if is_error else "✓")
        self.vault_uris = _VAULT.findall(text)
        shown = text if len(text) <= PREVIEW_CHARS else text[:PREVIEW_CHARS] + f"\n… ({len(text):,} chars)"
        self.query_one(".output", Static).update(sanitize(shown))  # escape codes shown, never obeyed
