"""history_search's index (SQLite FTS5 in the store's database): kept current by every write, backfilled for
databases written before it, scoped to a session and its ancestors, and off with one line without FTS5."""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from myrm_tui.context.types import Message, ToolCall
from myrm_tui.context.vault import VaultEntry, readable, slice_lines
from myrm_tui.store import history
from myrm_tui.store.db import Store
from myrm_tui.store.schema import MIGRATIONS, statements

WORDS = ["the", "test", "fails", "in", "module", "config", "value", "error", "line", "result", "file"]
# A planted fact: letters and digits, never a word of the filler (each one is in exactly one source).
facts = st.text("bcdfghjkmnpqrstvwxz0123456789", min_size=6, max_size=10).filter(
    lambda s: any(c.isdigit() for c in s) and any(c.isalpha() for c in s)
)
filler = st.lists(st.sampled_from(WORDS), min_size=0, max_size=30).map(" ".join)


async def _session(store: Store, rows: list[tuple[str, str, str, bool]]) -> tuple[str, list[str]]:
    """Store ``rows`` (role, filler, fact, in the vault) as one session; the facts in order."""
    s = await store.create_session()
    planted = []
    for i, (role, text, fact, vaulted) in enumerate(rows):
        body = f"{text}\n{fact} {text}\n{text}"
        if vaulted:  # a spilled output: the message holds only the pointer
            uri = f"vault://{s.id}/{i:04x}"
            await store.append_message(
                s.id,
                Message(role="user", content=f"see {uri}"),
                vault=[VaultEntry(uri, body, "tool_output", "bash")],
            )
        elif role == "assistant":
            call = ToolCall(f"c{i}", "bash", json.dumps({"command": f"echo {fact}"}))
            await store.append_message(s.id, Message(role="assistant", content=text, tool_calls=(call,)))
            await store.append_message(s.id, Message(role="tool", content="ok", tool_call_id=f"c{i}"))
        else:
            await store.append_message(s.id, Message(role="tool" if role == "tool" else "user", content=body))
        planted.append(fact)
    return s.id, planted


@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["user", "assistant", "tool"]), filler, facts, st.booleans()),
        min_size=1,
        max_size=25,
        unique_by=lambda r: r[2],
    )
)
def test_every_stored_fact_is_found_in_the_top_five_with_a_pointer_that_reads_back(
    rows: list[tuple[str, str, str, bool]],
) -> None:
    async def run() -> None:
        store = await Store.open(":memory:")
        try:
            sid, planted = await _session(store, rows)
            await _session(store, [("user", "x", planted[0], False)])  # another session's copy
            for fact in planted:
                hits = await store.search_history(sid, fact, 5)
                shown = [h for h in hits if any(fact in ln for ln in h.lines)]
                assert shown, (fact, hits)
                assert all(h.uri.startswith(f"vault://{sid}/") for h in hits)  # never the other session's
                hit = shown[0]
                entry = await store.vault_get(hit.uri)  # the pointer resolves, its lines are the hit's
                assert entry is not None
                assert fact in slice_lines(readable(entry), f"{hit.start}:{hit.end}")
                assert len(hit.render()) < 700
        finally:
            await store.close()

    asyncio.run(run())


async def test_a_fork_finds_its_parents_vaulted_outputs_and_no_later_message(store: Store) -> None:
    parent = await store.create_session()
    uri = f"vault://{parent.id}/out1"
    await store.append_message(
        parent.id,
        Message(role="user", content="run it"),
        vault=[VaultEntry(uri, "line\nTOKEN_A9Z in the output\nend", "tool_output", "bash")],
    )
    fork = await store.fork_session(parent.id)
    await store.append_message(parent.id, Message(role="user", content="later only in parent QX77Y"))
    assert [h.uri for h in await store.search_history(fork.id, "TOKEN_A9Z", 5, [parent.id])] == [uri]
    assert await store.search_history(fork.id, "TOKEN_A9Z", 5) == []  # ancestors only when asked
    assert await store.search_history(fork.id, "QX77Y", 5, [parent.id]) == []
    copied = await store.search_history(fork.id, "run it", 5, [parent.id])
    assert [h.uri for h in copied] == [f"vault://{fork.id}/m0"]  # the fork's own copy, once
    await store.delete_session(fork.id)
    async with store.conn.execute("SELECT COUNT(*) FROM history_fts WHERE session_id = ?", (fork.id,)) as c:
        assert tuple(await c.fetchone() or ()) == (0,)


