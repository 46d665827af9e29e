"""``StatusLine``: the line above the prompt box (ready, thinking…, the last error); its text is the
app's ``status``, bound down through the screen."""

from __future__ import annotations

from typing import Any

from textual.reactive import var
from textual.widgets import Static

from myrm_tui.safe_text import sanitize

STARTING = "starting…"


class StatusLine(Static):
    status: var[str] = var(STARTING, init=False)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(STARTING, markup=False, **kwargs)

    def watch_status(self, text: str) -> None:
        self.update(sanitize(text))  # it may quote an error or a tool's name
