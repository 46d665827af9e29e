"""``ChatAgentExecutionCache``: one agent per session, rebuilt when its execution fingerprint changes.

``compute_execution_fingerprint`` (in ``loop.py``) hashes every parameter that shapes a run — the
settings, every derived ``ContextConfig`` threshold, the bound tool schemas, the prompt files and
the config file. Each new message asks the cache for the agent; a different fingerprint tears the old
agent down and builds a fresh one (history and context state come back from the store), so a
settings change or an edited prompt takes effect on the next message with no restart.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from myrm_tui.agent.loop import Agent, compute_execution_fingerprint
from myrm_tui.config import Settings
from myrm_tui.paths import files_fingerprint

__all__ = ["ChatAgentExecutionCache", "files_fingerprint"]


class ChatAgentExecutionCache:
    def __init__(self, build: Callable[[Settings], Awaitable[Agent]]) -> None:
        self.build = build
        self.agent: Agent | None = None
        self.fingerprint = ""
        self.rebuilds = 0

    async def get(self, settings: Settings, window: int, extra: str = "") -> Agent:
        fp = compute_execution_fingerprint(settings, window, extra)
        if self.agent is not None and fp == self.fingerprint:
            return self.agent
        old = self.agent
        self.agent = await self.build(settings)
        if old is not None:
            # Background jobs belong to the session, not to one build of its agent: they move over.
            if old.tool_ctx.jobs is not None and self.agent.tool_ctx.jobs is not None:
                self.agent.tool_ctx.jobs, old.tool_ctx.jobs = old.tool_ctx.jobs, None
            await old.close()
            self.rebuilds += 1
        self.fingerprint = fp
        return self.agent

    async def clear(self) -> None:
        if self.agent is not None:
            await self.agent.close()
        self.agent = None
        self.fingerprint = ""
