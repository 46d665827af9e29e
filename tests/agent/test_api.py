"""The agent API (``agent/api.py``) that the TUI's Controller, ``myrm ask`` and ``myrm acp`` all drive: a
turn through the provider emulator, the approver it was given, cancel, fork, the notices' one route."""

from __future__ import annotations

import ast
import asyncio
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from myrm_tui.agent.api import ChatSession, Sessions
from myrm_tui.agent.events import (
    AgentEvent,
    AssistantSaved,
    Notice,
    Outbox,
    SummaryProgress,
    TextChunk,
    ToolFinished,
    TurnDone,
    UserSaved,
)
from myrm_tui.llm.pricing import estimate_cost
from myrm_tui.store.db import Store
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.helpers import openai_settings

ROOT = Path(__file__).resolve().parents[2]


async def _turn(chat: ChatSession, text: str) -> list[AgentEvent]:
    return [ev async for ev in chat.send(text)]


async def test_a_turn_streams_its_events_and_the_figures_follow(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    settings = openai_settings(emulator)
    chat = await Sessions(store, workspace).start(settings, "api turn")
    try:
        emulator.enqueue(Reply(text="Hello from the emulator."))
        events = await _turn(chat, "hi")
        assert isinstance(events[0], UserSaved) and isinstance(events[-1], TurnDone)
        assert "".join(e.text for e in events if isinstance(e, TextChunk)) == "Hello from the emulator."
        stored = await store.load_messages(chat.id)
        assert [m.role for m in stored][-2:] == ["user", "assistant"]
        assert (await store.get_session(chat.id)).title == "api turn"  # type: ignore[union-attr]
        usage = next(e.usage for e in events if isinstance(e, AssistantSaved))
        assert usage is not None
        figures = chat.figures()
        assert figures.cost_usd == pytest.approx(estimate_cost(settings.model, usage))
        agent = chat.agent
        assert agent is not None and figures.window == agent.session.window
        assert figures.used == agent.window_use().used > 0 and figures.compactions == 0
        assert chat.notes == () and chat.extractive_summaries  # the helpers' settings ask for extractive
    finally:
        await chat.close()
    assert await store.lease_holder(chat.id) is None  # closing released the session


@pytest.mark.parametrize("answer", ["yes", "no"])
async def test_the_approver_passed_in_answers_a_command(
    emulator: ProviderEmulator, store: Store, workspace: Path, answer: str
) -> None:
    (workspace / "build").mkdir()
    asked: list[tuple[str, str]] = []

    async def approver(tool: str, command: str, assessment: Any) -> str:
        asked.append((tool, command))
        return answer

    chat = await Sessions(store, workspace, approver).start(openai_settings(emulator, approval="ask"))
    try:
        emulator.enqueue(Reply(tool_calls=[("bash", {"command": "rm -rf build"})]), Reply(text="done"))
        events = await _turn(chat, "clean up")
    finally:
        await chat.close()
    assert asked == [("bash", "rm -rf build")]
    assert (workspace / "build").exists() == (answer == "no")
    assert any(isinstance(e, ToolFinished) for e in events) and isinstance(events[-1], TurnDone)


async def test_cancel_stops_the_running_turn_and_keeps_its_partial_text(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    chat = await Sessions(store, workspace).start(openai_settings(emulator))
    emulator.enqueue(Reply(text="A long answer that streams slowly. " * 40, chunk_size=4, chunk_delay=0.02))
    streaming = asyncio.Event()

    async def run() -> None:
        async for ev in chat.send("explain"):
            if isinstance(ev, TextChunk):
                streaming.set()

    task = asyncio.ensure_future(run())
    try:
        await asyncio.wait_for(streaming.wait(), 30)
        assert chat.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert not chat.cancel()  # nothing runs now
        stored = await store.load_messages(chat.id)
        assert stored[-1].role == "assistant" and stored[-1].text.endswith("[interrupted by the user]")
        emulator.enqueue(Reply(text="continuing"))
        assert isinstance((await _turn(chat, "go on"))[-1], TurnDone)
        assert emulator.rejected == []
    finally:
        await chat.close()


async def test_fork_opens_a_compacted_fork_and_a_plain_copy_when_asked(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    settings = openai_settings(emulator, context_window=16_000)
    sessions = Sessions(store, workspace)
    parent = await sessions.start(settings)
    try:
        for k in range(8):
            emulator.enqueue(Reply(text=f"answer {k} " + "words " * 400))
            await _turn(parent, f"question {k}")
        fork = await sessions.fork(parent.id, settings)
        assert fork.row.parent_id == parent.id and fork.chat is not None and fork.report is not None
        assert fork.chat.id == fork.row.id and fork.chat.agent is not None
        record = fork.report.metrics.compaction
        assert record is not None and record.changed  # compacted in the fork's transaction
        assert fork.chat.figures().compactions >= 1
        emulator.enqueue(Reply(text="in the fork"))
        assert isinstance((await _turn(fork.chat, "and now?"))[-1], TurnDone)
        assert [m.text for m in await store.load_messages(fork.row.id)][-1] == "in the fork"
        assert "in the fork" not in [m.text for m in await store.load_messages(parent.id)]
        await fork.chat.close()
        copy = await sessions.fork(parent.id, settings, compact=False)
        assert copy.chat is None and copy.report is None and copy.row.parent_id == parent.id
        assert len(await store.load_messages(copy.row.id)) == len(await store.load_messages(parent.id))
    finally:
        await parent.close()


async def test_news_between_turns_reaches_on_event_and_during_a_turn_its_stream(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    heard: list[AgentEvent] = []
    chat = await Sessions(store, workspace, on_event=heard.append).start(openai_settings(emulator))
    try:
        agent = await chat.ready()
        agent.session.notice("between turns")
        agent.session.preparer.listeners[0]("ready")  # the background summary's news
        assert heard == [Notice("between turns", "warning"), SummaryProgress("ready")]
        emulator.enqueue(Reply(text="ok"))
        got: list[AgentEvent] = []
        async for ev in chat.send("hi"):
            if isinstance(ev, UserSaved):
                agent.session.notice("during the turn")
            got.append(ev)
        assert Notice("during the turn", "warning") in got and len(heard) == 2
    finally:
        await chat.close()


# Operations on an Outbox: post the next event, a turn starts or ends, the running turn takes.
OPS = st.lists(st.sampled_from(["post", "start", "end", "take"]), max_size=40)


@given(ops=OPS, listening=st.booleans())
def test_the_outbox_delivers_each_event_once_in_order_and_never_to_the_listener_mid_turn(
    ops: list[str], listening: bool
) -> None:
    box = Outbox()
    delivered: list[AgentEvent] = []
    in_turn = False

    def listener(ev: AgentEvent) -> None:
        assert not in_turn
        delivered.append(ev)

    if listening:
        box.listener = listener
    posted: list[AgentEvent] = []
    for op in ops:
        if op == "post":
            posted.append(Notice(str(len(posted))))
            box.post(posted[-1])
        elif op == "start":
            in_turn = True
            box.turn(True)
        elif op == "end":
            in_turn = False
            box.turn(False)
        elif in_turn:
            delivered.extend(box.take())
    delivered.extend(box.take())
    assert delivered == posted


FRONT_ENDS = ("myrm_tui/cli.py", "myrm_tui/acp/server.py", "myrm_tui/app/controller.py")
# What only the API may do for a front-end: build an agent, run its turns, make or fork a session, lease it.
API_ONLY = {"build_agent", "assemble", "run_turn", "turns", "create_session", "fork_session", "acquire_lease"}


@pytest.mark.parametrize("path", FRONT_ENDS)
def test_each_front_end_opens_and_drives_its_session_only_through_the_api(path: str) -> None:
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    used = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    used |= {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    used |= {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
    assert not used & API_ONLY, f"{path} bypasses agent/api.py: {sorted(used & API_ONLY)}"
    api_imports = {
        a.name
        for n in ast.walk(tree)
        if isinstance(n, ast.ImportFrom) and n.module == "myrm_tui.agent.api"
        for a in n.names
    }
    assert "Sessions" in api_imports
    calls = {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    assert "Sessions" in calls  # it makes its door, and goes through it