def _old_database(path: Path) -> None:
    """A database of schema 3 (before the index), holding one session's messages and a vault entry."""
    conn = sqlite3.connect(path, isolation_level=None)
    for script in MIGRATIONS[:3]:
        for stmt in statements(script):
            conn.execute(stmt)
    conn.execute("PRAGMA user_version=3")
    conn.execute("INSERT INTO sessions (id, created_at, updated_at) VALUES ('old', 0, 0)")
    for seq, text in enumerate(["first message", "the decision: use OLDFACT42 here"]):
        conn.execute(
            "INSERT INTO messages (session_id, seq, role, content, created_at) "
            "VALUES ('old', ?, 'user', ?, 0)",
            (seq, text),
        )
    conn.execute(
        "INSERT INTO vault (uri, session_id, kind, size, content, created_at) "
        "VALUES ('vault://old/v1', 'old', 'tool_output', 5, 'VAULTFACT7 out', 0)"
    )
    conn.close()


async def test_an_existing_database_is_backfilled_on_open(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    _old_database(path)
    store = await Store.open(path)
    try:
        assert store.history_indexed
        assert [h.uri for h in await store.search_history("old", "OLDFACT42")] == ["vault://old/m1"]
        assert [h.uri for h in await store.search_history("old", "VAULTFACT7")] == ["vault://old/v1"]
    finally:
        await store.close()


async def test_without_fts5_the_store_works_and_says_so_once_then_catches_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "db.sqlite"
    monkeypatch.setattr(history, "fts5_available", lambda: False)
    with caplog.at_level(logging.WARNING, logger="myrm_tui.store"):
        store = await Store.open(path)
    try:
        assert not store.history_indexed
        assert [r.getMessage() for r in caplog.records] == [history.UNAVAILABLE]
        s = await store.create_session()
        await store.append_message(s.id, Message(role="user", content="written without FTS5 NOFTS1"))
        assert await store.search_history(s.id, "NOFTS1") == []
    finally:
        await store.close()
    monkeypatch.undo()
    store = await Store.open(path)  # a Python with FTS5 opens it: what was written meanwhile is indexed
    try:
        assert [h.uri for h in await store.search_history(s.id, "NOFTS1")] == [f"vault://{s.id}/m0"]
    finally:
        await store.close()


async def test_the_index_follows_a_second_process_writes(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite"
    a = await Store.open(path)
    b = await Store.open(path)
    try:
        s = await a.create_session()
        await a.append_message(s.id, Message(role="user", content="from A ALPHA1"))
        await b.vault_put(s.id, [VaultEntry(f"vault://{s.id}/b1", "from B BETA2", "tool_output")])
        assert [h.uri for h in await a.search_history(s.id, "BETA2")] == [f"vault://{s.id}/b1"]
        assert [h.uri for h in await b.search_history(s.id, "ALPHA1")] == [f"vault://{s.id}/m0"]
    finally:
        await a.close()
        await b.close()


@pytest.mark.parametrize("query", ["", "   ", "*** (", '"', "AND OR NOT", "NEAR(a b)"])
async def test_any_query_text_is_words_not_fts_syntax(store: Store, query: str) -> None:
    s = await store.create_session()
    await store.append_message(s.id, Message(role="user", content='AND OR NOT NEAR(a b) "quoted" ('))
    hits = await store.search_history(s.id, query)
    assert len(hits) == (1 if history.phrases(query) else 0)


async def test_a_failed_index_write_never_costs_the_message_and_is_retried(
    store: Store, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    s = await store.create_session()
    real = history.catch_up

    async def broken(conn: object) -> int:
        raise sqlite3.OperationalError("database disk image is malformed (fts)")

    monkeypatch.setattr(history, "catch_up", broken)
    with caplog.at_level(logging.ERROR, logger="myrm_tui.store"):
        stored = await store.append_message(s.id, Message(role="user", content="kept anyway KEPT7"))
    assert stored.id == "m0" and [m.text for m in await store.load_messages(s.id)] == ["kept anyway KEPT7"]
    assert any(r.exc_info for r in caplog.records)  # logged with its traceback
    monkeypatch.setattr(history, "catch_up", real)
    await store.append_message(s.id, Message(role="user", content="next"))
    assert [h.uri for h in await store.search_history(s.id, "KEPT7")] == [f"vault://{s.id}/m0"]
