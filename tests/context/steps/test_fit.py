"""``FitToBudget``: a compaction is cut to its landing level."""

from __future__ import annotations

from myrm_tui.context.config import ContextConfig
from myrm_tui.context.invariants import check_view
from myrm_tui.context.step import CompactionPlan, Level
from tests.helpers import COUNTER, conversation, run_step, view_for


async def test_a_compaction_is_fitted_under_the_landing_level_not_just_under_the_budget() -> None:
    """A compacting view that fits the budget but is over the landing level (older outputs the earlier
    steps left whole) is cut to the landing level: one that stayed just under the budget would need
    another compaction at the next round. The same view when not compacting is sent as it is."""
    from myrm_tui.context.steps.fit import FitToBudget

    config = ContextConfig(max_context_tokens=16_000)
    raw = conversation(turns=6, output_chars=5_000)
    tokens = COUNTER.messages(raw)
    assert config.landing_tokens < tokens <= config.fit_budget, (config.landing_tokens, tokens)
    compacting = CompactionPlan(Level.FULL, True, "threshold FULL")
    fitted = await run_step(FitToBudget(), view_for(raw, plan=compacting), config=config)
    assert COUNTER.messages(fitted.messages) <= config.landing_tokens
    assert check_view(fitted.messages, raw) == []
    untouched = await run_step(FitToBudget(), view_for(raw), config=config)
    assert untouched.messages == raw and untouched.plan is None
