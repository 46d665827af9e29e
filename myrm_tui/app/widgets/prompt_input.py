"""The prompt box: Enter sends, Ctrl+J or Alt+Enter adds a line, Up/Down walk the history.

A large paste (over ``PASTE_LINES`` lines or ``PASTE_CHARS`` characters) shows as one label,
``[pasted 3,000 lines]``; the message sent holds the whole text (``expand_pastes``). Typing ``@`` asks
the screen for file completions (``MentionChanged``); while it shows them, Up/Down/Tab/Enter/Esc go to
the menu. Mentioned files are attached when the message is sent (``app/mentions.py``).
While the slash menu is open, Up/Down move in it, Tab completes, Enter runs the pick. Tab never moves the
focus out.

A message sent while a turn runs is queued (``queue``) and sent when the turn ends; Up in an empty box takes
the newest queued message back to edit it, Esc then removes it (Esc in an empty box cancels the turn).

A terminal without bracketed paste types a paste out: its keys come ``BURST_GAP_S`` apart or closer (after
``MACHINE_KEYS`` such keys, up to ``PASTE_GAP_S``: a terminal writes a long paste in chunks), each line end
an Enter. Such an Enter is a new line when more keys of the burst follow it or when the burst already held
one; a burst over ``PASTE_LINES`` lines or ``PASTE_CHARS`` characters collapses into a label as a
bracketed paste does. A person's keys are never that close.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.message import Message
from textual.timer import Timer
from textual.widgets import TextArea
from textual.widgets.text_area import Location

from myrm_tui.app.key_router import router_of
from myrm_tui.app.mentions import query_at
from myrm_tui.attachments import attach
from myrm_tui.safe_text import sanitize

if TYPE_CHECKING:
    from collections.abc import Callable

    from myrm_tui.app.widgets.mention_menu import MentionMenu
    from myrm_tui.app.widgets.slash_menu import SlashMenu

MAX_HISTORY = 200
PASTE_LINES = 30
PASTE_CHARS = 2_000
# A refused message longer than this comes back as a paste label: laid out in the box, a megabyte took
# a second of CPU each time (the UI stood still), and a text that size is not edited by hand.
GIVE_BACK_LABEL_CHARS = 100_000
# Keys this close together came in one read of the terminal: a paste typed out, not a person typing (a
# typist's keys are 50 ms or more apart, a terminal's burst microseconds; the margin is for the driver's
# thread waiting its turn for the GIL, 5 ms a switch, on a busy machine).
BURST_GAP_S = 0.025
# Once that many keys came that close, it is a machine typing: a paste goes on across the longer pauses
# of a terminal writing it in chunks to a busy process (up to 130 ms seen in tmux at a load of 14).
MACHINE_KEYS = 8
PASTE_GAP_S = 0.25
MENU_KEYS = ("up", "down", "tab", "enter", "escape")  # what an open menu takes from the box


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
    # min-width: a terminal a few columns wide left the box 0 columns of text, and TextArea's placeholder
    # wrap (Rich) raised 'range() arg 3 must not be zero' from the compositor: the app ended. Cropped now.
    # guard: prompt-keeps-a-minimum-width
    DEFAULT_CSS = """
    PromptInput { height: auto; min-height: 3; max-height: 12; min-width: 8; border: tall $accent; }
    PromptInput:focus { border: tall $accent-lighten-1; }
    """
    BINDINGS = [
        Binding("ctrl+j", "newline", "New line", show=False),
        Binding("alt+enter", "newline", "New line", show=False),
        # what a terminal with the kitty keyboard protocol sends (Claude Code's and Codex's new line)
        Binding("shift+enter", "newline", "New line, where the terminal tells it from Enter", show=False),
        Binding("pageup", "scroll_chat(-1)", "Scroll up", show=False),
        Binding("pagedown", "scroll_chat(1)", "Scroll down", show=False),
        # ctrl+z suspends myrm (the app's binding), as in a shell: undo is on ctrl+_, as in Claude Code
        Binding("ctrl+underscore", "undo", "Undo", show=False),
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
    class Typing(Message):
        """The box holds text after an edit (the app gets the model ready then). ``TextArea.Changed``
        stops here: the box handles it, and one message has one handler."""

    @dataclass
    class QueueChanged(Message):
        """The queued messages changed: the texts the box showed, oldest first."""

        shown: tuple[str, ...]

    @dataclass
    class MentionChanged(Message):
        """The partial path after an ``@`` at the cursor changed; ``query`` is None when there is none.
        ``hold``: the key router holds the keys after it until the menu shows this query (release it)."""

        query: str | None
        hold: int | None = None

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
        self.mentions: MentionMenu | None = None  # set by the screen
        self.queued: list[tuple[str, str]] = []  # (text to send, the box's text), sent after the turn
        self._editing_queued = False  # the box holds a queued message taken back with Up
        # The burst of text keys being typed (a paste typed out when its keys come BURST_GAP_S apart).
        self._last_key_at = float("-inf")
        self._last_was_text = False
        self._burst_keys = 0  # text keys in the burst so far
        self._burst_start: Location = (0, 0)  # where its text begins in the box
        self._burst_text = ""
        self._burst_label: str | None = None  # collapsed: the label standing for it in the box
        self._pending_enter: events.Key | None = None  # an Enter in a burst: a send, or a line end
        self._enter_timer: Timer | None = None

    def get_line(self, line_index: int) -> Text:
        """A line as the box draws it: a paste's escape sequences and bidi overrides shown inert (one
        character for one, so the cursor's columns stay the text's); the text sent is as pasted."""
        line = super().get_line(line_index)
        # guard: untrusted-text-the-prompt-box
        line.plain = sanitize(line.plain)
        return line

    async def _on_key(self, event: events.Key) -> None:
        text_key = event.is_printable or event.key == "enter"
        # A machine's burst goes on across a chunk's pause; an Enter only once the burst has had a line end
        # (a line typed in one go, then Enter a little later — a test's typing, ``tmux send-keys`` — sends),
        # and the key after a held Enter only at a machine's pace.
        loose = self._burst_keys >= MACHINE_KEYS and self._pending_enter is None
        loose = loose and (event.key != "enter" or "\n" in self._burst_text)
        gap = PASTE_GAP_S if loose else BURST_GAP_S
        burst = self._last_was_text and event.time - self._last_key_at <= gap
        self._last_key_at, self._last_was_text = event.time, text_key
        self._burst_keys = (self._burst_keys + 1 if burst else 1) if text_key else 0
        if self._pending_enter is not None:
            self._settle_enter(line_end=burst and text_key)
        if not (burst and text_key):
            self._burst_label = None  # the burst ended: what follows is typed, not pasted
        # guard: a-typed-out-pastes-later-line-ends-are
        if event.key == "enter" and burst and "\n" in self._burst_text:
            # a later line end of a paste typed out (its last one too): never a send
            event.prevent_default()
            event.stop()
            self._type_in_burst("\n")
            return
        if event.is_printable and burst and self._burst_label is not None:
            event.prevent_default()
            event.stop()
            self._type_in_burst(event.character or "")
            return
        await self._handle_key(event, burst)
        self._after_edit()

    async def _handle_key(self, event: events.Key, burst: bool) -> None:
        if self.mention_active and self.mentions is not None and event.key in MENU_KEYS:
            event.prevent_default()
            event.stop()
            self._mention_key(self.mentions, event.key)
            return
        menu = self.menu
        if menu is not None and menu.is_open and event.key in MENU_KEYS:
            event.prevent_default()
            event.stop()
            if event.key in ("up", "down"):
                menu.move(-1 if event.key == "up" else 1)
            elif event.key == "escape":
                menu.close()
            else:
                self._complete(run=event.key == "enter")
            return
        # guard: prompt-ctrl-d-in-the-empty-box-is-the-end-of-input
        if event.key == "ctrl+d" and not self.text:  # with text, ctrl+d deletes forward (TextArea's)
            event.prevent_default()
            event.stop()
            await self.app.run_action("end_of_input")
            return
        if event.key == "tab":  # the focus stays here (shift+tab still leaves)
            event.prevent_default()
            event.stop()
            return
        if event.key == "enter":
            event.prevent_default()
            event.stop()
            if burst:  # typed within a burst: a line end if more of the burst follows it
                self._pending_enter = event
                self._enter_timer = self.set_timer(BURST_GAP_S * 2, self._enter_alone)
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
        if not event.is_printable:
            await super()._on_key(event)
            return
        start = min(self.selection.start, self.selection.end)
        await super()._on_key(event)
        if not burst:
            self._burst_start, self._burst_text = start, ""
        self._burst_text += event.character or ""
        self._collapse_burst()

    # -- a paste typed out by a terminal without bracketed paste ---------------------------------------

    def _settle_enter(self, line_end: bool) -> None:
        """The Enter held back in a burst: a line end when the burst went on, else the send it was."""
        if self._enter_timer is not None:
            self._enter_timer.stop()
            self._enter_timer = None
        self._pending_enter = None
        if line_end:
            self._type_in_burst("\n")
        else:
            self.submit()

    def _enter_alone(self) -> None:
        if self._pending_enter is None:
            return
        router = router_of(self.app)
        if router is not None and router.keys_waiting:  # the keys read after it are on their way
            self._enter_timer = self.set_timer(BURST_GAP_S * 2, self._enter_alone)
            return
        self._settle_enter(line_end=False)  # nothing followed it: ``text`` + Enter typed in one read

    def _type_in_burst(self, text: str) -> None:
        """``text`` typed within the burst: into the box, or into the paste its label stands for."""
        self._burst_text += text
        label = self._burst_label
        if label is None:
            self.insert(text)
            self._collapse_burst()
            return
        self.pastes.pop(label, None)
        new = paste_label(self._burst_text, self.pastes)
        self.pastes[new] = self._burst_text
        if new != label:
            row, col = self._burst_start
            self.replace(new, (row, col), (row, col + len(label)))
            self._burst_label = new

    def _collapse_burst(self) -> None:
        """A burst the size of a large paste becomes its label, as a bracketed paste does."""
        text = self._burst_text
        if self._burst_label is not None or (text.count("\n") < PASTE_LINES and len(text) <= PASTE_CHARS):
            return
        label = paste_label(text, self.pastes)
        self.pastes[label] = text
        self.replace(label, self._burst_start, self.cursor_location)
        self._burst_label = label

    def _after_edit(self) -> None:
        """The menus follow the text at once, before the next key is handled (not when the Changed
        message comes round: keys typed after ``/`` or ``@`` reached the box before the menu opened)."""
        if self.menu is not None:
            self.menu.update_for(self.text)
        if "\n" in self._burst_text or self._burst_label is not None:
            return  # inside a paste: an ``@`` there is text, not a completion
        row, col = self.cursor_location
        query = query_at(self.document.get_line(row)[:col])
        if query == self._mention:
            return
        self._mention = query
        if query is None:
            self.mention_active = False
        router = router_of(self.app)
        hold = router.hold() if router is not None and query is not None and self.workspace else None
        self.post_message(self.MentionChanged(query, hold))

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

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        event.stop()
        self._after_edit()  # an edit not made by a printable key (Backspace, history, a paste)
        if self.text:
            self.post_message(self.Typing())

    def needs_key_marker(self, event: events.Key) -> bool:
        """For the key router: this printable key may open the ``@`` menu or change what it lists, so the
        keys after it wait until it is handled (they may be for the menu)."""
        return event.character == "@" or self._mention is not None

    def _mention_key(self, menu: MentionMenu, key: str) -> None:
        """A key for the open ``@`` menu, applied now (the next key may already be typed)."""
        if key == "up":
            menu.action_cursor_up()
        elif key == "down":
            menu.action_cursor_down()
        else:
            path = menu.choice() if key != "escape" else None
            menu.close()
            self.mention_active = False
            if path is not None:
                self.complete_mention(path)

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

    def action_delete_left(self) -> None:
        """Backspace at the end of a paste's label, or inside it, deletes the whole label: one character
        less, it no longer named the paste, and the message sent the broken label instead of the text."""
        if not self._delete_label(lambda start, end, col: start < col <= end):
            super().action_delete_left()

    def action_delete_right(self) -> None:
        """Delete at the start of a paste's label, or inside it, deletes the whole label."""
        if not self._delete_label(lambda start, end, col: start <= col < end):
            super().action_delete_right()

    def _delete_label(self, touches: Callable[[int, int, int], bool]) -> bool:
        if not self.selection.is_empty or self.read_only:
            return False
        row, col = self.cursor_location
        line = self.document.get_line(row)
        for label in self.pastes:
            at = line.find(label)
            while at >= 0:
                # guard: prompt-a-paste-label-is-deleted-whole
                if touches(at, at + len(label), col):
                    self.delete((row, at), (row, at + len(label)))
                    return True
                at = line.find(label, at + 1)
        return False

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
        self._burst_text, self._burst_label = "", None  # what is typed next starts afresh
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
        # guard: prompt-a-refused-message-comes-back-with-the-cursor-at-its-end
        self.move_cursor(self.document.end)

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
