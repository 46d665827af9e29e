"""The SQLite store: sessions, append-only messages, fork, vault, compaction checkpoints, durability."""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from myrm_tui.context.types import Message, ToolCall
from myrm_tui.context.vault import ArtifactVault
from myrm_tui.store.db import DatabaseLocked, Store, StoreError
from tests import warm

ROOT = Path(__file__).resolve().parents[2]


async def test_sessions_lifecycle(store: Store) -> None:
    a = await store.create_session(title="first", model="m")
    b = await store.create_session(title="second")
    await store.rename_session(a.id, "renamed")
    rows = {s.id: s for s in await store.list_sessions()}
    assert rows[a.id].title == "renamed" and b.id in rows
    assert (await store.find_session(a.id[:6])) is not None
    await store.delete_session(b.id)
    assert await store.get_session(b.id) is None


async def test_messages_round_trip_and_are_append_only(store: Store, tmp_path: Path) -> None:
    s = await store.create_session()
    m1 = await store.append_message(s.id, Message(role="user", content="hi"))
    m2 = await store.append_message(
        s.id,
        Message(
            role="assistant",
            content=None,
            tool_calls=(ToolCall("c", "bash", '{"command":"ls"}'),),
            reasoning="think",
        ),
    )
    m3 = await store.append_message(
        s.id, Message(role="tool", content="out", tool_call_id="c", name="bash", meta={"exit_code": 0})
    )
    m4 = await store.append_message(
        s.id,
        Message(role="user", content=[{"type": "text", "text": "img"}], synthetic=True, meta={"kind": "x"}),
    )
    assert [m.id for m in (m1, m2, m3, m4)] == ["m0", "m1", "m2", "m3"]
    loaded = await store.load_messages(s.id)
    assert loaded[1].tool_calls[0].name == "bash" and loaded[1].reasoning == "think"
    assert (
        loaded[2].meta == {"exit_code": 0}
        and loaded[3].synthetic
        and loaded[3].content == [{"type": "text", "text": "img"}]
    )
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        await store.conn.execute("UPDATE messages SET content = 'x' WHERE seq = 0")
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        await store.conn.execute("DELETE FROM messages WHERE session_id = ?", (s.id,))
    await store.delete_session(s.id)  # deleting the session is the one way messages go
    assert await store.load_messages(s.id) == []


async def test_an_unchanged_session_loaded_twice_shares_its_messages_and_a_changed_one_is_read_again(
    store: Store,
) -> None:
    # The transcript and then the agent load one session: the second load reuses the first one's (frozen)
    # messages rather than holding every text twice, and never answers with a stale history.
    s = await store.create_session()
    for i in range(3):
        await store.append_message(s.id, Message(role="user", content=f"m{i}"))
    first = await store.load_messages(s.id)
    second = await store.load_messages(s.id)
    assert second == first and second is not first
    assert all(a is b for a, b in zip(first, second, strict=True))
    second.append(Message(role="user", content="the caller's own list"))
    await store.append_message(s.id, Message(role="user", content="m3"))
    third = await store.load_messages(s.id)
    assert [m.text for m in third] == ["m0", "m1", "m2", "m3"]
    other = await store.create_session()
    await store.append_message(other.id, Message(role="user", content="elsewhere"))
    assert [m.text for m in await store.load_messages(other.id)] == ["elsewhere"]
    assert [m.text for m in await store.load_messages(s.id)] == ["m0", "m1", "m2", "m3"]


async def test_fork_copies_history_up_to_a_point(store: Store) -> None:
    s = await store.create_session(title="origin")
    for i in range(5):
        await store.append_message(s.id, Message(role="user", content=f"m{i}"))
    f = await store.fork_session(s.id, upto_seq=2)
    assert f.parent_id == s.id and f.forked_from_seq == 2 and f.title == "origin (fork)"
    assert [m.text for m in await store.load_messages(f.id)] == ["m0", "m1", "m2"]
    assert len(await store.load_messages(s.id)) == 5  # both remain
    await store.append_message(f.id, Message(role="user", content="only in fork"))
    assert len(await store.load_messages(s.id)) == 5


async def test_vault_entries_persist_and_load(store: Store) -> None:
    s = await store.create_session()
    vault = ArtifactVault(s.id, loader=store.vault_get)
    uri = vault.put("big output\n" * 100, "tool_output", "bash")
    assert await store.vault_put(s.id, vault.drain()) == 1
    fresh = ArtifactVault(s.id, loader=store.vault_get)
    entry = await fresh.get(uri)
    assert entry is not None and entry.content.startswith("big output") and entry.tool_name == "bash"
    assert (await store.vault_list(s.id))[0]["uri"] == uri


