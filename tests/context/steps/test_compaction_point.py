"""When a planned compaction comes (issue 46.3): as late as the budget guarantee allows — one predicted round
under the input budget, at most ``warm_compact_ratio`` of it, past the 90 % level when the rounds are small
— so that compactions per request fall; the emergency net stays for a round larger than predicted."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from myrm_tui.context.config import ContextConfig
from myrm_tui.context.state import ContextState
from myrm_tui.context.step import settings_for
from myrm_tui.context.steps.precompact import PreCompactSettings, band_for, predicted_round, usual_round
from myrm_tui.context.types import Message
from myrm_tui.context.vault import ArtifactVault
from tests.helpers import call, run_pipeline


def test_small_rounds_put_the_point_past_the_90_percent_level() -> None:
    s = settings_for(PreCompactSettings, ContextConfig(max_context_tokens=128_000))
    band = band_for(s, [400, 600, 500])
    assert band.planned
    assert band.warm == min(s.warm_compact_threshold, s.fit_budget - band.predicted)
    assert band.warm > s.summarize_trigger_threshold  # not held at the net's level: it compacts later


@given(
    st.sampled_from([4_000, 8_000, 16_000, 32_000, 64_000, 128_000]),
    st.lists(st.integers(0, 20_000), max_size=20),
    st.integers(0, 100_000),
)
def test_the_point_is_the_latest_the_guarantee_allows(window: int, growth: list[int], landed: int) -> None:
    s = settings_for(PreCompactSettings, ContextConfig(max_context_tokens=window))
    landed = min(landed, s.fit_budget)
    band = band_for(s, growth, landed)
    p = predicted_round(growth, s.growth_rounds, s.growth_margin)
    assert band.predicted == p
    assert band.full <= band.warm <= max(s.warm_compact_threshold, band.full)
    # Never under half a usual round over where the last compaction landed (within the warm-cache cap): at
    # the landing the point would come at every request, however small its rounds (4K with a pin).
    usual = usual_round(growth, s.growth_rounds, s.usual_round_quantile, s.usual_round_margin)
    assert band.warm >= min(landed + usual // 2, s.warm_compact_threshold, s.fit_budget)
    if band.planned:
        # A round no larger than predicted cannot carry the view from below the point over the budget...
        assert band.warm + p <= s.fit_budget
        # ...and the point is no earlier than that guarantee and the warm-cache cap ask.
        assert band.warm == min(s.warm_compact_threshold, s.fit_budget - p)


def session(rounds: int, output_chars: int) -> list[Message]:
    msgs = [
        Message(role="system", content="You are a coding agent.", id="s"),
        Message(role="user", content="Look through the files.", id="u"),
    ]
    for i in range(rounds):
        calls = (call(f"c{i}", f"cat f{i}"),)
        msgs.append(Message(role="assistant", content="", id=f"a{i}", tool_calls=calls))
        body = "\n".join(f"f{i} row {k}: v{i}_{k}" for k in range(output_chars // 16))
        msgs.append(Message(role="tool", content=body, id=f"t{i}", tool_call_id=f"c{i}", name="bash"))
    return msgs


async def test_a_session_of_small_rounds_compacts_past_90_percent_and_never_over_the_budget() -> None:
    config = ContextConfig(max_context_tokens=16_000)
    raw = session(70, 800)
    state, vault = ContextState(), ArtifactVault("t")
    fired: list[int] = []
    for end in range(4, len(raw) + 1, 2):  # a warm cache: a request every 20 s
        _, run = await run_pipeline(raw[:end], state=state, config=config, now=20.0 * end, vault=vault)
        assert run.metrics.tokens_out <= config.input_budget
        if run.metrics.compacted:
            assert run.metrics.compaction_reason.startswith("threshold")  # planned, not the net
            fired.append(run.metrics.tokens_planned or run.metrics.tokens_in)
    assert fired, "the session must compact for the test to mean anything"
    assert all(t > config.summarize_trigger_threshold for t in fired)
