"""Many writers on one store: coroutines sharing its connection, and processes sharing its file."""

from __future__ import annotations

import asyncio
import itertools
import random
import re
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from myrm_tui.context.types import Message
from myrm_tui.context.vault import VaultEntry
from myrm_tui.store.db import DatabaseLocked, Store, TransactionError
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests import warm
from tests.helpers import cli_env, emulator_args

ROOT = Path(__file__).resolve().parents[2]


async def test_fifty_concurrent_writers_never_raise_and_lose_nothing(store: Store) -> None:
    """Appends, metrics, titles, compaction commits, vault writes and a fork, interleaved on one connection
    (before the transaction helper this raised "cannot start a transaction within a transaction")."""
    sessions = [(await store.create_session(title=f"s{i}")).id for i in range(5)]
    rng = random.Random(7)
    appended: dict[str, list[str]] = {sid: [] for sid in sessions}
    committed: list[int] = []
    titles: dict[str, str] = {}

    async def writer(w: int) -> None:
        sid = sessions[w % len(sessions)]
        for i in range(12):
            op = rng.choice(("append", "append", "metrics", "title", "compact", "vault"))
            if op == "append":
                text = f"w{w} #{i}"
                await store.append_message(sid, Message(role="user", content=text))
                appended[sid].append(text)
            elif op == "metrics":
                await store.add_metrics(sid, i, {"kind": "stress", "writer": w, "i": i})
            elif op == "title":
                titles[sid] = f"title w{w} #{i}"
                await store.rename_session(sid, titles[sid])
            elif op == "compact":
                cp = await store.begin_compaction(sid, f'{{"before": {i}}}')
                await asyncio.sleep(0)  # another writer's statements land here, between the two halves
                await store.commit_compaction(sid, cp, f'{{"after": "w{w}-{i}"}}')
                committed.append(cp)
            else:
                uri = f"myrm://vault/{sid}/w{w}-{i}"
                await store.vault_put(
                    sid, [VaultEntry(uri, "x" * 200, "tool_output", "bash", time.time(), {})]
                )
            await asyncio.sleep(0)

    async def forker() -> str:
        await asyncio.sleep(0)
        async with store.transaction():  # a fork with its state, as the app does it: one transaction
            row = await store.fork_session(sessions[0], copy_state=True)
            await store.add_metrics(row.id, 0, {"kind": "fork"})
        return row.id

    results = await asyncio.gather(*(writer(w) for w in range(49)), forker())
    fork_id = results[-1]
    assert isinstance(fork_id, str)
    for sid in sessions:
        stored = await store.load_messages(sid)
        assert sorted(m.text for m in stored) == sorted(appended[sid])  # nothing lost, nothing doubled
        assert [m.id for m in stored] == [f"m{i}" for i in range(len(stored))]  # seqs contiguous
        if sid in titles:
            assert (await store.get_session(sid)).title == titles[sid]  # type: ignore[union-attr]
    statuses = {c["id"]: c["status"] for sid in sessions for c in await store.checkpoints(sid)}
    assert sorted(statuses) == sorted(committed) and set(statuses.values()) <= {"committed"}
    fork_texts = [m.text for m in await store.load_messages(fork_id)]
    assert set(fork_texts) <= set(appended[sessions[0]])
    assert not store.conn.in_transaction


async def test_nested_transaction_in_the_same_task_is_a_savepoint(store: Store) -> None:
    s = await store.create_session()
    async with asyncio.timeout(10), store.transaction():  # a nested call waiting for its own lock would hang
        await store.append_message(s.id, Message(role="user", content="outer"))  # itself nested: a savepoint
        with pytest.raises(RuntimeError, match="inner fails"):
            async with store.transaction() as conn:
                await conn.execute("INSERT INTO settings (key, value) VALUES ('inner', '1')")
                raise RuntimeError("inner fails")
    assert [m.text for m in await store.load_messages(s.id)] == ["outer"]  # the inner block alone undone
    assert await store.get_setting("inner") is None

    with pytest.raises(RuntimeError, match="outer fails"):
        async with store.transaction():
            await store.append_message(s.id, Message(role="user", content="gone"))
            await store.set_setting("gone", True)
            raise RuntimeError("outer fails")
    assert [m.text for m in await store.load_messages(s.id)] == ["outer"]  # released savepoints go with it
    assert await store.get_setting("gone") is None


