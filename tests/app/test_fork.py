"""Fork is atomic: the session row, the message copy, the state and the fork's first compaction commit
land together or not at all, also while title, metrics and keep-alive writes run on the same store."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.message import Message as TextualMessage

from myrm_tui.app.controller import Controller, ForkFailed
from myrm_tui.app.messages import Failure
from myrm_tui.context.types import Message
from myrm_tui.store.db import Store
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.helpers import SMALL_SCREEN, make_app, send_turn, started, wait_until

SUMMARY = (
    '{"user_goal": "count numbers", "user_instructions": [], "active_tasks": [], '
    '"completed_actions": ["ran seq"], "errors": [], "decisions": [], "artifacts": [], '
    '"files_examined": [], "key_facts": ["seq prints numbers"], '
    '"tool_usage": ["bash seq"], "open_questions": [], "current_state": "counting", "blocked_items": [], '
    '"next_steps": ["count again"]}'
)


def route(body: dict[str, Any]) -> Reply:
    """The emulator's answers by request: a title, a summary, or a turn (one bash call, then a sentence)."""
    text = " ".join(str(m.get("content")) for m in body.get("messages", []))
    if "Write a title of at most six words" in text:
        return Reply(text="Counting with seq")
    if "You compact an agent session" in text:
        return Reply(text=SUMMARY)
    last = body["messages"][-1]
    n = sum(1 for m in body["messages"] if m["role"] == "user")
    if last["role"] == "tool":  # prose that no filter shortens: the window fills turn by turn
        return Reply(
            text=f"Counted {n}. " + " ".join(f"finding{n}x{i} holds" for i in range(150)), chunk_size=400
        )
    return Reply(tool_calls=[("bash", {"command": f"seq 1 {100 + n}"})])


def route_holding_summaries(gate: threading.Event) -> Callable[[dict[str, Any]], Reply]:
    """``route``, with each summary held until ``gate`` is set (a compaction caught while it runs)."""

    def answer(body: dict[str, Any]) -> Reply:
        reply = route(body)
        if "You compact an agent session" in json.dumps(body):
            reply.gate = gate
        return reply

    return answer


async def automatic_compactions(store: Store, sid: str) -> int:
    return sum(1 for m in await store.metrics(sid) if m.get("compacted") and m.get("kind") is None)


