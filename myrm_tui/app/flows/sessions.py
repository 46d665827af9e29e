"""Sessions: start-up (the database, the session, the agent, in a worker after the first frame), a new,
switched, picked or deleted session, a fork; the prompt and config files watched."""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING

from textual import work

from myrm_tui.app.controller import ForkFailed
from myrm_tui.app.flows.base import settled
from myrm_tui.app.flows.turn import TurnFlow
from myrm_tui.app.live import LiveContext
from myrm_tui.app.messages import Failure, FormatTranscript, SessionLoaded, StatusChanged
from myrm_tui.safe_text import sanitize

if TYPE_CHECKING:
    from myrm_tui.store.db import SessionRow

log = logging.getLogger(__name__)


class Phases:
    """Wall and CPU seconds (the process's, its threads' too) of each step of the start-up, logged as
    one line: where a reopen's time goes (``make perf-sessions`` prints them from the log)."""

    def __init__(self) -> None:
        self.steps: list[tuple[str, float, float]] = []
        self._at = (time.perf_counter(), time.process_time())

    def mark(self, name: str) -> None:
        now = (time.perf_counter(), time.process_time())
        self.steps.append((name, now[0] - self._at[0], now[1] - self._at[1]))
        self._at = now

    def __str__(self) -> str:
        return ", ".join(f"{name} {wall:.3f} s ({cpu:.3f} s CPU)" for name, wall, cpu in self.steps)


class SessionFlow(TurnFlow):
    if TYPE_CHECKING:  # set by ``MyrmApp`` from the command line
        initial_session: str | None
        replay: str | None
        replay_speed: float

    @work(exclusive=True, group="startup", exit_on_error=False, description="open database and session")
    async def start_up(self) -> None:
        phases = Phases()
        try:
            await self.controller.open()
            phases.mark("database")
            if self.replay:
                self.replayer = await self.controller.start_replay(self.replay, self.replay_speed)
                assert self.controller.session is not None
                await self._show_session(self.controller.session)
                await self._show_baseline()
                self.ready.set()
                self.busy = True
                self.play_replay()
                return
            await self._ask_trust()
            row = await self.controller.open_session(self.initial_session)
            phases.mark("session")
            await self._show_session(row)
            phases.mark("messages")
            await self.controller.ensure_agent()
            phases.mark("agent")
            await self._show_baseline()
            phases.mark("baseline")
        except Exception as exc:
            # guard: a-start-up-failure-is-logged-with
            log.exception("start-up failed")
            self.post_message(Failure(f"Could not start: {type(exc).__name__}: {exc}"))
            return
        self.ready.set()
        self.post_message(StatusChanged())
        log.info("start-up phases: %s", phases)
        self.watch_files()

    async def _ask_trust(self) -> None:
        """A folder with its own configuration, never asked about: "trust this folder?", remembered. Asked
        before the agent is built, which reads the configuration only if the folder is trusted."""
        from myrm_tui import trust

        ws, s = self.controller.workspace, self.controller.settings
        files = trust.workspace_config(ws)
        if not files or (s is not None and s.trust_workspace) or trust.remembered(ws) is not None:
            return
        from myrm_tui.app.screens.trust import TrustScreen

        answer = await self.push_screen_wait(TrustScreen(ws, files))
        try:
            trust.remember(ws, answer == "yes")
        except OSError as exc:  # not remembered: asked again next time; this run goes by the answer
            log.exception("cannot remember the trust answer")
            self.notify(f"Could not remember the answer ({exc}); myrm will ask again.", severity="warning")
            if answer == "yes":
                self.controller.cli["trust_workspace"] = True
                await self.controller.reload_settings()

    @work(exclusive=True, group="watch", exit_on_error=False, description="watch prompts and config")
    async def watch_files(self) -> None:
        async def changed(paths: list[str]) -> None:
            self.post_message(StatusChanged())
            self.notify(
                f"{len(paths)} prompt/config file(s) changed: the agent is rebuilt for the next message",
                timeout=4,
            )

        await self.controller.watch_files(changed)

    # -- a session shown -----------------------------------------------------------------------------
    async def _show_session(self, row: SessionRow) -> None:
        """The app takes the session's title, model line and fresh numbers; the screen draws it."""
        loaded = await self._loaded(row)
        if self._closing_down():  # a worker can get here while the app shuts down
            return
        s = self.controller.settings
        model = self.controller.chat.settings.model if self.controller.chat else (s.model if s else "")
        # A replay's model name repeats its session title: the title is enough.
        self.sub_title = sanitize(
            f"REPLAY · {row.title}" if self.replayer is not None else f"{row.title} · {model}"
        )
        self._first_message = "" if row.title == "New session" else row.title
        self.live = LiveContext()  # another session: its numbers come with its agent
        self._show_live()
        self.refresh_panels()
        self.model_line = self._model_line(row.id)
        self._status()
        self._show(loaded)

    async def _show_baseline(self) -> None:
        """The agent is built: the next request's size before anything is sent, until the first report
        (a report that came first is newer)."""
        use = await self.controller.baseline()
        if self._closing_down():
            return
        if not self.live.known and use is not None:
            self.live.baseline(use)
        self._show_live()
        # The session is ready (its numbers drawn): the answers shown plain get their markdown now.
        self.call_after_refresh(self._show, FormatTranscript())

    async def _loaded(self, row: SessionRow) -> SessionLoaded:
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
                f"Workspace: {self.controller.workspace}{_broad(self.controller.workspace)}\n"
                "Enter sends · ctrl+j new line · esc cancels · ctrl+p all commands · F1 help · ctrl+q quits"
            )
        return SessionLoaded(row, messages, await self.controller.compactions(), welcome)

    # -- new, switch, pick, delete ---------------------------------------------------------------------
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
        await self._show_session(row)
        await self.controller.ensure_agent()
        await self._show_baseline()

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

    # -- fork ------------------------------------------------------------------------------------------
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
            await settled(w)
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
            await self._show_session(row)
            await self._show_baseline()
            self.post_message(StatusChanged())
        except Exception as exc:
            log.exception("fork failed")
            self.post_message(Failure(str(exc) if isinstance(exc, ForkFailed) else f"Fork failed: {exc}"))
            return
        notice = self.controller.fork_notice or f"Forked into session {row.id}"
        self.notify(f"{notice}; {stopped}" if stopped else notice)


def _broad(workspace: Path) -> str:
    """A note when the workspace is the home folder or the root (as Claude Code warns): the tools may
    touch all of it, and what the agent reads to start is everything in it."""
    try:
        home = Path.home()
    except RuntimeError:  # no HOME and no password entry
        home = None
    if workspace == home:
        where = "your home folder"
    elif workspace == Path(workspace.anchor):
        where = "the filesystem's root"
    else:
        return ""
    return f" (that is {where}: the agent may read and change anything in it; start myrm in a project folder)"
