"""The chat screen: conversation, side panel, status line, prompt box, footer.

It draws what the app's workers post to it (a session, the events of a turn, panel data, a vault entry);
the app updated its own state before, and those messages stop here. The app's state it shows (status
line, live numbers, compaction flag, model line) is bound down from the app's reactives
(``MyrmApp.get_default_screen``) to the widgets that render it."""

from __future__ import annotations

import asyncio
from pathlib import Path

from textual import events, getters, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.reactive import var
from textual.screen import Screen
from textual.widgets import Header, OptionList, Static, TabbedContent

from myrm_tui.agent.events import TurnFailed
from myrm_tui.app.key_router import router_of
from myrm_tui.app.live import LiveContext
from myrm_tui.app.mentions import candidates, list_files, needs_folder, read_folder
from myrm_tui.app.messages import (
    AgentEventMessage,
    ApprovalWaiting,
    FormatTranscript,
    JumpToBottom,
    PanelData,
    SearchTranscript,
    SessionLoaded,
    ShowNotice,
    ShowTab,
    TogglePanel,
    VaultEntryLoaded,
)
from myrm_tui.app.widgets.chat_log import ChatLog
from myrm_tui.app.widgets.footer import KeysFooter
from myrm_tui.app.widgets.health_panel import SessionContextHealthPanel
from myrm_tui.app.widgets.mention_menu import MentionMenu
from myrm_tui.app.widgets.plain import plain
from myrm_tui.app.widgets.prompt_input import PromptInput
from myrm_tui.app.widgets.side_panel import SidePanel
from myrm_tui.app.widgets.slash_menu import SlashMenu
from myrm_tui.app.widgets.status_line import STARTING, StatusLine
from myrm_tui.app.widgets.tool_call import ToolCallView
from myrm_tui.app.widgets.transcript_search import TranscriptSearch
from myrm_tui.app.widgets.vault_pane import VaultPane


def first_line(text: str, width: int = 80) -> str:
    """A queued message on one line: its first line, cut with "…" when longer or followed by more."""
    lines = text.strip().splitlines() or [""]
    line = lines[0] if len(lines[0]) <= width else lines[0][: width - 1] + "…"
    return f"{line} (+{len(lines) - 1} lines)" if len(lines) > 1 else line


# Below this width the side panel collapses to the ring's line under the chat (ctrl+b opens it).
NARROW = 110
SHORT = 10  # rows below which the title, the keys' line and the box's border give their rows to the chat


