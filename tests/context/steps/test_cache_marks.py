"""Where myrm puts its cache marks: on the protected head and the summary blocks a compaction keeps (so the
compacting request reads them), and, at the end, before what the next request will not send again (an
output the answered trim will cut; the new messages when the next request compacts). Billed by the bench's
explicit cache as Anthropic bills them."""

from __future__ import annotations

import itertools
import json

from myrm_tui.bench.corpus import Conversation
from myrm_tui.bench.runner import LOOKBACK, _segments
from myrm_tui.bench.strategies import MyrmStrategy
from myrm_tui.context.config import ContextConfig
from myrm_tui.context.state import ContextState
from myrm_tui.context.step import settings_for
from myrm_tui.context.steps.cache_optimize import plan_breakpoints
from myrm_tui.context.steps.precompact import PreCompactSettings, band_for, compacts_next
from myrm_tui.context.tokens import TokenCounter
from myrm_tui.context.types import Message, Role, ToolCall
from myrm_tui.testing.prefix_cache import PrefixCacheSimulator


def _session(rounds: int, lines: int) -> Conversation:
    """A system prompt, a long first message, and rounds of a shell call and a many-line output."""
    msgs = [
        Message(role="system", content="You fix bugs. " * 60, id="sys"),
        Message(role="user", content="The bug report, with its traceback and the steps. " * 120, id="task"),
    ]
    for r in range(rounds):
        call = ToolCall(f"c{r}", "bash", json.dumps({"cmd": f"cat mod{r}.py"}))
        msgs.append(
            Message(role="assistant", content=f"Reading mod{r}.py next.", tool_calls=(call,), id=f"a{r}")
        )
        body = "\n".join(f"{j:4d}    value_{r}_{j} = compute({j}, {r * j})  # row {j}" for j in range(lines))
        msgs.append(Message(role="tool", content=body, tool_call_id=f"c{r}", name="bash", id=f"o{r}"))
    msgs.append(Message(role="assistant", content="The fix is in mod3.py.", id="end"))
    return Conversation("s", msgs, [])


async def _replay_views(conv: Conversation, window: int) -> list[tuple[list[Message], list[int], bool]]:
    counter = TokenCounter()
    s = MyrmStrategy(counter)
    s.start(conv.id, window)
    out = []
    turns = [i for i, m in enumerate(conv.messages) if m.role == "assistant" and i > 0]
    for k, i in enumerate(turns):
        view = await s.build(list(conv.messages[:i]), k)
        out.append((view, list(s.breakpoints), bool(s.last_metrics.compacted)))
    return out


async def test_a_compacting_request_reads_the_protected_head_and_the_summary_blocks_it_kept() -> None:
    """Before, only the system prompt was marked at a compaction: Anthropic wrote the first message (and the
    summary blocks the compaction kept) again each time."""
    conv = _session(40, 60)
    counter = TokenCounter()
    cache = PrefixCacheSimulator("explicit", lookback=LOOKBACK)
    seen: set[str] = set()
    compactions = 0
    for view, marks, compacted in await _replay_views(conv, 8000):
        segs = _segments(view, [], counter, None)
        c = cache.request("s", segs, marks)
        if compacted:
            compactions += 1
            kept = 0
            for m in view:  # the prefix an earlier request sent as it is: the head, then kept summary blocks
                if m.id not in seen or not (m.role in ("system", "user") or m.meta.get("kind") == "summary"):
                    break
                kept += counter.message(m)
            assert c.cached_tokens >= kept > counter.message(view[0])
        seen |= {m.id for m in view}
    assert compactions >= 2


async def test_the_marks_end_before_an_output_the_trim_cuts_next_and_only_then() -> None:
    """A long session's large many-line outputs are cut after their reply: the request they arrive in ends
    its marks before them (the trim's copy replaces them next). A young session's are not cut, and are
    marked."""
    views = await _replay_views(_session(24, 300), 200_000)
    early = 0
    for (view, marks, _), (after, _, compacted) in itertools.pairwise(views):
        if marks[-1] == len(view) - 1:
            continue
        early += 1
        cut = view[marks[-1] + 1 :]
        assert any(m.role == "tool" for m in cut)
        ids = {m.id for m in after}
        # what the mark left out is not sent again as it was
        assert compacted or any(m.role == "tool" and m.id not in ids for m in cut)
    assert early >= 5
    young = views[:4]
    assert all(marks[-1] == len(view) - 1 for view, marks, _ in young)


def test_plan_breakpoints_marks_the_head_the_summary_blocks_and_the_end_it_is_given() -> None:
    view = [
        Message(role="system", content="s", id="s"),
        Message(role="user", content="task", id="u"),
        Message(role="assistant", content="summary 1", id="b1", meta={"kind": "summary"}),
        Message(role="assistant", content="summary 2", id="b2", meta={"kind": "summary"}),
        Message(role="assistant", content="a", id="a"),
        Message(role="tool", content="o", id="o", tool_call_id="x"),
    ]
    assert plan_breakpoints(view, 4, head_len=2) == [1, 3, 5]
    assert plan_breakpoints(view, 4, head_len=2, last=4) == [1, 3, 4]
    plain = [view[0], view[1], view[4], view[5]]
    # no summary blocks: before the newest outputs (what the next request reads when the trim cuts one)
    assert plan_breakpoints(plain, 2, head_len=2) == [1, 2, 3]


def test_the_next_request_is_taken_to_compact_only_when_most_rounds_would_carry_it_there() -> None:
    config = ContextConfig(max_context_tokens=16_000)
    s = settings_for(PreCompactSettings, config)
    state = ContextState()
    state.round_growth = [100] * 12 + [400] * 4
    point = band_for(s, [*state.round_growth, 100]).warm
    assert compacts_next(point - 100, s, state, sure=0.78)
    assert not compacts_next(point - 150, s, state, sure=0.78)
    assert compacts_next(point - 400, s, state, sure=0.2)  # a large round comes one time in four
    state.backoff_level = "EMERGENCY"
    assert not compacts_next(point, s, state, sure=0.78)


def test_nothing_after_the_end_it_is_given_is_marked() -> None:
    """When the next request compacts, ``last`` is the end of what an earlier request wrote (the answered
    trim may have rewritten an output since): the new messages after it go unwritten, plain input. The end
    of this request's base (``base_len``) lay after ``last`` then, and was marked instead of it: the
    rewritten messages were written at 1.25x for a request that would not read them."""
    roles: list[Role] = ["system", "user", "assistant", "tool", "assistant", "tool", "assistant"]
    roles += ["tool", "tool", "tool"]  # the newest outputs
    view = [Message(role=r, content=f"m{i}", id=str(i)) for i, r in enumerate(roles)]
    assert plan_breakpoints(view, 8, head_len=2, last=5) == [1, 5]
    assert plan_breakpoints(view, 8, head_len=2, last=7) == [1, 6, 7]  # before the newest outputs, as ever
    summaries = [Message(role="assistant", content=f"b{i}", meta={"kind": "summary"}) for i in (1, 2, 3)]
    blocks = [view[0], view[1], *summaries, *view[2:]]
    assert plan_breakpoints(blocks, 10, head_len=2, last=3) == [1, 3]