async def test_another_task_waits_for_the_transaction_and_is_not_rolled_back_with_it(store: Store) -> None:
    s = await store.create_session()
    inside, other_started = asyncio.Event(), asyncio.Event()

    async def other() -> None:
        await inside.wait()
        other_started.set()
        await store.add_metrics(s.id, 1, {"kind": "other"})

    task = asyncio.ensure_future(other())
    with pytest.raises(RuntimeError):
        async with store.transaction():
            await store.add_metrics(s.id, 1, {"kind": "doomed"})
            inside.set()
            await other_started.wait()
            await store.get_session(s.id)  # the other task runs meanwhile: it must queue, not join
            assert not task.done()
            raise RuntimeError("roll back")
    await task
    assert [m["kind"] for m in await store.metrics(s.id)] == ["other"]


async def test_a_cancelled_transaction_rolls_back_and_frees_the_store(store: Store) -> None:
    s = await store.create_session()
    holding = asyncio.Event()

    async def slow() -> None:
        async with store.transaction():
            await store.append_message(s.id, Message(role="user", content="never committed"))
            holding.set()
            await asyncio.Event().wait()  # cancelled here

    task = asyncio.ensure_future(slow())
    await holding.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await store.load_messages(s.id) == []
    await store.append_message(s.id, Message(role="user", content="next"))
    assert [m.text for m in await store.load_messages(s.id)] == ["next"]


async def test_a_transaction_not_opened_by_the_helper_is_a_programming_error(store: Store) -> None:
    await store.conn.execute("BEGIN")
    with pytest.raises(TransactionError, match="did not open"):
        await store.set_setting("k", 1)
    await store.conn.execute("ROLLBACK")
    await store.set_setting("k", 1)
    assert await store.get_setting("k") == 1


def test_no_code_but_the_store_says_begin() -> None:
    """Transactions are opened in one place; anything else would interleave with it on the shared
    connection."""
    pattern = re.compile(r"""["'](?:\s*)(BEGIN|COMMIT|ROLLBACK)\b|executescript\(""")
    offenders = [
        f"{p.relative_to(ROOT)}:{n}"
        for p in (ROOT / "myrm_tui").rglob("*.py")
        if p != ROOT / "myrm_tui" / "store" / "base.py"
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line)
    ]
    assert offenders == []


