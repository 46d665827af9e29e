"""``PreCompact``: the levels, the planned point, hot-cache bypass and anti-thrashing."""

from __future__ import annotations

from dataclasses import replace

import pytest

from myrm_tui.context.config import ContextConfig
from myrm_tui.context.state import ContextState
from myrm_tui.context.step import Level
from myrm_tui.context.steps.precompact import PreCompact
from myrm_tui.context.types import Message
from tests.helpers import COUNTER, conversation, run_pipeline, run_step, view_for


@pytest.mark.parametrize(
    ("ratio", "level"),
    [
        (0.2, Level.NONE),
        (0.45, Level.MONITOR),
        (0.55, Level.LIGHT),
        (0.75, Level.FULL),
        (0.95, Level.EMERGENCY),
    ],
)
async def test_levels_follow_the_thresholds(ratio: float, level: Level) -> None:
    """The levels are shares of the input budget (the window less the reply reserve), not of the window."""
    budget = ContextConfig(max_context_tokens=10_000).input_budget
    raw = [Message(role="user", content="w " * int(budget * ratio), id="u")]
    result = await run_step(PreCompact(), view_for(raw), window=10_000)
    assert result.plan.level == level


async def test_hot_cache_bypass_skips_light_compaction_but_not_emergency() -> None:
    light = [Message(role="user", content="w " * 5_500, id="u")]
    result = await run_step(PreCompact(), view_for(light, cache_warm=True), window=10_000)
    assert result.plan.level == Level.LIGHT and not result.plan.compacting
    assert any("hot-cache bypass" in e for e in result.trace.events)
    heavy = [Message(role="user", content="w " * 9_500, id="u2")]
    result = await run_step(PreCompact(), view_for(heavy, cache_warm=True), window=10_000)
    assert result.plan.compacting and result.plan.backup is not None


