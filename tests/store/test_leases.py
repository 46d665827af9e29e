"""One writer per session: the lease a writing myrm holds, refusals naming its pid, takeover from a dead
holder, and compare-and-set context-state saves."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from myrm_tui.app.widgets.chat_message import AssistantMessage
from myrm_tui.context.types import Message
from myrm_tui.store.db import SessionBusy, StateConflict, Store
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests import warm
from tests.helpers import (
    SMALL_SCREEN,
    cli_env,
    emulator_args,
    make_app,
    run_myrm,
    started,
    type_and_send,
    wait_until,
)

ROOT = Path(__file__).resolve().parents[2]


async def test_a_second_store_is_refused_until_the_holder_closes(tmp_path: Path) -> None:
    a = await Store.open(tmp_path / "l.db")
    b = await Store.open(tmp_path / "l.db")
    try:
        sid = (await a.create_session()).id
        await a.acquire_lease(sid)
        await a.append_message(sid, Message(role="user", content="from a"))
        with pytest.raises(SessionBusy) as info:
            await b.acquire_lease(sid)
        assert str(info.value).startswith(f"session {sid} is open in another myrm (pid {os.getpid()})")
        assert "\n" not in str(info.value)
        with pytest.raises(SessionBusy):  # no write around the lease either
            await b.append_message(sid, Message(role="user", content="from b"))
        with pytest.raises(SessionBusy):
            await b.save_state(sid, "{}")
        with pytest.raises(SessionBusy):
            await b.delete_session(sid)
        # nor a rename (leftovers8): the holder titles a new session after its first turn and at its exit,
        # from the title it read at open, over the one given here
        with pytest.raises(SessionBusy) as info:
            await b.rename_session(sid, "from b")
        assert str(info.value) == (
            f"session {sid} is not renamed: it is open in another myrm (pid {os.getpid()}), which may title "
            "it over your name; rename it once that myrm is closed"
        )
        await a.rename_session(sid, "by a")  # the holder names its own
        assert [m.text for m in await b.load_messages(sid)] == ["from a"]
        assert (await b.get_session(sid)).title == "by a"  # type: ignore[union-attr]
        await a.close()  # releases
        await b.rename_session(sid, "from b")
        assert (await b.get_session(sid)).title == "from b"  # type: ignore[union-attr]
        await b.acquire_lease(sid)
        await b.append_message(sid, Message(role="user", content="from b"))
        assert [m.text for m in await b.load_messages(sid)] == ["from a", "from b"]
    finally:
        await b.close()
        with __import__("contextlib").suppress(Exception):
            await a.close()


async def test_a_writer_whose_lease_was_taken_over_fails_loudly(tmp_path: Path) -> None:
    a = await Store.open(tmp_path / "l.db")
    b = await Store.open(tmp_path / "l.db")
    try:
        sid = (await a.create_session()).id
        await a.acquire_lease(sid)
        # As if a's process had died: its lease row names a pid that does not exist.
        await a.conn.execute("UPDATE session_leases SET pid = 2147483646 WHERE session_id = ?", (sid,))
        await b.acquire_lease(sid)  # taken over
        with pytest.raises(SessionBusy):
            await a.append_message(sid, Message(role="user", content="stale"))
        assert await a.load_messages(sid) == []
    finally:
        await a.close()
        await b.close()


async def test_a_lease_release_cut_by_a_cancel_still_lets_go_of_the_session(tmp_path: Path) -> None:
    """Leaving a session is cancelled (quit during a session switch) while its lease row is being
    deleted: the release still completes. Before, the token was forgotten and the row kept, so the
    session read as another live myrm's, SessionBusy, and the empty "New session" quit left behind
    was kept."""
    store = await Store.open(tmp_path / "l.db")
    try:
        sid = (await store.create_session()).id
        await store.acquire_lease(sid)
        async with store._lock:  # another write of this store is in progress
            task = asyncio.ensure_future(store.release_lease(sid))
            await asyncio.sleep(0)  # the release waits for the store's lock...
            task.cancel()  # ...as the app quits
            with pytest.raises(asyncio.CancelledError):
                await task
        assert await store.lease_holder(sid) is None
        await store.set_setting("after", 1)  # a write queued behind the release: it has run by now
        other = await Store.open(tmp_path / "l.db")
        try:
            await other.acquire_lease(sid)  # the row is gone: the session is free for another myrm
            await other.release_lease(sid)
        finally:
            await other.close()
        await store.delete_session(sid)
        assert await store.find_session(sid) is None
        sid = (await store.create_session()).id
        async with store._lock:  # the same for taking a lease: what is committed is remembered
            task = asyncio.ensure_future(store.acquire_lease(sid))
            await asyncio.sleep(0)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
        await store.append_message(sid, Message(role="user", content="still mine"))
        other = await Store.open(tmp_path / "l.db")
        try:
            with pytest.raises(SessionBusy):
                await other.acquire_lease(sid)
        finally:
            await other.close()
    finally:
        await store.close()


async def test_a_lease_taken_or_released_as_a_cancel_lands_on_its_commit_is_complete(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The COMMIT runs in aiosqlite's thread whatever happens to the task waiting for it: a cancel that
    lands then must not leave the lease row and this store's memory of it disagreeing."""
    store = await Store.open(tmp_path / "l.db")
    real = store._run_or_explain
    committing = asyncio.Event()
    gate: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    gate.set_result(None)  # open until a step below arms it

    async def run(sql: str) -> None:
        await real(sql)
        if sql == "COMMIT" and not gate.done():
            committing.set()
            await asyncio.shield(gate)  # the commit is done in the thread; its waiter is slow to hear

    async def cancel_at_commit(op: Any) -> None:
        nonlocal gate
        committing.clear()
        gate = asyncio.get_running_loop().create_future()
        task = asyncio.ensure_future(op)
        await committing.wait()
        task.cancel()
        gate.set_result(None)
        with pytest.raises(asyncio.CancelledError):
            await task

    monkeypatch.setattr(store, "_run_or_explain", run)
    other = await Store.open(tmp_path / "l.db")
    try:
        sid = (await store.create_session()).id
        await cancel_at_commit(store.acquire_lease(sid))
        await store.append_message(sid, Message(role="user", content="mine"))  # the lease is this store's
        with pytest.raises(SessionBusy):
            await other.acquire_lease(sid)
        await cancel_at_commit(store.release_lease(sid))
        await store.delete_session(sid)  # not "taken over by another myrm"
        assert await store.find_session(sid) is None
    finally:
        await other.close()
        await store.close()