async def test_a_write_against_another_process_lock_says_locked_in_one_line(tmp_path: Path) -> None:
    db = tmp_path / "locked.db"
    store = await Store.open(db, busy_timeout=0.2)
    holder = sqlite3.connect(db, isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")  # another program writing and not letting go
        with pytest.raises(DatabaseLocked) as err:
            await store.set_setting("k", 1)
        assert (
            str(err.value)
            == f"{db} is locked by another program (waited 0.2 s); close the other myrm or try again"
        )
        assert not store.conn.in_transaction
        holder.execute("ROLLBACK")
        await store.set_setting("k", 1)  # usable again once the other lets go
        assert await store.get_setting("k") == 1
    finally:
        holder.close()
        await store.close()


def _turns(rounds: int) -> Any:
    """Each ``ask``: ``rounds`` bash calls (the first waits until both processes run), then an answer."""

    def reply(body: dict[str, Any]) -> Reply:
        done = sum(1 for m in body["messages"] if m["role"] == "tool")
        if done >= rounds:
            return Reply(text=f"finished after {done} commands")
        if done == 0:  # a barrier: each process marks itself ready and waits for the other
            return Reply(
                tool_calls=[
                    (
                        "bash",
                        {
                            "command": "touch ready.$$; "
                            "until [ $(ls ready.* | wc -l) -ge 2 ]; do sleep 0.02; done"
                        },
                    )
                ]
            )
        return Reply(tool_calls=[("bash", {"command": f"echo round {done}"})])

    return reply


async def test_opening_a_new_file_that_another_process_just_migrated_does_not_migrate_again(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two processes start on a missing file: both read schema version 0, one migrates first. The one
    that waited for the write lock must see the schema, not run the migration again ('table sessions
    already exists' was taken for another program's database)."""
    db = tmp_path / "new.db"
    first = await Store.open(db)
    await first.create_session(title="from the first process")
    real = Store._version
    reads: list[int] = []

    async def racing_version(self: Store) -> int:
        value = await real(self)
        if self is not first and not reads:
            reads.append(value)
            return 0  # what it read before the other process committed
        return value

    monkeypatch.setattr(Store, "_version", racing_version)
    second = await Store.open(db)
    try:
        assert reads and reads[0] > 0  # it really raced against a migrated file
        assert [s.title for s in await second.list_sessions()] == ["from the first process"]
    finally:
        await second.close()
        await first.close()


def test_two_processes_asking_at_once_on_one_database_lose_no_message(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    rounds = 15
    emulator.default = _turns(rounds)
    db = tmp_path / "shared.db"
    env = cli_env(tmp_path, db.name)
    args = [
        sys.executable,
        "-m",
        "myrm_tui.cli",
        "ask",
        "work",
        "--yes",
        *emulator_args(emulator, workspace),
    ]
    procs = [
        warm.Popen(args, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    outs = [p.communicate(timeout=180) for p in procs]
    for p, (out, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err
        assert out.strip() == f"finished after {rounds} commands"
        assert "locked" not in err
    conn = sqlite3.connect(db)
    try:
        sids = [row[0] for row in conn.execute("SELECT id FROM sessions")]
        assert len(sids) == 2
        for sid in sids:
            rows = conn.execute(
                "SELECT seq, role, content FROM messages WHERE session_id = ? ORDER BY seq", (sid,)
            ).fetchall()
            assert [r[0] for r in rows] == list(range(len(rows)))
            roles = [r[1] for r in rows]
            # system, environment, the question, then per command an assistant call and its result, the answer
            assert roles[2:] == ["user", *["assistant", "tool"] * rounds, "assistant"], roles
            outputs = [r[2] for r in rows if r[1] == "tool"][1:]
            assert all(f"round {i}" in out for i, out in enumerate(outputs, 1)), outputs
        # The two really wrote at the same time: their messages interleave in the file.
        owners = [row[0] for row in conn.execute("SELECT session_id FROM messages ORDER BY rowid")]
        switches = sum(1 for a, b in itertools.pairwise(owners) if a != b)
        assert switches >= 4, switches
    finally:
        conn.close()


async def test_a_cancel_that_comes_as_the_writer_lock_is_taken_is_not_lost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Esc (a cancel) arriving in the same loop turn as the lock: the writer is still cancelled, and the
    lock it took is given back. (Python 3.11's ``asyncio.wait_for`` returned the result instead and the
    cancel was lost: under load a fork during a replay waited for the whole replay to play out.)"""
    from myrm_tui.store import base

    got: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    monkeypatch.setattr(base.asyncio, "to_thread", lambda *a: got)  # the flock thread, held by the test
    lock = base.WriterLock(str(tmp_path / "w.db"))
    released: list[bool] = []
    monkeypatch.setattr(lock, "release", lambda: released.append(True))
    task = asyncio.ensure_future(lock.acquire(5.0))
    await asyncio.sleep(0.01)  # waiting for the lock
    got.set_result(None)  # the thread takes it...
    task.cancel()  # ...as the user presses Esc
    with pytest.raises(asyncio.CancelledError):
        await task
    assert task.cancelled() and released == [True]
