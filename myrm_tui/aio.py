"""``within``: ``asyncio.wait_for`` without its lost cancels; ``to_the_end``: a shield whose failure is
logged when no one is left to hear it.

On Python 3.11 ``asyncio.wait_for`` returns the awaited result when it finishes in the same loop turn as
a cancel of the caller, and the cancel is gone (CPython gh-86296, fixed in 3.12). In myrm a cancel is
Esc, a fork or a quit: one lost while a store write took its lock, or as a tool command ended, let the
turn run on (under load, a fork during a replay waited for the whole replay). ``asyncio.timeout`` keeps
the cancel and, on timeout, cancels what it waits for as ``wait_for`` does. Every timed wait in myrm
goes through here (``tests/test_aio.py`` keeps ``wait_for`` out of the package)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")
log = logging.getLogger(__name__)


async def within(aw: Awaitable[T], seconds: float) -> T:
    """``await aw``, or ``TimeoutError`` after ``seconds`` (``aw`` is cancelled then); a cancel of the
    caller always raises ``CancelledError``, even when ``aw`` has just finished."""
    # guard: a-cancel-esc-a-fork-that-comes
    async with asyncio.timeout(seconds):
        return await aw


async def to_the_end(coro: Coroutine[Any, Any, T]) -> T:
    """``await coro``, which runs to its end even if the caller is cancelled (the caller still gets
    ``CancelledError`` at once). What it raises after such a cancel is logged once, not left to asyncio's
    "exception was never retrieved" at collection."""
    task = asyncio.ensure_future(coro)
    caller_gone = told = False

    def tell(t: asyncio.Future[T]) -> None:
        nonlocal told
        if caller_gone and not told and not t.cancelled() and t.exception() is not None:
            told = True
            log.warning("%s failed after its caller was cancelled", coro, exc_info=t.exception())

    task.add_done_callback(tell)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        caller_gone = True
        if task.done():  # it ended as the cancel came: its callback may have run already, unheard
            tell(task)
        raise
