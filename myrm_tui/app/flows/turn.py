"""A turn and a replay: their events update the app's state and are drawn by the chat screen; the queue
of messages typed meanwhile; Esc; the approval dialog."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING, Any

from textual import work
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
from myrm_tui.app.flows.base import AppBase
from myrm_tui.app.messages import AgentEventMessage, ApprovalWaiting
from myrm_tui.safe_text import sanitize

if TYPE_CHECKING:
    from myrm_tui.agent.permissions import Assessment
    from myrm_tui.app.widgets.prompt_input import PromptInput

log = logging.getLogger(__name__)


class TurnFlow(AppBase):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._first_message = ""  # the session's title comes from it
        self._failed_steps: set[str] = set()  # pipeline steps whose failure was shown (once each)

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
            async for ev in self.controller.send(text):
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

    @work(exclusive=True, group="turn", exit_on_error=False, description="replay")
    async def play_replay(self) -> None:
        assert self.replayer is not None and self.controller.chat is not None
        try:
            async for ev in self.replayer.play(self.controller.chat):
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

    def action_cancel_turn(self) -> None:
        """Esc: stops the running turn, or else a compaction asked for (ctrl+k) while its summary is
        written: the user could only wait for it (a slow summarizer: minutes)."""
        if self.busy:
            self.workers.cancel_group(self, "turn")
        # guard: esc-cancels-a-requested-compaction
        elif self.compacting:
            self.workers.cancel_group(self, "compact")

    def _event(self, ev: AgentEvent) -> None:
        """One event of a turn or replay: the app's state is updated here, in the worker, then the screen
        is told to draw it (nothing comes back: a screen torn down does not leave the app busy for ever)."""
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
