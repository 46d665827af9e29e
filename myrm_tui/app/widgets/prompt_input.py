"""The prompt box: Enter sends, Ctrl+J or Alt+Enter adds a line, Up/Down walk the history. While the
slash menu is open, Up/Down move in it, Tab completes, Enter runs the pick. Tab never moves the focus out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual import events
from textual.binding import Binding
from textual.message import Message
from textual.widgets import TextArea

if TYPE_CHECKING:
    from myrm_tui.app.widgets.slash_menu import SlashMenu

MAX_HISTORY = 200


class PromptInput(TextArea):
    DEFAULT_CSS = """
    PromptInput { height: auto; min-height: 3; max-height: 12; border: tall $accent; }
    PromptInput:focus { border: tall $accent-lighten-1; }
    """
    BINDINGS = [
        Binding("ctrl+j", "newline", "New line", show=False),
        Binding("alt+enter", "newline", "New line", show=False),
        Binding("pageup", "scroll_chat(-1)", "Scroll up", show=False),
        Binding("pagedown", "scroll_chat(1)", "Scroll down", show=False),
    ]

    @dataclass
    class ScrollRequested(Message):
        """PageUp/PageDown in the prompt box scroll the conversation."""

        pages: int

    @dataclass
    class Submitted(Message):
        prompt: PromptInput
        text: str

        @property
        def control(self) -> PromptInput:
            return self.prompt

    def __init__(self, **kwargs: object) -> None:
        super().__init__(soft_wrap=True, show_line_numbers=False, tab_behavior="focus", **kwargs)  # type: ignore[arg-type]
        self.sent: list[str] = []
        self._cursor: int | None = None
        self._in_flight = ""  # the last text the app sent to the model, given back if it is refused
        self.menu: SlashMenu | None = None  # set by the screen

    async def _on_key(self, event: events.Key) -> None:
        menu = self.menu
        if menu is not None and menu.is_open and event.key in ("up", "down", "tab", "enter", "escape"):
            event.prevent_default()
            event.stop()
            if event.key in ("up", "down"):
                menu.move(-1 if event.key == "up" else 1)
            elif event.key == "escape":
                menu.close()
            else:
                self._complete(run=event.key == "enter")
            return
        if event.key == "tab":  # the focus stays here (shift+tab still leaves)
            event.prevent_default()
            event.stop()
            return
        if event.key == "enter":
            event.prevent_default()
            event.stop()
            self.submit()
            return
        if event.key == "up" and self.cursor_location[0] == 0 and self.sent:
            event.prevent_default()
            event.stop()
            self._walk(-1)
            return
        if (
            event.key == "down"
            and self._cursor is not None
            and self.cursor_location[0] == self.document.line_count - 1
        ):
            event.prevent_default()
            event.stop()
            self._walk(1)
            return
        await super()._on_key(event)

    def _complete(self, run: bool) -> None:
        """The menu's pick into the box; Enter runs it unless it needs an argument."""
        assert self.menu is not None
        picked = self.menu.chosen()
        if picked is None:
            return
        name, command = picked
        needs_arg = bool(command.usage) and not command.usage.startswith("[")
        self.menu.close()
        if run and not needs_arg:
            self.load_text(f"/{name}")
            self.submit()
            return
        self.load_text(f"/{name} " if command.usage else f"/{name}")
        self.move_cursor(self.document.end)

    def action_scroll_chat(self, pages: int) -> None:
        self.post_message(self.ScrollRequested(pages))

    def action_newline(self) -> None:
        self.insert("\n")

    def submit(self) -> None:
        text = self.text
        if not text.strip():
            return
        if not self.sent or self.sent[-1] != text:
            self.sent.append(text)
            del self.sent[:-MAX_HISTORY]
        self._cursor = None
        self.post_message(self.Submitted(self, text))

    def accepted(self, text: str) -> None:
        """The app sends ``text`` to the model: the box empties and keeps it, to give it back if refused."""
        self._in_flight = text
        self.load_text("")

    def give_back(self) -> None:
        """The message was refused before it was sent (a hook, its size): its text is back in the box."""
        self.load_text(self._in_flight)

    def _walk(self, step: int) -> None:
        n = len(self.sent)
        pos = (n if self._cursor is None else self._cursor) + step
        if pos >= n:
            self._cursor = None
            self.load_text("")
            return
        self._cursor = max(0, pos)
        self.load_text(self.sent[self._cursor])
        self.move_cursor(self.document.end)
