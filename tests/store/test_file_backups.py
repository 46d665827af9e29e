"""The /undo backups' table: a database of schema 5 gets each backup's size, and dropping a backup's
content is the one change a row may undergo (``undo_backups_mb``); anything else is refused."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from myrm_tui.store.db import Store
from myrm_tui.store.schema import MIGRATIONS, statements


def _schema_5(path: Path) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    for script in MIGRATIONS[:5]:
        for stmt in statements(script):
            conn.execute(stmt)
    conn.execute("PRAGMA user_version=5")
    conn.execute("INSERT INTO sessions (id, created_at, updated_at) VALUES ('s', 0, 0)")
    for turn, content in ((1, "é" * 10), (2, None)):
        conn.execute(
            "INSERT INTO file_backups (session_id, turn, message_seq, path, existed, kept, content, "
            "after_sha, created_at) VALUES ('s', ?, 1, '/w/a.txt', ?, 1, ?, 'x', 0)",
            (turn, content is not None, content),
        )
    conn.close()


async def test_an_older_database_gets_the_sizes_and_only_a_drop_changes_a_backup(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    _schema_5(db)
    store = await Store.open(db)
    try:
        rows = await store.conn.execute_fetchall("SELECT turn, bytes, dropped FROM file_backups ORDER BY id")
        assert [tuple(r) for r in rows] == [(1, 20, 0), (2, 0, 0)]  # bytes in UTF-8, not characters
        for change in ("path = 'elsewhere'", "content = 'other'", "dropped = 1", "kept = 0, content = NULL"):
            with pytest.raises(sqlite3.IntegrityError, match="append-only"):
                await store.conn.execute(f"UPDATE file_backups SET {change} WHERE turn = 1")
        await store.conn.execute("UPDATE file_backups SET content = NULL, dropped = 1 WHERE turn = 1")
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):  # and once only
            await store.conn.execute("UPDATE file_backups SET dropped = 1 WHERE turn = 1")
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            await store.conn.execute("DELETE FROM file_backups")
    finally:
        await store.close()
