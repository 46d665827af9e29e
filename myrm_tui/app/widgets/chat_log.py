"""The conversation: a scroll of message widgets, anchored to the bottom while new content streams
(scrolling up releases the anchor; reaching the bottom again restores it). Search marks the messages
that contain a text and scrolls to one of them.

Long sessions mount only their newest ``WINDOW`` messages; "show earlier" mounts older ones in
pages, so a 1,000-message session opens as fast as a new one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from textual.containers import VerticalScroll
from textual.message import Message as TextualMessage
from textual.widget import Widget
from textual.widgets import Button, Static

from myrm_tui.agent import events
from myrm_tui.app.widgets.chat_message import AssistantMessage, Notice, UserMessage
from myrm_tui.app.widgets.compaction_row import CompactionRow
from myrm_tui.app.widgets.prompt_input import PASTE_CHARS, PASTE_LINES, collapse
from myrm_tui.app.widgets.tool_call import ToolCallView
from myrm_tui.app.widgets.vault_card import VaultArtifactCard
from myrm_tui.context.compaction import Compaction
from myrm_tui.context.types import Message, ToolCall

WINDOW = 120
CUT_MARK = "\n\n[reply cut off: the stream ended early; retried below]"
PAGE = 120
HEAD_LINES = 6


def shown_user_text(text: str, pastes: dict[str, str]) -> str:
    """A stored user message as the transcript shows it: pastes by their label; a long message (one
    pasted in an earlier run, whose labels are gone) by its first lines and a count of the rest. The
    stored message stays whole."""
    text = collapse(text, pastes)
    lines = text.split("\n")
    if len(lines) <= PASTE_LINES and len(text) <= PASTE_CHARS:
        return text
    head = [line if len(line) <= 200 else line[:199] + "…" for line in lines[:HEAD_LINES]]
    rest = len(lines) - len(head)
    more = f"[… {rest:,} more lines]" if rest else f"[… {len(text):,} chars in all]"
    return "\n".join([*head, more])


def searchable(widget: Widget) -> str:
    """The text a message widget shows, as search sees it."""
    if isinstance(widget, AssistantMessage):
        return widget.markdown.source if widget.is_mounted else ""
    if isinstance(widget, ToolCallView):
        return f"{widget.title}\n{widget.query_one('.output', Static).render()}"
    if isinstance(widget, Static):
        return str(widget.render())
    return ""


class ChatLog(VerticalScroll):
    DEFAULT_CSS = """
    ChatLog { height: 1fr; padding: 0 1; }
    ChatLog > #earlier { width: 100%; margin: 1 0; }
    ChatLog > #welcome { border: round $accent; padding: 0 1; margin: 1 0 0 0; color: $text-muted; }
    ChatLog > .-match { background: $warning 12%; }
    ChatLog > .-match-current { background: $warning 35%; }
    """

    @dataclass
    class ScrolledUp(TextualMessage):
        """The view left the bottom (new output is not followed) or came back to it."""

        away: bool

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self._hidden: list[Message] = []
        self._calls: dict[str, ToolCallView] = {}
        self._carded: set[str] = set()
        self._after: dict[str, list[Compaction]] = {}  # message id -> compactions that followed it
        self.current: AssistantMessage | None = None
        self.pastes: dict[str, str] = {}  # label -> pasted text: user messages show the label
        self._hits: list[Widget] = []
        self._hit = -1
        self.needle = ""
        self._away = False

    def on_mount(self) -> None:
        self.anchor()

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        self._check_away()

    def on_resize(self) -> None:
        self._check_away()

    def _check_away(self) -> None:
        # Textual releases the anchor when the user scrolls up and restores it at the bottom.
        away = self._anchor_released and self.scroll_y < self.max_scroll_y
        if away != self._away:
            self._away = away
            self.post_message(self.ScrolledUp(away))

    def page(self, pages: int) -> None:
        """PageUp/PageDown; the last page down lands on the bottom (and follows again): while scrolled
        up the "more below" line takes a row, so pages down fall a row or two short of it."""
        if pages < 0:
            self.scroll_page_up(animate=False)
        elif self.max_scroll_y - self.scroll_y <= self.scrollable_content_region.height + 2:
            self.jump_to_bottom()
        else:
            self.scroll_page_down(animate=False)

    def jump_to_bottom(self) -> None:
        """Back to the newest output, following it again."""
        self.scroll_end(animate=False, immediate=True)

    def find(self, needle: str) -> int:
        """Mark the messages containing ``needle`` (case-insensitive); returns how many."""
        for w in self._hits:
            w.remove_class("-match", "-match-current")
        self.needle = needle
        low = needle.lower()
        self._hits = [w for w in self.children if low and low in searchable(w).lower()]
        for w in self._hits:
            w.add_class("-match")
        self._hit = len(self._hits)  # the first step up lands on the newest match
        return len(self._hits)

    @property
    def match_count(self) -> int:
        return len(self._hits)

    def step_match(self, step: int) -> int:
        """Move ``step`` matches (wrapping) and scroll to it; returns its 1-based number (0: none)."""
        hits = [w for w in self._hits if w.is_attached]
        if not hits:
            return 0
        if 0 <= self._hit < len(hits):
            hits[self._hit].remove_class("-match-current")
        self._hit = (self._hit + step) % len(hits)
        current = hits[self._hit]
        current.add_class("-match-current")
        self.release_anchor()  # new output must not pull the view away from the match
        self.scroll_to_widget(current, animate=False, top=True)
        return self._hit + 1

    async def load(
        self, messages: Sequence[Message], compactions: Sequence[Compaction] = (), welcome: str = ""
    ) -> None:
        """The conversation, with each compaction's row after the message it followed; the welcome above
        an empty one."""
        await self.remove_children()
        self._calls.clear()
        self._carded.clear()
        after: dict[str, list[Compaction]] = {}
        for c in compactions:
            if c.changed and 0 < c.seq <= len(messages):
                after.setdefault(messages[c.seq - 1].id, []).append(c)
        visible = [m for m in messages if (m.role != "system" and not m.synthetic) or m.id in after]
        self._hidden, shown = visible[:-WINDOW], visible[-WINDOW:]
        if welcome and not visible:
            await self.mount(Static(welcome, id="welcome", markup=False))
        if self._hidden:
            await self.mount(Button(f"show {min(PAGE, len(self._hidden))} earlier messages", id="earlier"))
        self._after = after
        await self.mount_all([w for m in shown for w in self._widgets(m)])
        self.scroll_end(animate=False)

    def _widgets(self, m: Message) -> list:
        out: list = [*self._message_widgets(m), *(CompactionRow(c) for c in self._after.get(m.id, ()))]
        return out

    def _message_widgets(self, m: Message) -> list:
        out: list = []
        if m.role == "system" or m.synthetic:
            return out
        if m.role == "user":
            out.append(UserMessage(shown_user_text(m.text, self.pastes)))
        elif m.role == "assistant":
            if m.text.strip():
                out.append(AssistantMessage(m.text))
            for c in m.tool_calls:
                view = ToolCallView(c)
                self._calls[c.id] = view
                out.append(view)
        elif m.role == "tool":
            done = self._calls.get(m.tool_call_id or "")
            if done is not None:
                done.call_after_refresh(done.set_result, m.text, bool(m.meta.get("is_error")), m.meta)
        return out

    async def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id != "earlier":
            return
        event.stop()
        page, self._hidden = self._hidden[-PAGE:], self._hidden[:-PAGE]
        widgets = [w for m in page for w in self._widgets(m)]
        await self.mount_all(widgets, after=event.button)
        if self._hidden:
            event.button.label = f"show {min(PAGE, len(self._hidden))} earlier messages"
        else:
            await event.button.remove()

    async def add_user(self, text: str) -> None:
        """The user's message as sent, each paste by its label; the welcome makes room for it."""
        for welcome in self.query("#welcome"):
            await welcome.remove()
        await self.mount(UserMessage(collapse(text, self.pastes)))

    async def start_assistant(self) -> AssistantMessage:
        self.current = AssistantMessage()
        await self.mount(self.current)
        return self.current

    async def append_text(self, text: str) -> None:
        if self.current is None:
            await self.start_assistant()
        assert self.current is not None
        await self.current.append(text)

    def append_reasoning(self, text: str) -> None:
        if self.current is not None:
            self.current.append_reasoning(text)

    async def end_assistant(self) -> None:
        if self.current is not None:
            await self.current.finish()
        self.current = None

    async def add_tool_call(self, call: ToolCall) -> None:
        await self.end_assistant()
        view = ToolCallView(call)
        self._calls[call.id] = view
        await self.mount(view)

    def set_tool_result(
        self, call_id: str, text: str, is_error: bool, meta: dict[str, object] | None = None
    ) -> None:
        view = self._calls.get(call_id)
        if view is not None:
            view.set_result(text, is_error, meta)
            self.add_vault_cards(view)

    def add_vault_cards(self, view: ToolCallView, uris: list[str] | None = None) -> None:
        for uri in uris or view.vault_uris:
            if uri not in self._carded:
                self._carded.add(uri)
                self.mount(VaultArtifactCard(uri), after=view)

    def mark_vaulted(self, call_id: str, uri: str) -> None:
        """The pipeline stored this call's full output in the vault: offer it under the call."""
        view = self._calls.get(call_id)
        if view is not None and view.is_mounted:
            self.add_vault_cards(view, [uri])

    async def add_notice(self, text: str, level: str = "info") -> None:
        await self.mount(Notice(text, level))

    async def add_compaction(self, record: Compaction) -> None:
        await self.end_assistant()
        await self.mount(CompactionRow(record))

    async def show(self, ev: events.AgentEvent) -> None:
        """Render one event of a turn in the conversation (events that change no message are ignored)."""
        match ev:
            case events.UserSaved():
                await self.add_user(ev.message.text)
            case events.TextChunk():
                await self.append_text(ev.text)
            case events.ReasoningChunk():
                if self.current is None:
                    await self.start_assistant()
                self.append_reasoning(ev.text)
            case events.AssistantSaved():
                await self.end_assistant()
            case events.ToolStarted():
                await self.add_tool_call(ev.call)
            case events.ToolOutput():
                view = self._calls.get(ev.call.id)
                if view is not None:
                    view.set_live(ev.text)
            case events.ToolFinished():
                self.set_tool_result(
                    ev.call.id, ev.message.text, bool(ev.message.meta.get("is_error")), ev.message.meta
                )
            case events.Notice():
                await self.add_notice(ev.text, ev.level)
            case events.CompactionMade():
                await self.add_compaction(ev.record)
            case events.StreamCut():
                # the cut text stays, marked; the retry's answer gets a message of its own, not glued to it
                if self.current is not None:
                    await self.current.append(CUT_MARK)
                await self.end_assistant()
            case events.TurnFailed():
                await self.end_assistant()
                await self.add_notice(ev.error, "error")
            case events.TurnDone():
                await self.end_assistant()
                if ev.interrupted:
                    for view in self._calls.values():
                        if view.is_mounted:
                            view.cancel()
                    await self.add_notice("Turn cancelled.", "warning")
