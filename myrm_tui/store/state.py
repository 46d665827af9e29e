"""The context state of each session (compare-and-set on a version) and the compaction checkpoints that
make a compaction atomic: backup first, new state and "committed" together, rollback of a half-done one."""

from __future__ import annotations

import time
from typing import Any

import aiosqlite

from myrm_tui.store.base import StateConflict, first_row
from myrm_tui.store.leases import LeaseTable

_UPSERT_STATE = (
    "INSERT INTO context_state (session_id, state, updated_at) VALUES (?,?,?) "
    "ON CONFLICT(session_id) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at"
)


class StateTable(LeaseTable):
    async def load_state(self, sid: str) -> str | None:
        """The saved context state; its version is remembered, and the next save of this store expects it."""
        row = await first_row(
            self.conn, "SELECT state, version FROM context_state WHERE session_id = ?", (sid,)
        )
        self._state_versions[sid] = int(row[1]) if row else 0
        return row[0] if row else None

    async def _put_state(
        self, conn: aiosqlite.Connection, sid: str, state_json: str, checked: bool = True
    ) -> None:
        """Save the state: compare-and-set on the version this store last read or wrote (a save by another
        process in between raises :class:`StateConflict` instead of being overwritten)."""
        expected = self._state_versions.get(sid) if checked else None
        now = time.time()
        if expected is None:
            await conn.execute(_UPSERT_STATE, (sid, state_json, now))
        else:
            cur = await conn.execute(
                "UPDATE context_state SET state = ?, updated_at = ?, version = version + 1 "
                "WHERE session_id = ? AND version = ?",
                (state_json, now, sid, expected),
            )
            if cur.rowcount == 0:
                row = await first_row(conn, "SELECT version FROM context_state WHERE session_id = ?", (sid,))
                # guard: state-saves-are-compare-and-set
                if row is not None or expected != 0:
                    raise StateConflict(
                        self.path,
                        f"session {sid}'s context state was saved by another myrm since this one read it "
                        f"(version {row[0] if row else 'gone'}, expected {expected}); not overwritten — "
                        "reopen the session",
                    )
                await conn.execute(_UPSERT_STATE, (sid, state_json, now))
        row = await first_row(conn, "SELECT version FROM context_state WHERE session_id = ?", (sid,))
        if row is not None and (checked or sid in self._state_versions):
            self._state_versions[sid] = int(row[0])

    async def save_state(self, sid: str, state_json: str) -> None:
        async with self.transaction() as conn:
            await self._guard(conn, sid)
            await self._put_state(conn, sid, state_json)

    async def begin_compaction(self, sid: str, backup_json: str) -> int:
        """Record the pre-compact backup; returns the checkpoint id to commit or roll back."""
        async with self.transaction() as conn:
            await self._guard(conn, sid)
            cur = await conn.execute(
                "INSERT INTO checkpoints (session_id, kind, status, state, created_at) VALUES (?, "
                "'precompact', 'pending', ?, ?)",
                (sid, backup_json, time.time()),
            )
            return int(cur.lastrowid or 0)

    async def commit_compaction(self, sid: str, checkpoint_id: int, state_json: str) -> None:
        """Atomically: the new state is saved and the backup checkpoint marked committed."""
        async with self.transaction() as conn:
            await self._guard(conn, sid)
            await self._put_state(conn, sid, state_json)
            await conn.execute("UPDATE checkpoints SET status = 'committed' WHERE id = ?", (checkpoint_id,))

    async def rollback_compaction(self, sid: str, checkpoint_id: int) -> str | None:
        """Restore the backup of a failed compaction; returns the restored state JSON."""
        async with self.transaction() as conn:
            async with conn.execute("SELECT state FROM checkpoints WHERE id = ?", (checkpoint_id,)) as cur:
                row = await cur.fetchone()
            if row is None:
                return None
            await self._guard(conn, sid)
            await self._put_state(conn, sid, row[0], checked=False)
            await conn.execute("UPDATE checkpoints SET status = 'rolled_back' WHERE id = ?", (checkpoint_id,))
        return str(row[0])

    async def recover(self) -> list[int]:
        """Roll back compactions a crash left half-done; returns their checkpoint ids."""
        async with self.conn.execute(
            "SELECT id, session_id FROM checkpoints WHERE status = 'pending' ORDER BY id"
        ) as cur:
            pending = [(int(r[0]), str(r[1])) for r in await cur.fetchall()]
        done = []
        # guard: crash-half-done-compaction-rolled-back
        for cid, sid in pending:
            if await self.lease_holder(sid) is not None:
                continue  # a compaction in progress in the myrm that holds the session, not a crashed one
            await self.rollback_compaction(sid, cid)
            done.append(cid)
        return done

    async def checkpoints(self, sid: str) -> list[dict[str, Any]]:
        async with self.conn.execute(
            "SELECT id, kind, status, created_at FROM checkpoints WHERE session_id = ? ORDER BY id", (sid,)
        ) as cur:
            return [dict(r) for r in await cur.fetchall()]
