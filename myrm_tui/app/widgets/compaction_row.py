"""A compaction in the transcript: one line (trigger, 12.4K → 10.5K, 6 ms, extractive) that expands to
the summary and the list of what left the view. Enter on an item opens it in the vault pane at its line
range; ``b`` brings it back (pins it into the next requests) or, on a pinned item, unpins it."""

from __future__ import annotations

from dataclasses import dataclass

from textual.binding import Binding
from textual.message import Message
from textual.widget import AwaitMount
from textual.widgets import Label, ListItem, ListView, Static

from myrm_tui import plain_words
from myrm_tui.app.widgets.plain import PlainCollapsible
from myrm_tui.app.widgets.vault_pane import VaultPane
from myrm_tui.context.compaction.record import Compaction, LeftItem, short_tokens
from myrm_tui.safe_text import sanitize

PIN_MARK = "📌 "


class LeftEntry(ListItem):
    def __init__(self, item: LeftItem) -> None:
        super().__init__(Label(self.text(item, False), markup=False))
        self.item = item
        self.pinned = False

    @staticmethod
    def text(item: LeftItem, pinned: bool) -> str:
        how = "cut" if item.how == "shortened" else item.role
        mark = PIN_MARK if pinned else ""
        # A gist is a line of a tool's output or a model's words: its controls are shown, never obeyed.
        return sanitize(
            f"{mark}{how:<9} {short_tokens(item.tokens):>6}  {plain_words.text(item.gist)}  ({item.pointer})"
        )

    def set_pinned(self, pinned: bool) -> None:
        self.pinned = pinned
        self.query_one(Label).update(self.text(self.item, pinned))


class CompactionRow(PlainCollapsible):
    DEFAULT_CSS = """
    CompactionRow { margin: 1 0 0 0; padding: 0; border: none; background: $boost; }
    CompactionRow CollapsibleTitle { color: $accent; }
    CompactionRow .summary { color: $text-muted; padding: 0 1; max-height: 16; overflow-y: auto; }
    CompactionRow .left-caption { padding: 0 1; text-style: italic; }
    CompactionRow ListView { height: auto; max-height: 12; }
    """
    BINDINGS = [Binding("b", "bring_back", "Bring back / unpin")]

    @dataclass
    class PinRequested(Message):
        """Pin ``item`` into the next requests (``pin``) or unpin it."""

        item: LeftItem
        pin: bool

    def __init__(self, record: Compaction) -> None:
        self.record = record
        summary = (
            sanitize(plain_words.text(record.summary))
            if record.summary
            else "(no summary: nothing was summarized)"
        )
        left = (
            f"What left the view ({len(record.left)}) — Enter opens it in the vault, b brings it back:"
            if record.left
            else "Nothing left the view whole."
        )
        super().__init__(
            Static(summary, classes="summary", markup=False),
            Static(left, classes="left-caption", markup=False),
            ListView(classes="left"),
            title=f"⟲ compacted · {record.headline()}",
            collapsed=True,
        )
        self._filled = False

    def watch_collapsed(self, collapsed: bool) -> None:
        if not collapsed:
            self.fill()

    def fill(self) -> AwaitMount | None:
        """The list of what left the view, built the first time the row opens: a compaction of a long
        session lists thousands of items, and a reopened session shows its rows closed (10,000 list rows
        built at start-up held 400 MB)."""
        if not self._filled:
            self._filled = True
            mounting = self.query_one(ListView).extend(LeftEntry(i) for i in self.record.left)
            self.call_after_refresh(self._highlight_first)
            return mounting
        return None

    def _highlight_first(self) -> None:
        # A list built empty has no highlight; Enter and b act on the highlighted item.
        lv = self.query_one(ListView)
        if lv.index is None and lv.children:
            lv.index = 0

    def on_list_view_selected(self, event: ListView.Selected) -> None:
        event.stop()
        if isinstance(event.item, LeftEntry):
            item = event.item.item
            self.post_message(VaultPane.OpenRequested(item.uri, item.first_line))

    async def action_bring_back(self) -> None:
        filling = self.fill()
        lv = self.query_one(ListView)
        if filling is not None:
            await filling
        self._highlight_first()
        entry = lv.highlighted_child
        if isinstance(entry, LeftEntry):
            entry.set_pinned(not entry.pinned)
            self.post_message(self.PinRequested(entry.item, entry.pinned))
