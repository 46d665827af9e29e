"""What ``/undo`` restores: each file's content before an agent's file tool changed it, by session and
turn, and the turns the user has undone. Both tables are append-only: an undo is a row, never a delete."""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass

from myrm_tui.store.leases import LeaseTable


@dataclass(frozen=True)
class FileBackup:
    session_id: str
    turn: int
    prompt: str
    message_id: str
    call_id: str
    path: str
    existed: bool
    kept: bool
    content: str | None
    after_sha: str


class FileBackupTable(LeaseTable):
    async def add_file_backup(self, b: FileBackup) -> None:
        async with self.transaction() as conn:
            await self._guard(conn, b.session_id)  # one writer per session, as for its messages
            await conn.execute(
                "INSERT INTO file_backups (session_id, turn, prompt, message_id, call_id, path, existed, "
                "kept, content, after_sha, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (
                    b.session_id,
                    b.turn,
                    b.prompt,
                    b.message_id,
                    b.call_id,
                    b.path,
                    int(b.existed),
                    int(b.kept),
                    b.content,
                    b.after_sha,
                    time.time(),
                ),
            )

    async def last_undoable_turn(self, sessions: Iterable[str]) -> list[FileBackup]:
        """The backups, oldest first, of the newest turn of ``sessions`` (a session and the ones it was
        forked from) that changed files and that none of them has undone; [] when there is none."""
        ids = sorted(set(sessions))
        marks = ",".join("?" * len(ids))
        sql = f"""
            SELECT b.session_id, b.turn FROM file_backups b
            WHERE b.session_id IN ({marks}) AND NOT EXISTS (
                SELECT 1 FROM file_undos u
                WHERE u.owner_id = b.session_id AND u.turn = b.turn AND u.session_id IN ({marks}))
            ORDER BY b.id DESC LIMIT 1"""
        async with self.conn.execute(sql, (*ids, *ids)) as cur:
            last = await cur.fetchone()
        if last is None:
            return []
        async with self.conn.execute(
            "SELECT session_id, turn, prompt, message_id, call_id, path, existed, kept, content, after_sha "
            "FROM file_backups WHERE session_id = ? AND turn = ? ORDER BY id",
            (last[0], last[1]),
        ) as cur:
            rows = list(await cur.fetchall())
        return [
            FileBackup(r[0], r[1], r[2], r[3], r[4], r[5], bool(r[6]), bool(r[7]), r[8], r[9]) for r in rows
        ]

    async def mark_undone(self, session_id: str, owner_id: str, turn: int) -> None:
        async with self.transaction() as conn:
            await self._guard(conn, session_id)
            await conn.execute(
                "INSERT INTO file_undos (session_id, owner_id, turn, created_at) VALUES (?,?,?,?)",
                (session_id, owner_id, turn, time.time()),
            )
