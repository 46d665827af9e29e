"""Pre-Compact: decide the threshold level and whether this request compacts; back up first.

Levels follow ``ContextConfig`` (40/50/70/90%). A compaction is skipped when it would only break a
warm cache while the budget still allows (hot-cache bypass, below ``warm_compact_threshold``) or while backing
off after low-yield compactions (anti-thrashing). The 90% safety net always compacts, and so do a
view over the input budget and a provider's context-overflow answer (``Request.hard_limit``, at the
emergency level). Before a compaction the current base view is archived in the vault and the state is
backed up, so a failed compaction can be rolled back.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace

from myrm_tui.context.state import message_to_dict
from myrm_tui.context.step import CompactionPlan, Configured, Level, Planned, Trace, View


@dataclass(frozen=True, slots=True)
class PreCompactSettings:
    monitor_threshold: int
    compress_threshold: int
    compress_force_threshold: int
    summarize_trigger_threshold: int
    warm_compact_threshold: int
    fit_budget: int
    auto_compact: bool = True


def level_for(tokens: int, s: PreCompactSettings) -> Level:
    if tokens >= s.summarize_trigger_threshold:
        return Level.EMERGENCY
    if tokens >= s.compress_force_threshold:
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
        tokens = v.tokens()
        level = level_for(tokens, s)
        trace = Trace()
        if req.hard_limit is not None:
            level = Level.EMERGENCY  # stage 1 shrinks even active outputs and the tail
            reason = "context overflow (provider)"
        elif req.force_compaction:
            reason = "forced"
        elif level >= Level.EMERGENCY:
            reason = "emergency (90% safety net)"
        elif tokens > s.fit_budget:
            reason = "over budget"  # never skipped: neither back-off nor a warm cache may send it as is
        elif level < Level.LIGHT:
            return Planned(plan=CompactionPlan(level))
        elif not s.auto_compact:
            trace.event(f"auto-compaction off: {level.name} reached, not compacting")
            return Planned(plan=CompactionPlan(level), trace=trace)
        elif state.backoff_level and level < Level[state.backoff_level]:
            trace.event(f"anti-thrashing: waiting for {state.backoff_level}")
            return Planned(plan=CompactionPlan(level), trace=trace)
        elif req.cache_warm and tokens < s.warm_compact_threshold:
            trace.event("hot-cache bypass: warm cache, budget still allows")
            return Planned(plan=CompactionPlan(level), trace=trace)
        else:
            reason = f"threshold {level.name}"
        archive = None
        if state.base:
            archive = req.vault.put(
                json.dumps([message_to_dict(m) for m in state.base], ensure_ascii=False),
                "archive",
                reason="pre_compact",
            )
        # The checkpoint holds the state as the Transaction would leave it without this compaction.
        backup = replace(state, decisions={**state.decisions, **v.decisions}).to_json()
        plan = CompactionPlan(level, True, reason, backup=backup, archive_uri=archive)
        return Planned(plan=plan, trace=trace)
