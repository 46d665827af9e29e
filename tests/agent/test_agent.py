"""The agent loop end to end through litellm and the provider emulator."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from myrm_tui.agent.events import (
    AssistantSaved,
    ContextReport,
    Notice,
    TextChunk,
    ToolFinished,
    TurnDone,
    TurnFailed,
)
from myrm_tui.context.invariants import check_view
from myrm_tui.context.steps.normalize import INTERRUPTED
from myrm_tui.store.db import Store
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from myrm_tui.testing.validation import validate_openai
from tests.helpers import anthropic_settings, collect, make_agent, openai_settings


async def test_tool_round_trip_persists_and_sends_valid_requests(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    agent = await make_agent(store, workspace, openai_settings(emulator))
    emulator.enqueue(
        Reply(
            text="Reading.",
            tool_calls=[("file_read_tool", {"paths": ["hello.py"]}), ("bash", {"command": "echo parallel"})],
        ),
        Reply(text="It defines greet()."),
    )
    events = await collect(agent, "what is in hello.py?")
    assert isinstance(events[-1], TurnDone) and events[-1].steps == 2
    finished = [e for e in events if isinstance(e, ToolFinished)]
    assert {e.call.name for e in finished} == {"file_read_tool", "bash"}
    stored = await store.load_messages(agent.session_id)
    assert [m.role for m in stored] == ["system", "user", "user", "assistant", "tool", "tool", "assistant"]
    assert "def greet" in stored[4].text and stored[5].meta["exit_code"] == 0
    assert emulator.rejected == [] and len(emulator.accepted) == 2
    second = emulator.accepted[1].body["messages"]
    assert [m["role"] for m in second][-3:] == ["assistant", "tool", "tool"]
    metrics = await store.metrics(agent.session_id)
    assert len(metrics) == 2 and metrics[-1]["prompt_tokens"] > 0


async def test_cancel_mid_stream_keeps_partial_text_and_a_valid_history(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    agent = await make_agent(store, workspace, openai_settings(emulator))
    emulator.enqueue(Reply(text="A long answer that streams slowly. " * 40, chunk_size=4, chunk_delay=0.02))
    got: list = []

    async def run() -> None:
        async for ev in agent.turns.run("explain"):
            got.append(ev)

    task = asyncio.ensure_future(run())
    while not any(isinstance(e, TextChunk) for e in got):
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.1)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    stored = await store.load_messages(agent.session_id)
    assert stored[-1].role == "assistant" and stored[-1].text.endswith("[interrupted by the user]")
    emulator.enqueue(Reply(text="continuing"))
    await collect(agent, "go on")
    assert emulator.rejected == []
    assert validate_openai(emulator.accepted[-1].body) is None


async def test_cancel_mid_tool_writes_a_synthetic_result(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    agent = await make_agent(store, workspace, openai_settings(emulator))
    emulator.enqueue(Reply(tool_calls=[("bash", {"command": "sleep 30"})]))
    task = asyncio.ensure_future(collect(agent, "wait"))
    for _ in range(300):
        await asyncio.sleep(0.02)
        if any(m.role == "assistant" and m.tool_calls for m in agent.session.history):
            break
    await asyncio.sleep(0.2)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    stored = await store.load_messages(agent.session_id)
    assert stored[-1].role == "tool" and stored[-1].text == INTERRUPTED
    emulator.enqueue(Reply(text="ok"))
    await collect(agent, "next")
    assert emulator.rejected == []


async def test_malformed_tool_json_gets_a_clear_error_result(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    agent = await make_agent(store, workspace, openai_settings(emulator))
    emulator.enqueue(
        Reply(tool_calls=[("bash", '{"command": "ls"')]),
        Reply(tool_calls=[("no_such_tool", {})]),
        Reply(text="sorry"),
    )
    await collect(agent, "go")
    tools = [m for m in await store.load_messages(agent.session_id) if m.role == "tool"]
    assert "not valid JSON" in tools[0].text and "unknown tool" in tools[1].text
    assert emulator.rejected == []


async def test_huge_paste_is_refused_before_any_call(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    agent = await make_agent(store, workspace, openai_settings(emulator))
    before = len(await store.load_messages(agent.session_id))
    events = await collect(agent, "data " * 250_000)  # about 1 MB
    assert (
        isinstance(events[0], TurnFailed) and events[0].kind == "too_large" and "120,000" in events[0].error
    )
    assert isinstance(events[-1], TurnDone) and len(events) == 2
    assert emulator.requests == [] and len(await store.load_messages(agent.session_id)) == before


async def test_failing_llm_is_an_error_event_not_a_crash(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    agent = await make_agent(store, workspace, openai_settings(emulator))
    emulator.enqueue(Reply(error=(503, {"error": {"message": "overloaded", "type": "server_error"}})))
    events = await collect(agent, "hi")
    assert any(isinstance(e, TurnFailed) for e in events)
    emulator.enqueue(Reply(text="back"))
    events = await collect(agent, "again")
    assert isinstance(events[-1], TurnDone)


async def test_hung_llm_is_cut_and_partial_text_kept(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    agent = await make_agent(store, workspace, openai_settings(emulator))
    agent.session.llm.inactivity_timeout, agent.session.llm.check_interval = 0.5, 0.1
    emulator.enqueue(Reply(text="I started answering and then the model hung", chunk_size=8, stall_after=4))
    events = await collect(agent, "hi")
    emulator._release.set()
    failed = [e for e in events if isinstance(e, TurnFailed)]
    assert failed and "stopped responding" in failed[0].error
    assert (await store.load_messages(agent.session_id))[-1].text.endswith(
        "[reply cut off: the model call failed]"
    )


async def test_context_overflow_is_recovered_by_compaction_and_one_retry(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    agent = await make_agent(store, workspace, openai_settings(emulator))
    overflow = {
        "error": {
            "message": "This model's maximum context length is 8192 tokens.",
            "type": "invalid_request_error",
            "code": "context_length_exceeded",
        }
    }
    emulator.enqueue(Reply(error=(400, overflow)), Reply(text="fits now"))
    events = await collect(agent, "hi")
    assert any(isinstance(e, Notice) and "overflow" in e.text for e in events)
    assert isinstance(events[-1], TurnDone) and any(isinstance(e, AssistantSaved) for e in events)


async def test_long_session_compacts_and_stays_valid_and_under_budget(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    """Answered outputs are trimmed to their salient lines, so a session grows slower than it reads: the
    first compaction comes at the 12th read, and 20 reads compact seven times."""
    await compacts_and_stays_valid(emulator, store, workspace, reads=20)


@pytest.mark.long
async def test_long_fifty_reads_compact_and_stay_valid_and_under_budget(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    """The same session over 50 reads: 37 compactions (``make test-long``)."""
    await compacts_and_stays_valid(emulator, store, workspace, reads=50)


async def compacts_and_stays_valid(
    emulator: ProviderEmulator, store: Store, workspace: Path, reads: int
) -> None:
    for i in range(reads):
        (workspace / f"mod{i}.py").write_text("\n".join(f"value_{i}_{k} = {k}" for k in range(120)))
    agent = await make_agent(store, workspace, openai_settings(emulator), window=8_000)
    emulator.window = 8_000
    for i in range(reads):
        emulator.enqueue(
            Reply(tool_calls=[("bash", {"command": f"cat mod{i}.py"})]), Reply(text=f"Read mod{i}.py.")
        )
        events = await collect(agent, f"read mod{i}.py")
        assert isinstance(events[-1], TurnDone), events[-3:]
    assert emulator.rejected == []
    assert agent.session.state.compactions >= 1
    reports = [m for m in await store.metrics(agent.session_id) if m.get("compacted")]
    assert reports and all(r["tokens_out"] < 8_000 for r in reports)
    view, _ = await agent.session.prepare()
    assert check_view(view, agent.session.history) == []
    assert any(m.meta.get("kind") == "summary" for m in view)


async def test_anthropic_session_uses_at_most_four_breakpoints_and_hits_cache(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    agent = await make_agent(store, workspace, anthropic_settings(emulator))
    for i in range(4):
        emulator.enqueue(Reply(tool_calls=[("bash", {"command": f"echo {i}"})]), Reply(text=f"done {i}"))
        await collect(agent, f"step {i} " + "context " * 300)
    assert emulator.rejected == []
    for r in emulator.accepted:
        body = r.body
        marks = sum(1 for t in body.get("tools", []) if "cache_control" in t)
        marks += sum(1 for b in body.get("system", []) if isinstance(b, dict) and "cache_control" in b)
        marks += sum(
            1
            for m in body["messages"]
            if isinstance(m["content"], list)
            for b in m["content"]
            if "cache_control" in b
        )
        assert 1 <= marks <= 4
    assert sum(r.cache.cached_tokens for r in emulator.accepted[1:] if r.cache) > 0
    reports = [m for m in await store.metrics(agent.session_id) if m.get("cached_tokens")]
    assert reports


async def test_resume_loads_history_and_state(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    agent = await make_agent(store, workspace, openai_settings(emulator))
    emulator.enqueue(Reply(text="first answer"))
    await collect(agent, "first")
    from myrm_tui.agent.factory import build_agent

    again = await build_agent(store, agent.session_id, agent.session.settings, workspace)
    assert [m.text for m in again.session.history] == [m.text for m in agent.session.history]
    emulator.enqueue(Reply(text="second answer"))
    events = await collect(again, "second")
    assert any(isinstance(e, ContextReport) for e in events)
    assert [m["content"] for m in emulator.accepted[-1].body["messages"]][-3:] == [
        "first",
        "first answer",
        "second",
    ]


async def test_the_budget_leaves_room_for_the_tool_schemas(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    """The provider counts the tool schemas with the messages; the view's budget and thresholds must too,
    or a view our count fits overflows the window by the schemas' size."""
    import json

    from myrm_tui.context.config import ContextConfig

    agent = await make_agent(store, workspace, openai_settings(emulator), window=8_000)
    emulator.enqueue(Reply(text="ok"))
    await collect(agent, "hello")
    schemas = agent.session.counter.text(json.dumps(agent.tool_runner.tools.schemas))
    config = agent.session.config
    assert schemas > 500 and config.overhead_tokens == schemas
    bare = ContextConfig(max_context_tokens=8_000, reserve_output_tokens=config.reserve_output_tokens)
    assert config.input_budget == bare.input_budget - schemas
    assert config.warm_compact_threshold + schemas <= 8_000 - config.output_reserve
    assert config.compress_force_threshold < bare.compress_force_threshold
    # The request the provider saw: messages and schemas within what our count allowed.
    seen = emulator.accepted[-1].cache
    assert seen is not None and seen.input_tokens <= config.input_budget + schemas


async def test_a_turn_reads_each_requests_new_messages_while_the_model_answers(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    """The pipeline leaves what a later compaction reads of a request's new messages (an output's words and
    tokens) for after the request is sent (``Request.reads_later``); the turn reads them once the model's
    answer has begun to stream, so the next request does not read them on its path."""
    from myrm_tui.context.summary import ledger

    agent = await make_agent(store, workspace, openai_settings(emulator))
    emulator.enqueue(
        Reply(text="Counting.", tool_calls=[("bash", {"command": "seq 1 300"})]),
        Reply(text="It printed 300 lines.", chunk_size=4),
    )
    await collect(agent, "count to 300")
    settling = agent.turns._settling
    assert settling is not None, "no read was started while the model answered"
    await settling  # begun on the last answer's first chunk
    stored = await store.load_messages(agent.session_id)
    output = next(m for m in stored if m.role == "tool")
    # Read by the turn itself: ``settle(0)`` reads nothing, it only says how many requests' reads are left
    # (``settle()`` would read them here and say 0 whatever the turn did).
    assert agent.session.pipeline.settle(0) == 0, "the turn left the request's reads to the next request"
    assert (ledger.use_text, (output.text, ())) in agent.session.state.memo._d
