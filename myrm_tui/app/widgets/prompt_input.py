"""The prompt box: Enter sends, Ctrl+J or Alt+Enter adds a line, Up/Down walk the history.

A large paste (over ``PASTE_LINES`` lines or ``PASTE_CHARS`` characters) shows as one label,
``[pasted 3,000 lines]``; the message sent holds the whole text (``expand_pastes``). Typing ``@`` asks
the screen for file completions (``MentionChanged``); while it shows them, Up/Down/Tab/Enter/Esc go to
the menu (``MentionKey``). Mentioned files are attached when the message is sent (``app/mentions.py``).
While the slash menu is open, Up/Down move in it, Tab completes, Enter runs the pick. Tab never moves the
focus out.

A message sent while a turn runs is queued (``queue``) and sent when the turn ends; Up in an empty box takes
the newest queued message back to edit it, Esc then removes it (Esc in an empty box cancels the turn).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import events
from textual.binding import Binding
from textual.message import Message
from textual.widgets import TextArea

from myrm_tui.app.mentions import attach, query_at

if TYPE_CHECKING:
    from myrm_tui.app.widgets.slash_menu import SlashMenu

MAX_HISTORY = 200
PASTE_LINES = 30
PASTE_CHARS = 2_000
# A refused message longer than this comes back as a paste label: laid out in the box, a megabyte took
# a second of CPU each time (the UI stood still), and a text that size is not edited by hand.
GIVE_BACK_LABEL_CHARS = 100_000


def paste_label(text: str, taken: dict[str, str]) -> str:
    """``[pasted 3,000 lines]`` (``[pasted 2,400 chars]`` for few long lines), numbered when taken."""
    lines = text.count("\n") + 1
    size = f"{lines:,} lines" if lines > PASTE_LINES else f"{len(text):,} chars"
    label, n = f"[pasted {size}]", 1
    while label in taken and taken[label] != text:
        n += 1
        label = f"[pasted {size} #{n}]"
    return label


def normalize_newlines(text: str) -> str:
    """CRLF and lone CR line endings as ``\n``."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def collapse(text: str, pastes: dict[str, str]) -> str:
    """``text`` with each pasted block replaced by its label (what the prompt box showed)."""
    for label, full in pastes.items():
        text = text.replace(full, label)
    return text


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
        text: str  # the whole text, pastes expanded
        pastes: dict[str, str] = field(default_factory=dict)  # label -> pasted text, for the transcript

        @property
        def control(self) -> PromptInput:
            return self.prompt

    @dataclass
    class QueueChanged(Message):
        """The queued messages changed: the texts the box showed, oldest first."""

        shown: tuple[str, ...]

    @dataclass
    class MentionChanged(Message):
        """The partial path after an ``@`` at the cursor changed; ``query`` is None when there is none."""

        query: str | None

    @dataclass
    class MentionKey(Message):
        """A key for the open ``@`` menu: up, down, tab, enter or escape."""

        key: str

    def __init__(self, **kwargs: object) -> None:
        super().__init__(soft_wrap=True, show_line_numbers=False, tab_behavior="focus", **kwargs)  # type: ignore[arg-type]
        self.sent: list[str] = []
        self._cursor: int | None = None
        self._in_flight = ""  # the last text the app sent to the model, given back if it is refused
        self.pastes: dict[str, str] = {}  # label in the box -> the pasted text it stands for
        self._shown: dict[str, str] = {}  # a sent text -> the box's text (labels), to give back
        self.workspace: Path | None = None  # where @ mentions are read from (set by the screen)
        self.mention_active = False  # the screen shows the @ menu: its keys go there
        self._mention: str | None = None
        self.menu: SlashMenu | None = None  # set by the screen
        self.queued: list[tuple[str, str]] = []  # (text to send, the box's text), sent after the turn
        self._editing_queued = False  # the box holds a queued message taken back with Up

    async def _on_key(self, event: events.Key) -> None:
        if self.mention_active and event.key in ("up", "down", "tab", "enter", "escape"):
            event.prevent_default()
            event.stop()
            self.post_message(self.MentionKey(event.key))
            return
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
            if self._typed_paste_continues():
                self.insert("\n")
            else:
                self.submit()
            return
        if event.key == "up" and not self.text and self.queued:
            event.prevent_default()
            event.stop()
            _, shown = self.queued.pop()
            self._queue_changed()
            self.load_text(shown)
            self.move_cursor(self.document.end)
            self._editing_queued = True
            return
        if event.key == "escape" and self._editing_queued:  # removes the queued message, not the turn
            event.prevent_default()
            event.stop()
            self._editing_queued = False
            self.load_text("")
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

    def _typed_paste_continues(self) -> bool:
        """More keys already wait behind this Enter: a terminal without bracketed paste types a paste out
        in one read, its line ends as Enter (CR), and each must be a new line, not a send. A person's next
        key never arrives in the same read."""
        for pump in (self.app, self):
            pending: Any = pump._message_queue
            # Textual's queue keeps its messages in ``values`` (asyncio's in ``_queue``)
            waiting = [*getattr(pending, "values", getattr(pending, "_queue", ())), pump._pending_message]
            if any(isinstance(m, events.Key) and (m.is_printable or m.key == "enter") for m in waiting):
                return True
        return False

    async def _on_paste(self, event: events.Paste) -> None:
        """A paste's line endings become ``\n``; a large paste becomes a label."""
        if self.read_only:
            return
        event.prevent_default()
        # tmux's paste-buffer and several terminals send CR (or CRLF) line endings: kept as they came,
        # a 60-line paste reached the model as one line.
        text = normalize_newlines(event.text)
        if text.count("\n") + 1 <= PASTE_LINES and len(text) <= PASTE_CHARS:
            if result := self._replace_via_keyboard(text, *self.selection):
                self.move_cursor(result.end_location)
            return
        label = paste_label(text, self.pastes)
        self.pastes[label] = text
        self.insert(label)

    def on_text_area_changed(self, _: TextArea.Changed) -> None:
        row, col = self.cursor_location
        query = query_at(self.document.get_line(row)[:col])
        if query != self._mention:
            self._mention = query
            self.post_message(self.MentionChanged(query))

    def complete_mention(self, path: str) -> None:
        """Replace the partial ``@…`` before the cursor with ``@path `` (the menu's choice)."""
        row, col = self.cursor_location
        query = query_at(self.document.get_line(row)[:col]) or ""
        self.replace(f"@{path} ", (row, col - len(query) - 1), (row, col))
        self.mention_active = False

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

    def expand_pastes(self, text: str) -> str:
        """``text`` with each paste label replaced by the text it stands for."""
        for label, full in self.pastes.items():
            text = text.replace(label, full)
        return text

    def submit(self) -> None:
        shown = self.text
        if not shown.strip():
            return
        if not self.sent or self.sent[-1] != shown:
            self.sent.append(shown)
            del self.sent[:-MAX_HISTORY]
        self._cursor = None
        self._editing_queued = False
        text = self.expand_pastes(shown)
        used = {label: full for label, full in self.pastes.items() if label in shown}
        if self.workspace is not None and "@" in shown:
            text, attached = attach(text, self.workspace, typed=shown)
            used.update(attached)
        self._shown = {text: shown} if used else {}
        self.post_message(self.Submitted(self, text, used))

    def queue(self, text: str) -> None:
        """A turn runs: ``text`` waits, shown under the box, and the box empties."""
        self.queued.append((text, self._shown.get(text, text)))
        self._editing_queued = False
        self.load_text("")
        self._queue_changed()

    def take_queued(self) -> str | None:
        """The oldest queued message, to send now (None when there is none)."""
        if not self.queued:
            return None
        text, _ = self.queued.pop(0)
        self._queue_changed()
        return text

    def unqueue_all(self) -> None:
        """The turn was cancelled: the queued messages go back into the box, to send or drop."""
        if not self.queued:
            return
        shown = "\n\n".join(s for _, s in self.queued)
        self.queued.clear()
        self._queue_changed()
        self.load_text(f"{self.text}\n\n{shown}" if self.text.strip() else shown)
        self.move_cursor(self.document.end)

    def _queue_changed(self) -> None:
        self.post_message(self.QueueChanged(tuple(s for _, s in self.queued)))

    def accepted(self, text: str) -> None:
        """The app sends ``text`` to the model: the box empties and keeps it, to give it back if refused."""
        self._in_flight = self._shown.get(text, text)
        self.load_text("")

    def give_back(self) -> None:
        """The message was refused before it was sent (a hook, its size): its text is back in the box (a
        huge one as a label, which sends the whole text again)."""
        text = self._in_flight
        if len(text) > GIVE_BACK_LABEL_CHARS:
            label = paste_label(text, self.pastes)
            self.pastes[label] = text
            text = label
        self.load_text(text)

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
