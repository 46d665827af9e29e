"""``ThinkingBlockCleaner``: reasoning kept where a provider needs it back."""

from __future__ import annotations

from myrm_tui.context.steps.thinking import ThinkingBlockCleaner
from myrm_tui.context.types import Message
from tests.helpers import call, run_step, view_for


async def test_thinking_anthropic_drops_reasoning_keeps_blocks() -> None:
    raw = [
        Message(role="user", content="q", id="u"),
        Message(
            role="assistant",
            content="a",
            id="a",
            reasoning="r",
            thinking_blocks=({"type": "thinking", "thinking": "r"},),
        ),
    ]
    out = (
        await run_step(ThinkingBlockCleaner(), view_for(raw, model="anthropic/claude-sonnet-4-5"))
    ).messages
    assert out[1].reasoning is None and out[1].thinking_blocks


async def test_thinking_deepseek_keeps_current_turn_and_tool_call_reasoning() -> None:
    raw = [
        Message(role="user", content="q1", id="u1"),
        Message(role="assistant", content="old", id="a1", reasoning="old thoughts"),
        Message(role="assistant", content=None, id="a2", reasoning="needed", tool_calls=(call("c", "ls"),)),
        Message(role="tool", content="x", id="t", tool_call_id="c"),
        Message(role="user", content="q2", id="u2"),
        Message(role="assistant", content="now", id="a3", reasoning="current"),
    ]
    out = (await run_step(ThinkingBlockCleaner(), view_for(raw, model="deepseek/deepseek-reasoner"))).messages
    assert out[1].reasoning is None
    assert out[2].reasoning == "needed"
    assert out[5].reasoning == "current"


async def test_thinking_backfills_empty_reasoning_after_model_switch() -> None:
    raw = [
        Message(role="user", content="q", id="u"),
        Message(role="assistant", content=None, id="a", tool_calls=(call("c", "ls"),)),
        Message(role="tool", content="x", id="t", tool_call_id="c"),
    ]
    out = (await run_step(ThinkingBlockCleaner(), view_for(raw, model="deepseek/deepseek-reasoner"))).messages
    assert out[1].reasoning == ""


async def test_thinking_other_models_strip_reasoning() -> None:
    raw = [
        Message(role="user", content="q", id="u"),
        Message(role="assistant", content="a", id="a", reasoning="r"),
    ]
    out = (await run_step(ThinkingBlockCleaner(), view_for(raw, model="gpt-4o"))).messages
    assert out[1].reasoning is None
