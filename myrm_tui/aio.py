"""``within``: ``asyncio.wait_for`` without its lost cancels.

On Python 3.11 ``asyncio.wait_for`` returns the awaited result when it finishes in the same loop turn as
a cancel of the caller, and the cancel is gone (CPython gh-86296, fixed in 3.12). In myrm a cancel is
Esc, a fork or a quit: one lost while a store write took its lock, or as a tool command ended, let the
turn run on (under load, a fork during a replay waited for the whole replay). ``asyncio.timeout`` keeps
the cancel and, on timeout, cancels what it waits for as ``wait_for`` does. Every timed wait in myrm
goes through here (``tests/test_aio.py`` keeps ``wait_for`` out of the package)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

T = TypeVar("T")


async def within(aw: Awaitable[T], seconds: float) -> T:
    """``await aw``, or ``TimeoutError`` after ``seconds`` (``aw`` is cancelled then); a cancel of the
    caller always raises ``CancelledError``, even when ``aw`` has just finished."""
    async with asyncio.timeout(seconds):
        return await aw