async def test_database_file_is_owner_only(tmp_path: Path) -> None:
    st = await Store.open(tmp_path / "private.db")
    await st.close()
    assert (tmp_path / "private.db").stat().st_mode & 0o077 == 0


async def test_compaction_commit_and_rollback(store: Store) -> None:
    s = await store.create_session()
    await store.save_state(s.id, '{"v": 1}')
    cp = await store.begin_compaction(s.id, '{"v": 1}')
    await store.commit_compaction(s.id, cp, '{"v": 2}')
    assert await store.load_state(s.id) == '{"v": 2}'
    cp2 = await store.begin_compaction(s.id, '{"v": 2}')
    await store.save_state(s.id, '{"v": "half-written"}')
    assert await store.recover() == [cp2]
    assert await store.load_state(s.id) == '{"v": 2}'
    assert [c["status"] for c in await store.checkpoints(s.id)] == ["committed", "rolled_back"]


WRITER = textwrap.dedent(
    """
    import asyncio, sys
    from myrm_tui.store.db import Store
    from myrm_tui.context.types import Message

    async def main(path, sid, mode):
        store = await Store.open(path)
        if mode == "compact":
            await store.save_state(sid, '{"v": "before"}')
            await store.begin_compaction(sid, '{"v": "before"}')
            await store.save_state(sid, '{"v": "partial"}')
            print("mid-compaction", flush=True)
            await asyncio.sleep(60)
        i = 0
        while True:
            m = await store.append_message(sid, Message(role="user", content=f"message {i} " + "x" * 2000))
            print(m.id, flush=True)
            i += 1

    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3]))
    """
)


def _spawn(db: Path, sid: str, mode: str) -> warm.Process:
    return warm.Popen(
        [sys.executable, "-c", WRITER, str(db), sid, mode],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
    )


async def test_kill_9_mid_write_loses_no_committed_message(tmp_path: Path) -> None:
    db = tmp_path / "crash.db"
    st = await Store.open(db)
    sid = (await st.create_session()).id
    await st.close()
    proc = _spawn(db, sid, "write")
    assert proc.stdout is not None
    committed = [proc.stdout.readline().strip() for _ in range(200)]
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)
    st = await Store.open(db)
    ids = {m.id for m in await st.load_messages(sid)}
    await st.close()
    assert set(committed) <= ids, set(committed) - ids


async def test_kill_9_during_compaction_rolls_back_on_restart(tmp_path: Path) -> None:
    db = tmp_path / "crash.db"
    st = await Store.open(db)
    sid = (await st.create_session()).id
    await st.append_message(sid, Message(role="user", content="kept"))
    await st.close()
    proc = _spawn(db, sid, "compact")
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "mid-compaction"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)
    t = time.time()
    st = await Store.open(db)  # recover() runs on open
    try:  # closed on failure too: an open aiosqlite thread would keep pytest from exiting
        assert time.time() - t < 10
        assert await st.load_state(sid) == '{"v": "before"}'
        assert [m.text for m in await st.load_messages(sid)] == ["kept"]
    finally:
        await st.close()


# -- databases myrm cannot use: one line naming the file and what to do; the file left as it was ------------


def _sqlite_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if "_connection_worker_thread" in t.name and t.is_alive()]


async def _refused(path: Path, **kw: float) -> StoreError:
    """Open ``path``, expecting a StoreError; the connection's thread must be gone (the process can exit)."""
    before = set(_sqlite_threads())
    with pytest.raises(StoreError) as err:
        await Store.open(path, **kw)
    for t in set(_sqlite_threads()) - before:
        t.join(5)
        assert not t.is_alive(), "an aiosqlite thread was left running"
    text = str(err.value)
    assert "\n" not in text and str(path) in text and err.value.path == str(path)
    return err.value


async def test_garbage_file_is_refused_and_left_untouched(tmp_path: Path) -> None:
    db = tmp_path / "myrm.db"
    garbage = os.urandom(4096)
    db.write_bytes(garbage)
    assert (
        str(await _refused(db))
        == f"{db} is not a SQLite database; move it aside and myrm starts a new one there"
    )
    assert db.read_bytes() == garbage and sorted(p.name for p in tmp_path.iterdir()) == ["myrm.db"]


