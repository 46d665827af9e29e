"""The conversation: a scroll of items (messages, tool cards, compaction rows, notices), anchored to the
bottom while new content streams (scrolling up releases the anchor; reaching the bottom again restores it).

It is a paged list over every item of the session (``chat_render``: the items and their widgets): only a
window of them is mounted (``chat_window``); scrolling to the top (PageUp, the mouse) builds the page
before it, Home jumps to the first item. Search runs over the items' text, not the widgets
(``chat_search``), so it finds what is not mounted, and a jump to such a match mounts the window around
it. From the prompt, shift+tab enters the transcript: Up/Down move item by item, Enter
opens or expands, ``v`` opens a card's vault entry, ``b`` brings a compaction's item back, ``c`` copies,
Esc returns to the prompt.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.events import Key as TextualKey
from textual.message import Message as TextualMessage
from textual.widget import AwaitMount, Widget
from textual.widgets import Collapsible, Static

from myrm_tui.agent import events
from myrm_tui.app.widgets.chat_message import AssistantMessage
from myrm_tui.app.widgets.chat_render import CUT_MARK, Item, session_items
from myrm_tui.app.widgets.chat_search import Matches
from myrm_tui.app.widgets.chat_window import PAGE, Window
from myrm_tui.app.widgets.compaction_row import CompactionRow
from myrm_tui.app.widgets.prompt_input import PromptInput, collapse
from myrm_tui.app.widgets.tool_call import ToolCallView
from myrm_tui.app.widgets.vault_card import VaultArtifactCard
from myrm_tui.app.widgets.vault_pane import VaultPane
from myrm_tui.context.compaction.record import Compaction
from myrm_tui.context.types import Message, ToolCall

log = logging.getLogger(__name__)

FILL_SCREENS = 2  # a session opens with the newest items that fill this many screens of the view
FILL_STEP = 5  # items built at a time when the opened ones did not fill the view after all


class ChatLog(VerticalScroll):
    DEFAULT_CSS = """
    ChatLog { height: 1fr; padding: 0 1; }
    ChatLog > #earlier, ChatLog > #newer { width: 100%; color: $text-muted; margin: 1 0 0 0; }
    ChatLog > #welcome { border: round $accent; padding: 0 1; margin: 1 0 0 0; color: $text-muted; }
    ChatLog > .-match { background: $warning 12%; }
    ChatLog > .-match-current { background: $warning 35%; }
    ChatLog:focus > .-cursor { background: $accent 25%; }
    ChatLog > .-cursor { background: $accent 10%; }
    """
    BINDINGS = [
        Binding("up", "move(-1)", "Previous item", show=False),
        Binding("down", "move(1)", "Next item", show=False),
        Binding("home", "first", "First item", show=False),
        Binding("end", "last", "Newest item", show=False),
        Binding("enter", "open", "Open / expand"),
        Binding("v", "vault", "Vault entry"),
        Binding("b", "bring_back", "Bring back", show=False),
        Binding("c", "copy", "Copy"),
        Binding("escape", "leave", "Back to the prompt"),
    ]

    @dataclass
    class ScrolledUp(TextualMessage):
        """The view left the bottom (new output is not followed) or came back to it."""

        away: bool

    @dataclass
    class Left(TextualMessage):
        """Esc in the transcript: the prompt takes the focus back."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.items: list[Item] = []
        self.window = Window()  # which items are mounted
        self.matches = Matches()  # the search's matches
        self._calls: dict[str, Item] = {}
        self._carded: set[str] = set()
        # Every change of which items are mounted holds this: a page build awaits its mount, and a remount
        # (a search far away, the tail for new output) in that time left it setting a window it no longer had.
        self._pages = asyncio.Lock()
        self.current: AssistantMessage | None = None
        self._current_item: Item | None = None
        self.pastes: dict[str, str] = {}  # label -> pasted text: user messages show the label
        self.cursor: Item | None = None
        self._away = False
        self._plain_first = False  # answers built now show plain text until ``format_answers``

    # -- the mounted window ---------------------------------------------------------------------------
    @property
    def mounted_items(self) -> list[Item]:
        lo, hi = self.window.span
        return self.items[lo:hi]

    @property
    def needle(self) -> str:
        """What the search looks for now ("" when it is closed)."""
        return self.matches.needle

    def _widget(self, item: Item) -> Widget:
        # guard: untrusted-text-a-stored-item-no-widget
        w = item.build_or_plain(self._plain_first)
        item.widget = w
        if self.matches.is_hit(item):
            w.add_class("-match")
        if item is self.cursor:
            w.add_class("-cursor")
        return w

    def _forget(self, items: Sequence[Item]) -> None:
        for it in items:
            it.widget = None

    @property
    def _building(self) -> bool:
        """A page is being built or the window remounted."""
        return self._pages.locked()

    async def _mount_window(self, lo: int, hi: int) -> None:
        """Mount ``items[lo:hi]`` in place of what is mounted (with a line for what is above and below),
        once no page is being built."""
        async with self._pages:
            await self._remount(lo, hi)

    async def _remount(self, lo: int, hi: int) -> None:
        self._forget(self.mounted_items)
        if self.current is not None and (self._current_item is None or self._current_item.widget is None):
            self.current = None
        await self.remove_children()
        self.window.set(lo, hi)
        widgets: list[Widget] = []
        if lo > 0:
            widgets.append(Static(self.window.earlier_text(), id="earlier", markup=False))
        widgets += [self._widget(it) for it in self.items[lo:hi]]
        if hi < len(self.items):
            widgets.append(Static(self.window.newer_text(len(self.items)), id="newer", markup=False))
        await self.mount_all(widgets)

    def _first_mounted(self) -> Widget | None:
        for it in self.mounted_items:
            if it.widget is not None:
                return it.widget
        return None

    async def build_older(self, count: int = PAGE) -> int:
        """Mount up to ``count`` items before the window, keeping what is on screen in place."""
        if self.window.lo == 0 or self._building:
            return 0
        try:
            async with self._pages:
                return await self._older(count)
        finally:
            # Whoever built (the fill, a scroll to the top) or was cancelled mid-way (the pages' worker is
            # exclusive): the view is looked at again, so a fill another build raced with still finishes.
            # guard: a-page-build-looks-at-the-view-again
            self.call_after_refresh(self._fill_view)

    async def _older(self, count: int) -> int:
        """``build_older``'s work, with the window held."""
        lo, hi = self.window.older(count)
        page = self.items[lo:hi]
        before = self._first_mounted()
        old_h, old_y = self.virtual_size.height, self.scroll_y
        widgets = [self._widget(it) for it in page]
        if before is not None:
            await self.mount_all(widgets, before=before)
        else:
            await self.mount_all(widgets)
        self.window.set(lo, self.window.hi)
        for earlier in self.query("#earlier"):
            if lo == 0:
                await earlier.remove()
            else:
                earlier.update(self.window.earlier_text())  # type: ignore[attr-defined]
        self.call_after_refresh(self._keep_position, old_h, old_y)
        return len(page)

    def _keep_position(self, old_h: int, old_y: float) -> None:
        grown = self.virtual_size.height - old_h
        if grown > 0:
            self.scroll_to(y=old_y + grown, animate=False, immediate=True)

    async def build_newer(self, count: int = PAGE) -> int:
        if self.window.hi >= len(self.items) or self._building:
            return 0
        async with self._pages:
            return await self._newer(count)

    async def _newer(self, count: int) -> int:
        """``build_newer``'s work, with the window held."""
        lo, hi = self.window.newer(len(self.items), count)
        widgets = [self._widget(it) for it in self.items[lo:hi]]
        newer = self.query("#newer")
        if newer:
            await self.mount_all(widgets, before=newer.first())
        else:
            await self.mount_all(widgets)
        self.window.set(self.window.lo, hi)
        for w in newer:
            if hi >= len(self.items):
                await w.remove()
            else:
                w.update(self.window.newer_text(len(self.items)))  # type: ignore[attr-defined]
        return hi - lo

    def _tail(self) -> tuple[int, int]:
        """The newest items that fill ``FILL_SCREENS`` screens of the view (``WINDOW`` before it has a
        size): each widget built is time before the session shows, a long answer's markdown above all."""
        region = self.scrollable_content_region
        if region.height <= 0 or region.width <= 0:
            return self.window.tail(len(self.items))
        return self.window.tail(
            len(self.items), lambda i: self.items[i].rows(region.width), FILL_SCREENS * region.height
        )

    def _fill_view(self) -> None:
        """The items mounted at the tail are drawn shorter than their estimate said (markdown): older ones
        are built until the view is full."""
        # virtual_size is at least the view's size: the children's extent says how much they fill
        if self._building:  # a page is being built: look again once it is drawn
            self.call_after_refresh(self._fill_view)
            return
        drawn = max((w.virtual_region_with_margin.bottom for w in self.children), default=0)
        at_tail = self.window.hi == len(self.items)  # not a window a search or the cursor placed
        # guard: reopen-items-drawn-shorter-are-topped-up
        if at_tail and self.window.lo > 0 and drawn < self.scrollable_content_region.height:
            self.run_worker(self.build_older(FILL_STEP), group="chat-pages", exclusive=True)

    async def _to_tail(self) -> None:
        """Live output goes at the end: the window must reach it."""
        async with self._pages:
            await self._tail_held()

    async def _tail_held(self) -> None:
        if self.window.hi < len(self.items):
            await self._remount(*self._tail())
            self.scroll_end(animate=False)
            self.call_after_refresh(self._fill_view)

    async def show_item(self, index: int, top: bool = True) -> Widget:
        """Mount the item at ``index`` (the window around it when it is far from the mounted part)."""
        # guard: a-remount-waits-for-the-page-being-built
        async with self._pages:  # after a page being built: it moves the window this reads
            if not self.window.holds(index):
                lo, hi = self.window.span
                if lo - PAGE <= index < lo:
                    await self._older(lo - index)
                    self.call_after_refresh(self._fill_view)
                elif hi <= index < hi + PAGE:
                    await self._newer(index - hi + 1)
                else:
                    await self._remount(*self.window.around(index, len(self.items)))
        widget = self.items[index].widget
        assert widget is not None
        self.release_anchor()  # new output must not pull the view away from it
        self.call_after_refresh(self.scroll_to_widget, widget, animate=False, top=top)
        return widget

    # -- scrolling ------------------------------------------------------------------------------------
    def on_mount(self) -> None:
        self.anchor()

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        self._check_away()

    # Pages are built when the user scrolls to an edge (the wheel, the scroll bar; keys go through
    # ``page``), never when the view moves by itself: placing a search match or a cursor can reach the
    # window's edge (and a remount passes 0), and building a page there mounted 25 items nobody asked for.
    def on_mouse_scroll_up(self) -> None:
        self.call_after_refresh(self._user_at_edge, -1)

    def on_mouse_scroll_down(self) -> None:
        self.call_after_refresh(self._user_at_edge, 1)

    def on_scroll_to(self) -> None:  # the scroll bar dragged
        self.call_after_refresh(self._user_at_edge, 0)

    def on_scroll_up(self) -> None:  # the scroll bar's track clicked
        self.call_after_refresh(self._user_at_edge, -1)

    def on_scroll_down(self) -> None:
        self.call_after_refresh(self._user_at_edge, 1)

    def _user_at_edge(self, direction: int) -> None:
        if self._building:
            return
        lo, hi = self.window.span
        if direction <= 0 and self.scroll_y <= 2 and lo > 0:
            self.run_worker(self.build_older(), group="chat-pages", exclusive=True)
        elif direction >= 0 and self.scroll_y >= self.max_scroll_y - 2 and hi < len(self.items):
            self.run_worker(self.build_newer(), group="chat-pages", exclusive=True)

    def on_resize(self) -> None:
        self._check_away()

    @property
    def _scrolled_up(self) -> bool:
        """The user scrolled up from the newest output: Textual releases the anchor then, and restores
        it at the bottom."""
        return self._anchor_released and self.scroll_y < self.max_scroll_y

    def _check_away(self) -> None:
        away = self._scrolled_up or self.window.hi < len(self.items)
        if away != self._away:
            self._away = away
            self.post_message(self.ScrolledUp(away))

    def page(self, pages: int) -> None:
        """PageUp/PageDown; the last page down lands on the bottom (and follows again): while scrolled
        up the "more below" line takes a row, so pages down fall a row or two short of it."""
        if pages < 0:
            if self.scroll_y <= 2 and self.window.lo > 0:
                self.run_worker(self.build_older(), group="chat-pages", exclusive=True)
            self.scroll_page_up(animate=False)
        elif self.max_scroll_y - self.scroll_y <= self.scrollable_content_region.height + 2:
            if self.window.hi < len(self.items):
                self.run_worker(self.build_newer(), group="chat-pages", exclusive=True)
            else:
                self.jump_to_bottom()
        else:
            self.scroll_page_down(animate=False)

    def jump_to_bottom(self) -> None:
        """Back to the newest output, following it again."""
        if self.window.hi < len(self.items):
            self.run_worker(self._to_tail(), group="chat-pages", exclusive=True)
            return
        self.scroll_end(animate=False, immediate=True)

    # -- search ---------------------------------------------------------------------------------------
    def find(self, needle: str) -> int:
        """Mark the items containing ``needle`` (case-insensitive), mounted or not; returns how many."""
        before, now = self.matches.find(self.items, needle)
        for it in before:
            if it.widget is not None:
                it.widget.remove_class("-match", "-match-current")
        for it in now:
            if it.widget is not None:
                it.widget.add_class("-match")
        return len(now)

    @property
    def match_count(self) -> int:
        return self.matches.count

    def step(self, step: int) -> int:
        """Move ``step`` matches (wrapping); returns its 1-based number (0: none). ``show_match`` then
        brings it on screen (it may have to mount it)."""
        if (item := self.matches.current) is not None and item.widget is not None:
            item.widget.remove_class("-match-current")
        return self.matches.step(step)

    async def show_match(self) -> None:
        item = self.matches.current
        if item is None:
            return
        try:
            index = self.items.index(item)
        except ValueError:
            return
        widget = await self.show_item(index)
        if self.matches.current is item:  # not moved on meanwhile
            widget.add_class("-match-current")

    # -- keyboard navigation --------------------------------------------------------------------------
    def enter(self) -> None:
        """Focus the transcript with the newest item under the cursor."""
        self.screen.set_focus(self)
        if self.cursor is None or self.cursor.widget is None:
            self._set_cursor(self.mounted_items[-1] if self.mounted_items else None)

    def _set_cursor(self, item: Item | None) -> None:
        if self.cursor is not None and self.cursor.widget is not None:
            self.cursor.widget.remove_class("-cursor")
        self.cursor = item
        if item is not None and item.widget is not None:
            item.widget.add_class("-cursor")
            self.release_anchor()
            self.scroll_to_widget(item.widget, animate=False)

    def _cursor_index(self) -> int:
        if self.cursor is None:
            return len(self.items)
        try:
            return self.items.index(self.cursor)
        except ValueError:
            return len(self.items)

    async def action_move(self, step: int) -> None:
        if not self.items:
            return
        index = min(max(self._cursor_index() + step, 0), len(self.items) - 1)
        await self.show_item(index, top=False)
        self._set_cursor(self.items[index])

    async def action_first(self) -> None:
        if self.items:
            await self.show_item(0)
            self._set_cursor(self.items[0])
            self.scroll_home(animate=False)

    async def action_last(self) -> None:
        if self.items:
            await self._to_tail()
            self._set_cursor(self.items[-1])
            self.scroll_end(animate=False)

    def action_open(self) -> None:
        w = self.cursor.widget if self.cursor else None
        if isinstance(w, CompactionRow):
            w.collapsed = not w.collapsed
            if not w.collapsed and w.record.left:
                self.call_after_refresh(w.query_one("ListView").focus)
        elif isinstance(w, Collapsible):
            w.collapsed = not w.collapsed
        elif isinstance(w, VaultArtifactCard):
            self.post_message(VaultPane.OpenRequested(w.uri))

    def action_vault(self) -> None:
        w = self.cursor.widget if self.cursor else None
        uri = ""
        if isinstance(w, VaultArtifactCard):
            uri = w.uri
        elif isinstance(w, ToolCallView) and w.vault_uris:
            uri = w.vault_uris[0]
        elif isinstance(w, CompactionRow) and w.record.left:
            uri = w.record.left[0].uri
        if uri:
            self.post_message(VaultPane.OpenRequested(uri))
        else:
            self.notify("This item has no vault entry.", severity="warning")

    async def action_bring_back(self) -> None:
        w = self.cursor.widget if self.cursor else None
        if isinstance(w, CompactionRow) and w.record.left:
            await w.action_bring_back()
        else:
            self.notify("Only what left the view at a compaction can be brought back.", severity="warning")

    def action_copy(self) -> None:
        if self.cursor is not None:
            self.app.copy_to_clipboard(self.cursor.copy_text())
            self.notify("Copied.")

    def on_key(self, event: TextualKey) -> None:
        """A character typed in the transcript that is none of its keys (``v``, ``b``, ``c``) goes to the
        prompt, which takes the focus back (as Esc does): a message typed after a Shift+Tab was lost."""
        own = {b.key for b in self.BINDINGS if isinstance(b, Binding)}
        # guard: transcript-typed-text-goes-to-the-prompt
        if event.is_printable and event.character and event.key not in own:
            event.prevent_default()
            event.stop()
            self.action_leave()
            for prompt in self.screen.query(PromptInput):
                prompt.insert(event.character)

    def action_leave(self) -> None:
        """Esc, on an item or inside one (a compaction's list): the prompt takes the focus back, at once.
        Up one level only, a typed ``/context`` then fired ``c`` (copy) and its Enter collapsed the row."""
        # guard: esc-in-a-compactions-list-gives-the-keys
        self._set_cursor(None)
        for prompt in self.screen.query(PromptInput):  # now, not after a message: the next key is its
            self.screen.set_focus(prompt)
        self.post_message(self.Left())

    # -- loading and live output ----------------------------------------------------------------------
    async def load(
        self, messages: Sequence[Message], compactions: Sequence[Compaction] = (), welcome: str = ""
    ) -> None:
        """The conversation, with each compaction's row after the message it followed; the welcome above
        an empty one. Every item is listed; only the newest that fill the view are built (``_tail``)."""
        started = time.perf_counter(), time.process_time()
        self._carded.clear()
        self.matches.clear()
        self.cursor = None
        self.items, self._calls = session_items(messages, compactions, welcome, self.pastes)
        self.matches.changed()
        self._plain_first = True
        try:
            await self._mount_window(*self._tail())
        finally:
            self._plain_first = False
        log.info(
            "transcript: %d items, %d built in %.3f s (%.3f s CPU)",
            len(self.items),
            len(self.mounted_items),
            time.perf_counter() - started[0],
            time.process_time() - started[1],
        )
        self.anchor()  # a session opens at its newest output, however the last one was left
        self._check_away()
        self.call_after_refresh(self._fill_view)

    async def format_answers(self) -> None:
        """Render the markdown of the answers a load showed as plain text, the newest (on screen) first,
        one at a time (keys typed meanwhile are handled between them)."""
        for item in reversed(self.mounted_items):
            # guard: reopen-answers-shown-plain-get-their-markdown
            if isinstance(item.widget, AssistantMessage) and not item.widget.formatted:
                await item.widget.format()
        self.call_after_refresh(self._fill_view)  # markdown may be shorter than the plain text was

    async def _append(self, item: Item) -> Widget:
        """A new item at the end, mounted (the window is brought to the end first)."""
        async with self._pages:  # one change of the window: a remount meanwhile would drop the new item
            await self._tail_held()
            self.items.append(item)
            self.matches.changed()
            self.window.set(self.window.lo, len(self.items))
            widget = self._widget(item)
            await self.mount(widget)
            # guard: live-output-unmounts-the-oldest-items
            await self._trim_head()
        return widget

    async def _trim_head(self) -> None:
        """Unmount the oldest mounted items past ``WINDOW`` while the view follows new output (a reopen
        mounts no more): a live session kept every widget it built, ~150 at turn 40, ~1 MB of memory a
        turn and a layout over all of them. Scrolled up, the user is reading them: nothing is taken."""
        if self._scrolled_up:
            return
        lo, hi = self.window.span
        new_lo = self.window.trimmed()
        if self._current_item is not None and self._current_item in self.items[lo:new_lo]:
            new_lo = self.items.index(self._current_item)  # the answer streaming now stays mounted
        if new_lo <= lo:
            return
        gone = self.items[lo:new_lo]
        widgets = [it.widget for it in gone if it.widget is not None]
        if self.cursor in gone:
            self._set_cursor(None)
        self._forget(gone)
        self.window.set(new_lo, hi)
        earlier = self.query("#earlier")
        if earlier:
            earlier.first().update(self.window.earlier_text())  # type: ignore[attr-defined]
        elif widgets:
            line = Static(self.window.earlier_text(), id="earlier", markup=False)
            await self.mount(line, before=widgets[0])
        await self.remove_children(widgets)

    async def add_user(self, text: str) -> None:
        """The user's message as sent, each paste by its label; the welcome makes room for it."""
        for i, it in enumerate(self.items):
            if it.kind == "welcome":
                if it.widget is not None:
                    await it.widget.remove()
                del self.items[i]
                self.window.removed(i)
                break
        await self._append(Item("user", collapse(text, self.pastes)))

    async def start_assistant(self) -> AssistantMessage:
        item = Item("assistant")
        widget = await self._append(item)
        assert isinstance(widget, AssistantMessage)
        self.current, self._current_item = widget, item
        return widget

    async def append_text(self, text: str) -> None:
        if self.current is None or self._current_item is None or self._current_item.widget is None:
            await self.start_assistant()
        assert self.current is not None and self._current_item is not None
        self._current_item.text += text
        self.matches.changed()
        await self.current.append(text)

    def append_reasoning(self, text: str) -> None:
        if self.current is not None:
            self.current.append_reasoning(text)

    async def end_assistant(self) -> None:
        if self.current is not None:
            await self.current.finish()
        self.current = self._current_item = None

    async def add_tool_call(self, call: ToolCall) -> None:
        await self.end_assistant()
        item = Item("tool", call=call)
        self._calls[call.id] = item
        await self._append(item)

    def call_view(self, call_id: str) -> ToolCallView | None:
        item = self._calls.get(call_id)
        w = item.widget if item is not None else None
        return w if isinstance(w, ToolCallView) else None

    def set_tool_result(
        self, call_id: str, text: str, is_error: bool, meta: dict[str, object] | None = None
    ) -> None:
        item = self._calls.get(call_id)
        if item is None:
            return
        item.result = (text, is_error, dict(meta or {}))
        self.matches.changed()
        view = self.call_view(call_id)
        if view is not None:
            view.set_result(text, is_error, meta)
            self.add_vault_cards(call_id, view.vault_uris)

    def add_vault_cards(self, call_id: str, uris: list[str]) -> None:
        """A card for each of ``uris`` under the call's row. Inserting shifts the items a page build or a
        remount under way has read: then the cards wait for it, as every change of the window does."""
        # guard: a-vault-card-waits-for-the-page-being-built
        if self._building:  # a build or a remount under way: the cards after it
            self.run_worker(self._cards_after_build(call_id, uris), group="chat-cards")
        else:
            self._insert_cards(call_id, uris)

    async def _cards_after_build(self, call_id: str, uris: list[str]) -> None:
        async with self._pages:
            for mounting in self._insert_cards(call_id, uris):
                await mounting

    def _insert_cards(self, call_id: str, uris: list[str]) -> list[AwaitMount]:
        item = self._calls.get(call_id)
        if item is None:
            return []
        at = self.items.index(item) + 1
        mounts: list[AwaitMount] = []
        for uri in uris:
            if uri in self._carded:
                continue
            self._carded.add(uri)
            card = Item("vault", uri)
            self.items.insert(at, card)
            self.matches.changed()
            if self.window.inserted(at) and item.widget is not None:
                mounts.append(self.mount(self._widget(card), after=item.widget))
            at += 1
        return mounts

    async def add_notice(self, text: str, level: str = "info") -> None:
        """A notice row; the same notice right after itself is not added again (each click on the ring
        with nothing to compact added one more identical row)."""
        last = self.items[-1] if self.items else None
        # guard: a-notice-is-not-repeated-under-itself
        if last is not None and (last.kind, last.text, last.level) == ("notice", text, level):
            return
        await self._append(Item("notice", text, level))

    async def add_compaction(self, record: Compaction) -> None:
        await self.end_assistant()
        await self._append(Item("compaction", record=record))

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
                if self._current_item is not None:
                    self._current_item.text = ev.message.text
                    self.matches.changed()
                await self.end_assistant()
            case events.ToolStarted():
                await self.add_tool_call(ev.call)
            case events.ToolOutput():
                view = self.call_view(ev.call.id)
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
                    await self.append_text(CUT_MARK)
                await self.end_assistant()
            case events.TurnFailed():
                await self.end_assistant()
                await self.add_notice(ev.error, "error")
            case events.TurnDone():
                await self.end_assistant()
                if ev.interrupted:
                    for item in self._calls.values():
                        if isinstance(item.widget, ToolCallView) and item.widget.is_mounted:
                            item.widget.cancel()
                    await self.add_notice("Turn cancelled.", "warning")
