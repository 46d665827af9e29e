"""A reply stopped by its output limit (finish reason "length"), through litellm to the provider emulator.

Found (model4): the finish reason was read and never used. A tool call cut mid-arguments was answered
"the arguments of bash are not what its schema asks for: not valid JSON", which sends the model to fix
JSON it never finished writing, and nobody was told that the limit was hit; an answer cut the same way
ended as if complete.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from myrm_tui.agent.events import Notice, ToolFinished, TurnFailed
from myrm_tui.agent.turn import cut_call
from myrm_tui.context.types import ToolCall
from myrm_tui.store.db import Store
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.helpers import collect, make_agent, openai_settings


def stream(deltas: list[dict[str, Any]], finish: str) -> bytes:
    """An OpenAI chat-completions SSE body of ``deltas``, ending with ``finish``."""
    base = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o-mini"}
    chunks = [{**base, "choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas]
    chunks.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    return b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in chunks) + b"data: [DONE]\n\n"


def call_delta(k: int, cid: str, name: str, args: str) -> dict[str, Any]:
    return {
        "tool_calls": [
            {"index": k, "id": cid, "type": "function", "function": {"name": name, "arguments": args}}
        ]
    }


async def test_a_call_cut_by_the_output_limit_is_answered_as_cut_and_the_user_told(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    body = stream(
        [
            {"role": "assistant"},
            call_delta(0, "c1", "bash", '{"command": "touch whole"}'),
            call_delta(1, "c2", "bash", '{"command": "touch cut'),
        ],
        "length",
    )
    emulator.enqueue(Reply(raw_body=body), Reply(text="Done."))
    agent = await make_agent(store, workspace, openai_settings(emulator, max_output_tokens=1000))
    events = await collect(agent, "make two files")
    assert not [e for e in events if isinstance(e, TurnFailed)]
    results = {e.call.id: e.message.text for e in events if isinstance(e, ToolFinished)}
    assert (workspace / "whole").exists()  # the finished call before it runs
    assert results["c2"].startswith("Error: not run. Your reply reached its output limit (1,000 tokens)")
    assert not (workspace / "cut").exists()
    notices = [e.text for e in events if isinstance(e, Notice)]
    assert any(
        n.startswith("The reply reached the output limit (1,000 tokens") and "bash" in n for n in notices
    )
    assert emulator.rejected == []  # the cut call's result keeps the next request valid


async def test_a_cut_call_with_an_invalid_name_gets_one_result(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    """A cut call whose name is also invalid was answered twice, as cut and as misnamed: two rows in the
    transcript and two stored results for one call id (found in review5)."""
    body = stream([{"role": "assistant"}, call_delta(0, "c1", "functions.bash", '{"command": "to')], "length")
    emulator.enqueue(Reply(raw_body=body), Reply(text="Done."))
    agent = await make_agent(store, workspace, openai_settings(emulator, max_output_tokens=1000))
    events = await collect(agent, "make a file")
    results = [e.message.text for e in events if isinstance(e, ToolFinished)]
    assert len(results) == 1 and results[0].startswith("Error: not run. Your reply reached its output limit")
    stored = [m for m in await store.load_messages(agent.session_id) if m.role == "tool"]
    assert [m.tool_call_id for m in stored] == ["c1"]


async def test_an_answer_cut_by_the_output_limit_says_so(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    body = stream([{"role": "assistant", "content": "The three steps are: first, open the"}], "length")
    emulator.enqueue(Reply(raw_body=body))
    agent = await make_agent(store, workspace, openai_settings(emulator))
    events = await collect(agent, "explain")
    notices = [e.text for e in events if isinstance(e, Notice)]
    assert any("reached the output limit" in n and "is cut off" in n for n in notices)


async def test_a_normal_finish_says_nothing_about_limits(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    emulator.enqueue(Reply(tool_calls=[("glob", {"pattern": "*"})]), Reply(text="Nothing here."))
    agent = await make_agent(store, workspace, openai_settings(emulator))
    events = await collect(agent, "look")
    assert not [e for e in events if isinstance(e, Notice) and "output limit" in e.text]
    assert all(not e.message.text.startswith("Error") for e in events if isinstance(e, ToolFinished))


_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=8,
)


@given(st.dictionaries(st.text(max_size=6), _VALUES, min_size=1, max_size=4), st.data())
def test_every_cut_of_a_calls_arguments_is_caught_and_the_whole_call_is_not(
    args: dict[str, Any], data: Any
) -> None:
    whole = json.dumps(args)
    end = data.draw(st.integers(min_value=0, max_value=len(whole) - 1))
    before = ToolCall("a", "glob", '{"pattern": "*"}')
    cut = ToolCall("b", "bash", whole[:end])
    assert cut_call((before, cut), "length") == cut
    done = ToolCall("b", "bash", whole)
    assert cut_call((before, done), "length") is None
    assert cut_call((before, cut), "tool_calls") is None  # only the output limit cuts a call
