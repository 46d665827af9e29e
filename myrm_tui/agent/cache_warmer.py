"""``CacheWarmer``: the provider's prompt cache kept warm — a preheat after start-up and after each
compaction, then keep-alive probes while the user thinks (``keepalive.py``)."""

from __future__ import annotations

import asyncio
from typing import Any

from myrm_tui.agent.keepalive import CacheKeepAliveManager, provider_caches
from myrm_tui.agent.session import AgentSession
from myrm_tui.context.model_facts import model_kind
from myrm_tui.context.steps.media import view_has_images
from myrm_tui.context.types import Message
from myrm_tui.llm.errors import LLMError
from myrm_tui.llm.events import Usage
from myrm_tui.llm.pricing import estimate_cost


class CacheWarmer:
    def __init__(self, session: AgentSession) -> None:
        self.session = session
        self.settings = session.settings
        self.keepalive: CacheKeepAliveManager | None = None  # once started
        self.preheats = 0
        self.background: set[asyncio.Task[None]] = set()
        self.in_turn = False

    @property
    def caches_prompts(self) -> bool:
        return provider_caches(self.settings.model)

    def schedule_preheat(
        self, view: list[Message] | None = None, breakpoints: list[int] | None = None
    ) -> asyncio.Task[None] | None:
        """Fire-and-forget: send the current prefix with a 1-token reply so the provider caches it.
        The embedded model is preheated too: it starts the child while the user types, and llama.cpp
        keeps the last prompt's KV, so the first reply prefills only the new message."""
        local = model_kind(self.settings.model) == "local"
        if not ((self.caches_prompts or local) and self.settings.preheat):
            return None
        task = asyncio.ensure_future(self.preheat(view, breakpoints))
        self.background.add(task)
        task.add_done_callback(self.background.discard)
        return task

    async def preheat(self, view: list[Message] | None = None, breakpoints: list[int] | None = None) -> None:
        """Skipped when a turn is running (its own request warms the prefix; one typed-ahead preheat would
        only queue behind it)."""
        session = self.session
        if self.in_turn:
            return
        if view is None:
            view, run = await session.prepare()
            breakpoints = run.breakpoints
            if self.in_turn:  # the user sent the message while this was being built
                return
        if view_has_images(view):  # the same request the turn sends: images only for a model that takes them
            await session.sees_images()
        req = session.request(view, breakpoints)
        messages = req.pop("messages")
        tools = req.pop("tools", None)
        usage: Usage | None = None
        try:
            async for ev in session.llm.stream(session.spec, messages, tools=tools, max_tokens=1, extra=req):
                if isinstance(ev, Usage):
                    usage = ev
        except LLMError as exc:
            await session.add_metrics({"kind": "preheat", "error": str(exc)[:200]})
            return
        data: dict[str, Any] = {"kind": "preheat"}
        if usage is not None:
            data.update(
                prompt_tokens=usage.prompt_tokens,
                cached_tokens=usage.cached_tokens,
                cache_creation_tokens=usage.cache_creation_tokens,
                cost_usd=estimate_cost(self.settings.model, usage),
            )
        await session.add_metrics(data)
        self.preheats += 1

    def start_keepalive(self, **timing: Any) -> None:
        if not (self.settings.keepalive and self.caches_prompts) or self.keepalive is not None:
            return
        idle = self.settings.keepalive_idle_seconds
        self.keepalive = CacheKeepAliveManager(self.preheat, idle_after=idle, interval=idle, **timing)
        self.keepalive.start()

    def pause(self) -> None:
        """A turn started: the conversation itself keeps the cache warm."""
        self.in_turn = True
        if self.keepalive is not None:
            self.keepalive.pause()

    def resume(self) -> None:
        self.in_turn = False
        if self.keepalive is not None:
            self.keepalive.resume()

    async def close(self) -> None:
        if self.keepalive is not None:
            await self.keepalive.stop()
        for t in list(self.background):
            t.cancel()
        await asyncio.gather(*self.background, return_exceptions=True)