class MainScreen(Screen[None]):
    CSS_PATH = "main.tcss"
    # shift+tab from the prompt enters the transcript (Tab stays in the box for completion).
    BINDINGS = [Binding("shift+tab", "enter_transcript", "Transcript", show=False)]

    # Bound from the app's state of the same names; passed on to the widgets that show them.
    status: var[str] = var(STARTING)
    live: var[LiveContext] = var(LiveContext)
    fork_ratio: var[float] = var(1.0)
    compacting: var[bool] = var(False)
    model_line: var[str] = var("")

    chat = getters.query_one(ChatLog)
    side_panel = getters.query_one(SidePanel)
    prompt = getters.query_one(PromptInput)
    health = getters.query_one(SessionContextHealthPanel)
    vault = getters.query_one(VaultPane)
    mentions = getters.query_one(MentionMenu)

    def __init__(self, workspace: Path | None = None) -> None:
        super().__init__()
        self.workspace = workspace  # where @ mentions complete from
        self._files: list[str] | None = None
        self._query: str | None = None
        self.panel_choice: bool | None = None  # ctrl+b's last choice (None: the width decides)
        self._wide: bool | None = None  # the width's side of NARROW at the last layout
        self._status_line: StatusLine | None = None  # set by compose; torn_down looks for it
        self._mention_holds: list[int] = []  # keys held until the @ menu shows the query typed
        # typed folders past the index's cut read for this @ (a new @ reads them again), and being read
        self._listed: dict[str, list[str]] = {}
        self._reading: set[str] = set()

    def compose(self) -> ComposeResult:
        # The panel's class is set before the widgets exist: set after, at mount, it restyled all of them
        # (a fifth of the start-up's CPU on a narrow terminal).
        self.set_class(not self._panel_shown(self.app.size.width), "-hide-panel")
        self.set_class(self.app.size.height < SHORT, "-short")
        yield Header(show_clock=False, icon="◉")
        with Horizontal(id="body"):
            with Vertical(id="chat-column"):
                yield ChatLog(id="chat")
                yield Static("↓ more below — ctrl+end jumps to the newest output", id="below")
            yield SidePanel(id="panel").data_bind(
                MainScreen.live, MainScreen.fork_ratio, MainScreen.compacting, MainScreen.model_line
            )
        yield TranscriptSearch(id="search")
        self._status_line = StatusLine(id="status").data_bind(MainScreen.status)
        yield self._status_line
        yield MentionMenu(id="mentions")
        yield SlashMenu(id="slash-menu")
        yield PromptInput(id="prompt", placeholder="Message myrm — Enter sends, ctrl+j new line, F1 help")
        yield Static("", id="queued", markup=False)
        yield KeysFooter()

    def on_mount(self) -> None:
        self.prompt.workspace = self.workspace
        self.prompt.menu = self.query_one(SlashMenu)
        self.prompt.mentions = self.mentions
        self.prompt.focus()
        self._layout_panel()

    def on_resize(self, _: events.Resize) -> None:
        self._layout_panel()
        # A pane a few rows high (a tmux split, 20x5) left the chat no row at all: a reply came, unseen.
        # guard: a-short-terminal-keeps-rows-for-the-chat
        self.set_class(self.size.height < SHORT, "-short")

    def _layout_panel(self) -> None:
        """The side panel as a column, or collapsed to the ring's line under the chat. A choice made
        (ctrl+b, F3, F4) holds until the terminal is resized across ``NARROW``: the panel F4 opened in a
        wide terminal, made 60 columns wide mid-turn, left the conversation 8 columns, a word a line."""
        wide = self.size.width >= NARROW
        if self._wide is not None and wide != self._wide:
            self.panel_choice = None
        self._wide = wide
        shown = self._panel_shown(self.size.width)
        self.set_class(not shown, "-hide-panel")
        self.side_panel.collapsed = not shown
        focused = self.focused
        if not shown and focused is not None and self.side_panel in focused.ancestors:
            self.prompt.focus()  # keys typed into a hidden vault list went nowhere

    def _panel_shown(self, width: int) -> bool:
        return self.panel_choice if self.panel_choice is not None else width >= NARROW

    # -- @ mentions ----------------------------------------------------------------------------------
    def on_prompt_input_mention_changed(self, event: PromptInput.MentionChanged) -> None:
        self._query = event.query
        if event.hold is not None:
            self._mention_holds.append(event.hold)
        if event.query is None or self.workspace is None:
            self._listed.clear()
            self._close_mentions()
        elif self._files is None:
            self.load_files()
            return  # the keys after it wait for the list
        else:
            self._show_mentions()
        self._release_mention_keys()

    @work(exclusive=True, group="mention-files", exit_on_error=False, description="list workspace files")
    async def load_files(self) -> None:
        assert self.workspace is not None
        try:
            self._files = await asyncio.to_thread(list_files, self.workspace)
            if self._query is not None:
                self._show_mentions()
        finally:
            self._release_mention_keys()

    def _release_mention_keys(self) -> None:
        """The menu shows what was typed: the keys typed after it go on (Tab, Enter pick from it)."""
        router = router_of(self.app)
        while self._mention_holds:
            hold = self._mention_holds.pop()
            if router is not None:
                router.release(hold)

    def _show_mentions(self) -> None:
        query, files = self._query or "", self._files or []
        folder = needs_folder(query, files)
        listed = self._listed.get(folder) if folder is not None else None
        # A folder of 100,000 files, or on a slow network mount, took the UI thread for as long as it
        # took to read: keys typed meanwhile waited. It is read in a thread, the index's matches shown
        # meanwhile, and the menu shown again once it is read if the query still names it.
        # guard: mention-a-typed-folder-is-read-off-the-ui-thread
        if folder is not None and listed is None and folder not in self._reading:
            self._reading.add(folder)
            self.read_typed_folder(folder)
        self.mentions.show(candidates(query, files, listed))
        self.prompt.mention_active = self.mentions.is_open

    @work(group="mention-folder", exit_on_error=False, description="read a typed folder")
    async def read_typed_folder(self, folder: str) -> None:
        assert self.workspace is not None
        try:
            self._listed[folder] = await asyncio.to_thread(read_folder, folder, self.workspace)
        finally:
            self._reading.discard(folder)
        if self._query is not None and needs_folder(self._query, self._files or []) == folder:
            self._show_mentions()

    def _close_mentions(self) -> None:
        self.mentions.close()
        self.prompt.mention_active = False

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if isinstance(event.option_list, MentionMenu):
            self._choose(str(event.option.prompt))

    def _choose(self, path: str | None) -> None:
        self._close_mentions()
        if path is not None:
            self.prompt.complete_mention(path)
            self.prompt.focus()

    def torn_down(self) -> bool:
        """True once the screen is detached or its widgets are gone (a worker's late message is dropped)."""
        # Asked for every agent event (each streamed token): the status line is a child of the screen, so
        # look for that widget among the children, with no selector matching (a query of the whole tree cost
        # 1 ms a token with a long transcript).
        status = self._status_line
        return not self.is_attached or status is None or not any(w is status for w in self.children)

    async def on_session_loaded(self, event: SessionLoaded) -> None:
        if not self.torn_down():
            await self.chat.load(event.messages, event.compactions, event.welcome)

    def on_format_transcript(self, _: FormatTranscript) -> None:
        if not self.torn_down():
            self.chat.run_worker(self.chat.format_answers(), group="chat-format", exclusive=True)

    async def on_agent_event_message(self, message: AgentEventMessage) -> None:
        if self.torn_down():
            return
        ev = message.event
        if isinstance(ev, TurnFailed) and ev.unsent:
            # Before the transcript shows the refusal: showing it awaits, and the text must be back by then.
            self.prompt.give_back()  # refused input is never lost
            self.notify("The message was not sent; your text is back in the box.", severity="error")
        await self.chat.show(ev)

    def on_approval_waiting(self, event: ApprovalWaiting) -> None:
        for card in self.query(ToolCallView):
            if card.state == "running" and card.call.name == event.tool:
                card.await_approval(event.waiting)

    def on_prompt_input_queue_changed(self, event: PromptInput.QueueChanged) -> None:
        queued = self.query_one("#queued", Static)
        queued.display = bool(event.shown)
        lines = [f"queued: {first_line(text)}" for text in event.shown]
        hint = "sent when the turn ends · ↑ in the empty box edits the last · esc there removes it"
        # guard: untrusted-text-the-queue-line
        queued.update(plain("\n".join([*lines, hint])))  # a queued paste holds whatever was copied

    def on_panel_data(self, event: PanelData) -> None:
        if self.torn_down():
            return
        self.health.show(event.rows, event.info)
        self.vault.show_entries(event.vault, event.gists)
        for call_id, uri in event.vaulted.items():
            self.chat.add_vault_cards(call_id, [uri])  # its full output is in the vault: offered under it

    def on_vault_entry_loaded(self, event: VaultEntryLoaded) -> None:
        if self.torn_down():
            return
        if event.entry is None:
            self.notify(f"{event.uri} is not in this session's vault", severity="warning")
            return
        self._show_tab("vault-tab")
        self.vault.show_entry(event.entry, event.line)

    def on_vault_pane_left(self, _: VaultPane.Left) -> None:
        self.prompt.focus()

    def on_show_tab(self, event: ShowTab) -> None:
        self._show_tab(event.tab)
        if event.focus and event.tab == "vault-tab":
            self.vault.focus_list()  # F4: arrows and Enter work at once

    def on_toggle_panel(self, _: TogglePanel) -> None:
        self.panel_choice = self.has_class("-hide-panel")
        self._layout_panel()

    async def on_show_notice(self, event: ShowNotice) -> None:
        if not self.torn_down():
            await self.chat.add_notice(event.text, event.level)

    # -- the conversation's scrolling and search ---------------------------------------------------------
    def on_chat_log_scrolled_up(self, event: ChatLog.ScrolledUp) -> None:
        self.query_one("#below").display = event.away

    def on_jump_to_bottom(self, _: JumpToBottom) -> None:
        self.chat.jump_to_bottom()

    def on_prompt_input_scroll_requested(self, event: PromptInput.ScrollRequested) -> None:
        self.chat.page(event.pages)

    def on_search_transcript(self, event: SearchTranscript) -> None:
        self.open_search(event.text)

    def open_search(self, text: str = "") -> None:
        """Called by the app's ctrl+g at once (not through a message): the keys typed right after it go
        to the search field even while a long session is still being drawn."""
        self.query_one(TranscriptSearch).open(text)

    async def on_transcript_search_find(self, event: TranscriptSearch.Find) -> None:
        # The count first (from the items' text, whatever is mounted); then the match is brought on screen.
        search = self.query_one(TranscriptSearch)
        if event.needle != search.needle or (event.step == 0 and event.needle == self.chat.needle != ""):
            # More was typed since (a later Find has the text), or this text is searched already. Showing
            # each key's match mounted a window of items per key (a second each in a long session) and
            # held the screen meanwhile.
            return
        if event.step == 0 or event.needle != self.chat.needle:
            current = self.chat.step(-1) if self.chat.find(event.needle) else 0
        else:
            current = self.chat.step(event.step)
        search.show_count(current, self.chat.match_count)
        if current:
            await self.chat.show_match()

    def on_transcript_search_closed(self, _: TranscriptSearch.Closed) -> None:
        self.chat.find("")  # the search gave the focus back itself

    # -- keyboard reach of the transcript ----------------------------------------------------------------
    def action_enter_transcript(self) -> None:
        self.chat.enter()

    def on_chat_log_left(self, _: ChatLog.Left) -> None:
        self.prompt.focus()

    def _show_tab(self, tab: str) -> None:
        self.panel_choice = True
        self._layout_panel()
        self.query_one("#tabs", TabbedContent).active = tab
