"""``MyrmApp``: wires the screen, key bindings, workers and the controller; renders agent events.

Start-up is two-phase so the first frame never waits: the screen mounts at once, then a worker
opens the database, loads the session and imports litellm in a thread.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from textual import work
from textual.app import App
from textual.binding import Binding
from textual.widgets import Static

from myrm_tui.agent.events import (
    AssistantSaved,
    ContextReport,
    Notice,
    ReasoningChunk,
    TextChunk,
    ToolFinished,
    ToolStarted,
    TurnDone,
    TurnFailed,
    UserSaved,
)
from myrm_tui.agent.permissions import Assessment
from myrm_tui.app.controller import Controller, ForkFailed
from myrm_tui.app.messages import (
    AgentEventMessage,
    CompactionDone,
    Failure,
    PanelData,
    SessionLoaded,
    VaultEntryLoaded,
)
from myrm_tui.app.screens.approval import ApprovalScreen
from myrm_tui.app.screens.help import HelpScreen
from myrm_tui.app.screens.main import MainScreen
from myrm_tui.app.screens.sessions import SessionPicker
from myrm_tui.app.widgets.chat_log import ChatLog
from myrm_tui.app.widgets.context_ring import ContextUsageIndicator
from myrm_tui.app.widgets.health_panel import SessionContextHealthPanel
from myrm_tui.app.widgets.prompt_input import PromptInput
from myrm_tui.app.widgets.side_panel import SidePanel
from myrm_tui.app.widgets.vault_pane import VaultPane
from myrm_tui.llm.client import LLMClient
from myrm_tui.llm.kinds import supports_tools


class MyrmApp(App[None]):
    TITLE = "myrm"
    CSS_PATH = "app.tcss"
    BINDINGS = [
        Binding("ctrl+q", "quit", "Quit", priority=True),
        Binding("f1", "help", "Help"),
        Binding("escape", "cancel_turn", "Cancel turn"),
        Binding("ctrl+k", "compact", "Compact", priority=True),
        Binding("ctrl+f", "fork", "Fork", priority=True),
        Binding("ctrl+n", "new_session", "New", priority=True),
        Binding("ctrl+s", "sessions", "Sessions", priority=True),
        Binding("ctrl+b", "toggle_panel", "Panel", show=False, priority=True),
        Binding("f2", "settings", "Settings"),
        Binding("f3", "show_tab('health-tab')", "Health"),
        Binding("ctrl+r", "toggle_replay", "Pause replay", show=False, priority=True),
        Binding("f4", "show_tab('vault-tab')", "Vault"),
    ]

    def __init__(
        self, db_path: Path, workspace: Path, cli: dict[str, Any] | None = None, session_id: str | None = None,
        replay: str | None = None, replay_speed: float = 0.6, llm: LLMClient | None = None,
    ) -> None:
        super().__init__()
        self.controller = Controller(db_path, workspace, cli or {}, llm)
        self.controller.approver = self._approve
        self.initial_session = session_id
        self.replay = replay
        self.replay_speed = replay_speed
        self.ready = asyncio.Event()
        self.busy = False
        self._last_sent = ""
        self._first_message = ""
        self.replayer: Any = None

    # -- start-up ---------------------------------------------------------------------------------
    def get_default_screen(self) -> MainScreen:
        return MainScreen()

    MAIN_ONLY = frozenset({"compact", "fork", "new_session", "sessions", "toggle_panel", "settings", "show_tab", "toggle_replay"})

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Chat actions are off while a modal screen is open, so its own keys (ctrl+s: save) work."""
        return action not in self.MAIN_ONLY or isinstance(self.screen, MainScreen)

    def _closing_down(self) -> bool:
        """True once the chat screen is gone or being torn down (late worker messages are dropped)."""
        if not self.screen_stack:
            return True
        screen = self.screen_stack[0]
        return not screen.is_attached or not screen.query("#status")

    @property
    def main(self) -> MainScreen:
        """The chat screen, at the bottom of the stack whatever modal is open above it."""
        screen = self.screen_stack[0]
        assert isinstance(screen, MainScreen)
        return screen

    def on_mount(self) -> None:
        self.start_up()

    @work(exclusive=True, group="startup", exit_on_error=False, description="open database and session")
    async def start_up(self) -> None:
        try:
            await self.controller.open()
            if self.replay:
                self.replayer = await self.controller.start_replay(self.replay, self.replay_speed)
                assert self.controller.session is not None
                self.post_message(SessionLoaded(self.controller.session, await self.controller.messages()))
                self.ready.set()
                self.busy = True
                self.play_replay()
                return
            row = await self.controller.open_session(self.initial_session)
            self.post_message(SessionLoaded(row, await self.controller.messages()))
            await self.controller.ensure_agent()  # imports litellm in a thread
        except Exception as exc:
            self.post_message(Failure(f"Could not start: {type(exc).__name__}: {exc}"))
            return
        self.ready.set()
        self.post_message(Failure(""))  # refresh the status line
        self.watch_files()

    @work(exclusive=True, group="watch", exit_on_error=False, description="watch prompts and config")
    async def watch_files(self) -> None:
        async def changed(paths: list[str]) -> None:
            self.post_message(Failure(""))
            self.notify(f"{len(paths)} prompt/config file(s) changed: the agent is rebuilt for the next message", timeout=4)

        await self.controller.watch_files(changed)

    def action_settings(self) -> None:
        if self.controller.settings is not None:
            self.edit_settings()

    @work(exclusive=True, group="settings", exit_on_error=False, description="settings screen")
    async def edit_settings(self) -> None:
        from myrm_tui.app.screens.settings import SettingsScreen

        assert self.controller.settings is not None
        values = await self.push_screen_wait(SettingsScreen(self.controller.settings))
        if values is None:
            return
        await self.controller.save_settings(values)
        s = self.controller.settings
        self.main.query_one(SidePanel).show_model(f"model: {s.model if s else '-'}")
        self.notify("Settings saved; they take effect with the next message.")

    @work(exclusive=True, group="turn", exit_on_error=False, description="replay")
    async def play_replay(self) -> None:
        assert self.replayer is not None and self.controller.agent is not None
        try:
            async for ev in self.replayer.play(self.controller.agent):
                if isinstance(ev, UserSaved):
                    self.busy = True
                self.post_message(AgentEventMessage(ev))
        except asyncio.CancelledError:
            self.post_message(AgentEventMessage(TurnDone(0, interrupted=True)))
            raise
        self.post_message(AgentEventMessage(Notice("Replay finished. You can keep chatting only in a live session (ctrl+n).")))

    def action_toggle_replay(self) -> None:
        if self.replayer is None:
            return
        running = self.replayer.feed.running
        if running.is_set():
            running.clear()
            self._status("replay paused (ctrl+r resumes) — ctrl+k, ctrl+f, F3, F4 work meanwhile")
        else:
            running.set()
            self._status()

    async def on_session_loaded(self, event: SessionLoaded) -> None:
        if self._closing_down():  # a worker's message can arrive while the app shuts down
            return
        s = self.controller.settings
        model = self.controller.agent.settings.model if self.controller.agent else (s.model if s else "")
        label = "REPLAY · " if self.replayer is not None else ""
        self.sub_title = f"{label}{event.session.title} · {model}"
        await self.main.query_one(ChatLog).load(event.messages)
        self._first_message = "" if event.session.title == "New session" else event.session.title
        self.refresh_panels()
        panel = self.main.query_one(SidePanel)
        if self.replayer is not None:
            panel.show_model(f"replaying a recorded session\nsession: {event.session.id}")
        elif s is not None:
            note = " (embedded default — set --model or MYRM_MODEL for a bigger model)" if s.is_local_default else ""
            tools = "" if supports_tools(s.model, s.api_base) else "\ntools: off on this model (it cannot call them)"
            panel.show_model(f"model: {s.model}{note}{tools}\nsession: {event.session.id}")
        self._status()

    def _status(self, text: str | None = None) -> None:
        if self._closing_down():  # a worker's message can arrive while the app shuts down
            return
        if text is None:
            if self.replayer is not None:
                text = "REPLAY of a recorded session — ctrl+r pauses, ctrl+k compacts, ctrl+f forks, F4 vault"
            else:
                text = "thinking… (esc cancels)" if self.busy else ("ready" if self.ready.is_set() else "loading model runtime…")
        self.main.query_one("#status", Static).update(text)

    async def on_failure(self, event: Failure) -> None:
        if self._closing_down():  # a worker's message can arrive while the app shuts down
            return
        if event.text:
            self.notify(event.text, severity="error", timeout=8)
            self._status(event.text)
        else:
            self._status()

    # -- turns ------------------------------------------------------------------------------------
    async def on_prompt_input_submitted(self, event: PromptInput.Submitted) -> None:
        text = event.text
        if text.startswith("/"):
            handled = await self._slash(text)
            if handled:
                self.main.query_one(PromptInput).load_text("")
                return
        if self.busy:
            self.notify("A turn is running; Esc cancels it.", severity="warning")
            return
        self.main.query_one(PromptInput).load_text("")
        self._last_sent = text
        self.busy = True
        self._status()
        self.run_turn(text)

    @work(exclusive=True, group="turn", exit_on_error=False, description="agent turn")
    async def run_turn(self, text: str) -> None:
        try:
            await self.ready.wait()
            agent = await self.controller.ensure_agent()
            async for ev in agent.run_turn(text):
                self.post_message(AgentEventMessage(ev))
        except asyncio.CancelledError:
            self.post_message(AgentEventMessage(TurnDone(0, interrupted=True)))
            raise
        except Exception as exc:
            self.post_message(AgentEventMessage(TurnFailed(f"{type(exc).__name__}: {exc}")))
            self.post_message(AgentEventMessage(TurnDone(0)))

    async def on_agent_event_message(self, message: AgentEventMessage) -> None:
        if self._closing_down():  # a worker's message can arrive while the app shuts down
            return
        ev = message.event
        chat = self.main.query_one(ChatLog)
        if isinstance(ev, UserSaved):
            await chat.add_user(ev.message.text)
            self._first_message = self._first_message or ev.message.text  # titles come from saved messages only
        elif isinstance(ev, TextChunk):
            await chat.append_text(ev.text)
            ring = self.main.query_one(ContextUsageIndicator)
            if ring.window:  # live while streaming: the reply will be part of the next request's input
                ring.tokens += max(1, len(ev.text) // 4)
                ring.ratio = min(ring.tokens / ring.window, 1.0)
        elif isinstance(ev, ReasoningChunk):
            if chat.current is None:
                await chat.start_assistant()
            chat.append_reasoning(ev.text)
        elif isinstance(ev, AssistantSaved):
            await chat.end_assistant()
        elif isinstance(ev, ToolStarted):
            await chat.add_tool_call(ev.call)
        elif isinstance(ev, ToolFinished):
            chat.set_tool_result(ev.call.id, ev.message.text, bool(ev.message.meta.get("is_error")))
        elif isinstance(ev, ContextReport):
            self._show_report(ev)
        elif isinstance(ev, Notice):
            if ev.text.startswith("Context compacted"):
                self.notify(ev.text, timeout=4)
            await chat.add_notice(ev.text, ev.level)
        elif isinstance(ev, TurnFailed):
            await chat.end_assistant()
            await chat.add_notice(ev.error, "error")
            if ev.unsent:
                self.main.query_one(PromptInput).load_text(self._last_sent)  # refused input is never lost
                self.notify("The message was not sent; your text is back in the box.", severity="error")
        elif isinstance(ev, TurnDone):
            await chat.end_assistant()
            if ev.interrupted:
                await chat.add_notice("Turn cancelled.", "warning")
            self.busy = False
            self._status()
            self.refresh_panels()
            if self._first_message and self.replayer is None:
                self.title_session(self._first_message)

    @work(exclusive=True, group="title", exit_on_error=False, description="session title")
    async def title_session(self, first: str) -> None:
        title = await self.controller.maybe_title(first)
        if title:
            self.sub_title = f"{title} · {self.controller.settings.model if self.controller.settings else ''}"

    @work(exclusive=True, group="panels", exit_on_error=False, description="load metrics and vault")
    async def refresh_panels(self) -> None:
        await self.ready.wait()
        self.post_message(PanelData(await self.controller.panel_data()))

    def on_panel_data(self, event: PanelData) -> None:
        if self._closing_down():  # a worker's message can arrive while the app shuts down
            return
        d = event.data
        self.main.query_one(SessionContextHealthPanel).show(d["rows"], d["info"])
        self.main.query_one(VaultPane).show_entries(d["vault"])
        chat = self.main.query_one(ChatLog)
        for call_id, uri in d["vaulted"].items():
            chat.mark_vaulted(call_id, uri)

    def action_show_tab(self, tab: str) -> None:
        self.main.remove_class("-hide-panel")
        self.main.query_one("#tabs").active = tab  # type: ignore[attr-defined]

    def on_vault_pane_open_requested(self, event: VaultPane.OpenRequested) -> None:
        self.load_vault_entry(event.uri)

    @work(exclusive=True, group="vault", exit_on_error=False, description="open vault entry")
    async def load_vault_entry(self, uri: str) -> None:
        self.post_message(VaultEntryLoaded(uri, await self.controller.vault_entry(uri)))

    def on_vault_entry_loaded(self, event: VaultEntryLoaded) -> None:
        if self._closing_down():  # a worker's message can arrive while the app shuts down
            return
        if event.entry is None:
            self.notify(f"{event.uri} is not in this session's vault", severity="warning")
            return
        self.action_show_tab("vault-tab")
        self.main.query_one(VaultPane).show_content(event.uri, event.entry.content, event.entry.kind)

    def _show_report(self, report: ContextReport) -> None:
        ring = self.main.query_one(ContextUsageIndicator)
        tokens = report.usage.prompt_tokens if report.usage and report.usage.prompt_tokens else report.tokens
        ring.tokens, ring.window = tokens, report.window
        ring.ratio = min(tokens / report.window, 1.0) if report.window else 0.0
        s = self.controller.settings
        self.main.query_one(SidePanel).set_class(bool(s and ring.ratio >= s.fork_suggest_ratio), "-suggest-fork")
        m = report.metrics
        lines = [f"threshold level: {str(m.get('level', '-')).lower()}", f"pipeline: {m.get('total_ms', 0):.1f} ms"]
        if report.usage:
            hit = report.usage.cached_tokens / report.usage.prompt_tokens if report.usage.prompt_tokens else 0.0
            lines.append(f"cache hit: {hit:.0%} ({report.usage.cached_tokens:,} cached)")
        removed = m.get("removed") or {}
        if removed:
            lines.append("removed: " + ", ".join(f"{k} {v:,}" for k, v in removed.items()))
        self.main.query_one(SidePanel).show_stats(lines)

    async def _approve(self, tool: str, command: str, assessment: Assessment) -> str:
        return await self.push_screen_wait(ApprovalScreen(tool, command, assessment))

    # -- actions ----------------------------------------------------------------------------------
    def action_cancel_turn(self) -> None:
        if self.busy:
            self.workers.cancel_group(self, "turn")

    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    def action_toggle_panel(self) -> None:
        self.main.toggle_class("-hide-panel")

    def _replay_paused(self) -> bool:
        return self.replayer is not None and not self.replayer.feed.running.is_set()

    def action_compact(self, focus: str = "") -> None:
        if self.busy and not self._replay_paused():
            self.notify("Wait for the turn to finish (or Esc) before compacting.", severity="warning")
            return
        self.main.query_one(ContextUsageIndicator).busy = True
        self.compact(focus)

    def on_context_usage_indicator_compact_requested(self, _: ContextUsageIndicator.CompactRequested) -> None:
        self.action_compact()

    @work(exclusive=True, group="compact", exit_on_error=False, description="compaction")
    async def compact(self, focus: str) -> None:
        try:
            await self.ready.wait()
            report = await self.controller.compact(focus)
        except Exception as exc:
            self.post_message(Failure(f"Compaction failed: {exc}"))
            self.post_message(CompactionDone(None))
            return
        self.post_message(CompactionDone(report))

    async def on_compaction_done(self, event: CompactionDone) -> None:
        if self._closing_down():  # a worker's message can arrive while the app shuts down
            return
        self.main.query_one(ContextUsageIndicator).busy = False
        self.refresh_panels()
        if event.report is not None:
            self._show_report(event.report)
            m = event.report.metrics
            self.notify(f"Compacted: {m.get('tokens_in', 0):,} → {m.get('tokens_out', 0):,} tokens")

    def action_fork(self, at_user_message: int | None = None) -> None:
        if self.busy and not self._replay_paused():
            self.notify("Wait for the turn to finish before forking.", severity="warning")
            return
        self.fork_session(at_user_message)

    @work(exclusive=True, group="session", exit_on_error=False, description="fork session")
    async def fork_session(self, at_user_message: int | None = None) -> None:
        try:
            await self.ready.wait()
            row = await self.controller.fork(at_user_message=at_user_message)
            self.post_message(SessionLoaded(row, await self.controller.messages()))
            self.post_message(Failure(""))
        except Exception as exc:
            self.post_message(Failure(str(exc) if isinstance(exc, ForkFailed) else f"Fork failed: {exc}"))
            return
        self.notify(self.controller.fork_notice or f"Forked into session {row.id}")

    def get_system_commands(self, screen: Any) -> Any:
        """Every action in the command palette (ctrl+p), next to Textual's own."""
        from textual.app import SystemCommand

        yield from super().get_system_commands(screen)
        for title, help_text, action in (
            ("Compact context now", "Run the compaction pipeline now (ctrl+k)", self.action_compact),
            ("Fork session", "Fork into a new session that starts compacted (ctrl+f)", self.action_fork),
            ("New session", "Start a new session (ctrl+n)", self.action_new_session),
            ("Open session…", "Pick a session to open or delete (ctrl+s)", self.action_sessions),
            ("Settings", "Model, thresholds, approvals (F2)", self.action_settings),
            ("Context health", "Compaction, pruning and cache metrics (F3)", lambda: self.action_show_tab("health-tab")),
            ("Vault", "Vaulted outputs of this session (F4)", lambda: self.action_show_tab("vault-tab")),
            ("Toggle side panel", "Show or hide the side panel (ctrl+b)", self.action_toggle_panel),
            ("Pause or resume replay", "Replay mode only (ctrl+r)", self.action_toggle_replay),
            ("Cancel turn", "Stop the running turn (esc)", self.action_cancel_turn),
        ):
            yield SystemCommand(title, help_text, action)

    def action_new_session(self) -> None:
        if not self.busy:
            self.switch_session(None)

    @work(exclusive=True, group="session", exit_on_error=False, description="switch session")
    async def switch_session(self, session_id: str | None) -> None:
        await self.ready.wait()
        row = await (self.controller.open_session(session_id) if session_id else self.controller.new_session())
        self.post_message(SessionLoaded(row, await self.controller.messages()))
        await self.controller.ensure_agent()

    def action_sessions(self) -> None:
        if not self.busy:
            self.pick_session()

    @work(exclusive=True, group="picker", exit_on_error=False, description="session picker")
    async def pick_session(self) -> None:
        await self.ready.wait()
        current = self.controller.session.id if self.controller.session else None
        choice = await self.push_screen_wait(SessionPicker(await self.controller.sessions(), current))
        if choice is None:
            return
        if choice.startswith("delete:"):
            sid = choice.split(":", 1)[1]
            if sid == current:
                self.notify("Open another session before deleting this one.", severity="warning")
            else:
                await self.controller.delete_session(sid)
                self.notify(f"Deleted session {sid}")
            self.pick_session()
            return
        self.switch_session(choice)

    # -- slash commands ---------------------------------------------------------------------------
    async def _slash(self, text: str) -> bool:
        cmd, _, arg = text[1:].partition(" ")
        arg = arg.strip()
        if cmd == "compact":
            self.action_compact(arg)
        elif cmd == "fork":
            if arg and not arg.isdigit():
                self.notify("/fork takes the number of one of your messages: /fork 3 forks after your 3rd message", severity="warning")
            else:
                self.action_fork(int(arg) if arg else None)
        elif cmd in ("clear", "new"):
            self.action_new_session()
        elif cmd == "sessions":
            self.action_sessions()
        elif cmd == "help":
            self.action_help()
        elif cmd == "vault":
            self.action_show_tab("vault-tab")
        elif cmd == "health":
            self.action_show_tab("health-tab")
        elif cmd in ("model", "mode") and arg:
            key = "model" if cmd == "model" else "prompt_mode"
            await self.controller.set_setting(key, arg)
            self.notify(f"{key} = {arg}; takes effect with the next message")
            self.main.query_one(SidePanel).show_model(f"model: {self.controller.settings.model if self.controller.settings else arg}")
        elif cmd == "notes":
            agent = await self.controller.ensure_agent()
            notes = agent.state.notes
            await self.main.query_one(ChatLog).add_notice("Session notes:\n" + ("\n".join(f"{i + 1}. {n}" for i, n in enumerate(notes)) or "(none)"))
        else:
            return False
        return True

    async def on_unmount(self) -> None:
        await self.controller.close()
