"""``PromptCacheOptimize``: cache breakpoints and the OpenAI cache key."""

from __future__ import annotations

from myrm_tui.context.steps.cache_optimize import MAX_BREAKPOINTS, plan_breakpoints, render
from myrm_tui.context.types import Message


def test_anthropic_gets_at_most_four_breakpoints_and_openai_a_cache_key() -> None:
    view = [
        Message(role="system", content="s", id="s"),
        *[Message(role="user" if i % 2 == 0 else "assistant", content=f"m{i}", id=f"m{i}") for i in range(9)],
    ]
    tools = [{"type": "function", "function": {"name": "bash", "parameters": {}}}]
    marks = plan_breakpoints(view, 5)
    req = render(view, "anthropic/claude-sonnet-4-5", marks, tools)
    n = sum(
        1
        for m in req["messages"]
        if isinstance(m["content"], list) and any("cache_control" in p for p in m["content"])
    )
    n += sum(1 for t in req["tools"] if "cache_control" in t)
    assert n <= MAX_BREAKPOINTS and n == 4
    assert "prompt_cache_key" not in req
    req = render(view, "gpt-4o", marks, tools, session_key="sess-1")
    assert req["prompt_cache_key"] == "sess-1"
    assert not any(isinstance(m["content"], list) for m in req["messages"])
    req = render(view, "gpt-4o", marks, tools, api_base="http://localhost:11434/v1", session_key="sess-1")
    assert "prompt_cache_key" not in req  # only on native OpenAI endpoints
    req = render(view, "ollama/llama3", marks, tools, session_key="sess-1")
    assert "prompt_cache_key" not in req


def test_qwen_dashscope_gets_the_same_explicit_markers() -> None:
    view = [
        Message(role="system", content="s", id="s"),
        Message(role="user", content="q", id="u"),
        Message(role="assistant", content="a", id="a"),
    ]
    req = render(view, "dashscope/qwen-max", plan_breakpoints(view, 2), None)
    marked = [
        m
        for m in req["messages"]
        if isinstance(m["content"], list) and m["content"][-1].get("cache_control") == {"type": "ephemeral"}
    ]
    assert len(marked) == 3 and "prompt_cache_key" not in req
