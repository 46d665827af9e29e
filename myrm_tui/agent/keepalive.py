"""``CacheKeepAliveManager``: keep the provider's prefix cache warm while the user thinks.

Providers evict a prefix after about five minutes unused. After ``idle_after`` seconds without
activity the manager sends a probe (a 1-token request over the current prefix: a cheap cache read
that refreshes its TTL) and repeats every ``interval`` seconds. Any turn pauses it; the turn's end
resumes it. It is replaced, not reused, when the model changes (failover or settings), and is
never started for providers without prompt caching. Clock and sleep are injectable for tests.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable

from myrm_tui.context.model_facts import family, model_kind

log = logging.getLogger(__name__)

CACHING_FAMILIES = frozenset({"anthropic", "openai", "qwen", "deepseek", "gemini"})


def provider_caches(model: str) -> bool:
    return family(model) in CACHING_FAMILIES and model_kind(model) == "cloud"


class CacheKeepAliveManager:
    def __init__(
        self,
        probe: Callable[[], Awaitable[None]],
        idle_after: float = 240.0,
        interval: float = 240.0,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        check_every: float = 5.0,
    ) -> None:
        self.probe = probe
        self.idle_after = idle_after
        self.interval = interval
        self.clock = clock
        self.sleep = sleep
        self.check_every = check_every
        self.last_activity = clock()
        self.last_probe: float | None = None
        self.paused = False
        self.probes_sent = 0
        self.failures = 0
        self._task: asyncio.Task[None] | None = None

    @property
    def state(self) -> str:
        if self._task is None or self._task.done():
            return "stopped"
        return "paused" if self.paused else "armed"

    def start(self) -> None:
        if self._task is None or self._task.done():
            self._task = asyncio.ensure_future(self._run())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    def pause(self) -> None:
        """A turn started: no probes while the conversation itself keeps the cache warm."""
        self.paused = True

    def resume(self) -> None:
        self.paused = False
        self.touch()

    def touch(self) -> None:
        self.last_activity = self.clock()
        self.last_probe = None

    def due(self) -> bool:
        if self.paused:
            return False
        now = self.clock()
        if now - self.last_activity < self.idle_after:
            return False
        return self.last_probe is None or now - self.last_probe >= self.interval

    async def _run(self) -> None:
        while True:
            await self.sleep(self.check_every)
            if not self.due():
                continue
            self.last_probe = self.clock()
            try:
                await self.probe()
                self.probes_sent += 1
            except Exception:
                log.warning("keep-alive probe failed", exc_info=True)
                self.failures += 1  # a failed probe costs nothing but the next cold start
