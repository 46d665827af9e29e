"""Keys reach the app in the order typed, and each is handled before the next one is passed on.

Textual passes every key the app reads straight on to the widget that has the focus, where it waits in
that widget's queue. A key that widget does not handle itself (Backspace, an arrow, Shift+Tab, F2) bubbles
up and its binding runs only when it reaches the app, after the keys behind it were already handed on: in
a fast burst ``abc`` BSpace BSpace ``Z`` gave ``ab``, and keys typed after a key that moves the focus went
to the old widget. The router passes one key on at a time: it follows each with a ``KeyDone`` marker that
bubbles the same way, and the next key goes out once the marker is back (the key was handled wherever it
went); a printable key typed into a field needs no marker (the field types it itself, in order). A key
that opens something that takes time (a screen loaded by a worker, the ``@`` menu's file
list) holds the keys after it until what it opened can take them (``hold``/``release``). Keys read before
the screen is mounted (typed while ``myrm`` starts) wait for it: the first went to a screen without a
focus and was lost.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from textual import events
from textual.message import Message
from textual.widgets import Input, TextArea

from myrm_tui.aio import within

if TYPE_CHECKING:
    from textual.app import App
    from textual.message_pump import MessagePump

log = logging.getLogger(__name__)

Route = Callable[[events.Event], Awaitable[None]]

# A marker that does not come back in this time is looked for: while its widget is still there (a key's
# action can take seconds: building a page of a long session on a busy machine) the keys wait on; a
# widget removed meanwhile dropped the marker, and the keys go on. Never longer than the give-up time.
MARKER_CHECK_S = 1.0
MARKER_GIVE_UP_S = 10.0
# What a key opened did not become ready (a worker stuck): the held keys go to the focus after this.
HOLD_TIMEOUT_S = 15.0


class KeyDone(Message):
    """Follows a key to the widget it went to and bubbles up to the app behind it."""

    def __init__(self, seq: int, target: MessagePump, second: bool = False) -> None:
        super().__init__()
        self.seq = seq
        self.target = target
        self.second = second  # sent after the first came back: what the key's binding posted is done


class KeyRelease(Message):
    """A hold ended (posted to the app: the held keys are passed on in the app's own task)."""


class KeyRouter:
    """One key in flight at a time; the rest wait here, in order (keys and unbracketed pastes alike)."""

    def __init__(self, app: App[Any], route: Route) -> None:
        self.app = app
        self._route = route  # Textual's own handling of one key: priority bindings, then the focus
        self.waiting: deque[events.Event] = deque()
        self._seq = 0
        self._in_flight: int | None = None
        self._marker_timer: asyncio.TimerHandle | None = None
        self._holds: dict[int, asyncio.TimerHandle | None] = {}
        self._next_hold = 0
        self._screen_wait: asyncio.Task[None] | None = None

    @property
    def keys_waiting(self) -> bool:
        """More keys were read and wait to be passed on (or one is being handled)."""
        return bool(self.waiting) or self._in_flight is not None

    @property
    def busy(self) -> bool:
        return self._in_flight is not None or bool(self._holds)

    async def take(self, event: events.Event) -> None:
        """A key (or paste) the app read: passed on now, or after the ones before it."""
        # guard: a-key-waits-for-the-one-before-it-to-be
        if self.busy or self.waiting or not self._screen_ready():
            self.waiting.append(event)
            return
        await self._send(event)

    def _screen_ready(self) -> bool:
        """The screen the keys go to is mounted (its ``on_mount`` set the focus); if not, the keys are
        passed on once it is."""
        # guard: keys-waiting-when-the-screens-are-gone-dropped
        if not self.app.screen_stack:  # quitting: the screens are gone, nothing takes keys
            self.waiting.clear()
            return False
        screen = self.app.screen
        # guard: a-key-read-before-the-screen-is-mounted-waits
        if screen.is_mounted:
            return True
        if self._screen_wait is None or self._screen_wait.done():
            self._screen_wait = asyncio.create_task(self._when_mounted(screen))
        return False

    async def _when_mounted(self, screen: MessagePump) -> None:
        try:
            await within(screen._mounted_event.wait(), HOLD_TIMEOUT_S)
        except TimeoutError:
            log.warning(
                "the screen was not mounted in %.0f s; the keys typed meanwhile are passed on", HOLD_TIMEOUT_S
            )
        # Posted after what the screen's on_mount queued on the app (the focus it set): handled after it.
        self.app.post_message(KeyRelease())

    async def _send(self, event: events.Event) -> None:
        target = self.app.focused or self.app.screen
        await self._route(event)
        if self._holds or not isinstance(event, events.Key):
            return  # a paste is handled in one go; a hold waits for its own release
        if event.is_printable and isinstance(target, (Input, TextArea)):
            # typed into the field by the field itself, in order: the next key can follow at once, unless
            # the field says this key may open something (``needs_key_marker``: the prompt's ``@``)
            needs = getattr(target, "needs_key_marker", None)
            if not (callable(needs) and needs(event)):
                return
        self._seq += 1
        self._mark(KeyDone(self._seq, target))

    def _mark(self, marker: KeyDone) -> None:
        if marker.target.post_message(marker):
            self._in_flight = marker.seq
            self._check_marker(marker, 0.0)

    def _check_marker(self, marker: KeyDone, waited: float) -> None:
        loop = asyncio.get_running_loop()
        late = waited + MARKER_CHECK_S
        self._marker_timer = loop.call_later(MARKER_CHECK_S, self._marker_late, marker, late)

    def _marker_late(self, marker: KeyDone, waited: float) -> None:
        if self._in_flight != marker.seq:
            return
        if getattr(marker.target, "is_attached", False) and waited < MARKER_GIVE_UP_S:
            self._check_marker(marker, waited)  # still being handled
            return
        log.warning("key marker %d did not come back in %.0f s; passing the next key on", marker.seq, waited)
        self._in_flight = None
        self.app.post_message(KeyRelease())

    async def done(self, marker: KeyDone) -> None:
        """The key before ``marker`` was handled: the next one goes out. A binding runs when its key
        reaches the app, and what it posts (ChatLog's Esc: ``Left``, then the screen's ``focus()``) is
        handled after: a second marker down the same way comes back once that is done too."""
        if marker.seq != self._in_flight:
            return
        self._in_flight = None
        if self._marker_timer is not None:
            self._marker_timer.cancel()
            self._marker_timer = None
        if not marker.second:
            self._mark(KeyDone(marker.seq, marker.target, second=True))
            if self._in_flight is not None:
                return
        await self.drain()

    async def drain(self) -> None:
        while self.waiting and not self.busy and self._screen_ready():
            await self._send(self.waiting.popleft())

    def hold(self, timeout: float = HOLD_TIMEOUT_S) -> int:
        """Keys from now on wait until ``release`` (or ``timeout``): what a key opens is not ready yet."""
        self._next_hold += 1
        token = self._next_hold
        try:
            timer = asyncio.get_running_loop().call_later(timeout, self._expired, token)
        except RuntimeError:  # no loop (a unit test of a widget alone)
            timer = None
        self._holds[token] = timer
        return token

    def _expired(self, token: int) -> None:
        if token in self._holds:
            log.warning("keys held %.0f s for something that never became ready; passed on", HOLD_TIMEOUT_S)
            self.release(token)

    def release(self, token: int) -> None:
        """What ``hold`` waited for can take keys (or will not open): the held keys go on, in order."""
        timer = self._holds.pop(token, "gone")
        if timer == "gone":
            return
        if timer is not None:
            timer.cancel()  # type: ignore[union-attr]
        if not self._holds:
            self.app.post_message(KeyRelease())


if TYPE_CHECKING:
    _AppBase = App[Any]
else:
    _AppBase = object


class RoutedKeys(_AppBase):
    """An app whose keys (and unbracketed pastes) go through a ``KeyRouter``: mix in before ``App``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.key_router = KeyRouter(self, self._route_key)

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, (events.Key, events.Paste)) and not event.is_forwarded:
            if self.screen_stack:  # quitting: the screens are gone, nothing takes keys
                await self.key_router.take(event)
            return
        await super().on_event(event)

    async def _route_key(self, event: events.Event) -> None:
        await super().on_event(event)

    async def on_key_done(self, marker: KeyDone) -> None:
        await self.key_router.done(marker)

    async def on_key_release(self, _: KeyRelease) -> None:
        await self.key_router.drain()


def router_of(app: object) -> KeyRouter | None:
    """The app's key router (None for an app without one: a widget tested alone)."""
    router = getattr(app, "key_router", None)
    return router if isinstance(router, KeyRouter) else None
