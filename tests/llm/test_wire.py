"""What reaches the provider, read off the raw bodies the emulator received: ``prompt_cache_key`` (also a
subagent's), Anthropic's signed thinking blocks, reasoning settings."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from myrm_tui.agent.events import ToolFinished, TurnFailed
from myrm_tui.context.steps import cache_optimize
from myrm_tui.context.types import Message
from myrm_tui.store.db import Store
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from myrm_tui.testing.validation import sign_thinking, validate_anthropic
from tests.helpers import anthropic_settings, collect, make_agent, openai_settings


@pytest.fixture
def keyed(emulator: ProviderEmulator, monkeypatch: pytest.MonkeyPatch) -> Iterator[ProviderEmulator]:
    """The emulator caching only by ``prompt_cache_key``, and taken for a native OpenAI endpoint."""
    monkeypatch.setattr(cache_optimize, "is_native_openai", lambda model, api_base: True)
    emulator.openai_cache_by = "key"
    try:
        yield emulator
    finally:
        emulator.openai_cache_by = "auth"


def _key(body: dict[str, Any]) -> Any:
    return body.get("prompt_cache_key")


async def test_prompt_cache_key_is_in_the_body_and_the_cache_reads_it(
    keyed: ProviderEmulator, store: Store, workspace: Path
) -> None:
    big = "\n".join(f"line {i}: value_{i} = {i * 7}" for i in range(600))  # a prefix over 1,024 tokens
    (workspace / "big.txt").write_text(big)
    agent = await make_agent(store, workspace, openai_settings(keyed))
    keyed.enqueue(Reply(tool_calls=[("file_read_tool", {"paths": ["big.txt"]})]), Reply(text="read it"))
    await collect(agent, "read big.txt")
    bodies = [r.body for r in keyed.accepted if r.body.get("max_tokens") != 1]
    assert len(bodies) == 2
    assert [_key(b) for b in bodies] == [agent.session_id] * 2  # on the wire, not only meant
    # With the key the second request reads the first one's prefix; without it, it would read nothing.
    second = next(r for r in keyed.accepted if r.body is bodies[1])
    assert second.cache is not None and second.cache.cached_tokens > 1024


async def test_key_missing_means_no_cache_in_key_mode(keyed: ProviderEmulator) -> None:
    import httpx

    url = f"{keyed.openai_base}/chat/completions"
    first = {"model": "m", "messages": [{"role": "user", "content": "word " * 2000}]}
    grown = {**first, "messages": [*first["messages"], {"role": "assistant", "content": "ok"}]}
    httpx.post(url, json=first, headers={"Authorization": "Bearer same"})
    usage = httpx.post(url, json=grown, headers={"Authorization": "Bearer same"}).json()["usage"]
    assert usage["prompt_tokens_details"]["cached_tokens"] == 0  # the API key does not route in this mode
    httpx.post(url, json={**first, "prompt_cache_key": "k"})
    usage = httpx.post(url, json={**grown, "prompt_cache_key": "k"}).json()["usage"]
    assert usage["prompt_tokens_details"]["cached_tokens"] > 1024


async def test_subagent_requests_carry_the_root_session_key(
    keyed: ProviderEmulator, store: Store, workspace: Path
) -> None:
    agent = await make_agent(store, workspace, openai_settings(keyed))
    keyed.enqueue(
        Reply(tool_calls=[("subagent", {"task": "list the files"})]),  # parent delegates
        Reply(tool_calls=[("bash", {"command": "ls"})]),  # child works
        Reply(text="hello.py"),  # child answers
        Reply(text="There is hello.py."),  # parent answers
    )
    events = await collect(agent, "what files are there? use a subagent")
    child = next(e for e in events if isinstance(e, ToolFinished) and e.call.name == "subagent")
    assert child.message.meta["child_session"] != agent.session_id
    bodies = [r.body for r in keyed.accepted if r.body.get("max_tokens") != 1]
    assert len(bodies) == 4
    assert {_key(b) for b in bodies} == {agent.session_id}  # the child's two requests too
    # The child's tool set differs (no `subagent`): its requests are the child's own.
    assert sum(1 for b in bodies if not any(t["function"]["name"] == "subagent" for t in b["tools"])) == 2


async def test_no_key_off_native_openai(emulator: ProviderEmulator, store: Store, workspace: Path) -> None:
    agent = await make_agent(store, workspace, openai_settings(emulator))  # a custom api_base: not native
    await collect(agent, "hi")
    assert all("prompt_cache_key" not in r.body for r in emulator.accepted)


# -- Anthropic extended thinking ---------------------------------------------------------------------


async def test_signed_thinking_is_stored_and_sent_back_on_the_tool_use_turn(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    agent = await make_agent(store, workspace, anthropic_settings(emulator, thinking_budget_tokens=2048))
    emulator.enqueue(
        Reply(reasoning="I should list the files first.", tool_calls=[("bash", {"command": "ls"})]),
        Reply(reasoning="hello.py is there.", text="There is hello.py."),
    )
    events = await collect(agent, "what is here?")
    assert not [e for e in events if isinstance(e, TurnFailed)], events
    assert emulator.rejected == []
    first, second = [r.body for r in emulator.accepted if r.body.get("max_tokens") != 1]
    assert first["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert first["max_tokens"] == agent.session.settings.max_output_tokens + 2048
    assistant = [m for m in second["messages"] if m["role"] == "assistant"][-1]
    block = assistant["content"][0]
    assert block == {
        "type": "thinking",
        "thinking": "I should list the files first.",
        "signature": sign_thinking("I should list the files first."),
    }
    assert assistant["content"][-1]["type"] == "tool_use"
    stored = [m for m in await store.load_messages(agent.session_id) if m.role == "assistant"]
    assert stored[0].thinking_blocks == (block,)  # kept in the database, with its signature
    assert stored[1].thinking_blocks[0]["thinking"] == "hello.py is there."


async def test_thinking_blocks_survive_a_resume(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    """A session reopened between the tool call and its answer still sends the signed block."""
    settings = anthropic_settings(emulator, thinking_budget_tokens=1024)
    agent = await make_agent(store, workspace, settings)
    emulator.enqueue(
        Reply(reasoning="Look first.", tool_calls=[("bash", {"command": "ls"})]), Reply(text="ok")
    )
    await collect(agent, "look around")
    from myrm_tui.agent.factory import build_agent

    again = await build_agent(store, agent.session_id, settings, workspace)
    emulator.requests.clear()
    emulator.enqueue(Reply(reasoning="Again.", tool_calls=[("bash", {"command": "pwd"})]), Reply(text="done"))
    await collect(again, "and now?")
    assert emulator.rejected == []
    last = [r.body for r in emulator.accepted if r.body.get("max_tokens") != 1][-1]
    firsts = [m["content"][0] for m in last["messages"] if m["role"] == "assistant"]
    # Every assistant message of the history opens with its own signed block (the answer "ok" had one too).
    thoughts = [b.get("thinking") for b in firsts if b.get("type") == "thinking"]
    assert thoughts == ["Look first.", "Let me think about this request.", "Again."]


def test_emulator_refuses_a_tool_use_turn_without_its_signed_block() -> None:
    tool_use = {"type": "tool_use", "id": "t1", "name": "bash", "input": {"command": "ls"}}
    result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "a.py"}]}
    body: dict[str, Any] = {
        "model": "claude",
        "max_tokens": 4096,
        "thinking": {"type": "enabled", "budget_tokens": 1024},
        "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": [tool_use]}, result],
    }
    rej = validate_anthropic(body)
    assert rej is not None and "must start with a thinking block" in rej.message
    signed = {"type": "thinking", "thinking": "t", "signature": sign_thinking("t")}
    body["messages"][1] = {"role": "assistant", "content": [signed, tool_use]}
    assert validate_anthropic(body) is None
    body["messages"][1] = {"role": "assistant", "content": [{**signed, "thinking": "edited"}, tool_use]}
    rej = validate_anthropic(body)
    assert rej is not None and "Invalid `signature`" in rej.message
    body["messages"][1] = {"role": "assistant", "content": [signed, tool_use]}
    assert "max_tokens" in str(validate_anthropic({**body, "max_tokens": 1024}))
    assert "temperature" in str(validate_anthropic({**body, "temperature": 0.0}))


async def test_thinking_cleaner_keeps_blocks_for_anthropic_and_drops_them_elsewhere() -> None:
    from tests.helpers import run_pipeline

    block = {"type": "thinking", "thinking": "t", "signature": sign_thinking("t")}
    raw = [
        Message(role="system", content="s", id="s"),
        Message(role="user", content="q", id="u"),
        Message(role="assistant", content="a", id="a", reasoning="t", thinking_blocks=(block,)),
    ]
    view, _ = await run_pipeline(raw, model="anthropic/claude-sonnet-4-5")
    assert view[-1].thinking_blocks == (block,) and view[-1].reasoning is None
    view, _ = await run_pipeline(raw, model="gpt-4o")
    assert view[-1].thinking_blocks == () and view[-1].reasoning is None
    view, _ = await run_pipeline(raw, model="deepseek/deepseek-reasoner")  # after a model switch
    assert view[-1].thinking_blocks == () and view[-1].reasoning == "t"  # the current turn's reasoning stays


async def test_reasoning_effort_reaches_a_reasoning_model_only(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    agent = await make_agent(
        store, workspace, openai_settings(emulator, model="openai/o4-mini", reasoning_effort="low")
    )
    await collect(agent, "hi")
    body = [r.body for r in emulator.accepted if (r.body.get("max_completion_tokens") or 0) != 1][-1]
    assert body["reasoning_effort"] == "low"
    emulator.requests.clear()
    agent = await make_agent(
        store, workspace, openai_settings(emulator, reasoning_effort="low")
    )  # gpt-4o-mini
    await collect(agent, "hi")
    assert all("reasoning_effort" not in r.body for r in emulator.accepted)


async def test_a_version_1_database_gains_the_thinking_column(tmp_path: Path) -> None:
    import sqlite3

    from myrm_tui.store.schema import MIGRATIONS, statements

    path = tmp_path / "v1.db"
    con = sqlite3.connect(path)
    for stmt in statements(MIGRATIONS[0]):
        con.execute(stmt)
    con.execute("INSERT INTO sessions (id, created_at, updated_at) VALUES ('s', 0, 0)")
    con.execute(
        "INSERT INTO messages (session_id, seq, role, content, created_at) VALUES ('s', 0, 'user', 'old', 0)"
    )
    con.execute("PRAGMA user_version=1")
    con.commit()
    con.close()
    store = await Store.open(path)
    try:
        block = {"type": "thinking", "thinking": "t", "signature": sign_thinking("t")}
        await store.append_message("s", Message(role="assistant", content="a", thinking_blocks=(block,)))
        old, new = await store.load_messages("s")
        assert old.text == "old" and old.thinking_blocks == ()
        assert new.thinking_blocks == (block,)
        fork = await store.fork_session("s")
        assert (await store.load_messages(fork.id))[1].thinking_blocks == (block,)
    finally:
        await store.close()


async def test_thinking_on_without_scripted_reasoning_still_round_trips(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    agent = await make_agent(store, workspace, anthropic_settings(emulator, thinking_budget_tokens=1024))
    emulator.enqueue(Reply(tool_calls=[("bash", {"command": "ls"})]), Reply(text="done"))
    events = await collect(agent, "list")
    assert not [e for e in events if isinstance(e, TurnFailed)] and emulator.rejected == []
    last = [r.body for r in emulator.accepted if r.body.get("max_tokens") != 1][-1]
    assert [m["content"][0]["type"] for m in last["messages"] if m["role"] == "assistant"] == ["thinking"]


async def test_the_thinking_budget_is_reserved_in_the_window(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    plain = await make_agent(store, workspace, anthropic_settings(emulator))
    thinking = await make_agent(store, workspace, anthropic_settings(emulator, thinking_budget_tokens=8000))
    assert thinking.session.config.reserve_output_tokens == plain.session.config.reserve_output_tokens + 8000
    assert thinking.session.config.input_budget == plain.session.config.input_budget - 8000
