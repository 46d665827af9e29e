"""The transcript's rows: the items a conversation is made of (from stored messages, or added as a turn
streams) and the widget each is drawn as. An item is listed whether or not its widget exists (``ChatLog``
builds the widgets of the mounted window only)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from textual.widget import Widget
from textual.widgets import Static

from myrm_tui.app.widgets.chat_message import AssistantMessage, Notice, UserMessage
from myrm_tui.app.widgets.compaction_row import CompactionRow
from myrm_tui.app.widgets.prompt_input import PASTE_CHARS, PASTE_LINES, collapse
from myrm_tui.app.widgets.tool_call import ToolCallView
from myrm_tui.app.widgets.vault_card import VaultArtifactCard
from myrm_tui.context.compaction.record import Compaction
from myrm_tui.context.types import Message, ToolCall
from myrm_tui.safe_text import sanitize

log = logging.getLogger(__name__)

CUT_MARK = "\n\n[reply cut off: the stream ended early; retried below]"
HEAD_LINES = 6
# A stored call with no stored result: its turn ended (closed, forked from a replay) before it finished.
UNFINISHED = "No result was recorded: the call was interrupted before it finished."


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


@dataclass(eq=False)
class Item:
    """One row of the transcript, mounted or not: what it shows and how to build its widget."""

    kind: str  # user | assistant | tool | compaction | notice | vault | welcome
    text: str = ""  # what it shows (a tool card: the call; a vault card: the uri)
    level: str = "info"
    call: ToolCall | None = None
    result: tuple[str, bool, dict[str, Any]] | None = None
    record: Compaction | None = None
    widget: Widget | None = None

    @property
    def low(self) -> str:
        """The text search sees, lower-cased. Made afresh each time, not cached: a cached copy doubled the
        memory a 10,000-message transcript holds (10 MB). Search lowers every item when it cannot narrow
        the last search (a new query, a backspace, a transcript that changed: 8 ms at 10,000 messages);
        a key that extends the query searches only the last matches."""
        if self.kind == "tool" and self.call is not None:
            out = self.result[0] if self.result else ""
            return f"{self.call.name} {self.call.arguments}\n{out}".lower()
        if self.kind == "compaction" and self.record is not None:
            return f"{self.record.headline()}\n{self.record.summary}".lower()
        return self.text.lower()

    def rows(self, width: int) -> int:
        """Rows the item's widget takes at least at ``width`` columns (its top margin, its lines wrapped;
        a tool card or a compaction row, closed, one): what decides how many items fill the view."""
        if self.kind in ("user", "assistant", "notice", "welcome"):
            usable = max(1, width - 4)  # padding and the user's bar
            return 1 + sum(-(-len(line) // usable) for line in self.text.split("\n") if line.strip())
        return 1

    def copy_text(self) -> str:
        if self.kind == "tool" and self.call is not None:
            return f"{self.call.name} {self.call.arguments}\n{self.result[0] if self.result else ''}"
        if self.kind == "compaction" and self.record is not None:
            return f"{self.record.headline()}\n{self.record.summary}"
        return self.text

    def build(self, plain_first: bool = False) -> Widget:
        if self.kind == "user":
            return UserMessage(self.text)
        if self.kind == "assistant":
            return AssistantMessage(self.text, plain_first)
        if self.kind == "tool":
            assert self.call is not None
            view = ToolCallView(self.call)
            if self.result is not None:
                view.call_after_refresh(self._show_result, view, *self.result)
            return view
        if self.kind == "compaction":
            assert self.record is not None
            return CompactionRow(self.record)
        if self.kind == "vault":
            return VaultArtifactCard(self.text)
        if self.kind == "welcome":
            return Static(self.text, id="welcome", markup=False)
        return Notice(self.text, self.level)

    def build_or_plain(self, plain_first: bool = False) -> Widget:
        """The item's widget; one that cannot be built (a stored item no widget expected) is shown as
        its text, plain, so the rest of the session still opens. ``plain_first``: an answer's markdown
        waits for ``AssistantMessage.format``."""
        try:
            return self.build(plain_first)
        except Exception:
            log.exception("a %s item could not be shown; shown as plain text", self.kind)
            return Static(sanitize(self.copy_text()), classes="-plain", markup=False)

    def _show_result(self, view: ToolCallView, text: str, is_error: bool, meta: dict[str, Any]) -> None:
        try:
            view.set_result(text, is_error, meta)
        except Exception:
            log.exception("a stored result of %s could not be shown; shown as plain text", view.call.name)
            view.query_one(".output", Static).update(sanitize(text))


def items_of(m: Message, pastes: dict[str, str], calls: dict[str, Item]) -> list[Item]:
    """The rows a stored message adds (a tool result fills its call's row in ``calls`` instead)."""
    if m.role == "system" or m.synthetic:
        return []
    if m.role == "user":
        return [Item("user", shown_user_text(m.text, pastes))]
    if m.role == "assistant":
        out = [Item("assistant", m.text)] if m.text.strip() else []
        for c in m.tool_calls:
            item = Item("tool", call=c)
            calls[c.id] = item
            out.append(item)
        return out
    if m.role == "tool":
        done = calls.get(m.tool_call_id or "")
        if done is not None:
            done.result = (m.text, bool(m.meta.get("is_error")), m.meta)
    return []


def session_items(
    messages: Sequence[Message], compactions: Sequence[Compaction], welcome: str, pastes: dict[str, str]
) -> tuple[list[Item], dict[str, Item]]:
    """A stored conversation's rows, each compaction's row after the message it followed, the welcome
    above an empty one; and its tool calls' rows by call id."""
    calls: dict[str, Item] = {}
    after: dict[str, list[Compaction]] = {}
    for c in compactions:
        if c.changed and 0 < c.seq <= len(messages):
            after.setdefault(messages[c.seq - 1].id, []).append(c)
    items: list[Item] = []
    for m in messages:
        items += items_of(m, pastes, calls)
        items += [Item("compaction", record=c) for c in after.get(m.id, ())]
    if welcome and not items:
        items.append(Item("welcome", welcome))
    for it in items:
        if it.kind == "tool" and it.result is None:  # nothing runs while a session loads
            it.result = (UNFINISHED, True, {"interrupted": True})
    return items, calls