async def test_damaged_database_is_refused_and_left_untouched(tmp_path: Path) -> None:
    db = tmp_path / "myrm.db"
    st = await Store.open(db)
    await st.close()
    con = sqlite3.connect(db)
    con.execute("PRAGMA journal_mode=DELETE")  # one file, so the damage is all there is
    con.close()
    data = bytearray(db.read_bytes())
    data[100:4096] = b"\x55" * (4096 - 100)  # the schema page, after the header
    db.write_bytes(bytes(data))
    text = str(await _refused(db))
    assert text.startswith(f"{db} is damaged (database disk image is malformed); move it aside")
    assert db.read_bytes() == bytes(data)


async def test_a_directory_at_the_path_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "myrm.db"
    db.mkdir()
    assert (
        str(await _refused(db))
        == f"{db} is a directory, not a database file; move it aside or point --db / MYRM_DB at another file"
    )
    assert db.is_dir() and not any(db.iterdir())


async def test_a_database_of_another_program_or_a_newer_myrm_is_refused(tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE sessions (x)")
    con.commit()
    con.close()
    assert "is a SQLite database of another program (table sessions already exists)" in str(
        await _refused(other)
    )
    con = sqlite3.connect(other)
    assert [r[0] for r in con.execute("SELECT name FROM sqlite_master")] == [
        "sessions"
    ]  # the migration rolled back
    con.close()
    newer = tmp_path / "newer.db"
    con = sqlite3.connect(newer)
    con.execute("PRAGMA user_version=99")
    con.close()
    from myrm_tui.store.schema import MIGRATIONS

    known = len(MIGRATIONS)
    assert f"was written by a newer myrm (schema 99, this one knows {known}); upgrade myrm" in str(
        await _refused(newer)
    )


async def test_a_database_locked_by_another_program_at_open_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "myrm.db"
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("PRAGMA journal_mode=DELETE")
    holder.execute("CREATE TABLE t (x)")
    holder.execute("BEGIN EXCLUSIVE")  # e.g. the sqlite3 shell in the middle of a change
    try:
        err = await _refused(db, busy_timeout=0.2)
    finally:
        holder.close()
    assert isinstance(err, DatabaseLocked)  # a type the CLI and the app can tell apart
    assert str(err) == f"{db} is locked by another program (waited 0.2 s); close the other myrm or try again"


def _open_as_unprivileged(db: Path) -> subprocess.CompletedProcess[str]:
    """Open ``db`` where file permissions bind. Root reads and writes anything, so as root the process runs
    without capabilities (``setpriv``); a user switch would not do: the interpreter lives under /root."""
    code = (
        "import asyncio, sys\nfrom myrm_tui.store.db import Store, StoreError\n"
        "try:\n    asyncio.run(Store.open(sys.argv[1]))\n"
        "except StoreError as exc:\n    print(exc)\n    sys.exit(2)\n"
    )
    prefix: list[str] = []
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("running as root without setpriv: permissions cannot be made to bind")
        prefix = [setpriv, "--inh-caps=-all", "--bounding-set=-all"]
    return subprocess.run(
        [*prefix, sys.executable, "-c", code, str(db)], capture_output=True, text=True, cwd=ROOT, timeout=60
    )


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        (
            0o000,
            "{db} cannot be read or written (permission denied); fix its permissions or point "
            "--db / MYRM_DB at another file",
        ),
        (
            0o444,
            "{db} is read-only; make it and its folder writable (chmod u+w) or point --db / "
            "MYRM_DB at another file",
        ),
    ],
)
def test_unreadable_or_read_only_database_is_refused(tmp_path: Path, mode: int, expected: str) -> None:
    db = tmp_path / "myrm.db"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE kept (x)")
    con.commit()
    con.close()
    before = db.read_bytes()
    db.chmod(mode)
    proc = _open_as_unprivileged(db)
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout.strip() == expected.format(db=db) and proc.stderr == ""
    db.chmod(0o644)
    assert db.read_bytes() == before


