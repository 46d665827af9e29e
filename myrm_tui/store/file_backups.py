"""What ``/undo`` restores: each file's content before an agent's file tool changed it, by session and
turn, and the turns the user has undone. Both tables are append-only: an undo is a row, never a delete.
The one change a backup may undergo is its content dropped, the oldest turns' first, when a session's
backups pass its cap (``undo_backups_mb``): /undo then says that turn's files cannot be restored."""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass

from myrm_tui.store import lineage
from myrm_tui.store.leases import LeaseTable


@dataclass(frozen=True)
class FileBackup:
    session_id: str
    turn: int
    prompt: str
    message_seq: int
    call_id: str
    path: str
    existed: bool
    kept: bool
    content: str | None
    after_sha: str
    made_dirs: tuple[str, ...] = ()  # the folders made for a new file, deepest first
    dropped: bool = False  # its content was dropped: the session's backups were over their cap

    @property
    def restorable(self) -> bool:
        """/undo can put the file back as it was: its content is here, or it did not exist (removed)."""
        return not self.existed or (self.kept and not self.dropped)


class FileBackupTable(LeaseTable):
    async def add_file_backup(self, b: FileBackup, max_bytes: int = 0) -> None:
        """Store ``b``; then, if the session's kept contents are over ``max_bytes`` (0: no cap), drop the
        contents of its oldest turns, whole turns, until they are not (``b``'s turn is always kept). The
        dropped turns are the oldest ones, those that only made new files too (they hold nothing to drop,
        and /undo is not exact past a dropped turn): every turn newer than them undoes exactly."""
        size = len(b.content.encode("utf-8", "surrogatepass")) if b.content is not None else 0
        async with self.transaction() as conn:
            await self._guard(conn, b.session_id)  # one writer per session, as for its messages
            await conn.execute(
                "INSERT INTO file_backups (session_id, turn, prompt, message_seq, call_id, path, existed, "
                "kept, content, after_sha, made_dirs, created_at, bytes) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    b.session_id,
                    b.turn,
                    b.prompt,
                    b.message_seq,
                    b.call_id,
                    b.path,
                    int(b.existed),
                    int(b.kept),
                    b.content,
                    b.after_sha,
                    "\n".join(b.made_dirs),
                    time.time(),
                    size,
                ),
            )
            if max_bytes <= 0:
                return
            every = list(
                await conn.execute_fetchall(
                    # every turn, those that made new files only too (nothing to drop, but older turns
                    # than a dropped one are past what /undo restores exactly: dropped with it)
                    "SELECT turn, SUM(bytes) FROM file_backups WHERE session_id = ? AND dropped = 0 "
                    "GROUP BY turn ORDER BY MIN(id)",
                    (b.session_id,),
                )
            )
            total = sum(n for _, n in every)
            turns = [(t, n) for t, n in every if t != b.turn]
            dropped = 0
            # guard: undo-backups-over-the-cap-drop-the-oldest-turns
            while total > max_bytes and dropped < len(turns):
                turn, n = turns[dropped]
                await conn.execute(
                    "UPDATE file_backups SET content = NULL, dropped = 1 WHERE session_id = ? AND turn = ? "
                    "AND dropped = 0",
                    (b.session_id, turn),
                )
                total -= n
                dropped += 1

    async def undo_lineage(self, sid: str) -> list[tuple[str, int | None]]:
        """``sid`` and the sessions it was forked from, each with the last message seq of it that ``sid``
        holds (None: all of it): a fork's /undo sees its parent's turns up to the fork, not those after."""
        out: list[tuple[str, int | None]] = [(sid, None)]
        upto: int | None = None
        for link in await lineage.line(self.conn, sid):
            # guard: undo-a-fork-sees-its-parents-turns-up-to-the-fork
            if link.forked_from_seq is not None:
                upto = link.forked_from_seq if upto is None else min(upto, link.forked_from_seq)
            out.append((link.parent, upto))
        return out

    async def last_undoable_turn(self, lineage: Iterable[tuple[str, int | None]]) -> list[FileBackup]:
        """The backups, oldest first, of the newest turn of ``lineage`` (``undo_lineage``) that changed
        files and that none of its sessions has undone; [] when there is none."""
        pairs = list(lineage)
        ids = [s for s, _ in pairs]
        marks = ",".join("?" * len(ids))
        within = " OR ".join("(b.session_id = ? AND (? IS NULL OR b.message_seq <= ?))" for _ in pairs)
        sql = f"""
            SELECT b.session_id, b.turn FROM file_backups b
            WHERE ({within}) AND NOT EXISTS (
                SELECT 1 FROM file_undos u
                WHERE u.owner_id = b.session_id AND u.turn = b.turn AND u.session_id IN ({marks}))
            ORDER BY b.id DESC LIMIT 1"""
        params = [v for s, upto in pairs for v in (s, upto, upto)]
        async with self.conn.execute(sql, (*params, *ids)) as cur:
            last = await cur.fetchone()
        if last is None:
            return []
        async with self.conn.execute(
            "SELECT session_id, turn, prompt, message_seq, call_id, path, existed, kept, content, after_sha, "
            "made_dirs, dropped "
            "FROM file_backups WHERE session_id = ? AND turn = ? ORDER BY id",
            (last[0], last[1]),
        ) as cur:
            rows = list(await cur.fetchall())
        return [
            FileBackup(
                r[0],
                r[1],
                r[2],
                r[3],
                r[4],
                r[5],
                bool(r[6]),
                bool(r[7]),
                r[8],
                r[9],
                tuple(d for d in r[10].split("\n") if d),
                bool(r[11]),
            )
            for r in rows
        ]

    async def mark_undone(self, session_id: str, owner_id: str, turn: int) -> None:
        async with self.transaction() as conn:
            await self._guard(conn, session_id)
            await conn.execute(
                "INSERT INTO file_undos (session_id, owner_id, turn, created_at) VALUES (?,?,?,?)",
                (session_id, owner_id, turn, time.time()),
            )
