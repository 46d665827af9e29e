"""Pre-Compact: decide the threshold level and whether this request compacts; back up first.

Levels follow ``ContextConfig`` (40/50/70/90 % of the input budget). The planned (threshold) compaction
comes as late as the budget guarantee allows: one predicted round (the largest growth of the session's
recent requests, times a margin) under the budget, so that round cannot carry the view over it. With a
warm cache that is the point (at most ``warm_compact_ratio`` of the budget); with a cold one the full level,
where the rewrite is free, when lower (never under the light level, and not at all when the last
compaction landed within a round of that point: compacting then would not last; the warm-cache point is
then one usual round under the budget instead). Fewer compactions fold fewer Records into each other
(the model: ``README.md``, "When a compaction comes"). A planned
compaction compacts at the full level's depth, and only when it can fold at least 5 % of the budget (else
its summary block may outweigh what it folds). A compaction is
skipped when it would only break a warm cache while the budget still allows (hot-cache bypass, below that
warm-cache point) or while backing off after low-yield compactions (anti-thrashing). The emergency net
always compacts, at the emergency depth: a view over the input budget (a round larger than predicted), a
provider's context-overflow answer (``Request.hard_limit``), and the 90 % level reached while
auto-compaction was off or backing off; its reason names the net and the round that missed the band.
Before a compaction the current base view is archived in the vault and the state is backed up, so a
failed compaction can be rolled back.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from myrm_tui.context.config import ContextConfig
from myrm_tui.context.invariants import group_spans
from myrm_tui.context.state import ContextState
from myrm_tui.context.step import CompactionPlan, Configured, Level, Planned, Trace, View, settings_for
from myrm_tui.context.steps.fit import pinned_tokens


@dataclass(frozen=True, slots=True)
class PreCompactSettings:
    monitor_threshold: int
    compress_threshold: int
    compress_force_threshold: int
    summarize_trigger_threshold: int
    warm_compact_threshold: int
    fit_budget: int
    input_budget: int
    head_limit_tokens: int  # a compaction cuts a protected head over this (HeadAnchor) ...
    anchor_tokens: int  # ... down to this share of its first message
    growth_rounds: int = 16
    growth_margin: float = 1.25
    usual_round_quantile: float = 0.75
    usual_round_margin: float = 1.1
    auto_compact: bool = True


@dataclass(frozen=True, slots=True)
class Band:
    """Where this session compacts, given its predicted next round."""

    full: int  # the full level (planned compaction with a cold cache)
    warm: int  # with a warm cache, compact from here (the hot-cache bypass holds below)
    predicted: int  # the next round's growth, as predicted
    # The point is a predicted round under the net: a round no larger than predicted cannot reach the net
    # (False when the light-level floor or a landing within a round of the point put it elsewhere).
    planned: bool = True


def predicted_round(growth: Sequence[int], rounds: int, margin: float = 1.0) -> int:
    """The next request's growth: the largest of the last ``rounds`` (a tool step that dumped a file once
    will again; an average would let it jump the band), times ``margin`` (the next one may be a little
    larger than any seen)."""
    return int(max(growth[-rounds:], default=0) * margin) if rounds > 0 else 0


def usual_round(growth: Sequence[int], rounds: int, quantile: float, margin: float) -> int:
    """A round as large as most recent ones: the ``quantile`` of the last ``rounds`` growths, times
    ``margin``."""
    recent = sorted(growth[-rounds:]) if rounds > 0 else []
    if not recent:
        return 0
    return int(recent[min(len(recent) - 1, int(len(recent) * quantile))] * margin)


def band_for(s: PreCompactSettings, growth: Sequence[int], landed: int = 0) -> Band:
    """The planned point is one predicted round under the input budget (past the 90 % level too, when the
    rounds are small): a round no larger than predicted cannot carry the view from below it to over the
    budget (the point a compaction stops being a choice). ``landed``: where the last compaction left the
    view. When the next round after such a landing would already pass the point (a small window: the room
    a compaction leaves is under two of the largest rounds), compacting there would come at every request:
    the plain levels stand, and the warm-cache point is one usual round under the budget, so the net is
    left the rounds larger than most (the hot-cache bypass up to ``warm_compact_ratio`` let any round past
    it reach the net) — but never under half a usual round over the landing (``landed`` counts the pinned
    items), else a landing at the full level compacts again at the next request, however small."""
    p = predicted_round(growth, s.growth_rounds, s.growth_margin)
    point = s.fit_budget - p
    before_budget = max(point, s.compress_threshold)
    planned = before_budget == point
    tight = landed + p >= before_budget
    if tight:
        before_budget, planned = s.fit_budget, False
    full = min(s.compress_force_threshold, before_budget)
    warm = min(s.warm_compact_threshold, before_budget)
    if tight:
        usual = usual_round(growth, s.growth_rounds, s.usual_round_quantile, s.usual_round_margin)
        # Never under half a usual round over the landing: a point the view lands at (the full level is the
        # landing level) compacts at every request, however small the rounds (4K, pinned items); a point a
        # whole usual round over it sends a usual round past the budget to the emergency net (swe-dev 4K:
        # 88 % of automatic compactions planned, under the replay test's nine in ten). Half splits the room.
        # guard: a-tight-point-half-a-usual-round-over-the-landing
        warm = max(min(warm, s.fit_budget - usual), min(warm, landed + usual // 2))
    return Band(full, max(full, warm), p, planned)


def landed_tokens(state: ContextState) -> int:
    """Where the last compaction left the view with the pinned items, as Pre-Compact weighs it (0 before
    the first)."""
    return int(state.last_compaction.get("landed") or state.last_compaction.get("tokens_after") or 0)


def prepare_from(config: ContextConfig, growth: Sequence[int], landed: int = 0) -> int:
    """Where a background LLM summary starts being written: one predicted round before this session's
    planned compaction point (never before the monitor level). Earlier, a session that ends first pays
    for a summary it never adopts; later, the compaction comes before the summary is ready."""
    s = settings_for(PreCompactSettings, config)
    band = band_for(s, growth, landed)
    return max(s.monitor_threshold, band.full - band.predicted)


def foldable_tokens(v: View) -> int:
    """What a compaction could fold: the view less its protected head, the earlier summary blocks (kept
    byte-identical) and the newest round (always kept)."""
    msgs, head = v.messages, len(v.request.protected_head)
    spans = group_spans(msgs)
    newest = spans[-1][0] if spans else len(msgs)
    return sum(v.request.counter.message(m) for m in msgs[head:newest] if m.meta.get("kind") != "summary")


def anchor_room(v: View, s: PreCompactSettings) -> int:
    """What a compaction's head cut would free: a protected head over its limit has its first message
    cut to its share (HeadAnchor), which folding alone never reaches."""
    head = v.request.counter.messages(v.messages[: len(v.request.protected_head)])
    # guard: a-planned-compaction-counts-the-head-cut
    return max(0, head - s.anchor_tokens) if head > s.head_limit_tokens else 0


def compacts_next(tokens: int, s: PreCompactSettings, state: ContextState, sure: float = 1.0) -> bool:
    """Whether the request after one of ``tokens`` compacts with a round no smaller than a share ``sure`` of
    the recent rounds were (1.0: the smallest of them): the view plus that round reaches the planned point
    as the next request draws it (that round taken into its band), auto-compaction on and no back-off."""
    growth = sorted(state.round_growth[-s.growth_rounds :])
    if not s.auto_compact or state.backoff_level or not growth:
        return False
    low = growth[min(len(growth) - 1, int(len(growth) * (1.0 - sure)))]
    band = band_for(s, [*state.round_growth[-s.growth_rounds :], low], landed_tokens(state))
    return tokens + low >= max(band.warm, s.compress_threshold)


def level_for(tokens: int, s: PreCompactSettings, full: int | None = None) -> Level:
    if tokens >= s.summarize_trigger_threshold:
        return Level.EMERGENCY
    if tokens >= (s.compress_force_threshold if full is None else full):
        return Level.FULL
    if tokens >= s.compress_threshold:
        return Level.LIGHT
    if tokens >= s.monitor_threshold:
        return Level.MONITOR
    return Level.NONE


class PreCompact(Configured[PreCompactSettings]):
    name = "pre_compact"
    Settings = PreCompactSettings

    async def run(self, v: View, s: PreCompactSettings) -> Planned:
        req, state = v.request, v.request.state
        seen = v.tokens()
        # The pinned items join after the fit step: they are sent with every request, so they count here.
        tokens = seen + pinned_tokens(state.pinned, s.input_budget, req.counter)
        band = band_for(s, state.round_growth, landed_tokens(state))
        level = level_for(tokens, s, band.full)
        trace = Trace()
        missed = f"; predicted round {band.predicted:,}, compaction point {band.warm:,}"
        planned = False
        if req.hard_limit is not None:
            # guard: l4-stage-1-emergency-level
            level = Level.EMERGENCY  # stage 1 shrinks even active outputs and the tail
            reason = "context overflow (provider)"
        elif req.force_compaction:
            reason = "forced"
        # guard: pre-compact-a-view-over-the-budget
        elif tokens > s.fit_budget:
            # never skipped: neither back-off nor a warm cache may send it as is
            reason = f"over budget{missed}"
        elif level < Level.LIGHT:
            return Planned(plan=CompactionPlan(level, seen_tokens=seen))
        elif level >= Level.EMERGENCY and (not s.auto_compact or state.backoff_level):
            # the 90 % safety net: what auto-compaction off or a back-off let through is caught here
            reason = f"emergency (90% safety net){missed}"
        elif not s.auto_compact:
            trace.event(f"auto-compaction off: {level.name} reached, not compacting")
            return Planned(plan=CompactionPlan(level, seen_tokens=seen), trace=trace)
        elif state.backoff_level and level < Level[state.backoff_level]:
            trace.event(f"anti-thrashing: waiting for {state.backoff_level}")
            return Planned(plan=CompactionPlan(level, seen_tokens=seen), trace=trace)
        elif req.cache_warm and tokens < band.warm:
            trace.event("hot-cache bypass: warm cache, budget still allows")
            return Planned(plan=CompactionPlan(level, seen_tokens=seen), trace=trace)
        # guard: a-planned-compaction-that-could-fold
        elif (room := foldable_tokens(v) + anchor_room(v, s)) < s.input_budget // 20:
            # Folding next to nothing frees nothing that lasts (the summary block may even outweigh it):
            # a view this full of what must stay is sent as it is while it fits; the net takes it after.
            trace.event(f"planned compaction skipped: only {room:,} tokens could be folded")
            return Planned(plan=CompactionPlan(level, seen_tokens=seen), trace=trace)
        else:
            # Planned: the view still fits, and the round that brought it here was within the band. Its
            # depth is the full level's even past 90 %: it need not land as low as the net would.
            planned = True
            reason = f"threshold {min(level, Level.FULL).name}"
        archive = None
        if state.base:
            archive = req.vault.put(state.base_json(), "archive", reason="pre_compact")
        # The checkpoint holds the state as the Transaction would leave it without this compaction.
        backup = replace(state, decisions={**state.decisions, **v.decisions}).to_json()
        plan = CompactionPlan(
            level, True, reason, backup=backup, archive_uri=archive, seen_tokens=seen, planned=planned
        )
        return Planned(plan=plan, trace=trace)
