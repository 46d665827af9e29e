"""``ChatAgentExecutionCache``: one agent per session, rebuilt when its execution fingerprint changes.

``compute_execution_fingerprint`` (``fingerprint.py``) hashes every parameter that shapes a run — the
settings, every derived ``ContextConfig`` threshold, the schemas of the tools the builder binds, the
prompt files and the config file. Each new message asks the cache for the agent; a different
fingerprint tears the old agent down and builds a fresh one (history and context state come back from
the store), so a settings change, an edited prompt or a changed tool set takes effect on the next
message with no restart.

Not a cache (it holds one agent and never serves a stale one): the class keeps the reference design's name,
the module says what it does.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from myrm_tui.agent.agent import Agent
from myrm_tui.agent.fingerprint import compute_execution_fingerprint
from myrm_tui.agent.tools.jobs import JobManager
from myrm_tui.config import Settings
from myrm_tui.paths import files_fingerprint

__all__ = ["Build", "ChatAgentExecutionCache", "files_fingerprint"]

# (settings, the session's background jobs from the previous build or None) -> a loaded agent.
Build = Callable[[Settings, JobManager | None], Awaitable[Agent]]


class ChatAgentExecutionCache:
    def __init__(self, build: Build) -> None:
        self.build = build
        self.agent: Agent | None = None
        self.fingerprint = ""
        self.rebuilds = 0
        # One build at a time: a second ``get`` while the first builds (an editor's request during the
        # build ``session/new`` started) built a second agent, and the first, never closed, kept its MCP
        # servers and keep-alive running.
        self._building = asyncio.Lock()

    async def get(self, settings: Settings, window: int, extra: str = "") -> Agent:
        # guard: one-agent-build-at-a-time
        async with self._building:
            return await self._get(settings, window, extra)

    async def _get(self, settings: Settings, window: int, extra: str) -> Agent:
        fp = compute_execution_fingerprint(settings, window, extra)
        if self.agent is not None and fp == self.fingerprint:
            return self.agent
        old = self.agent
        # Background jobs belong to the session, not to one build of its agent: they move over.
        self.agent = await self.build(settings, old.jobs if old is not None else None)
        if old is not None:
            await old.close(keep_jobs=old.jobs is not None and old.jobs is self.agent.jobs)
            self.rebuilds += 1
        self.fingerprint = fp
        return self.agent

    def adopt(self, agent: Agent, settings: Settings, window: int, extra: str = "") -> None:
        """Hold ``agent``, built elsewhere for ``settings`` (a fork's, compacted in its transaction)."""
        self.agent = agent
        self.fingerprint = compute_execution_fingerprint(settings, window, extra)

    async def clear(self) -> None:
        if self.agent is not None:
            await self.agent.close()
        self.agent = None
        self.fingerprint = ""
