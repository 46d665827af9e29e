"""``MyrmApp``: owns the app's state (busy, status, live numbers, titles), runs the workers that talk to
the controller, and maps the command table to actions.

Workers post what the chat screen shows to the screen (``_show``); it draws it and the message bubbles up
here, where the state is updated. The state the screen shows is reactive and bound down to its widgets
(``get_default_screen``): no handler here reaches into the screen's widgets.

Start-up is two-phase so the first frame never waits: the screen mounts at once (only Textual and the
widgets are imported before it), then a worker opens the database, loads the session and builds the
agent in a thread. litellm (~150 MB, seconds to import) and the embedded model's child process start
when the user starts typing (at start-up only when a cloud model's window or preheat needs them).
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from textual import work
from textual.app import App
from textual.content import Content
from textual.driver import Driver
from textual.message import Message
from textual.reactive import var
from textual.widgets import TextArea
from textual.worker import Worker, WorkerState

from myrm_tui.agent.events import (
    AgentEvent,
    CompactionMade,
    CompactionStarted,
    ContextReport,
    Notice,
    SummaryProgress,
    TextChunk,
    ToolFinished,
    ToolStarted,
    TurnDone,
    TurnFailed,
    UserSaved,
)
from myrm_tui.app import terminal_guard
from myrm_tui.app.commands import (
    COMMANDS,
    Command,
    bindings,
    by_slash,
    looks_like_command,
    main_only_actions,
    unknown_command,
)
from myrm_tui.app.controller import Controller, ForkFailed
from myrm_tui.app.key_router import RoutedKeys
from myrm_tui.app.live import LiveContext
from myrm_tui.app.messages import (
    AgentEventMessage,
    AgentReady,
    ApprovalWaiting,
    CompactionDone,
    Failure,
    JumpToBottom,
    SessionLoaded,
    ShowNotice,
    ShowTab,
    StatusChanged,
    TogglePanel,
    VaultEntryLoaded,
)
from myrm_tui.app.screens.main import MainScreen
from myrm_tui.app.widgets.compaction_row import CompactionRow
from myrm_tui.app.widgets.context_ring import ContextUsageIndicator
from myrm_tui.app.widgets.prompt_input import PromptInput
from myrm_tui.app.widgets.status_line import STARTING
from myrm_tui.app.widgets.vault_pane import VaultPane
from myrm_tui.context.model_facts import supports_tools
from myrm_tui.logs import failure_logged
from myrm_tui.safe_text import sanitize

if TYPE_CHECKING:
    from textual.screen import Screen

    from myrm_tui.agent.permissions import Assessment
    from myrm_tui.agent.replay import Replay
    from myrm_tui.llm.client import LLMClient

log = logging.getLogger(__name__)
SETTLE_S = 3.0  # at exit, how long cancelled workers get to finish (within the guard's deadline)
T = TypeVar("T")
QUIT_WINDOW_S = 2.0  # a second ctrl+c within this quits


class MyrmApp(RoutedKeys, App[None]):
    TITLE = "myrm"
    # Textual reads a screen's CSS_PATH only for screens it pushes, not for the default screen: the chat
    # screen's rules are loaded here (without them ctrl+b toggled a class nothing styled).
    CSS_PATH = ["app.tcss", "screens/main.tcss"]
    BINDINGS = bindings()
    MAIN_ONLY = main_only_actions()

    # What the chat screen shows of the app's state, bound down to its widgets (get_default_screen).
    status: var[str] = var(STARTING)
    live: var[LiveContext] = var(LiveContext)  # the ring, the lines under it and the health panel's now
    fork_ratio: var[float] = var(1.0)  # the fork hint shows from this share of the window
    compacting: var[bool] = var(False)
    model_line: var[str] = var("")

    def __init__(
        self,
        db_path: Path,
        workspace: Path,
        cli: dict[str, Any] | None = None,
        session_id: str | None = None,
        replay: str | None = None,
        replay_speed: float = 0.6,
        llm: LLMClient | None = None,
    ) -> None:
        super().__init__()
        self.controller = Controller(db_path, workspace, cli or {}, llm)
        self.controller.approver = self._approve
        self.initial_session = session_id
        self.replay = replay
        self.replay_speed = replay_speed
        self.ready = asyncio.Event()
        self.busy = False
        self._first_message = ""
        self._summary_line = ""  # the background summary's progress, shown in the status line
        self._warming = False
        self.replayer: Replay | None = None
        self._failed_steps: set[str] = set()  # pipeline steps whose failure was shown (once each)
        self.replay_finished = False
        self.resume_hint = ""  # printed by the command line after the app exits
        # What the turn does now, for the status line: "thinking" (the request is read, no text yet) since
        # when, over how many tokens; "writing" once its text streams.
        self._phase = "thinking"
        self._phase_since = time.monotonic()
        self._reading = 0
        self._status_auto = True  # the status line shows the computed text (a tick may refresh it)
        self._ctrl_c_at = float("-inf")  # the last ctrl+c that did not copy

    # -- keys: one at a time, in order (key_router.py) ------------------------------------------------
    async def _open(self, screen: Screen[T], hold: int) -> T:
        """``push_screen_wait`` that passes the keys held since the key that asked for ``screen`` on to it
        once it is mounted (its focus set), not to the widget that had the focus before."""
        result: asyncio.Future[T] = asyncio.get_running_loop().create_future()

        def dismissed(value: T | None) -> None:
            if not result.done():
                result.set_result(value)  # type: ignore[arg-type]

        try:
            await self.push_screen(screen, callback=dismissed)
        finally:
            self.key_router.release(hold)
        return await result

    # -- start-up ---------------------------------------------------------------------------------
    def get_default_screen(self) -> MainScreen:
        return MainScreen(self.controller.workspace).data_bind(
            MyrmApp.status, MyrmApp.live, MyrmApp.fork_ratio, MyrmApp.compacting, MyrmApp.model_line
        )

    def format_title(self, title: str, sub_title: str) -> Content:
        """ "myrm │ session · model" (Textual's " — " joins them with a dim em dash that reads as "myrm—")."""
        if not sub_title:
            return Content(title)
        return Content.assemble((title, "bold"), ("  │  ", "dim"), sub_title)

    def notify(self, message: str, *, markup: bool = False, **kwargs: Any) -> None:
        """Every toast is plain text (Textual's default is markup, and widgets pass ``markup=True``): one
        may quote a gist, a path, a session id or an error from outside."""
        # guard: untrusted-text-every-toast-is-plain-text
        super().notify(sanitize(message), markup=False, **kwargs)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Chat actions are off while a modal screen is open, so its own keys (ctrl+s: save) work; the
        command palette runs them as it closes. Esc cancels a turn only where a screen has no Esc of its
        own (its footer then shows that one)."""
        from textual.command import CommandPalette

        screen = self.screen
        if action == "cancel_turn" and not isinstance(screen, MainScreen):
            return not any(b.key == "escape" for _, b in screen._bindings)
        return action not in self.MAIN_ONLY or isinstance(screen, (MainScreen, CommandPalette))

    def _closing_down(self) -> bool:
        """True once the chat screen is gone or being torn down (late worker messages are dropped)."""
        screen = self.screen_stack[0] if self.screen_stack else None
        return not isinstance(screen, MainScreen) or screen.torn_down()

    @property
    def main(self) -> MainScreen:
        """The chat screen, at the bottom of the stack whatever modal is open above it."""
        screen = self.screen_stack[0]
        assert isinstance(screen, MainScreen)
        return screen

    def _show(self, message: Message) -> None:
        """Post to the chat screen: it shows the message, then the message bubbles up to this app."""
        if not self._closing_down():
            self.main.post_message(message)

    async def _agent_ready(self) -> AgentReady:
        return AgentReady(await self.controller.baseline())

    def on_mount(self) -> None:
        self.set_interval(1.0, self._tick)
        self.call_after_refresh(
            self.start_up
        )  # settings validation and the database wait for the first frame
        # SIGTERM, SIGHUP or a closed terminal exit like ctrl+q (on_unmount saves and releases the lease),
        # within a deadline the guard keeps whatever blocks (``myrm`` installs it; a test app has none).
        guard = terminal_guard.current()
        if guard is not None:
            # guard: tui-sigterm-sighup-or-a-closed-terminal
            guard.attach(self._stop, self._held_leases)

    def get_driver_class(self) -> type[Driver]:
        """The guarded driver when the guard runs: its writes never block on a terminal that is gone."""
        if terminal_guard.current() is not None:
            return terminal_guard.GuardedDriver
        return super().get_driver_class()

    def _stop(self, code: int, reason: str) -> None:
        # After the frame being built: an exit before the first one crashed Textual's Header watcher.
        self.call_after_refresh(self.exit, return_code=code, message=f"myrm: {reason}")

    def _held_leases(self) -> tuple[str, dict[str, str]]:
        """For an exit that cannot wait for this loop (called from the guard's thread)."""
        store = self.controller.store
        return (store.path, dict(store._leases)) if store is not None else ("", {})

    @work(exclusive=True, group="startup", exit_on_error=False, description="open database and session")
    async def start_up(self) -> None:
        try:
            await self.controller.open()
            if self.replay:
                self.replayer = await self.controller.start_replay(self.replay, self.replay_speed)
                assert self.controller.session is not None
                self._show(await self._loaded(self.controller.session))
                self._show(await self._agent_ready())
                self.ready.set()
                self.busy = True
                self.play_replay()
                return
            row = await self.controller.open_session(self.initial_session)
            self._show(await self._loaded(row))
            await self.controller.ensure_agent()
            self._show(await self._agent_ready())
        except Exception as exc:
            # guard: a-start-up-failure-is-logged-with
            log.exception("start-up failed")
            self.post_message(Failure(f"Could not start: {type(exc).__name__}: {exc}"))
            return
        self.ready.set()
        self.post_message(StatusChanged())
        self.watch_files()

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        """The user started typing: get the model ready now, so the first reply does not wait for it."""
        if (
            not self._warming
            and self.ready.is_set()
            and isinstance(event.text_area, PromptInput)
            and event.text_area.text
        ):
            self._warming = True
            self.warm_up()

    @work(exclusive=True, group="warm", exit_on_error=False, description="start the model, import litellm")
    async def warm_up(self) -> None:
        await self.controller.user_typing()

    @work(exclusive=True, group="watch", exit_on_error=False, description="watch prompts and config")
    async def watch_files(self) -> None:
        async def changed(paths: list[str]) -> None:
            self.post_message(StatusChanged())
            self.notify(
                f"{len(paths)} prompt/config file(s) changed: the agent is rebuilt for the next message",
                timeout=4,
            )

        await self.controller.watch_files(changed)

    def action_settings(self) -> None:
        if self.controller.settings is not None:
            self.edit_settings(self.key_router.hold())  # the keys typed after F2 go to the screen

    @work(exclusive=True, group="settings", exit_on_error=False, description="settings screen")
    async def edit_settings(self, hold: int) -> None:
        from myrm_tui.app.screens.settings import SettingsScreen

        assert self.controller.settings is not None
        try:
            values = await self._open(SettingsScreen(self.controller.settings), hold)
        finally:
            self.key_router.release(hold)  # not opened (cancelled): the keys go on as they were
        if values is None:
            return
        await self.controller.save_settings(values)
        self._show_model()
        self.notify("Settings saved; they take effect with the next message.")

    def _show_model(self) -> None:
        """The header and the line under the ring name the model the next message goes to."""
        s = self.controller.settings
        if self.controller.session is None or s is None:
            return
        self.model_line = self._model_line(self.controller.session.id)
        if self.replayer is None:
            self.sub_title = f"{self.controller.session.title} · {s.model}"

    @work(exclusive=True, group="turn", exit_on_error=False, description="replay")
    async def play_replay(self) -> None:
        assert self.replayer is not None and self.controller.agent is not None
        try:
            async for ev in self.replayer.play(self.controller.agent):
                if isinstance(ev, UserSaved):
                    self.busy = True
                self._event(ev)
        except asyncio.CancelledError:
            self._event(TurnDone(0, interrupted=True))
            raise
        self.replay_finished = True
        self._show(
            AgentEventMessage(
                Notice("Replay finished. You can keep chatting only in a live session (ctrl+n).")
            )
        )
        self._status()

    def action_toggle_replay(self) -> None:
        if self.replayer is None or self.replay_finished:
            return
        running = self.replayer.feed.running
        if running.is_set():
            running.clear()
        else:
            running.set()
        self._status()

    def on_session_loaded(self, event: SessionLoaded) -> None:
        """The screen shows the conversation; the app takes the title, the model line, fresh numbers."""
        if self._closing_down():  # a worker's message can arrive while the app shuts down
            return
        s = self.controller.settings
        model = self.controller.agent.settings.model if self.controller.agent else (s.model if s else "")
        # A replay's model name repeats its session title: the title is enough.
        self.sub_title = sanitize(
            f"REPLAY · {event.session.title}"
            if self.replayer is not None
            else f"{event.session.title} · {model}"
        )
        self._first_message = "" if event.session.title == "New session" else event.session.title
        self.live = LiveContext()  # another session: its numbers come with its agent
        self._show_live()
        self.refresh_panels()
        self.model_line = self._model_line(event.session.id)
        self._status()

    async def _loaded(self, row: Any) -> SessionLoaded:
        """A session to show; an empty one gets the welcome (model, workspace, the keys to start with)."""
        messages = await self.controller.messages()
        s = self.controller.settings
        welcome = ""
        if s is not None and not any(m.role != "system" and not m.synthetic for m in messages):
            note = (
                " (embedded: small, for trying the UI; set --model for real work)"
                if s.is_local_default
                else f" (picked because {s.model_source[1:]} is set; --model or MYRM_MODEL picks another)"
                if s.model_source.startswith("$")  # a provider key in the environment chose it
                else ""
            )
            welcome = (
                f"Welcome to myrm. Model: {s.model}{note}\n"
                f"Workspace: {self.controller.workspace}\n"
                "Enter sends · ctrl+j new line · esc cancels · ctrl+p all commands · F1 help · ctrl+q quits"
            )
        return SessionLoaded(row, messages, await self.controller.compactions(), welcome)

    def deliver_screenshot(
        self, filename: str | None = None, path: str | None = None, time_format: str | None = None
    ) -> str | None:
        """Textual saves to the Downloads folder and fails when there is none: then the current folder,
        or the state folder when that is not writable; the notice says where."""
        if path is None:
            from platformdirs import user_downloads_path, user_state_path

            downloads = user_downloads_path()
            if not downloads.is_dir():
                cwd = Path.cwd()
                folder = cwd if os.access(cwd, os.W_OK) else user_state_path("myrm")
                folder.mkdir(parents=True, exist_ok=True)
                path = str(folder)
        return super().deliver_screenshot(filename, path, time_format)

    def _model_line(self, session_id: str) -> str:
        """The line under the ring: which model answers (or that a recording does) in which session."""
        s = self.controller.settings
        if self.replayer is not None:
            return f"replaying a recorded session\nsession: {session_id}"
        if s is None:
            return self.model_line
        note = (
            " (embedded default — set --model or MYRM_MODEL for a bigger model)" if s.is_local_default else ""
        )
        tools = (
            "" if supports_tools(s.model, s.api_base) else "\ntools: off on this model (it cannot call them)"
        )
        return f"model: {s.model}{note}{tools}\nsession: {session_id}"

    def on_agent_ready(self, event: AgentReady) -> None:
        """The baseline, until the first report (a report that came first is newer)."""
        if self._closing_down():
            return
        if not self.live.known and event.use is not None:
            self.live.baseline(event.use)
        self._show_live()

    def _turn_status(self) -> str:
        """``writing…`` while the reply's text streams; before it, ``thinking…`` with the seconds it has
        waited and the prompt it reads (a 135M model on a 4.8K-token prompt sat 30 s with no sign)."""
        if self._phase == "writing":
            return "writing… (esc cancels)"
        waited = int(time.monotonic() - self._phase_since)
        if self._phase == "compacting":  # a history over the window, before the request (seconds at 2M)
            return (
                f"compacting {self._reading:,} tokens of history to fit the window… {waited} s (esc cancels)"
            )
        if waited < 1:
            return "thinking… (esc cancels)"
        return f"thinking… {waited} s, reading {self._reading:,} tokens (esc cancels)"

    def _phase_to(self, phase: str, reading: int | None = None) -> None:
        if reading is not None:
            self._phase_since, self._reading = time.monotonic(), reading
        if phase != self._phase or reading is not None:
            self._phase = phase
            if self._status_auto:
                self._status()

    def _tick(self) -> None:
        """Once a second: the seconds a request has waited for its first words."""
        if self.busy and self._phase in ("thinking", "compacting") and self._status_auto:
            self._status()

    def _status(self, text: str | None = None) -> None:
        if self._closing_down():  # a worker's message can arrive while the app shuts down
            return
        text_given = text
        if text is None:
            # The replay's state wins over the turn's: a turn ending while paused must not say "pauses".
            if self.replayer is not None and self.replay_finished:
                text = "Replay finished — ctrl+n starts a live session, ctrl+s opens another"
            elif self._replay_paused():
                text = "replay paused (ctrl+r resumes) — ctrl+k, ctrl+f, F3, F4 work meanwhile"
            elif self.replayer is not None:
                text = "REPLAY of a recorded session — ctrl+r pauses, ctrl+k compacts, ctrl+f forks, F4 vault"
            elif self.busy:
                text = self._turn_status()
            else:
                text = "ready" if self.ready.is_set() else "loading the session…"
            if self._summary_line:
                text += f" · {self._summary_line}"
        self._status_auto = text_given is None
        self.status = text

    def on_status_changed(self, _: StatusChanged) -> None:
        self._status()

    async def on_failure(self, event: Failure) -> None:
        if self._closing_down():  # a worker's message can arrive while the app shuts down
            return
        self.notify(event.text, severity="error", timeout=8)
        self._status(event.text)

    # -- turns ------------------------------------------------------------------------------------
    async def on_prompt_input_submitted(self, event: PromptInput.Submitted) -> None:
        text = event.text
        if text.startswith("/"):
            known = by_slash(text[1:].partition(" ")[0]) is not None
            if await self._slash(text):
                if known:
                    event.prompt.load_text("")
                return
        if self.busy:
            if self.replayer is not None:
                self.notify("A replay is running; ctrl+f forks it into a live session.", severity="warning")
                return
            event.prompt.queue(text)  # sent when the turn ends
            return
        self._send(event.prompt, text)

    def _send(self, prompt: PromptInput, text: str) -> None:
        prompt.accepted(text)
        self.busy = True
        self._phase, self._phase_since, self._reading = "thinking", time.monotonic(), self.live.tokens
        self._status()
        self.run_turn(text)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A turn's worker ended: the oldest queued message is sent; a cancelled turn (Esc) gives the
        queued messages back to the box instead, as the user stopped the work they followed."""
        if event.worker.group != "turn" or not event.worker.is_finished or self._closing_down():
            return
        prompt = self.main.prompt
        if event.state == WorkerState.CANCELLED or self.replayer is not None:
            prompt.unqueue_all()
            return
        if not self.busy and (text := prompt.take_queued()) is not None:
            self._send(prompt, text)

    @work(exclusive=True, group="turn", exit_on_error=False, description="agent turn")
    async def run_turn(self, text: str) -> None:
        try:
            await self.ready.wait()
            agent = await self.controller.ensure_agent()
            agent.on_summary_progress(self._summary_progress)  # it also ends between turns
            async for ev in agent.run_turn(text):
                self._event(ev)
        except asyncio.CancelledError:
            self._event(TurnDone(0, interrupted=True))
            raise
        except Exception as exc:
            log.exception("the turn failed")
            self._event(TurnFailed(f"{type(exc).__name__}: {exc}"))
            self._event(TurnDone(0))
        finally:
            self.busy = False  # whatever happened to the screen or its messages

    def _summary_progress(self, state: str) -> None:
        """The preparer's news (its task is not the turn's: Esc never cancels it)."""
        self._event(SummaryProgress(state))

    def _event(self, ev: AgentEvent) -> None:
        """One event of a turn or replay: the app's state is updated here, in the worker, then the screen
        is told to draw it (its message is not needed back: a screen torn down does not leave the app
        busy for ever)."""
        self._track(ev)
        self._show(AgentEventMessage(ev))

    def _track(self, ev: AgentEvent) -> None:
        """The app's own state after an event (busy, live numbers, title)."""
        if isinstance(ev, TurnDone):
            self.busy = False
        if self._closing_down():  # a worker's message can arrive while the app shuts down
            return
        match ev:
            case UserSaved():
                self._first_message = (
                    self._first_message or ev.message.text
                )  # titles come from saved messages only
            case ContextReport():
                if ev.usage is None:  # a request about to be sent: the model reads it first
                    self._phase_to("thinking", ev.use.used if ev.use is not None else ev.tokens)
                self._show_report(ev)
                self._step_failures(ev)
                if ev.usage is not None:
                    self.refresh_panels()  # the request's metrics row is stored: the totals moved
            case CompactionMade():
                self.refresh_panels()
            case SummaryProgress():
                self._summary_line = {
                    "preparing": "writing the summary of older messages in the background…",
                    "ready": "summary of older messages ready",
                    "upgraded": "summary upgraded (the next compaction carries it)",
                }.get(ev.state, f"background summary {ev.state}; the extractive one stands in")
                self._status()
                self.refresh_panels()
            case TextChunk():
                self._phase_to("writing")
            case CompactionStarted():
                self._phase_to("compacting", ev.tokens)
            case ToolStarted() if self.replayer is None:
                self._status(f"running {ev.call.name}… (esc cancels)")
            case ToolFinished() if self.replayer is None:
                self._status()
            case TurnDone():
                self._status()
                self.refresh_panels()
                if self._first_message and self.replayer is None:
                    self.title_session(self._first_message)

    def _step_failures(self, report: ContextReport) -> None:
        """A pipeline step that failed is shown once per session (its traceback is in the log file)."""
        from myrm_tui.logs import log_path

        for event in report.metrics.events:
            step, sep, why = event.partition(" failed: ")
            if sep and step not in self._failed_steps:
                self._failed_steps.add(step)
                self.notify(
                    f"Context step {step} failed ({why}); it is skipped. Traceback: {log_path()}",
                    severity="warning",
                    timeout=10,
                )

    @work(exclusive=True, group="title", exit_on_error=False, description="session title")
    async def title_session(self, first: str) -> None:
        title = await self.controller.maybe_title(first)
        if title:
            model = self.controller.settings.model if self.controller.settings else ""
            self.sub_title = sanitize(f"{title} · {model}")

    @work(exclusive=True, group="panels", exit_on_error=False, description="load metrics and vault")
    async def refresh_panels(self) -> None:
        await self.ready.wait()
        self._show(await self.controller.panel_data())

    def action_show_tab(self, tab: str, focus: bool = True) -> None:
        self.main.post_message(ShowTab(tab, focus))

    def on_vault_pane_open_requested(self, event: VaultPane.OpenRequested) -> None:
        self.load_vault_entry(event.uri, event.line)

    @work(exclusive=True, group="vault", exit_on_error=False, description="open vault entry")
    async def load_vault_entry(self, uri: str, line: int = 0) -> None:
        self._show(VaultEntryLoaded(uri, await self.controller.vault_entry(uri), line))

    def on_compaction_row_pin_requested(self, event: CompactionRow.PinRequested) -> None:
        self.pin_item(event)

    @work(group="pin", exit_on_error=False, description="bring back or unpin")
    async def pin_item(self, event: CompactionRow.PinRequested) -> None:
        item = event.item
        try:
            tokens = await self.controller.pin(item.uri, item.line_range, item.gist, event.pin)
        except Exception as exc:
            log.exception("pin %s failed", item.uri)
            self.notify(f"Could not bring it back: {exc}", severity="error")
            return
        if event.pin:
            self.notify(
                f"Brought back ({tokens:,} tokens, pinned into the next requests until b unpins it): "
                f"{item.gist}"
            )
        else:
            self.notify(f"Unpinned: {item.gist}")

    def _show_report(self, report: ContextReport) -> None:
        self.live.report(report)
        self._show_live()

    def _show_live(self) -> None:
        """``live`` is changed in place: the bound widgets are told so."""
        s = self.controller.settings
        self.fork_ratio = s.fork_suggest_ratio if s else 1.0
        self.mutate_reactive(MyrmApp.live)

    async def _approve(self, tool: str, command: str, assessment: Assessment) -> str:
        """The approval dialog; meanwhile the status line and the call's card say it waits for the user
        (the card's seconds stop: the command has not started)."""
        from myrm_tui.app.screens.approval import ApprovalScreen

        before = self.status
        self._status(f"waiting for your approval ({'edit' if tool == 'file_edit_tool' else tool})")
        self._show(ApprovalWaiting(tool, True))  # after the call's ToolStarted: its card is there
        try:
            return await self.push_screen_wait(ApprovalScreen(tool, command, assessment))
        finally:
            self._show(ApprovalWaiting(tool, False))
            self._status(before)

    # -- actions ----------------------------------------------------------------------------------
    def action_cancel_turn(self) -> None:
        if self.busy:
            self.workers.cancel_group(self, "turn")

    def action_interrupt(self) -> None:
        """Ctrl+C, as Claude Code and Codex have it: stops a running turn (as Esc does); a second press
        within ``QUIT_WINDOW_S`` quits, and so do two presses when idle (the first says so). Idle with
        text selected, it copies the selection instead, as before."""
        now = time.monotonic()
        armed, self._ctrl_c_at = now - self._ctrl_c_at <= QUIT_WINDOW_S, now
        if armed:
            self.exit()
            return
        if self.busy and isinstance(self.screen, MainScreen):
            self.action_cancel_turn()
            self.notify("Turn stopped. Press ctrl+c again to quit.", timeout=3)
            return
        if self._copy_selection():
            self._ctrl_c_at = float("-inf")  # a copy never counts towards quitting
            return
        self.notify("Press ctrl+c again to quit.", timeout=3)

    def _copy_selection(self) -> bool:
        """Copy what is selected in the focused field, or on the screen (the mouse); False if nothing."""
        focused = self.focused
        selected = getattr(focused, "selected_text", "") if focused is not None else ""
        text = selected or self.screen.get_selected_text()
        if not text:
            return False
        self.copy_to_clipboard(text)
        return True

    def action_help(self) -> None:
        from myrm_tui.app.screens.help import HelpScreen

        self.push_screen(HelpScreen())

    def action_search(self, text: str = "") -> None:
        if self._closing_down():
            return
        self.main.open_search(text)  # at once: the next keys must find the search field focused

    def action_jump_to_bottom(self) -> None:
        self.main.post_message(JumpToBottom())

    def action_toggle_panel(self) -> None:
        self.main.post_message(TogglePanel())

    def _replay_paused(self) -> bool:
        return self.replayer is not None and not self.replayer.feed.running.is_set()

    def action_compact(self, focus: str = "") -> None:
        if self.busy and not self._replay_paused():
            self.notify("Wait for the turn to finish (or Esc) before compacting.", severity="warning")
            return
        self.compact(focus, self.key_router.hold())  # the keys typed after ctrl+k go to the preview

    def on_context_usage_indicator_compact_requested(self, _: ContextUsageIndicator.CompactRequested) -> None:
        self.action_compact()

    @work(exclusive=True, group="compact", exit_on_error=False, description="compaction")
    async def compact(self, focus: str, hold: int) -> None:
        """Preview what would leave the view, then compact if the user confirms (Enter)."""
        from myrm_tui.app.screens.compact_preview import CompactPreviewScreen

        try:
            try:
                await self.ready.wait()
                record, reason = await self.controller.preview_compaction(focus)
            except Exception as exc:
                log.exception("compaction preview failed")
                self.post_message(Failure(f"Compaction preview failed: {exc}"))
                return
            if record is None:
                self._show(ShowNotice(f"Nothing to compact: {reason}."))
                self.notify(f"Nothing to compact: {reason}.", timeout=6)
                return
            confirmed = await self._open(CompactPreviewScreen(record, self._summarizer_note()), hold)
        finally:
            self.key_router.release(hold)  # no preview: the keys go to the prompt
        if not confirmed:
            return
        self.compacting = True
        self._status(f"compacting… {self._summarizer_note()}")
        try:
            report = await self.controller.compact(focus)
        except Exception as exc:
            log.exception("compaction failed")
            self.post_message(Failure(f"Compaction failed: {exc}"))
            self.post_message(CompactionDone(None))
            return
        self.post_message(CompactionDone(report))

    async def on_compaction_done(self, event: CompactionDone) -> None:
        if self._closing_down():  # a worker's message can arrive while the app shuts down
            return
        self.compacting = False
        self._status()
        if event.report is None:
            self.refresh_panels()
            return
        self._show_report(event.report)
        record = event.report.metrics.compaction
        if record is not None and record.changed:
            self._show(AgentEventMessage(CompactionMade(record)))
            self.notify(f"Compacted: {record.headline()}")
        else:
            self.notify("Nothing was compacted: the view did not get smaller.", severity="warning")
        self.refresh_panels()

    def _summarizer_note(self) -> str:
        """Who writes the summary: a progress line while an LLM summary runs says so."""
        agent = self.controller.agent
        if agent is None or agent.extractive_summaries:
            return "extractive summary (no model call)"
        from myrm_tui.config import summarizer_model

        return f"writing the summary with {summarizer_model(agent.settings)}…"

    def action_fork(self, at_user_message: int | None = None) -> None:
        self.fork_session(at_user_message)

    async def _stop_writers(self) -> str:
        """Stop what writes into the current session (a running turn, a replay) before a fork, so the
        parent gets nothing after the fork point and the fork everything after it. Returns what was
        stopped, for the notice."""
        stopped = ""
        if self.replayer is not None:
            stopped = "the replay stopped at the fork; the fork is a live session"
        elif self.busy:
            stopped = "the running turn was stopped first (its partial answer is kept in the parent)"
        workers = [w for w in self.workers if w.group == "turn" and not w.is_finished]
        for w in workers:
            w.cancel()
        for w in workers:
            await _settled(w)
        self.busy = False
        return stopped

    @work(exclusive=True, group="session", exit_on_error=False, description="fork session")
    async def fork_session(self, at_user_message: int | None = None) -> None:
        try:
            await self.ready.wait()
            stopped = await self._stop_writers()
            row = await self.controller.fork(at_user_message=at_user_message)
            if self.replayer is not None:
                self.replayer = None
                self.controller.replaying = False
            self._show(await self._loaded(row))
            self._show(await self._agent_ready())
            self.post_message(StatusChanged())
        except Exception as exc:
            log.exception("fork failed")
            self.post_message(Failure(str(exc) if isinstance(exc, ForkFailed) else f"Fork failed: {exc}"))
            return
        notice = self.controller.fork_notice or f"Forked into session {row.id}"
        self.notify(f"{notice}; {stopped}" if stopped else notice)

    def get_system_commands(self, screen: Any) -> Any:
        """Every command of the table in the command palette (ctrl+p), next to Textual's own."""
        from textual.app import SystemCommand

        yield from super().get_system_commands(screen)
        for c in COMMANDS:
            if c.palette:
                key = f" ({c.key})" if c.key else ""
                yield SystemCommand(
                    c.title, c.help + key, lambda action=c.action: self.call_next(self.run_action, action)
                )

    def action_new_session(self) -> None:
        if not self.busy:
            self.switch_session(None)

    @work(exclusive=True, group="session", exit_on_error=False, description="switch session")
    async def switch_session(self, session_id: str | None) -> None:
        await self.ready.wait()
        from myrm_tui.store.db import SessionBusy

        try:
            row = await (
                self.controller.open_session(session_id) if session_id else self.controller.new_session()
            )
        except SessionBusy as exc:  # another myrm writes it: this one stays in the current session
            self.post_message(Failure(str(exc)))
            return
        self._show(await self._loaded(row))
        await self.controller.ensure_agent()
        self._show(await self._agent_ready())

    def action_sessions(self) -> None:
        if not self.busy:
            self.pick_session(self.key_router.hold())  # the keys typed after ctrl+s go to the picker

    @work(exclusive=True, group="picker", exit_on_error=False, description="session picker")
    async def pick_session(self, hold: int | None = None) -> None:
        from myrm_tui.app.screens.sessions import DeleteSession, SessionPicker

        hold = self.key_router.hold() if hold is None else hold
        try:
            await self.ready.wait()
            current = self.controller.session.id if self.controller.session else None
            picker = SessionPicker(await self.controller.sessions(), current)
            choice = await self._open(picker, hold)
        finally:
            self.key_router.release(hold)
        if choice is None:
            return
        if isinstance(choice, DeleteSession):
            if choice.session_id == current:
                self.notify("Open another session before deleting this one.", severity="warning")
            else:
                from myrm_tui.store.db import SessionBusy

                try:
                    await self.controller.delete_session(choice.session_id)
                    self.notify(f"Deleted session {choice.session_id}")
                except SessionBusy as exc:
                    self.notify(str(exc), severity="error")
            self.pick_session()
            return
        self.switch_session(choice.session_id)

    # -- slash commands (from the command table) ---------------------------------------------------
    async def _slash(self, text: str) -> bool:
        """Run ``/name arg`` if the table has it; a mistyped ``/name`` is one line, never sent to the model;
        False sends the text (``/usr/bin/…``) to the model as a message."""
        name, _, arg = text[1:].partition(" ")
        command = by_slash(name)
        if command is None:
            if not looks_like_command(name):
                return False
            self._show(ShowNotice(unknown_command(name), "warning"))  # the text stays in the box to fix
            return True
        await self._run_slash(command, arg.strip())
        return True

    async def _run_slash(self, command: Command, arg: str) -> None:
        if command.usage and not command.usage.startswith("[") and not arg:
            self.notify(f"usage: /{command.slash[0]} {command.usage}", severity="warning")
        elif command.action == "compact":
            self.action_compact(arg)
        elif command.action == "fork":
            if arg and not arg.isdigit():
                self.notify(
                    "/fork takes the number of one of your messages: /fork 3 forks after your 3rd message",
                    severity="warning",
                )
            else:
                self.action_fork(int(arg) if arg else None)
        elif command.action.startswith("show_tab("):  # /vault: the prompt keeps the focus (F4 moves it)
            self.action_show_tab(command.action.split("'")[1], focus=False)
        elif command.action == "search":
            self.action_search(arg)
        elif command.action in ("set_model", "set_mode") and not arg:
            await self.run_action(command.action)  # a picker
        elif command.action in ("set_model", "set_mode"):
            key = "model" if command.action == "set_model" else "prompt_mode"
            self._set_setting(key, arg, f"/{command.slash[0]}")
        else:
            await self.run_action(command.action)

    @work(exclusive=True, group="setting", exit_on_error=False, description="check and save a setting")
    async def _set_setting(self, key: str, value: str, source: str) -> None:
        """``/model NAME``, ``/mode NAME``, the model picker: checked first (the key check imports litellm
        in a thread: a worker, so the app's messages are not held meanwhile); a bad value is one line in
        the conversation and a toast, and nothing is saved."""
        problem = await self.controller.setting_problem(key, value, source)
        if problem:
            self.notify(problem, severity="error", timeout=8)
            self._show(ShowNotice(problem, "error"))
            return
        await self.controller.set_setting(key, value)
        self.notify(f"{key} = {value}; takes effect with the next message")
        self._show_model()

    def action_set_model(self) -> None:
        """The /model picker: the current model, the models whose provider key is set, the embedded one."""
        if self.controller.settings is not None:
            self.pick_model()

    @work(exclusive=True, group="picker", exit_on_error=False, description="model picker")
    async def pick_model(self) -> None:
        from myrm_tui.app.screens.models import ModelPicker

        s = self.controller.settings
        assert s is not None
        choice = await self.push_screen_wait(ModelPicker(self.controller.model_choices(), s.model))
        if choice and choice != s.model:
            self._set_setting("model", choice, "/model")

    def action_set_mode(self) -> None:
        """The /mode picker: the prompt modes, the current one marked."""
        if self.controller.settings is not None:
            self.pick_mode()

    @work(exclusive=True, group="picker", exit_on_error=False, description="prompt mode picker")
    async def pick_mode(self) -> None:
        from myrm_tui.agent.prompts import MODES
        from myrm_tui.app.screens.models import ModePicker

        s = self.controller.settings
        assert s is not None
        choice = await self.push_screen_wait(ModePicker(list(MODES), s.prompt_mode))
        if choice and choice != s.prompt_mode:
            self._set_setting("prompt_mode", choice, "/mode")

    async def action_context_window(self) -> None:
        """``/context``: what fills the window now, by category, adding up to the ring's figure."""
        await self.ready.wait()
        use = self.live.use or await self.controller.baseline()  # the ring's own figure, by category
        lines = use.lines() if use is not None else ["no model yet"]
        self._show(ShowNotice("Context window now (tokens, share of the window):\n" + "\n".join(lines)))

    async def action_notes(self) -> None:
        agent = await self.controller.ensure_agent()
        notes = agent.state.notes
        body = "\n".join(f"{i + 1}. {n}" for i, n in enumerate(notes)) or "(none)"
        self._show(ShowNotice("Session notes:\n" + body))

    async def on_unmount(self) -> None:
        # Textual cancelled the workers without waiting: one may still be finishing (a turn saving its
        # partial answer, start-up taking the lease). The store closes after them, or a lease taken
        # after the close would outlive this process.
        pending = [asyncio.ensure_future(_settled(w)) for w in self.workers if not w.is_finished]
        if pending:
            await asyncio.wait(pending, timeout=SETTLE_S)
        session = self.controller.session
        with failure_logged(log, "the resume hint"):  # a broken store must not keep the app from closing
            if session is not None and await self.controller.has_conversation():
                self.resume_hint = f"resume with: myrm --session {session.id}"
        await self.controller.close()
        guard = terminal_guard.current()
        if guard is not None:
            guard.saved()  # the rest of the exit (the driver, the interpreter) now has a short deadline


async def _settled(worker: Worker[Any]) -> None:
    """Wait for ``worker`` to end: cancelled or failed, it is over, which is all that counts here (a
    failure was reported by the worker itself; it is logged here at debug level)."""
    with failure_logged(log, f"worker {worker.name!r}", logging.DEBUG):
        await worker.wait()
