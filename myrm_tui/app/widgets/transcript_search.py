"""The search bar above the prompt box (ctrl+g or /search): typing finds the items that contain the
text over the whole session, mounted or not (the newest first); Enter or Up moves to the older match,
Down to the newer one, Esc closes (the focus goes back where it was). It only reports what was typed;
the chat screen asks the conversation to find and show the matches."""

from __future__ import annotations

from dataclasses import dataclass

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Input, Static


class TranscriptSearch(Horizontal):
    DEFAULT_CSS = """
    TranscriptSearch { display: none; height: 3; }
    TranscriptSearch.-open { display: block; }
    TranscriptSearch Input { width: 1fr; }
    TranscriptSearch #search-count { width: auto; padding: 1 1; color: $text-muted; }
    """
    BINDINGS = [
        Binding("escape", "close", "Close search"),
        Binding("up", "step(-1)", "Previous match", show=False),
        Binding("down", "step(1)", "Next match", show=False),
    ]

    @dataclass
    class Find(Message):
        """Find ``needle`` (``step`` 0: a new search) or move ``step`` matches from the current one."""

        needle: str
        step: int = 0

    @dataclass
    class Closed(Message):
        pass

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._back: Widget | None = None  # had the focus before the search opened: gets it back

    def compose(self) -> ComposeResult:
        yield Input(placeholder="search the conversation (Enter/↑ older match, ↓ newer, Esc closes)")
        yield Static("", id="search-count", markup=False)

    @property
    def is_open(self) -> bool:
        return self.has_class("-open")

    def open(self, text: str = "") -> None:
        self.add_class("-open")
        field = self.query_one(Input)
        if text:
            field.value = text
        # Now, not after the queued messages (what Widget.focus does): the keys already typed after
        # ctrl+g would go to the prompt otherwise.
        if self.screen.focused is not field:
            self._back = self.screen.focused
        self.screen.set_focus(field)
        if field.value:
            self.post_message(self.Find(field.value))

    def show_count(self, current: int, total: int) -> None:
        needle = self.query_one(Input).value
        self.query_one("#search-count", Static).update(
            "" if not needle else (f"{current} of {total}" if total else "no match")
        )

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.post_message(self.Find(event.value))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.post_message(self.Find(event.value, -1))

    def action_step(self, step: int) -> None:
        self.post_message(self.Find(self.query_one(Input).value, step))

    @property
    def needle(self) -> str:
        return self.query_one(Input).value

    def action_close(self) -> None:
        self.remove_class("-open")
        # At once, as open() does: the keys typed after Esc go where the focus was.
        self.screen.set_focus(self._back if self._back is not None and self._back.is_attached else None)
        self.post_message(self.Closed())