async def test_a_lease_taken_and_released_inside_a_transaction_does_not_wait_for_it(tmp_path: Path) -> None:
    """Run to their end in a task of their own, take and release would wait for the caller's open
    transaction, which waits for them: inside one they run in the caller's task (a savepoint)."""
    from myrm_tui.aio import within

    store = await Store.open(tmp_path / "l.db")
    try:
        sid = (await store.create_session()).id
        async with store.transaction():
            await within(store.acquire_lease(sid), 5)
            await store.append_message(sid, Message(role="user", content="inside"))
        assert await store.lease_holder(sid) is None and sid in store._leases
        async with store.transaction():
            await within(store.release_lease(sid), 5)
        assert sid not in store._leases
    finally:
        await store.close()


async def test_state_saves_are_compare_and_set(tmp_path: Path) -> None:
    a = await Store.open(tmp_path / "s.db")
    b = await Store.open(tmp_path / "s.db")
    try:
        sid = (await a.create_session()).id
        await a.save_state(sid, '{"v": "first"}')
        assert await a.load_state(sid) == await b.load_state(sid) == '{"v": "first"}'
        await b.save_state(sid, '{"v": "b"}')
        with pytest.raises(StateConflict) as info:
            await a.save_state(sid, '{"v": "a"}')  # read before b saved: refused, not overwritten
        assert "not overwritten" in str(info.value)
        assert await b.load_state(sid) == '{"v": "b"}'
        await a.load_state(sid)
        await a.save_state(sid, '{"v": "a2"}')  # after reading again it may
        await a.commit_compaction(sid, await a.begin_compaction(sid, '{"v": "a2"}'), '{"v": "a3"}')
        assert await b.load_state(sid) == '{"v": "a3"}'
    finally:
        await a.close()
        await b.close()


def _ask(
    args: list[str], tmp: Path, emulator: ProviderEmulator, workspace: Path, db: str
) -> subprocess.CompletedProcess[str]:
    return run_myrm(["ask", *args, *emulator_args(emulator, workspace)], env=cli_env(tmp, db), cwd=ROOT)


def _ask_process(
    args: list[str], tmp: Path, emulator: ProviderEmulator, workspace: Path, db: str
) -> subprocess.CompletedProcess[str]:
    """``ask`` in a process of its own, beside a TUI running in this one (another pid, another lease)."""
    return warm.run(
        [sys.executable, "-m", "myrm_tui.cli", "ask", *args, *emulator_args(emulator, workspace)],
        capture_output=True,
        text=True,
        env=cli_env(tmp, db),
        cwd=ROOT,
        timeout=120,
    )


