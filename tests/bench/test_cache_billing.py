"""The bench's cache billing: the explicit (Anthropic) cache of the simulator reads a prefix only where an
earlier request marked it, near one of its own marks; a strategy that names its marks (myrm) is billed by
them, the plain input price after the last one."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from myrm_tui.bench.corpus import Conversation
from myrm_tui.bench.runner import LOOKBACK, Prices, StrategyResult, replay
from myrm_tui.bench.strategies import NoneStrategy
from myrm_tui.context.tokens import TokenCounter
from myrm_tui.context.types import Message
from myrm_tui.testing.prefix_cache import PrefixCacheSimulator

PRICES = Prices("test", input=1.0, cache_read=0.1, cache_write=1.25)


def test_an_explicit_cache_reads_a_written_prefix_only_within_reach_of_a_mark() -> None:
    segs = [(f"s{i}", 100) for i in range(40)]
    near = PrefixCacheSimulator("explicit", min_tokens=100, lookback=LOOKBACK)
    near.request("k", segs[:10], [9])
    # the written prefix ends 20 segments before the new request's mark: found
    assert near.request("k", segs[:30], [29]).cached_tokens == 1000

    def written_to_10() -> PrefixCacheSimulator:
        sim = PrefixCacheSimulator("explicit", min_tokens=100, lookback=LOOKBACK)
        sim.request("k", segs[:10], [9])
        return sim

    # 21 segments: out of reach, unless another mark of the request is near it
    assert written_to_10().request("k", segs[:31], [30]).cached_tokens == 0
    assert written_to_10().request("k", segs[:31], [12, 30]).cached_tokens == 1000
    r = written_to_10().request("k", segs[:35], [20])
    assert (r.cached_tokens, r.cache_write_tokens) == (1000, 1100)  # written to its mark; the rest is input


@given(st.lists(st.integers(1, LOOKBACK), min_size=1, max_size=12), st.integers(0, 2**16))
def test_an_append_only_session_marking_each_request_s_end_is_billed_as_the_automatic_cache(
    steps: list[int], seed: int
) -> None:
    """Every request extends the last and marks its end: the explicit cache reads and writes what the
    automatic one does (the bench's billing of a strategy that names no marks)."""
    auto = PrefixCacheSimulator("automatic", min_tokens=300)
    marked = PrefixCacheSimulator("explicit", min_tokens=300, lookback=LOOKBACK)
    segs: list[tuple[str, int]] = []
    for k, n in enumerate(steps):
        segs += [(f"m{k}.{j}", 40 + (seed >> (j % 16)) % 200) for j in range(n)]
        a, e = auto.request("c", segs), marked.request("c", segs, [len(segs) - 1])
        assert a.cached_tokens == e.cached_tokens
        assert e.cache_write_tokens == e.uncached_tokens or sum(t for _, t in segs) < 300


class _MarksFirst(NoneStrategy):
    """A strategy that marks only its first message (the system prompt)."""

    breakpoints = [0]


async def test_a_marking_strategy_pays_the_input_price_after_its_last_mark() -> None:
    counter = TokenCounter()
    msgs = [
        Message(role="system", content="Rules of the house. " * 300, id="s"),
        Message(role="user", content="Fix alpha.py.", id="u"),
        Message(role="assistant", content="Looking.", id="a1"),
        Message(role="user", content="And beta.py.", id="u2"),
        Message(role="assistant", content="Done.", id="a2"),
    ]
    conv = Conversation("c", msgs, [])
    result = StrategyResult("marks")
    await replay(conv, _MarksFirst(), result, 100_000, counter, PRICES)
    system = counter.message(msgs[0])
    rest1 = sum(counter.message(m) for m in msgs[1:2])
    rest2 = sum(counter.message(m) for m in msgs[1:4])
    # request 1 writes the system prompt (its mark) and sends the user message as plain input; request 2
    # reads the system prompt and sends the rest as plain input
    assert result.cost_usd == pytest.approx(system * 1.25 + rest1 * 1.0 + system * 0.1 + rest2 * 1.0)
    assert result.unwritten_input_tokens == rest1 + rest2
    assert result.as_json()["cost_uncached_usd"] == round(system * 1.25 + rest1 + rest2, 4)
    plain = StrategyResult("none")
    await replay(conv, NoneStrategy(), plain, 100_000, counter, PRICES)
    assert plain.unwritten_input_tokens == 0  # no marks named: every uncached token is written
