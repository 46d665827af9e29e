"""The pipeline, built once per agent, and the loop that runs it.

User Message → Thinking Cleanup → Media Filter → Smart Filter → Answered Trim → Reasoning Trim → Cache TTL
Prune → Pre-Compact → Head Anchor → Compress → Session Notes → Summarize → Post-Compaction Reread → Fit to
Budget → Normalize → Pinned → Media Resolve → Prompt Cache Optimize → LLM (the table in this package's
README.md says what each does; a test keeps it equal to ``build_pipeline``). Fit to Budget makes every
request fit the input budget by construction (``steps/fit.py``). The CompressionIntent is built before the
first step; ContextBudgetGuard runs inside Smart Filter as its last line.

Each step is ``await step.run(view, settings) -> result`` (see ``step.py``); the loop folds each
result into the next view. The ``Transaction`` is the only writer of ``ContextState``: it applies
what the steps returned once the run ends, or — when a compaction step fails — keeps only what
does not depend on the compaction; between runs it applies the typed edits (``edits.py``) that the
notes tool, a subagent's handover and the user's pins report.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from time import perf_counter
from typing import Any

from myrm_tui.context import memo
from myrm_tui.context.compaction.intent import CompressionIntent
from myrm_tui.context.compaction.record import Compaction, CompactionInput, build_compaction
from myrm_tui.context.config import ContextConfig
from myrm_tui.context.edits import AddHandover, StateEdit, UpgradeSummary, notes_after, pins_after
from myrm_tui.context.filters.processor import FilterProcessor
from myrm_tui.context.filters.rules import RuleEngine
from myrm_tui.context.invariants import extract_protected_head, with_unique_ids
from myrm_tui.context.state import ContextState
from myrm_tui.context.step import NO_COMPACTION, CompactionPlan, Level, Request, Step, Trace, View
from myrm_tui.context.steps.answered import AnsweredOutputTrim
from myrm_tui.context.steps.cache_optimize import PromptCacheOptimize
from myrm_tui.context.steps.compress import PriorityCompressor
from myrm_tui.context.steps.fit import FitToBudget, HeadAnchor, pinned_tokens
from myrm_tui.context.steps.media import MediaFilter, MediaResolve
from myrm_tui.context.steps.normalize import Normalize, normalize
from myrm_tui.context.steps.notes import SessionNotes
from myrm_tui.context.steps.pinned import PinnedContext
from myrm_tui.context.steps.precompact import PreCompact
from myrm_tui.context.steps.reasoning import ReasoningTrim
from myrm_tui.context.steps.reread import ArtifactTracker, PostCompactionReread
from myrm_tui.context.steps.summarize import Summarize, safe_redact_summary
from myrm_tui.context.steps.thinking import ThinkingBlockCleaner
from myrm_tui.context.steps.ttl_prune import CacheTTLPrune
from myrm_tui.context.summary import fields as summary_model
from myrm_tui.context.types import Message
from myrm_tui.paths import prompts_dir as default_prompts_dir

log = logging.getLogger(__name__)


@dataclass
class PipelineMetrics:
    tokens_raw: int = 0  # whole stored history
    tokens_in: int = 0  # view before this run's steps (base + new messages)
    tokens_planned: int = 0  # view when Pre-Compact decided to compact: what would be sent without it
    tokens_out: int = 0
    level: str = "NONE"
    compacted: bool = False
    compaction_reason: str = ""
    removed: dict[str, int] = field(default_factory=dict)  # layer -> tokens removed
    vaulted: dict[str, int] = field(default_factory=dict)  # layer -> bytes put into the vault
    timings_ms: dict[str, float] = field(default_factory=dict)
    events: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)  # "step: TypeError: …" for each step that raised
    summary_source: str = ""  # "llm" | "extractive" | ""
    cache_break: dict[str, Any] | None = None  # where and why this request's prefix differs from the last
    breaker: dict[str, Any] | None = None  # the summarizer's circuit breaker, filled in by the agent
    total_ms: float = 0.0
    compaction: Compaction | None = None  # this run's compaction, when it froze one

    def add(self, trace: Trace) -> None:
        for layer, n in trace.removed.items():
            self.removed[layer] = self.removed.get(layer, 0) + n
        for layer, n in trace.vaulted.items():
            self.vaulted[layer] = self.vaulted.get(layer, 0) + n
        self.events.extend(trace.events)

    def as_dict(self) -> dict[str, Any]:
        """For the store's metrics row (the UI reads the typed fields; the compaction has its own row)."""
        d = dict(self.__dict__)
        del d["compaction"]
        return d

    @property
    def shrank(self) -> bool:
        """This run compacted and the context got smaller (a no-op compaction is not news)."""
        return self.compacted and self.tokens_out < self.tokens_in


