"""The SQLite store: sessions, append-only messages, fork, vault, compaction checkpoints, durability."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from myrm_tui.context.types import Message, ToolCall
from myrm_tui.context.vault import ArtifactVault
from myrm_tui.store.db import Store


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
    m2 = await store.append_message(s.id, Message(role="assistant", content=None, tool_calls=(ToolCall("c", "bash", '{"command":"ls"}'),), reasoning="think"))
    m3 = await store.append_message(s.id, Message(role="tool", content="out", tool_call_id="c", name="bash", meta={"exit_code": 0}))
    m4 = await store.append_message(s.id, Message(role="user", content=[{"type": "text", "text": "img"}], synthetic=True, meta={"kind": "x"}))
    assert [m.id for m in (m1, m2, m3, m4)] == ["m0", "m1", "m2", "m3"]
    loaded = await store.load_messages(s.id)
    assert loaded[1].tool_calls[0].name == "bash" and loaded[1].reasoning == "think"
    assert loaded[2].meta == {"exit_code": 0} and loaded[3].synthetic and loaded[3].content == [{"type": "text", "text": "img"}]
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        await store.conn.execute("UPDATE messages SET content = 'x' WHERE seq = 0")
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        await store.conn.execute("DELETE FROM messages WHERE session_id = ?", (s.id,))
    await store.delete_session(s.id)  # deleting the session is the one way messages go
    assert await store.load_messages(s.id) == []


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


def _spawn(db: Path, sid: str, mode: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", WRITER, str(db), sid, mode], stdout=subprocess.PIPE, text=True,
                            cwd=Path(__file__).resolve().parents[1])


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