def _myrm(args: list[str], db: Path, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MYRM_DB": str(db), "MYRM_CONFIG": str(db.parent / "none.toml")}
    return warm.run(
        [sys.executable, "-m", "myrm_tui.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=timeout,
    )


@pytest.mark.parametrize("args", [["ask", "hello"], ["sessions"], []], ids=["ask", "sessions", "tui"])
def test_cli_on_a_garbage_database_exits_2_with_one_line(tmp_path: Path, args: list[str]) -> None:
    """Before: a DatabaseError traceback at PRAGMA journal_mode=WAL, and a process that never exited."""
    db = tmp_path / "myrm.db"
    garbage = b"this is not sqlite\n" * 300
    db.write_bytes(garbage)
    proc = _myrm(args, db)  # the timeout fails the test if the process hangs
    assert proc.returncode == 2, proc.stderr
    assert (
        proc.stderr == f"myrm: {db} is not a SQLite database; move it aside and myrm starts a new one there\n"
    )
    assert "Traceback" not in proc.stdout
    assert db.read_bytes() == garbage


_texts = st.text(max_size=20)
_thinking = st.fixed_dictionaries({"type": st.just("thinking"), "thinking": _texts})
_stored = st.builds(
    Message,
    role=st.sampled_from(["user", "assistant", "tool", "system"]),
    content=st.one_of(st.none(), _texts, st.just([{"type": "text", "text": "part"}])),
    tool_calls=st.lists(st.builds(ToolCall, _texts, _texts, _texts), max_size=2).map(tuple),
    tool_call_id=st.one_of(st.none(), _texts),
    name=st.one_of(st.none(), _texts),
    reasoning=st.one_of(st.none(), _texts),
    thinking_blocks=st.lists(_thinking, max_size=2).map(tuple),
    meta=st.dictionaries(st.sampled_from(["vault_uri", "is_error", "kind"]), _texts, max_size=2),
    synthetic=st.booleans(),
)


@settings(max_examples=30, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(messages=st.lists(_stored, min_size=1, max_size=6))
async def test_any_message_reads_back_as_it_was_stored(store: Store, messages: list[Message]) -> None:
    """Whatever a message holds or leaves empty (tool calls, meta, thinking blocks: empty ones are NULL
    in the table and not parsed back), a fresh load gives it back field for field."""
    s = await store.create_session()
    stored = [await store.append_message(s.id, m) for m in messages]
    store._handoff = None  # read the rows, not the objects the last load handed over
    loaded = await store.load_messages(s.id)
    for m, back in zip(stored, loaded, strict=True):
        assert back == m and back.meta == m.meta and back.synthetic == m.synthetic


def test_a_session_others_point_into_is_not_deleted_until_they_are(tmp_path: Path) -> None:
    """A fork reads its parent's vault (its copied messages hold ``vault://PARENT/…`` pointers):
    ``sessions --delete PARENT`` dropped those originals and the fork's pointers led nowhere. The delete is
    refused in one line naming the fork, nothing is deleted, and once the fork is gone the parent goes
    too. A session nothing points into is deleted at once."""
    import asyncio

    from myrm_tui.context.vault import VaultEntry
    from myrm_tui.store.db import SessionNeeded
    from tests.helpers import cli_env, run_myrm

    db = tmp_path / "s.db"

    async def made() -> tuple[str, str, str, str]:
        store = await Store.open(db)
        try:
            parent = await store.create_session(model="m", workspace=str(tmp_path))
            uri = f"vault://{parent.id}/abc"
            entry = VaultEntry(uri, "THE FULL OUTPUT", "tool_output", "bash", 1.0)
            await store.append_message(parent.id, Message(role="user", content=f"see {uri}"), vault=[entry])
            fork = await store.fork_session(parent.id)
            alone = await store.create_session(model="m", workspace=str(tmp_path))
            with pytest.raises(SessionNeeded) as refused:
                await store.delete_session(parent.id)
            assert fork.id in str(refused.value) and "\n" not in str(refused.value)
            assert (await store.vault_get(uri)) is not None and await store.get_session(parent.id) is not None
            return parent.id, fork.id, alone.id, uri
        finally:
            await store.close()

    async def gone(sid: str, uri: str) -> bool:
        store = await Store.open(db)
        try:
            return await store.vault_get(uri) is None and await store.get_session(sid) is None
        finally:
            await store.close()

    parent, fork, alone, uri = asyncio.run(made())
    env = cli_env(tmp_path, "s.db")
    cli = run_myrm(["sessions", "--delete", parent], env=env)
    assert cli.returncode == 2 and fork in cli.stderr and "Traceback" not in cli.stderr, cli.stderr
    assert len(cli.stderr.strip().splitlines()) == 1
    assert run_myrm(["sessions", "--delete", alone], env=env).returncode == 0
    assert run_myrm(["sessions", "--delete", fork], env=env).returncode == 0
    assert run_myrm(["sessions", "--delete", parent], env=env).returncode == 0
    assert asyncio.run(gone(parent, uri))