_HOLDER = """
import asyncio, sys
from myrm_tui.store.db import Store

async def main():
    store = await Store.open(sys.argv[1])
    await store.acquire_lease(sys.argv[2])
    print("held", flush=True)
    await asyncio.sleep(3600)

asyncio.run(main())
"""


def test_ask_refuses_a_session_another_process_writes_and_takes_it_over_after_kill_9(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    emulator.enqueue(Reply(text="first"))
    proc = _ask(["hello"], tmp_path, emulator, workspace, "cli.db")
    assert proc.returncode == 0, proc.stderr
    sid = proc.stderr.strip().splitlines()[-1].removeprefix("[session ").removesuffix("]")
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(_HOLDER), str(tmp_path / "cli.db"), sid],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        proc = _ask(["note this", "--session", sid], tmp_path, emulator, workspace, "cli.db")
        assert proc.returncode == 2 and "Traceback" not in proc.stderr
        assert proc.stderr.strip().splitlines() == [
            f"myrm: session {sid} is open in another myrm (pid {holder.pid}); close it there, "
            f"or fork it: myrm sessions --fork {sid}"
        ]
        assert not emulator.accepted[1:]  # nothing was sent
        env = {**os.environ, "MYRM_DB": str(tmp_path / "cli.db"), "MYRM_CONFIG": str(tmp_path / "none.toml")}
        # the full screen on that session: the same line before it opens
        tui = run_myrm(["--session", sid, "--workspace", str(workspace)], env=env, cwd=ROOT)
        assert tui.returncode == 2 and tui.stderr.strip().splitlines() == proc.stderr.strip().splitlines()
        # nor renamed (leftovers8): one line naming the holder, the title as it was
        renamed = run_myrm(["sessions", "--rename", sid, "mine"], env=env, cwd=ROOT)
        assert renamed.returncode == 2 and renamed.stderr.strip().splitlines() == [
            f"myrm: session {sid} is not renamed: it is open in another myrm (pid {holder.pid}), which may "
            "title it over your name; rename it once that myrm is closed"
        ]
        assert "mine" not in run_myrm(["sessions"], env=env, cwd=ROOT).stdout
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    emulator.enqueue(Reply(text="noted"))
    proc = _ask(["note this", "--session", sid], tmp_path, emulator, workspace, "cli.db")
    assert proc.returncode == 0, proc.stderr  # the dead holder's lease was taken over
    assert proc.stdout.strip() == "noted"
    renamed = run_myrm(["sessions", "--rename", sid, "mine"], env=env, cwd=ROOT)  # the holder dead
    assert (renamed.returncode, renamed.stdout.splitlines()[0]) == (0, f"renamed {sid}")
    assert "mine" in renamed.stdout


def _answered(app: Any, text: str) -> bool:
    return any(m.markdown.source == text for m in app.query(AssistantMessage))


async def test_tui_and_ask_on_one_session(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    """The TUI holds its session: ``ask`` on it is refused with the TUI's pid, nothing written behind the
    TUI's back; once the TUI quits, ``ask`` writes, and the TUI reopening the session sees that turn."""
    app = make_app(emulator, tmp_path, workspace)
    emulator.enqueue(Reply(text="tui answer"))
    async with started(app, timeout=90, size=SMALL_SCREEN) as pilot:
        await type_and_send(pilot, "from the tui")
        await wait_until(pilot, lambda: not app.busy and _answered(app, "tui answer"), 60)
        assert app.controller.session is not None
        sid = app.controller.session.id
        proc = await asyncio.to_thread(
            _ask_process, ["a note from ask", "--session", sid], tmp_path, emulator, workspace, "tui.db"
        )
        assert proc.returncode == 2, proc.stderr
        assert f"session {sid} is open in another myrm (pid {os.getpid()})" in proc.stderr
    emulator.enqueue(Reply(text="ask answer"))
    proc = await asyncio.to_thread(
        _ask_process, ["a note from ask", "--session", sid], tmp_path, emulator, workspace, "tui.db"
    )
    assert proc.returncode == 0, proc.stderr
    app = make_app(emulator, tmp_path, workspace)
    app.initial_session = sid
    emulator.enqueue(Reply(text="tui again"))
    async with started(app, timeout=90, size=SMALL_SCREEN) as pilot:
        await type_and_send(pilot, "and now")
        await wait_until(pilot, lambda: not app.busy and _answered(app, "tui again"), 60)
    last = next(r for r in reversed(emulator.accepted) if "and now" in str(r.body["messages"]))
    sent = [m.get("content") for m in last.body["messages"]]
    assert "a note from ask" in sent and "ask answer" in sent  # the TUI's next request has the ask turn
