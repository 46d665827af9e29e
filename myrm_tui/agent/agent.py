"""``Agent``: one session's agent, a thin facade over the units ``factory.build_agent`` wires.

- ``session.AgentSession``: history, context state, vault, the pipeline run (``prepare``);
- ``turn.TurnRunner``: one turn (pipeline → model → tools → … until a final answer);
- ``tool_runner.ToolRunner``: tool calls with the user's hooks around each, over a ``tool_set.ToolSet``;
- ``cache_warmer.CacheWarmer``: preheat and keep-alive of the provider's prompt cache;
- ``subagents.Subagents``: delegated tasks in child sessions (reached through ``ToolContext.subagent``);
- ``fingerprint``: the execution fingerprint that decides a rebuild.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any

from myrm_tui.agent.cache_warmer import CacheWarmer
from myrm_tui.agent.events import AgentEvent, ContextReport
from myrm_tui.agent.fingerprint import compute_execution_fingerprint, execution_parameters
from myrm_tui.agent.hooks import HookRunner
from myrm_tui.agent.keepalive import CacheKeepAliveManager
from myrm_tui.agent.model_target import model_spec, window_for
from myrm_tui.agent.prompts import PromptLibrary
from myrm_tui.agent.session import AgentSession
from myrm_tui.agent.summarizer import AuxSummarizer, CircuitBreaker
from myrm_tui.agent.tool_runner import ToolRunner
from myrm_tui.agent.tool_set import ToolSet
from myrm_tui.agent.tools import Tool, ToolContext
from myrm_tui.agent.tools.jobs import JobManager
from myrm_tui.agent.turn import TurnRunner
from myrm_tui.context.compaction import Compaction, Trigger
from myrm_tui.context.config import ContextConfig
from myrm_tui.context.edits import Pin, Unpin
from myrm_tui.context.pipeline import PipelineRun
from myrm_tui.context.state import ContextState
from myrm_tui.context.tokens import TokenCounter
from myrm_tui.context.types import Message
from myrm_tui.context.vault import ArtifactVault, readable
from myrm_tui.context.window_use import WindowUse
from myrm_tui.llm.client import LLMClient, ModelSpec
from myrm_tui.llm.pricing import estimate_cost
from myrm_tui.store.db import Store

# Imported from here by the app and the CLI.
__all__ = [
    "Agent",
    "compute_execution_fingerprint",
    "estimate_cost",
    "execution_parameters",
    "model_spec",
    "window_for",
]


class Agent:
    """One session's agent. Not thread-safe; one turn at a time (the per-chat lock guards compaction)."""

    def __init__(
        self,
        session: AgentSession,
        tools: ToolRunner,
        warmer: CacheWarmer,
        turns: TurnRunner,
        mcp_connections: Sequence[Any] = (),
    ) -> None:
        self.session = session
        self.tool_runner = tools
        self.warmer = warmer
        self.turns = turns
        self.settings = session.settings
        self.mcp_connections = list(mcp_connections)  # owned: closed with the agent

    # -- the session --------------------------------------------------------------------------------
    @property
    def store(self) -> Store:
        return self.session.store

    @property
    def session_id(self) -> str:
        return self.session.session_id

    @property
    def llm(self) -> LLMClient:
        return self.session.llm

    @property
    def prompts(self) -> PromptLibrary:
        return self.session.prompts

    @property
    def workspace(self) -> Path:
        return self.session.workspace

    @property
    def clock(self) -> Callable[[], float]:
        return self.session.clock

    @property
    def window(self) -> int:
        return self.session.window

    @property
    def config(self) -> ContextConfig:
        return self.session.config

    @property
    def counter(self) -> TokenCounter:
        return self.session.counter

    @property
    def history(self) -> list[Message]:
        return self.session.history

    @property
    def state(self) -> ContextState:
        return self.session.state

    @property
    def vault(self) -> ArtifactVault:
        return self.session.vault

    @property
    def turn(self) -> int:
        return self.session.turn

    @property
    def last_report(self) -> ContextReport | None:
        return self.session.last_report

    @property
    def breaker(self) -> CircuitBreaker:
        return self.session.breaker

    @property
    def aux(self) -> AuxSummarizer | None:
        return self.session.aux

    @property
    def extractive_summaries(self) -> bool:
        return self.session.extractive_summaries

    @property
    def spec(self) -> ModelSpec:
        return self.session.spec

    @property
    def system_prompt(self) -> str | None:
        return self.session.system_prompt

    @property
    def sends_tools(self) -> bool:
        return self.session.sends_tools

    @property
    def prompt_mode(self) -> str:
        return self.session.prompt_mode

    async def load(self) -> None:
        """Load the session; a new session gets its system prompt, environment message and session_start
        hooks."""
        if await self.session.load():
            await self.session.add_hook_context(await self.hooks.run("session_start", {}))

    async def prepare(
        self, force: bool = False, focus: str = "", hard_limit: int | None = None, background: bool = False
    ) -> tuple[list[Message], PipelineRun]:
        return await self.session.prepare(force, focus, hard_limit, background=background)

    async def flush_vault(self) -> None:
        await self.session.flush_vault()

    def schema_tokens(self) -> int:
        """Tokens of the tool schemas sent with every request (none for a model that gets no tools)."""
        return self.session.schema_tokens()

    def on_summary_progress(self, listener: Callable[[str], None]) -> None:
        """Tell ``listener`` how the background summary goes ("preparing", "ready", "failed: …",
        "upgraded"); once, however often it is asked."""
        listeners = self.session.preparer.listeners
        if listener not in listeners:
            listeners.append(listener)

    def summary_status(self) -> dict[str, Any]:
        """The background summary's bill and state, for the health panel."""
        return self.session.preparer.status()

    async def compact_now(self, focus: str = "", trigger: Trigger = "manual") -> ContextReport:
        """Force a compaction (the ring's button, ``/compact``, a fork); returns the new context health.

        A compaction that leaves the view over this model's input budget (a fork onto a smaller window)
        is redone with that budget as a hard limit, which drops the oldest rounds if it has to. The new
        prefix is preheated at once, so the next message reads it from the cache — only when it fits:
        a preheat is a request too."""
        view, run = await self.session.prepare(force=True, focus=focus, trigger=trigger)
        if run.tokens > self.config.input_budget:
            view, run = await self.session.prepare(
                force=True, focus=focus, hard_limit=self.config.input_budget, trigger=trigger
            )
        report = self.session.report(run)
        await self.session.add_metrics({**run.metrics.as_dict(), "kind": "manual_compaction"})
        self.session.last_report = report
        self.session.last_view = view
        if run.tokens <= self.config.input_budget:
            self.warmer.schedule_preheat(view, run.breakpoints)
        return report

    async def preview_compaction(self, focus: str = "") -> tuple[Compaction | None, str]:
        """What ``compact_now(focus)`` would do, computed on a copy (nothing stored, no LLM call): the
        record, or None and the reason there is nothing to compact."""
        if len(self.history) <= 2:
            return None, "the session has no conversation yet"
        run = await self.session.dry_run(force=True, focus=focus)
        record = run.metrics.compaction
        if record is None:
            return None, "; ".join(run.metrics.events[-1:]) or "the pipeline did not compact"
        if not record.changed or not record.left:
            kept = self.config.tail_budget
            return None, (
                f"everything in the view ({record.tokens_before:,} tokens) is the protected start or the "
                f"recent turns kept verbatim (up to {kept:,} tokens); nothing older to fold"
            )
        return record, ""

    def window_use(self) -> WindowUse:
        """What fills the window now by category, as the ring shows it: the latest request's (its report's
        breakdown), or before any request of this run the stored view the next one starts from."""
        s = self.session
        if s.last_report is not None and s.last_report.use is not None:
            return s.last_report.use
        return s.window_use([*s.state.base, *s.history[s.state.base_upto :]])

    async def pin(self, uri: str, line_range: str, gist: str) -> int:
        """Bring back an item that left the view, into the next requests until unpinned; its tokens."""
        entry = await self.vault.get(uri)
        if entry is None:
            raise KeyError(f"{uri} is not in this session's vault")
        lines = readable(entry).splitlines()
        a, _, b = line_range.partition(":")
        text = "\n".join(lines[max(int(a or 1), 1) - 1 : int(b) if b else len(lines)])
        await self.session.edit([Pin(uri, line_range, gist, text)])
        return self.counter.text(text)

    async def unpin(self, uri: str, line_range: str) -> bool:
        if not self.is_pinned(uri, line_range):
            return False
        await self.session.edit([Unpin(uri, line_range)])
        return True

    def is_pinned(self, uri: str, line_range: str) -> bool:
        return any((p["uri"], p["line_range"]) == (uri, line_range) for p in self.state.pinned)

    # -- tools --------------------------------------------------------------------------------------
    @property
    def tool_set(self) -> ToolSet:
        return self.tool_runner.tools

    @property
    def tools(self) -> dict[str, Tool]:
        return self.tool_set.tools

    @property
    def tool_schemas(self) -> list[dict[str, Any]]:
        return self.tool_set.schemas

    @property
    def tools_fingerprint(self) -> str:
        return self.tool_set.fingerprint

    @property
    def tool_ctx(self) -> ToolContext:
        return self.tool_runner.ctx

    @property
    def hooks(self) -> HookRunner:
        return self.tool_runner.hooks

    @property
    def jobs(self) -> JobManager | None:
        return self.tool_ctx.jobs

    def narrow_tools(self, names: list[str] | None) -> None:
        """Limit which tools the model may call (a loaded skill) without changing the bound schemas."""
        self.tool_set.narrow(names)

    def tool_choice(self) -> Any:
        return self.tool_set.tool_choice(self.settings.model, self.settings.api_base)

    # -- prompt-cache preheat and keep-alive --------------------------------------------------------
    @property
    def keepalive(self) -> CacheKeepAliveManager | None:
        return self.warmer.keepalive

    @property
    def preheats(self) -> int:
        return self.warmer.preheats

    @property
    def caches_prompts(self) -> bool:
        return self.warmer.caches_prompts

    def schedule_preheat(
        self, view: list[Message] | None = None, breakpoints: list[int] | None = None
    ) -> asyncio.Task[None] | None:
        return self.warmer.schedule_preheat(view, breakpoints)

    async def preheat(self, view: list[Message] | None = None, breakpoints: list[int] | None = None) -> None:
        await self.warmer.preheat(view, breakpoints)

    def start_keepalive(self, **timing: Any) -> None:
        self.warmer.start_keepalive(**timing)

    # -- turns and shutdown -------------------------------------------------------------------------
    def run_turn(self, text: str) -> AsyncIterator[AgentEvent]:
        """Events of one turn; the last is always ``TurnDone`` (after a ``TurnFailed`` if it failed)."""
        return self.turns.run(text)

    async def close(self, keep_jobs: bool = False) -> None:
        """End what this agent runs: background jobs (unless ``keep_jobs``: a rebuild took them over),
        MCP connections, keep-alive and preheats."""
        if self.jobs is not None and not keep_jobs:
            await self.jobs.close()
        for conn in self.mcp_connections:
            await conn.close()
        await self.warmer.close()
