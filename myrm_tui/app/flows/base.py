"""What every flow shares: the chat screen, the status line, the live numbers, the header.

The flows' workers update the app's state and tell the chat screen what to draw (``_show``: messages that
do not bubble back); what the screen shows of the app's state comes down by data binding
(``MyrmApp.get_default_screen``)."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING, Any, TypeVar

from textual import work
from textual.message import Message
from textual.reactive import var
from textual.worker import Worker

from myrm_tui.agent.events import ContextReport
from myrm_tui.app.messages import Failure, StatusChanged
from myrm_tui.app.screens.main import MainScreen
from myrm_tui.context.model_facts import supports_tools
from myrm_tui.logs import failure_logged

if TYPE_CHECKING:
    from textual.app import App
    from textual.screen import Screen

    from myrm_tui.agent.replay import Replay
    from myrm_tui.app.controller import Controller
    from myrm_tui.app.key_router import KeyRouter
    from myrm_tui.app.live import LiveContext

    _App = App[None]
else:
    _App = object

log = logging.getLogger(__name__)
T = TypeVar("T")


class AppBase(_App):
    """Mixed into ``MyrmApp`` before ``App`` (as ``RoutedKeys`` is)."""

    if TYPE_CHECKING:  # the app's state the flows share (``MyrmApp`` sets and declares it)
        controller: Controller
        key_router: KeyRouter
        status: var[str]
        live: var[LiveContext]
        fork_ratio: var[float]
        compacting: var[bool]
        model_line: var[str]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.ready = asyncio.Event()
        self.busy = False
        self.replayer: Replay | None = None
        self.replay_finished = False
        self._summary_line = ""  # the background summary's progress, shown in the status line
        # What the turn does now, for the status line: "thinking" (the request is read, no text yet) since
        # when, over how many tokens; "writing" once its text streams.
        self._phase = "thinking"
        self._phase_since = time.monotonic()
        self._reading = 0
        self._status_auto = True  # the status line shows the computed text (a tick may refresh it)

    # -- the chat screen ---------------------------------------------------------------------------
    @property
    def main(self) -> MainScreen:
        """The chat screen, at the bottom of the stack whatever modal is open above it."""
        screen = self.screen_stack[0]
        assert isinstance(screen, MainScreen)
        return screen

    def _closing_down(self) -> bool:
        """True once the chat screen is gone or being torn down (late worker messages are dropped)."""
        screen = self.screen_stack[0] if self.screen_stack else None
        return not isinstance(screen, MainScreen) or screen.torn_down()

    def _show(self, message: Message) -> None:
        """Tell the chat screen what to draw (its messages do not bubble back)."""
        if not self._closing_down():
            self.main.post_message(message)

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

    # -- the status line ---------------------------------------------------------------------------
    def _replay_paused(self) -> bool:
        return self.replayer is not None and not self.replayer.feed.running.is_set()

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

    # -- the live numbers, the header, the panels ----------------------------------------------------
    def _show_report(self, report: ContextReport) -> None:
        self.live.report(report)
        self._show_live()

    def _show_live(self) -> None:
        """``live`` is changed in place: the bound widgets are told so."""
        s = self.controller.settings
        self.fork_ratio = s.fork_suggest_ratio if s else 1.0
        self.mutate_reactive(type(self).live)

    def _show_model(self) -> None:
        """The header and the line under the ring name the model the next message goes to."""
        s = self.controller.settings
        if self.controller.session is None or s is None:
            return
        self.model_line = self._model_line(self.controller.session.id)
        if self.replayer is None:
            self.sub_title = f"{self.controller.session.title} · {s.model}"

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

    @work(exclusive=True, group="panels", exit_on_error=False, description="load metrics and vault")
    async def refresh_panels(self) -> None:
        await self.ready.wait()
        self._show(await self.controller.panel_data())


async def settled(worker: Worker[Any]) -> None:
    """Wait for ``worker`` to end: cancelled or failed, it is over, which is all that counts here (a
    failure was reported by the worker itself; it is logged here at debug level)."""
    with failure_logged(log, f"worker {worker.name!r}", logging.DEBUG):
        await worker.wait()