def test_a_landing_within_a_round_of_the_point_plans_against_the_usual_round() -> None:
    """When the room a compaction left holds fewer than two of the largest recent rounds, the warm-cache
    point is one usual round (the third quartile, times its margin) under the budget, not 87.5 % of it:
    a usual round from below that point cannot reach the net."""
    from myrm_tui.context.step import settings_for
    from myrm_tui.context.steps.precompact import PreCompactSettings, band_for, usual_round

    s = settings_for(PreCompactSettings, ContextConfig(max_context_tokens=4_000))
    growth = [300, 320, 340, 360, 380, 400, 420, 1_000]  # one large round among usual ones
    usual = usual_round(growth, s.growth_rounds, s.usual_round_quantile, s.usual_round_margin)
    assert usual == int(420 * s.usual_round_margin)
    roomy = band_for(s, growth, landed=0)
    assert roomy.planned and roomy.warm == s.fit_budget - roomy.predicted
    tight = band_for(s, growth, landed=s.fit_budget // 2)
    assert not tight.planned and tight.warm == s.fit_budget - usual < s.warm_compact_threshold
    assert tight.warm >= tight.full  # never under the full level
    assert usual_round([], 16, 0.75, 1.1) == 0 and usual_round([5], 0, 0.75, 1.1) == 0


async def test_a_planned_compaction_past_90_percent_goes_to_the_full_depth_and_the_net_to_emergency() -> None:
    """Past 90 % of the budget a view that still fits is compacted as planned (record: threshold), at the
    full level's depth; the same view with auto-compaction off is the emergency net's, at its depth; a
    view over the budget is the net's too."""
    from myrm_tui.context.compaction.record import trigger_for

    config = ContextConfig(max_context_tokens=10_000)
    raw = [Message(role="system", content="s", id="s"), Message(role="user", content="task", id="u0")]
    for k in range(8):  # earlier rounds a compaction can fold, the newest one small
        raw.append(Message(role="assistant", content="x " * int(config.input_budget * 0.118), id=f"a{k}"))
        raw.append(Message(role="user", content=f"go on {k}", id=f"u{k + 1}"))
    assert 0.9 < COUNTER.messages(raw) / config.input_budget < 1
    planned = (await run_step(PreCompact(), view_for(raw, cache_warm=True), config=config)).plan
    assert planned.compacting and planned.planned and planned.level == Level.EMERGENCY
    assert planned.depth == Level.FULL and trigger_for(planned.reason, planned.level.name, "") == "threshold"
    off = replace(config, auto_compact=False)
    net = (await run_step(PreCompact(), view_for(raw, cache_warm=True), config=off)).plan
    assert net.compacting and not net.planned and net.depth == Level.EMERGENCY
    assert net.reason.startswith("emergency") and trigger_for(net.reason, net.level.name, "") == "emergency"
    over = [*raw, Message(role="user", content="w " * int(config.input_budget * 0.1), id="u9")]
    plan = (await run_step(PreCompact(), view_for(over, cache_warm=True), config=config)).plan
    assert plan.reason.startswith("over budget") and not plan.planned and plan.depth == Level.EMERGENCY


async def test_a_planned_compaction_that_could_fold_almost_nothing_is_skipped_until_the_net() -> None:
    """A view that is nearly all its protected head and newest message (a long paste in a small window):
    compacting could fold a few tokens while its summary block adds more, so it is sent as it is while it
    fits; once it does not, the net compacts it all the same."""
    config = ContextConfig(max_context_tokens=10_000)
    budget = config.input_budget
    raw = [
        Message(role="system", content="s", id="s"),
        Message(role="user", content="hi", id="u0"),
        Message(role="assistant", content="Hello.", id="a0"),
        Message(role="user", content="w " * int(budget * 0.95), id="u1"),
    ]
    result = await run_step(PreCompact(), view_for(raw, cache_warm=True), config=config)
    assert not result.plan.compacting and result.plan.level == Level.EMERGENCY
    assert any("planned compaction skipped" in e for e in result.trace.events)
    raw[-1] = Message(role="user", content="w " * int(budget * 1.05), id="u1")
    result = await run_step(PreCompact(), view_for(raw, cache_warm=True), config=config)
    assert result.plan.compacting and result.plan.reason.startswith("over budget")


async def test_anti_thrashing_backs_off_after_low_yield_compactions() -> None:
    state = ContextState()
    # A history a light compaction cannot shrink: real user messages (never truncated), the first one
    # under the head limit (so not cut), over the light threshold and under the landing level together
    # (so the fit step has nothing to do either).
    raw = [
        Message(role="system", content="s", id="s"),
        Message(role="user", content="w " * 3_200, id="u"),
        Message(role="assistant", content="ok", id="a1"),
        Message(role="user", content="v " * 1_000, id="u2"),
        Message(role="assistant", content="ok", id="a2"),
        Message(role="user", content="x " * 1_000, id="u3"),
    ]
    for k in range(2):  # requests ten minutes apart: the cache is cold, so no hot-cache bypass
        await run_pipeline(raw, window=10_000, state=state, now=1_000.0 + 600 * k)
    assert state.low_yield_streak >= 2 and state.backoff_level == "FULL"
    _view, ctx = await run_pipeline(raw, window=10_000, state=state, now=3_000.0)
    assert not ctx.compacting and any("anti-thrashing" in e for e in ctx.metrics.events)


async def test_a_view_over_the_budget_compacts_even_while_backing_off() -> None:
    # A net set at the budget's very edge leaves a band over the budget and under the net.
    config = replace(ContextConfig(max_context_tokens=10_000, emergency_ratio=0.999), overhead_tokens=800)
    state = ContextState(backoff_level="EMERGENCY")  # anti-thrashing: wait for the 90% net
    raw = conversation(2, output_chars=400)
    while COUNTER.messages(raw) <= config.fit_budget:  # grow into the band between the two
        raw.append(Message(role="user", content="more", id=f"x{len(raw)}"))
        raw.append(Message(role="assistant", content="ok", id=f"y{len(raw)}"))
    tokens = COUNTER.messages(raw)
    assert config.fit_budget < tokens < config.summarize_trigger_threshold  # over budget, under the net
    result = await run_step(PreCompact(), view_for(raw, state, cache_warm=True), config=config)
    assert result.plan.compacting and result.plan.reason.startswith("over budget")
