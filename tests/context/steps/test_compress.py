"""``PriorityCompressor``: Dedup, Truncate, Remove by whole groups; the tail kept."""

from __future__ import annotations

from myrm_tui.context.compaction.intent import CompressionIntent
from myrm_tui.context.config import ContextConfig
from myrm_tui.context.step import CompactionPlan, Level
from myrm_tui.context.steps.compress import PriorityCompressor, Tier, classify, tail_start
from myrm_tui.context.types import Message
from tests.helpers import COUNTER, call, conversation, run_step, view_for


async def test_compress_deep_dedups_then_folds_whole_spans_and_keeps_tail() -> None:
    raw = conversation(30, output_chars=4000)
    raw[5] = Message(
        role="tool", content=raw[7].content, id=raw[5].id, tool_call_id=raw[5].tool_call_id
    )  # a duplicate
    plan = CompactionPlan(Level.FULL, compacting=True)
    view = view_for(raw, plan=plan, force_compaction=True, protected_head=tuple(raw[:2]))
    result = await run_step(PriorityCompressor(), view, window=12_000)
    out = result.messages
    assert COUNTER.messages(out) < COUNTER.messages(raw) // 4
    # Folded spans go whole to the summary; nothing left in view was cut in place (no rewrite to pay for).
    assert {"dedup", "remove"} <= set(result.trace.removed) and "truncate" not in result.trace.removed
    assert out[-1] == raw[-1] and out[:2] == raw[:2]
    assert result.folded and all(m not in out for m in result.folded)
    assert all(m in raw for m in out)


async def test_compress_light_truncates_in_place_and_folds_nothing() -> None:
    raw = conversation(30, output_chars=4000)
    plan = CompactionPlan(Level.LIGHT, compacting=True)
    view = view_for(raw, plan=plan, protected_head=tuple(raw[:2]))
    result = await run_step(PriorityCompressor(), view, window=12_000)
    out = result.messages
    assert "truncate" in result.trace.removed and not result.folded
    assert len(out) == len(raw) and COUNTER.messages(out) < COUNTER.messages(raw)
    assert out[-1] == raw[-1] and out[:2] == raw[:2]


def test_classify_marks_superseded_and_resolved_outputs_background() -> None:
    raw = [
        Message(role="system", content="s", id="s"),
        Message(role="user", content="go", id="u"),
        Message(role="assistant", content=None, id="a1", tool_calls=(call("c1", "pytest"),)),
        Message(role="tool", content="<returncode>1</returncode>\nfail", id="t1", tool_call_id="c1"),
        Message(role="assistant", content=None, id="a2", tool_calls=(call("c2", "cat notes.txt"),)),
        Message(role="tool", content="<returncode>0</returncode>\nnotes", id="t2", tool_call_id="c2"),
        Message(role="assistant", content=None, id="a3", tool_calls=(call("c3", "pytest"),)),
        Message(role="tool", content="<returncode>0</returncode>\npass", id="t3", tool_call_id="c3"),
    ]
    tiers = classify(raw, 2, 6, CompressionIntent())  # no focus: tiers from the history alone
    assert tiers[2] == tiers[3] == Tier.BACKGROUND  # failed pytest, later run passed
    assert tiers[4] == Tier.OLDER


def test_tail_start_never_splits_a_group() -> None:
    raw = conversation(10)
    start = tail_start(raw, 2, COUNTER, ContextConfig(max_context_tokens=6_000).tail_budget)
    assert raw[start].role == "assistant"