@dataclass
class PipelineRun:
    """What one run produced: the request's messages and what the caller needs to send and record."""

    messages: list[Message]
    metrics: PipelineMetrics
    plan: CompactionPlan = NO_COMPACTION
    breakpoints: list[int] = field(default_factory=list)

    @property
    def tokens(self) -> int:
        return self.metrics.tokens_out

    @property
    def compacting(self) -> bool:
        return self.plan.compacting


class Transaction:
    """The run's only writer of ``ContextState``: begin, then commit or roll back."""

    def __init__(self, state: ContextState, config: ContextConfig) -> None:
        self.state = state
        self.config = config

    def begin(self, raw: Sequence[Message]) -> None:
        """Bring the state up to the history: artifacts seen, a stale base forgotten."""
        state = self.state
        if state.observed_upto < len(raw):
            ArtifactTracker(state).observe(raw[state.observed_upto :])
            state.observed_upto = len(raw)
        if state.base_upto > len(raw):  # history shorter than the state knows: state is stale
            state.base, state.base_upto = [], 0

    def apply(self, edits: Sequence[StateEdit]) -> None:
        """Edits asked from outside the pipeline (notes, pins, handovers), in the order they were made."""
        state = self.state
        state.notes[:] = notes_after(state.notes, edits)
        state.pinned[:] = pins_after(state.pinned, edits)
        state.handovers.extend(e.handover for e in edits if isinstance(e, AddHandover))
        for e in edits:
            if isinstance(e, UpgradeSummary):
                state.summary = summary_model.merge(state.summary, safe_redact_summary(e.summary, Trace()))

    def commit(
        self, view: View, metrics: PipelineMetrics, started: float, planned: list[Message] | None = None
    ) -> None:
        state, req = self.state, view.request
        if view.cache is not None:
            c = view.cache
            if c.cache_break is not None:
                cause = str(c.cache_break.get("cause", ""))
                state.cache_breaks[cause] = state.cache_breaks.get(cause, 0) + 1
            state.last_fingerprints, state.last_sizes = c.fingerprints, c.sizes
        if view.compacting:
            self._freeze(view, metrics, started, planned)
        else:
            state.decisions.update(view.decisions)
        state.last_request_at = req.now
        # Measured before the pinned items join (Pre-Compact weighs the view without them).
        sent = req.tokens(view.normalized) if view.normalized is not None else metrics.tokens_out
        self._grew(view.plan.seen_tokens, sent)

    def rollback(self, view: View, sent: int) -> None:
        """A compaction step failed: nothing of the compaction is kept (the state never saw it)."""
        self.state.decisions.update(view.decisions)
        self.state.last_request_at = view.request.now
        self._grew(view.plan.seen_tokens, sent)

    def _grew(self, seen: int, sent: int) -> None:
        """Remember what this request added to the last one sent (Pre-Compact predicts the next round)."""
        state = self.state
        if seen and state.last_sent_tokens:
            keep = max(self.config.growth_rounds, 1)
            state.round_growth = [*state.round_growth, max(0, seen - state.last_sent_tokens)][-keep:]
        state.last_sent_tokens = sent

    def _freeze(
        self, view: View, metrics: PipelineMetrics, started: float, planned: list[Message] | None = None
    ) -> None:
        """Freeze the compacted view as the new base; record yield for anti-thrashing."""
        state, req, plan = self.state, view.request, view.plan
        base = view.normalized if view.normalized is not None else view.messages
        # What would have been sent without the compaction (the per-request trims applied): the record
        # compares against it, as the ring shows it.
        before_view = planned if planned is not None else [*state.base, *req.raw[state.base_upto :]]
        if view.summary is not None:
            state.summary = view.summary.summary
            state.compactions += 1
            state.last_compaction["covered"] = view.summary.covered
        if req.integrity is not None:
            for path, content in view.reread:
                req.integrity.record(path, content)
        before, after = metrics.tokens_in, req.tokens(base)
        state.base = list(base)
        state.base_upto = len(req.raw)
        state.decisions = {}
        saved = (before - after) / before if before else 0.0
        if saved < self.config.low_yield_ratio:
            state.low_yield_streak += 1
            if state.low_yield_streak >= self.config.max_low_yield_in_row and plan.level < Level.EMERGENCY:
                state.backoff_level = Level(min(int(plan.level) + 1, int(Level.EMERGENCY))).name
        else:
            state.low_yield_streak = 0
            state.backoff_level = ""
        state.last_compaction.update(
            {
                "at": req.now,
                "tokens_before": before,
                "tokens_after": after,
                # Pre-Compact weighs the view with the pinned items (they join every request after it).
                # guard: the-landing-counts-the-pinned-items
                "landed": after + pinned_tokens(state.pinned, self.config.input_budget, req.counter),
                "reason": plan.reason,
                "duration_ms": round((perf_counter() - started) * 1000, 2),
                "archive": plan.archive_uri,
            }
        )
        overhead = self.config.overhead_tokens  # the tool schemas: counted as the ring counts them
        metrics.compaction = build_compaction(
            CompactionInput(
                before=before_view,
                after=list(base),
                folded=view.folded,
                reason=plan.reason,
                level=plan.level.name,
                focus=req.focus_hint,
                tokens_before=(metrics.tokens_planned or before) + overhead,
                tokens_after=metrics.tokens_out + overhead,
                duration_ms=(perf_counter() - started) * 1000,
                summary_source=view.summary.source if view.summary is not None else "",
                at=req.now,
                archive_uri=plan.archive_uri,
                seq=len(req.raw),
                counter=req.counter,
                vault=req.vault,
            )
        )


