"""The embedded model (SmolLM2-135M through llama-cpp-python) answers through the same litellm path."""

from __future__ import annotations

from pathlib import Path

import pytest

from myrm_tui.agent.events import TextChunk, TurnDone
from myrm_tui.config import resolve
from myrm_tui.llm.client import LLMClient, ModelSpec
from myrm_tui.llm.events import TextDelta, Usage
from myrm_tui.llm.local import DEFAULT_LOCAL_MODEL, runtime_available, to_plain_chat
from myrm_tui.store.db import Store
from tests.helpers import collect, make_agent

pytestmark = pytest.mark.slow
needs_model = pytest.mark.skipif(not runtime_available(), reason="embedded model not installed (make install)")


def test_default_model_is_the_embedded_one_when_nothing_is_configured() -> None:
    s = resolve({}, {}, {}, env={})
    assert s.model == DEFAULT_LOCAL_MODEL and s.is_local_default and "embedded default" in s.model_source
    assert resolve({}, {}, {}, env={"ANTHROPIC_API_KEY": "k"}).model.startswith("anthropic/")
    assert resolve({}, {}, {"model": "ollama/qwen2.5"}, env={"ANTHROPIC_API_KEY": "k"}).model == "ollama/qwen2.5"
    assert resolve({}, {"model": "gpt-4o"}, {}, env={"MYRM_MODEL": "x"}).model == "gpt-4o"


def test_tool_traffic_is_flattened_for_the_small_chat_template() -> None:
    chat = to_plain_chat([
        {"role": "system", "content": "s"}, {"role": "user", "content": "u"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c", "type": "function", "function": {"name": "bash", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c", "content": "out"},
    ])
    assert [m["role"] for m in chat] == ["system", "user", "assistant", "user"]
    assert "bash" in chat[2]["content"] and "[tool result]" in chat[3]["content"]


@needs_model
async def test_embedded_model_streams_an_answer() -> None:
    events = [ev async for ev in LLMClient().stream(ModelSpec(DEFAULT_LOCAL_MODEL), [{"role": "user", "content": "What is the capital of France?"}], max_tokens=24)]
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert len([e for e in events if isinstance(e, TextDelta)]) > 1 and text.strip()
    usage = next(e for e in events if isinstance(e, Usage))
    assert usage.prompt_tokens > 0 and usage.completion_tokens > 0


@needs_model
async def test_agent_turn_on_the_embedded_model(store: Store, workspace: Path) -> None:
    agent = await make_agent(store, workspace, resolve({}, {}, {"max_output_tokens": 32}, env={}))
    events = await collect(agent, "Say hello.")
    assert isinstance(events[-1], TurnDone)
    assert "".join(e.text for e in events if isinstance(e, TextChunk)).strip()
    assert (await store.load_messages(agent.session_id))[-1].role == "assistant"
