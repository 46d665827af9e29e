"""Progress-aware dual timeout: tell a slow model (still streaming) from a dead one (silent).

``ProgressClock.touch()`` is called on every streamed token. A watchdog wakes every
``check_interval`` seconds: silence longer than ``inactivity`` raises ``InactivityTimeoutError``;
a stream longer than ``total`` raises ``LLMTimeoutError`` whatever its pace. The clock is injectable
so tests drive it without sleeping.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from typing import TypeVar

from myrm_tui.llm.errors import InactivityTimeoutError, LLMTimeoutError

T = TypeVar("T")


class ProgressClock:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.started = clock()
        self.last = self.started

    def touch(self) -> None:
        self.last = self.clock()

    def idle(self) -> float:
        return self.clock() - self.last

    def elapsed(self) -> float:
        return self.clock() - self.started


async def guarded(
    source: AsyncIterator[T], inactivity: float = 90.0, total: float = 600.0, check_interval: float = 10.0,
    clock: ProgressClock | None = None, sleep: Callable[[float], object] = asyncio.sleep,
) -> AsyncIterator[T]:
    """Yield from ``source`` under the dual timeout; the source is closed when a limit trips."""
    pc = clock or ProgressClock()
    queue: asyncio.Queue[tuple[str, object]] = asyncio.Queue()

    async def pump() -> None:
        try:
            async for item in source:
                pc.touch()
                await queue.put(("item", item))
            await queue.put(("end", None))
        except BaseException as exc:  # forwarded to the consumer
            await queue.put(("error", exc))

    async def watchdog() -> None:
        while True:
            await sleep(check_interval)  # type: ignore[misc]
            if pc.idle() > inactivity:
                await queue.put(("error", InactivityTimeoutError(f"No token for {pc.idle():.0f} s (limit {inactivity:.0f} s): the model stopped responding")))
                return
            if pc.elapsed() > total:
                await queue.put(("error", LLMTimeoutError(f"Stream exceeded the {total:.0f} s ceiling")))
                return

    pump_task = asyncio.ensure_future(pump())
    dog_task = asyncio.ensure_future(watchdog())
    try:
        while True:
            kind, value = await queue.get()
            if kind == "item":
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
            except Exception:
                pass
