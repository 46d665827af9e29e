"""Pick a session to open (Enter), or delete one (d). Newest first."""

from __future__ import annotations

import time
from dataclasses import dataclass

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, OptionList
from textual.widgets.option_list import Option

from myrm_tui.safe_text import one_line, sanitize
from myrm_tui.store.db import SessionRow

TITLE_WIDTH = 60  # characters of a title in the list (a longer one ends with …)


@dataclass(frozen=True, slots=True)
class OpenSession:
    session_id: str


@dataclass(frozen=True, slots=True)
class DeleteSession:
    session_id: str


class SessionPicker(ModalScreen[OpenSession | DeleteSession | None]):
    DEFAULT_CSS = """
    SessionPicker { align: center middle; }
    SessionPicker > Vertical {
        width: 90%; max-width: 120; height: 80%; border: thick $accent; background: $surface; padding: 0 1;
    }
    SessionPicker OptionList { height: 1fr; }
    """
    BINDINGS = [Binding("escape", "dismiss_none", "Close"), Binding("d", "delete", "Delete")]

    def __init__(self, sessions: list[SessionRow], current: str | None) -> None:
        super().__init__()
        self.sessions = sessions
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("Sessions — Enter opens, d deletes, Esc closes")
            # A title is the user's first message or a model's words: plain text, never markup.
            yield OptionList(
                *[Option(self._label(s), id=s.id) for s in self.sessions], id="sessions", markup=False
            )

    def _label(self, s: SessionRow) -> str:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(s.updated_at))
        mark = "▶ " if s.id == self.current else "  "
        fork = " ⑂" if s.parent_id else ""
        title = one_line(sanitize(s.title), TITLE_WIDTH)  # a title with line breaks would wrap
        return f"{mark}{title:<{TITLE_WIDTH}} {s.message_count:>5} msgs  {when}  {s.id}{fork}"

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option.id:
            self.dismiss(OpenSession(event.option.id))

    def action_dismiss_none(self) -> None:
        self.dismiss(None)

    def action_delete(self) -> None:
        ol = self.query_one(OptionList)
        if ol.highlighted is None:
            return
        option = ol.get_option_at_index(ol.highlighted)
        if option.id:
            self.dismiss(DeleteSession(option.id))  # the app deletes it, then reopens the picker