class Pipeline:
    """Runs the steps in order; a failing step is skipped (logged in metrics), never fatal.

    A step that raises must not cost the user their turn: the view it was given goes on to the next
    step, and Normalize (after it only Pinned, Media Resolve and Prompt Cache Optimize) restores the
    invariants. When it fails during a compaction, the compaction is dropped and the uncompacted view
    is sent.
    """

    def __init__(self, steps: Sequence[Step]) -> None:
        self.steps = list(steps)
        self._locks: dict[str, asyncio.Lock] = {}
        self._configured: tuple[ContextConfig, list[Any]] | None = None
        self._summarize = next((s for s in self.steps if isinstance(s, Summarize)), None)

    def lock_for(self, session_id: str) -> asyncio.Lock:
        """Per-chat lock: two compactions of one session never run at once."""
        lock = self._locks.get(session_id)
        if lock is None:
            lock = self._locks[session_id] = asyncio.Lock()
        return lock

    def settings(self, config: ContextConfig) -> list[Any]:
        """Each step's own settings for ``config`` (rebuilt only when the config changes)."""
        known = self._configured
        if known is None or (known[0] is not config and known[0] != config):
            known = self._configured = (config, [s.configure(config) for s in self.steps])
        return known[1]

    def settle(self, most: int | None = None) -> int:
        """The reads that requests made with ``reads_later`` left for after they were sent, at most ``most``
        requests' (all when None); how many requests' are left. The next run makes any left first."""
        return self._summarize.settle(most) if self._summarize is not None else 0

    async def run(self, request: Request, config: ContextConfig, session_id: str = "") -> PipelineRun:
        async with self.lock_for(session_id):
            with memo.active(request.state.memo):  # what the steps read of messages, kept for the session
                return await self._run(request, config)

    async def _run(self, request: Request, config: ContextConfig) -> PipelineRun:
        t0 = perf_counter()
        metrics = PipelineMetrics()
        tx = Transaction(request.state, config)
        # guard: raw-ids-made-unique-on-entry
        raw = with_unique_ids(request.raw)  # the steps key messages by id
        if (
            request.system_override is not None
            and raw
            and raw[0].role == "system"
            and raw[0].content != request.system_override
        ):
            # The stored system message is history; the view carries the prompt in force now.
            raw = [raw[0].derive("sys", content=request.system_override), *raw[1:]]
        tx.begin(raw)
        state = request.state
        request = replace(
            request,
            raw=raw,
            intent=CompressionIntent.build(raw, request.focus_hint),
            protected_head=tuple(extract_protected_head(raw)),
            new_start=len(state.base),
            cache_warm=state.last_request_at is not None
            and request.now - state.last_request_at < config.provider_cache_ttl_seconds,
        )
        metrics.tokens_raw = request.counter.history(raw)  # O(new messages): raw only grows
        messages = [*state.base, *raw[state.base_upto :]]
        system_changed = messages and raw and messages[0].content != raw[0].content
        if system_changed and messages[0].role == raw[0].role == "system":
            messages[0] = raw[0]
        view = start = View(messages=messages, request=request)
        metrics.tokens_in = view.tokens()
        planned: list[Message] | None = None
        for step, settings in zip(self.steps, self.settings(config), strict=True):
            t = perf_counter()
            try:
                result = await step.run(view, settings)
            except Exception as exc:  # a broken layer degrades, it does not kill the turn
                log.exception("pipeline step %s failed (compacting: %s)", step.name, view.compacting)
                metrics.events.append(f"{step.name} failed: {type(exc).__name__}: {exc}")
                metrics.failures.append(f"{step.name}: {type(exc).__name__}: {str(exc)[:200]}")
                if view.compacting:
                    # guard: failed-compaction-step-restores
                    return self._rolled_back(tx, view, start, metrics, t0)
            else:
                # The view the step was given: what would be sent without the compaction, whether the
                # step planned it (Pre-Compact) or turned the request into one by cutting (the fit step).
                given = view
                view = result.apply(view)
                metrics.add(result.trace)
                if view.compacting and planned is None:
                    planned = given.messages
                    metrics.tokens_planned = given.tokens()
            metrics.timings_ms[step.name] = (perf_counter() - t) * 1000
        plan = view.plan
        metrics.tokens_out = view.tokens()
        metrics.level = plan.level.name
        metrics.compacted, metrics.compaction_reason = plan.compacting, plan.reason
        if view.summary is not None:
            metrics.summary_source = view.summary.source
        if view.cache is not None:
            metrics.cache_break = view.cache.cache_break
        tx.commit(view, metrics, t0, planned)
        metrics.total_ms = (perf_counter() - t0) * 1000
        breakpoints = list(view.cache.breakpoints) if view.cache is not None else []
        return PipelineRun(view.messages, metrics, plan, breakpoints)

    @staticmethod
    def _rolled_back(
        tx: Transaction, view: View, start: View, metrics: PipelineMetrics, t0: float
    ) -> PipelineRun:
        """A compaction step failed: send the uncompacted view (normalized); the state keeps no trace."""
        metrics.level = view.plan.level.name
        metrics.events.append("compaction failed; pre-compact backup restored")
        messages, _ = normalize(start.messages)
        metrics.tokens_out = view.tokens(messages)
        tx.rollback(view, metrics.tokens_out)
        metrics.total_ms = (perf_counter() - t0) * 1000
        return PipelineRun(messages, metrics, NO_COMPACTION)


def build_pipeline(prompts_dir: Path | None = None, extra_filter_dirs: Iterable[Path] = ()) -> Pipeline:
    prompts = prompts_dir or default_prompts_dir()
    rules = RuleEngine.from_dirs(extra_filter_dirs, packaged=[prompts / "filters"])
    return Pipeline(
        [
            ThinkingBlockCleaner(),
            MediaFilter(),
            FilterProcessor(rules, prompts),
            AnsweredOutputTrim(),
            ReasoningTrim(),
            CacheTTLPrune(),
            PreCompact(),
            HeadAnchor(),
            PriorityCompressor(),
            SessionNotes(),
            Summarize(prompts),
            PostCompactionReread(),
            FitToBudget(),
            Normalize(),
            PinnedContext(),
            MediaResolve(),
            PromptCacheOptimize(),
        ]
    )
