"""Pre-Compact: decide the threshold level and whether this request compacts; back up first.

Levels follow ``ContextConfig`` (40/50/70/90%). A compaction is skipped when it would only break a
warm cache while the budget still allows (hot-cache bypass, below ``warm_compact_threshold``) or while backing
off after low-yield compactions (anti-thrashing). The 90% safety net always compacts, and so does a
provider's context-overflow answer (``ctx.hard_limit``, at the emergency level). Before a
compaction the current base view is archived in the vault and the state is backed up, so a failed
compaction can be rolled back.
"""

from __future__ import annotations

import json

from myrm_tui.context.processor import Level, PipelineContext
from myrm_tui.context.state import message_to_dict
from myrm_tui.context.types import Message


def level_for(tokens: int, ctx: PipelineContext) -> Level:
    c = ctx.config
    if tokens >= c.summarize_trigger_threshold:
        return Level.EMERGENCY
    if tokens >= c.compress_force_threshold:
        return Level.FULL
    if tokens >= c.compress_threshold:
        return Level.LIGHT
    if tokens >= c.monitor_threshold:
        return Level.MONITOR
    return Level.NONE


class PreCompact:
    name = "pre_compact"

    async def process(self, view: list[Message], ctx: PipelineContext) -> list[Message]:
        tokens = ctx.tokens(view)
        ctx.level = level_for(tokens, ctx)
        state = ctx.state
        if ctx.hard_limit is not None:
            ctx.level = Level.EMERGENCY  # stage 1 shrinks even active outputs and the tail
            ctx.compacting, reason = True, "context overflow (provider)"
        elif ctx.force_compaction:
            ctx.compacting, reason = True, "forced"
        elif ctx.level >= Level.EMERGENCY:
            ctx.compacting, reason = True, "emergency (90% safety net)"
        elif ctx.level < Level.LIGHT:
            return view
        elif state.backoff_level and ctx.level < Level[state.backoff_level]:
            ctx.metrics.events.append(f"anti-thrashing: waiting for {state.backoff_level}")
            return view
        elif ctx.cache_warm and tokens < ctx.config.warm_compact_threshold:
            ctx.metrics.events.append("hot-cache bypass: warm cache, budget still allows")
            return view
        else:
            ctx.compacting, reason = True, f"threshold {ctx.level.name}"
        ctx.metrics.compacted = True
        ctx.metrics.compaction_reason = reason
        ctx.backup = state.to_json()
        if state.base:
            ctx.archive_uri = ctx.vault.put(
                json.dumps([message_to_dict(m) for m in state.base], ensure_ascii=False),
                "archive",
                reason="pre_compact",
            )
        return view
