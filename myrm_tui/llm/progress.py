"""Progress-aware dual timeout: tell a slow model (still streaming) from a dead one (silent).

``ProgressClock.touch()`` is called on every streamed item. The clock starts when the call starts,
so the inactivity limit covers connecting, the wait for the response headers and the first token,
not only the gaps between tokens: a server that accepts the connection and never answers is cut at
the inactivity limit too. A watchdog sleeps until the nearest deadline (at most ``check_interval``):
silence past ``inactivity`` raises ``InactivityTimeoutError``; a call longer than ``total`` raises
``LLMTimeoutError`` whatever its pace. Both fire at their limit and say the real numbers. The clock
is injectable so tests drive it without sleeping.

A stream that never stops must still end at its total limit however fast it is and however slowly its
reader takes the chunks: the chunks wait in a bounded queue (a full one stops reading the socket, so the
provider is held back instead of memory growing), the reader checks the total before each chunk it
takes, and a limit that fired goes before the chunks still queued. An endless stream of varied chunks
ran 628 s past its 600-s limit: the error waited behind every chunk read meanwhile.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Callable
from typing import TypeVar

from myrm_tui.llm.errors import InactivityTimeoutError, LLMTimeoutError

log = logging.getLogger(__name__)

T = TypeVar("T")
MIN_WAIT = 0.01  # the watchdog never spins: a deadline already due is checked after this
BACKLOG = 256  # chunks read ahead of the consumer at most


class ProgressClock:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.started = clock()
        self.last = self.started
        self.items = 0  # items seen; 0 = the server has not answered yet

    def touch(self) -> None:
        self.last = self.clock()
        self.items += 1

    def idle(self) -> float:
        return self.clock() - self.last

    def elapsed(self) -> float:
        return self.clock() - self.started


def seconds(s: float) -> str:
    """A duration as people read it: ``0.5 s``, ``3.2 s``, ``90 s``."""
    return f"{s:.1f} s" if s < 10 else f"{s:.0f} s"


def ceiling_error(elapsed: float, total: float) -> LLMTimeoutError:
    return LLMTimeoutError(
        f"The call ran {seconds(elapsed)} and hit the {seconds(total)} ceiling "
        "(still streaming, never finished)"
    )


def silence_message(idle: float, limit: float, items: int, where: str = "the server") -> str:
    if items == 0:
        return (
            f"No response for {seconds(idle)} (limit {seconds(limit)}): {where} did not answer "
            "the request "
            "(connecting, or it accepted the connection and sent nothing)"
        )
    return f"No token for {seconds(idle)} (limit {seconds(limit)}): the model stopped responding"


async def guarded(
    source: AsyncIterator[T],
    inactivity: float = 90.0,
    total: float = 600.0,
    check_interval: float = 10.0,
    clock: ProgressClock | None = None,
    sleep: Callable[[float], object] = asyncio.sleep,
    where: str = "the server",
) -> AsyncIterator[T]:
    """Yield from ``source`` under the dual timeout; the source is closed however this ends. ``where``
    names the server in the message of a call that got no answer at all."""
    pc = clock or ProgressClock()
    queue: asyncio.Queue[tuple[str, object]] = asyncio.Queue(BACKLOG)
    failed: list[BaseException] = []  # the watchdog's verdict, ahead of anything queued

    def over_total() -> bool:
        # guard: dual-timeout-total-ceiling
        return pc.elapsed() >= total

    async def pump() -> None:
        try:
            async for item in source:
                # guard: dual-timeout-progress-touch
                pc.touch()
                await queue.put(("item", item))
            await queue.put(("end", None))
        except BaseException as exc:  # forwarded to the consumer
            task = asyncio.current_task()
            if isinstance(exc, asyncio.CancelledError) and task is not None and task.cancelling():
                raise  # stopped by the consumer, which reads no more: a put could wait for ever
            log.debug("stream producer stopped (forwarded)", exc_info=True)
            await queue.put(("error", exc))

    async def watchdog() -> None:
        while True:
            # Wake at the nearest deadline, not on a fixed tick: a 3 s limit fires at 3 s, not at 10.
            due = min(inactivity - pc.idle(), total - pc.elapsed())
            # guard: watchdog-wakes-at-the-deadline
            await sleep(max(min(check_interval, due), MIN_WAIT))  # type: ignore[misc]
            idle, elapsed = pc.idle(), pc.elapsed()
            error: BaseException | None = None
            # guard: dual-timeout-inactivity-watchdog
            # guard: idle-limit-before-the-first-byte
            if idle >= inactivity:
                error = InactivityTimeoutError(silence_message(idle, inactivity, pc.items, where))
            elif over_total():
                error = ceiling_error(elapsed, total)
            if error is not None:
                failed.append(error)
                if queue.empty():  # the consumer may be waiting: wake it (a full queue has it busy)
                    queue.put_nowait(("error", error))
                return

    pump_task = asyncio.ensure_future(pump())
    dog_task = asyncio.ensure_future(watchdog())
    try:
        while True:
            kind, value = await queue.get()
            # guard: endless-stream-a-limit-that-fired-goes
            if failed:
                raise failed[0]
            if kind == "item":
                if over_total():  # the watchdog may not have had its turn on a busy loop
                    raise ceiling_error(pc.elapsed(), total)
                yield value  # type: ignore[misc]
            elif kind == "end":
                return
            else:
                raise value  # type: ignore[misc]
    finally:
        for t in (pump_task, dog_task):
            t.cancel()
        await asyncio.gather(pump_task, dog_task, return_exceptions=True)
        aclose = getattr(source, "aclose", None)
        if aclose is not None:
            try:
                await aclose()
            except Exception:  # closing must not hide why the stream stopped
                log.debug("closing the stream failed", exc_info=True)
