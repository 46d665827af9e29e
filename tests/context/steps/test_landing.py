"""Where a compaction lands (issue 46.3, the context README's "Where a compaction lands"): with
``landing_payback`` on, the raw tail a deep, planned compaction keeps is the largest whose landing pays for
itself (the cache reads it saves before the next compaction cover its uncached re-send), never under
``tail_budget``, under the landing level and with two predicted rounds of room before the next point. Off
(the default, as measured), the tail is ``tail_budget``."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from myrm_tui.context.config import ContextConfig
from myrm_tui.context.state import ContextState
from myrm_tui.context.steps.answered import READ, WRITE
from myrm_tui.context.steps.compress import landing_tail
from myrm_tui.context.tokens import TokenCounter
from myrm_tui.context.vault import ArtifactVault
from tests.helpers import conversation, run_pipeline


def test_small_rounds_beside_a_large_room_keep_more_than_the_floor() -> None:
    # 32K, rounds of ~1K: the room a landing leaves holds ~18 of them, so a larger tail still pays.
    tail = landing_tail(
        floor=2_484,
        point=25_600,
        head=2_000,
        summary=6_400,
        round_mean=1_000,
        predicted=3_000,
        landing=18_874,
    )
    assert 2_484 < tail <= 18_874 - 2_000 - 6_400


def test_where_the_room_is_a_few_rounds_the_floor_stands() -> None:
    # swe-dev 16K as measured (head 0.19 B, rounds 0.031 B): a larger tail would not pay for its re-send.
    tail = landing_tail(
        floor=1_204, point=9_600, head=2_100, summary=3_200, round_mean=343, predicted=1_000, landing=7_741
    )
    assert tail == 1_204


@given(
    floor=st.integers(0, 10_000),
    point=st.integers(0, 120_000),
    head=st.integers(0, 40_000),
    summary=st.integers(0, 30_000),
    round_mean=st.floats(0, 20_000, allow_nan=False),
    predicted=st.integers(0, 25_000),
    landing=st.integers(0, 100_000),
)
def test_the_tail_is_bounded_and_its_landing_pays_for_itself(
    floor: int, point: int, head: int, summary: int, round_mean: float, predicted: int, landing: int
) -> None:
    tail = landing_tail(
        floor=floor,
        point=point,
        head=head,
        summary=summary,
        round_mean=round_mean,
        predicted=predicted,
        landing=landing,
    )
    assert tail >= floor
    if tail > floor:  # a tail past the floor is the rule's: within its bounds, and it pays
        room = point - head - summary - tail  # what the next rounds grow into
        assert head + summary + tail <= landing  # the view lands under the landing level
        assert room >= 2 * predicted  # two predicted rounds fit before the next compaction
        # The re-send (write price) is covered by the reads saved until the next compaction.
        assert WRITE * (summary + tail) * round_mean <= READ * room * room * 1.0001 + 1


def raw_after_head(view: list, counter: TokenCounter) -> int:
    """Tokens of the recorded messages a view carries after the protected head (no summary, no stand-ins)."""
    return sum(counter.message(m) for m in view[2:] if not m.synthetic and m.meta.get("kind") != "summary")


async def compaction_tails(config: ContextConfig) -> list[int]:
    """The raw tokens after the head each compaction of a steady 32K session leaves (a warm cache: a request
    every 20 s); every request within the budget, every compaction planned and under the landing level."""
    raw = conversation(120, output_chars=1_600)
    state, vault, counter = ContextState(), ArtifactVault("t"), TokenCounter()
    tails: list[int] = []
    for end in range(4, len(raw) + 1, 2):
        view, run = await run_pipeline(raw[:end], state=state, config=config, now=20.0 * end, vault=vault)
        assert run.metrics.tokens_out <= config.input_budget
        if run.metrics.compacted:
            assert run.metrics.compaction_reason.startswith("threshold")  # planned, not the net
            assert run.metrics.tokens_out <= config.landing_tokens
            tails.append(raw_after_head(view, counter))
    assert tails, "the session must compact for the test to mean anything"
    return tails


async def test_with_the_rule_on_a_planned_compaction_keeps_a_larger_raw_tail_under_the_landing_level() -> (
    None
):
    on = await compaction_tails(ContextConfig(max_context_tokens=32_000, landing_payback=True))
    off = await compaction_tails(ContextConfig(max_context_tokens=32_000))
    assert all(t > ContextConfig(max_context_tokens=32_000).tail_budget for t in on)
    assert on[0] > off[0]  # the same first compaction lands with more of the newest rounds raw
