"""The ``Processor`` protocol and the ``Pipeline`` that runs processors in the seed's order.

Each processor takes the view built so far and returns the next one. It records what it removed in
``ctx.metrics`` so every layer's effect is visible per turn. Processors never touch the stored history.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from time import perf_counter
from typing import Any, Protocol, runtime_checkable

from myrm_tui.context.config import ContextConfig
from myrm_tui.context.intent import CompressionIntent
from myrm_tui.context.state import ContextState
from myrm_tui.context.tokens import TokenCounter
from myrm_tui.context.types import Message
from myrm_tui.context.vault import ArtifactVault


class Level(IntEnum):
    """Dynamic-threshold level of a request (share of the window the view would use)."""

    NONE = 0
    MONITOR = 1  # >= 40%: watch
    LIGHT = 2  # >= 50%: dedup, truncate
    FULL = 3  # >= 70%: priority-aware removal, summary
    EMERGENCY = 4  # >= 90%: safety net


# An async text completion used for summaries and semantic filtering: prompt in, text out.
Completer = Callable[[str, str], Awaitable[str]]
FileReader = Callable[[str], str | None]


@dataclass
class PipelineMetrics:
    tokens_raw: int = 0  # whole stored history
    tokens_in: int = 0  # view before this run's processors (base + new messages)
    tokens_out: int = 0
    level: str = "NONE"
    compacted: bool = False
    compaction_reason: str = ""
    removed: dict[str, int] = field(default_factory=dict)  # layer -> tokens removed
    vaulted: dict[str, int] = field(default_factory=dict)  # layer -> bytes put into the vault
    timings_ms: dict[str, float] = field(default_factory=dict)
    events: list[str] = field(default_factory=list)
    summary_source: str = ""  # "llm" | "extractive" | ""
    cache_break: dict[str, Any] | None = None  # where and why this request's prefix differs from the last
    breaker: dict[str, Any] | None = None  # the summarizer's circuit breaker, filled in by the agent
    total_ms: float = 0.0

    def add_removed(self, layer: str, tokens: int) -> None:
        if tokens:
            self.removed[layer] = self.removed.get(layer, 0) + tokens

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class PipelineContext:
    """Everything a processor may read. Built fresh for each request by the caller."""

    config: ContextConfig
    state: ContextState
    counter: TokenCounter
    vault: ArtifactVault
    raw: Sequence[Message]  # the stored history, append-only
    model: str = ""
    now: float = field(default_factory=time.time)
    intent: CompressionIntent = field(default_factory=CompressionIntent)
    summarizer: Completer | None = None  # None: extractive summaries only
    read_file: FileReader | None = None  # for post-compaction reread
    force_compaction: bool = False
    # L4 stream recovery: the provider refused the last request as too long. The compaction this
    # forces must end under this many tokens (our count), dropping the oldest rounds if it has to.
    hard_limit: int | None = None
    focus_hint: str = ""  # "/compact <focus>"
    resume: bool = False  # session resumed: leave already-sent messages as they were
    metrics: PipelineMetrics = field(default_factory=PipelineMetrics)
    level: Level = Level.NONE
    compacting: bool = False  # set by PreCompact when this request compacts
    protected_head: list[Message] = field(default_factory=list)
    new_start: int = 0  # index in the view where messages newer than the base begin
    cache_warm: bool = False
    removed: list[Message] = field(default_factory=list)  # what Compress removed, for Summarize
    backup: str | None = None  # state JSON before this compaction, to roll back on failure
    archive_uri: str | None = None  # the pre-compaction base view, archived in the vault
    normalized_view: list[Message] | None = None
    breakpoints: list[int] = field(default_factory=list)
    integrity: Any = None  # FileIntegrityGuard, when the caller has a workspace
    tools_fingerprint: str = ""  # hash of the bound tool schemas, for the cache-break detector
    system_override: str | None = None  # the agent's current system prompt (mode or prompt files changed)

    started: float = field(default_factory=lambda: perf_counter())

    def tokens(self, view: Sequence[Message]) -> int:
        return self.counter.messages(view)


@runtime_checkable
class Processor(Protocol):
    name: str

    async def process(self, view: list[Message], ctx: PipelineContext) -> list[Message]: ...


class Pipeline:
    """Runs processors in order; a failing processor is skipped (logged in metrics), never fatal.

    A processor that raises must not cost the user their turn: the view it was given goes on to the
    next processor, and Normalize (always last but two) restores the invariants.
    """

    def __init__(self, processors: Sequence[Processor]) -> None:
        self.processors = list(processors)
        self._locks: dict[str, asyncio.Lock] = {}

    def lock_for(self, session_id: str) -> asyncio.Lock:
        """Per-chat lock: two compactions of one session never run at once."""
        lock = self._locks.get(session_id)
        if lock is None:
            lock = self._locks[session_id] = asyncio.Lock()
        return lock

    async def run(self, ctx: PipelineContext, session_id: str = "") -> list[Message]:
        async with self.lock_for(session_id):
            return await self._run(ctx)

    async def _run(self, ctx: PipelineContext) -> list[Message]:
        t0 = perf_counter()
        from myrm_tui.context.invariants import extract_protected_head
        from myrm_tui.context.reread import ArtifactTracker

        if (
            ctx.system_override is not None
            and ctx.raw
            and ctx.raw[0].role == "system"
            and ctx.raw[0].content != ctx.system_override
        ):
            # The stored system message is history; the view carries the prompt in force now.
            ctx.raw = [ctx.raw[0].derive("sys", content=ctx.system_override), *ctx.raw[1:]]
        ctx.protected_head = extract_protected_head(ctx.raw)
        ctx.intent = CompressionIntent.build(ctx.raw, ctx.focus_hint)
        state = ctx.state
        if state.observed_upto < len(ctx.raw):
            ArtifactTracker(state).observe(ctx.raw[state.observed_upto :])
            state.observed_upto = len(ctx.raw)
        ctx.metrics.tokens_raw = ctx.tokens(ctx.raw)
        if state.base_upto > len(ctx.raw):  # history shorter than the state knows: state is stale
            state.base, state.base_upto = [], 0
        view = [*state.base, *ctx.raw[state.base_upto :]]
        if (
            view
            and ctx.raw
            and view[0].role == "system"
            and ctx.raw[0].role == "system"
            and view[0].content != ctx.raw[0].content
        ):
            view[0] = ctx.raw[0]
        ctx.new_start = len(state.base)
        ctx.metrics.tokens_in = ctx.tokens(view)
        ctx.cache_warm = (
            state.last_request_at is not None
            and ctx.now - state.last_request_at < ctx.config.provider_cache_ttl_seconds
        )
        start_view = view
        for proc in self.processors:
            t = perf_counter()
            try:
                view = await proc.process(view, ctx)
            except Exception as exc:  # a broken layer degrades, it does not kill the turn
                ctx.metrics.events.append(f"{proc.name} failed: {type(exc).__name__}: {exc}")
                if ctx.compacting and ctx.backup is not None:
                    return await self._rolled_back(ctx, start_view)
            ctx.metrics.timings_ms[proc.name] = (perf_counter() - t) * 1000
        ctx.metrics.tokens_out = ctx.tokens(view)
        ctx.metrics.level = ctx.level.name
        if ctx.compacting:
            self._commit(ctx, ctx.normalized_view if ctx.normalized_view is not None else view)
        state.last_request_at = ctx.now
        ctx.metrics.total_ms = (perf_counter() - t0) * 1000
        return view

    async def _rolled_back(self, ctx: PipelineContext, start_view: list[Message]) -> list[Message]:
        """A compaction step failed: restore the pre-compact backup and send the uncompacted view."""
        from myrm_tui.context.normalize import normalize

        restored = ContextState.from_json(ctx.backup or "{}")
        ctx.state.__dict__.update(restored.__dict__)
        ctx.compacting = False
        ctx.metrics.compacted = False
        ctx.metrics.events.append("compaction failed; pre-compact backup restored")
        view, _ = normalize(start_view)
        ctx.metrics.tokens_out = ctx.tokens(view)
        ctx.state.last_request_at = ctx.now
        return view

    @staticmethod
    def _commit(ctx: PipelineContext, view: list[Message]) -> None:
        """Freeze the compacted view as the new base; record yield for anti-thrashing."""
        state = ctx.state
        before, after = ctx.metrics.tokens_in, ctx.tokens(view)
        state.base = list(view)
        state.base_upto = len(ctx.raw)
        state.decisions = {}
        saved = (before - after) / before if before else 0.0
        if saved < ctx.config.low_yield_ratio:
            state.low_yield_streak += 1
            if state.low_yield_streak >= ctx.config.max_low_yield_in_row and ctx.level < Level.EMERGENCY:
                state.backoff_level = Level(min(int(ctx.level) + 1, int(Level.EMERGENCY))).name
        else:
            state.low_yield_streak = 0
            state.backoff_level = ""
        state.last_compaction.update(
            {
                "at": ctx.now,
                "tokens_before": before,
                "tokens_after": after,
                "reason": ctx.metrics.compaction_reason,
                "duration_ms": round((perf_counter() - ctx.started) * 1000, 2),
                "archive": ctx.archive_uri,
            }
        )