async def test_ctrl_f_after_automatic_compactions_while_title_metrics_and_keepalive_write(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    """The live failure: after two automatic compactions ctrl+f said "cannot start a transaction within a
    transaction" (the fork agent's start-up preheat ran a second pipeline whose BEGIN landed inside the
    fork's), yet the fork had been half written and opened. Here the title, a turn's metrics and a
    keep-alive probe of the parent also write while the fork's transaction is open."""
    emulator.default = route
    app = make_app(emulator, tmp_path, workspace, context_window=4000)
    seen: list[TextualMessage] = []
    notices: list[str] = []
    real_notify = app.notify

    def notify(message: str, **kw: Any) -> None:
        notices.append(str(message))
        real_notify(message, **kw)

    app.notify = notify  # type: ignore[method-assign]
    async with started(app, size=SMALL_SCREEN, message_hook=seen.append) as pilot:
        store, ctl = app.controller.store, app.controller
        assert store is not None and ctl.session is not None
        parent = ctl.session.id

        # The other writers of a live session, each let go once the fork's rows are written.
        fork_written = asyncio.Event()
        real_fork, real_rename = store.fork_session, store.rename_session

        async def fork_session(*a: Any, **kw: Any) -> Any:
            row = await real_fork(*a, **kw)
            fork_written.set()
            return row

        async def rename_session(sid: str, title: str) -> None:
            await fork_written.wait()  # the title worker finishes while the fork is under way
            await real_rename(sid, title)

        store.fork_session, store.rename_session = fork_session, rename_session  # type: ignore[method-assign]
        turn = 0
        while await automatic_compactions(store, parent) < 2:
            turn += 1
            assert turn <= 12, "no two automatic compactions in 12 turns"
            await send_turn(pilot, app, f"count {turn}")
        parent_agent = ctl.agent
        assert parent_agent is not None and parent_agent.warmer.keepalive is not None
        keepalive = parent_agent.warmer.keepalive
        sessions_before = {s.id for s in await store.list_sessions()}

        async def keepalive_probe() -> None:  # what CacheKeepAliveManager runs while the user is idle
            await fork_written.wait()
            await keepalive.probe()

        async def turn_metrics() -> None:
            await fork_written.wait()
            await store.add_metrics(parent, 99, {"kind": "concurrent"})

        writers = asyncio.gather(keepalive_probe(), turn_metrics())
        await pilot.press("ctrl+f")
        await wait_until(
            pilot,
            lambda: (
                (ctl.session is not None and ctl.session.id != parent and not app.busy)
                or any(isinstance(m, Failure) and m.text for m in seen)
            ),
            timeout=30,
        )
        assert [m.text for m in seen if isinstance(m, Failure) and m.text] == []
        await asyncio.wait_for(writers, 30)  # neither raised
        fork = ctl.session
        assert fork is not None and fork.parent_id == parent
        await wait_until(pilot, lambda: any(fork.id in n for n in notices))
        assert "starts compacted" in next(n for n in notices if fork.id in n)

        assert {s.id for s in await store.list_sessions()} == sessions_before | {fork.id}  # one fork, whole
        assert [m.text for m in await store.load_messages(fork.id)] == [
            m.text for m in await store.load_messages(parent)
        ]
        assert [c["status"] for c in await store.checkpoints(fork.id)] == ["committed"]
        assert await store.load_state(fork.id) is not None
        await wait_until(pilot, lambda: ctl.session is not None and ctl.session.id == fork.id)
        assert (await store.get_session(parent)).title == "Counting with seq"  # type: ignore[union-attr]
        # The writers queued behind the fork's transaction instead of slipping into it.
        async with store.conn.execute("SELECT id, session_id, data FROM metrics ORDER BY id") as cur:
            rows = [(r[0], r[1], r[2]) for r in await cur.fetchall()]
        compaction_row = next(i for i, sid, d in rows if sid == fork.id and "manual_compaction" in d)
        concurrent_row = next(i for i, sid, d in rows if sid == parent and '"concurrent"' in d)
        assert concurrent_row > compaction_row


async def _session_ids_anywhere(store: Store) -> set[str]:
    """Every session id with a row in any table: a fork that left anything behind shows up here."""
    ids: set[str] = set()
    for table, column in (
        ("sessions", "id"),
        ("messages", "session_id"),
        ("context_state", "session_id"),
        ("checkpoints", "session_id"),
        ("vault", "session_id"),
        ("metrics", "session_id"),
    ):
        async with store.conn.execute(f"SELECT DISTINCT {column} FROM {table}") as cur:
            ids |= {r[0] for r in await cur.fetchall()}
    return ids


async def test_a_fork_whose_compaction_commit_fails_creates_nothing_and_says_so(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    emulator.default = route
    app = make_app(emulator, tmp_path, workspace, context_window=4000)
    seen: list[TextualMessage] = []
    async with started(app, size=SMALL_SCREEN, message_hook=seen.append) as pilot:
        store, ctl = app.controller.store, app.controller
        assert store is not None and ctl.session is not None
        for text in ("count 1", "count 2"):
            await send_turn(pilot, app, text)
        parent, parent_agent = ctl.session.id, ctl.agent
        before = await _session_ids_anywhere(store)
        real_commit = store.commit_compaction

        async def commit_then_fail(sid: str, checkpoint_id: int, state_json: str) -> None:
            await real_commit(
                sid, checkpoint_id, state_json
            )  # the fork's compaction is written, then the disk fails
            raise sqlite3.OperationalError("disk I/O error")

        store.commit_compaction = commit_then_fail  # type: ignore[method-assign]
        await pilot.press("ctrl+f")
        await wait_until(pilot, lambda: any(isinstance(m, Failure) and m.text for m in seen))
        error = next(m.text for m in seen if isinstance(m, Failure) and m.text)
        assert (
            error.startswith("Fork failed, nothing was created")
            and "disk I/O error" in error
            and parent in error
        )
        assert ctl.session.id == parent and ctl.agent is parent_agent  # the app stayed where it was
        assert await _session_ids_anywhere(store) == before  # no row of the fork in any table
        assert not store.conn.in_transaction

        store.commit_compaction = real_commit  # type: ignore[method-assign]
        await send_turn(pilot, app, "count 3")  # the parent goes on as before
        assert [m.text for m in await store.load_messages(parent) if m.role == "user"][-1] == "count 3"


async def test_fork_at_a_message_that_does_not_exist_creates_nothing(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    emulator.default = route
    ctl = Controller(
        tmp_path / "c.db",
        workspace,
        {
            "model": "openai/gpt-4o-mini",
            "api_base": emulator.openai_base,
            "api_key": "sk-test",
            "preheat": False,
            "keepalive": False,
        },
    )
    await ctl.open()
    try:
        row = await ctl.open_session(None)
        agent = await ctl.ensure_agent()
        await agent.load()
        assert ctl.store is not None
        await ctl.store.append_message(row.id, Message(role="user", content="only question"))
        with pytest.raises(
            ForkFailed,
            match=r"^Fork failed, nothing was created: there is no user message 3 \(this session has 1\)$",
        ):
            await ctl.fork(at_user_message=3)
        assert [s.id for s in await ctl.sessions()] == [row.id]
        fork = await ctl.fork(at_user_message=1)
        assert fork.parent_id == row.id and ctl.session is not None and ctl.session.id == fork.id
        assert ctl.fork_notice.startswith(f"Forked into session {fork.id} ")
    finally:
        await ctl.close()


async def test_a_fork_cancelled_midway_creates_nothing(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    """A second ctrl+f or quitting cancels the fork's worker inside its transaction: it rolls back whole."""
    emulator.default = route
    ctl = Controller(
        tmp_path / "c.db",
        workspace,
        {
            "model": "openai/gpt-4o-mini",
            "api_base": emulator.openai_base,
            "api_key": "sk-test",
            "keepalive": False,
            "summarizer_model": "extractive",
        },
    )
    await ctl.open()
    try:
        row = await ctl.open_session(None)
        parent_agent = await ctl.ensure_agent()
        assert ctl.store is not None
        store = ctl.store
        async for _ in parent_agent.turns.run("count 1"):
            pass
        before = await _session_ids_anywhere(store)
        compacting, never = asyncio.Event(), asyncio.Event()
        real_begin = store.begin_compaction

        async def begin_then_hang(sid: str, backup_json: str) -> int:
            cp = await real_begin(sid, backup_json)
            compacting.set()
            await never.wait()  # cancelled here, with the fork's rows and its checkpoint written
            return cp

        store.begin_compaction = begin_then_hang  # type: ignore[method-assign]
        task = asyncio.ensure_future(ctl.fork())
        await asyncio.wait_for(compacting.wait(), 30)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert await _session_ids_anywhere(store) == before
        assert ctl.session is not None and ctl.session.id == row.id and ctl.agent is parent_agent
        assert not store.conn.in_transaction
        await store.add_metrics(row.id, 1, {"kind": "after"})  # the store is free again
    finally:
        await ctl.close()


async def test_a_fork_reads_its_ancestors_vault_also_when_rebuilt(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    """A fork's history points into the parent's vault (``vault://<parent>/…``). The agent built for it —
    at fork time or later, after a restart — may read those entries, and its grandparent's, but no other
    session's."""
    from myrm_tui.agent.factory import build_agent
    from myrm_tui.agent.tools.base import ToolError
    from myrm_tui.agent.tools.files import FileReadTool
    from tests.helpers import make_agent, openai_settings

    settings = openai_settings(emulator)
    parent = await make_agent(store, workspace, settings)
    stranger = await make_agent(store, workspace, settings)
    uri = parent.session.vault.put("line one of the parent's output\nline two", "tool_output", "bash")
    other = stranger.session.vault.put("someone else's output", "tool_output", "bash")
    await parent.session.flush_vault()
    await stranger.session.flush_vault()
    child = await store.fork_session(parent.session_id, copy_state=True)
    grandchild = await store.fork_session(child.id, copy_state=True)
    agents = []
    try:
        for sid in (child.id, grandchild.id):
            agent = await build_agent(store, sid, settings, workspace)  # as after a restart
            agents.append(agent)
            read = await FileReadTool().run({"paths": [uri], "line_range": "2:2"}, agent.tool_runner.ctx)
            assert "line two" in read.content and "line one" not in read.content
            with pytest.raises(ToolError, match="another session's vault"):
                await FileReadTool().run({"paths": [other]}, agent.tool_runner.ctx)
    finally:
        for a in [parent, stranger, *agents]:
            await a.close()
