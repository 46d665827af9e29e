"""One writer per session: the write lease (a row with pid, host and token), taken, checked inside every
write of a session's messages or state, and released."""

from __future__ import annotations

import asyncio
import os
import socket
import time
import uuid
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import aiosqlite

from myrm_tui.aio import to_the_end
from myrm_tui.store.base import SessionBusy, StoreBase, first_row

LEASE_STALE_S = 3600.0  # a lease of another host whose holder wrote nothing for this long is taken over
_HEARTBEAT_S = 60.0
HOST = socket.gethostname()


def _proc_start(pid: int) -> str | None:
    """The process's start time in clock ticks (Linux ``/proc``); None where there is no ``/proc``."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[-1].split()
    return fields[19] if len(fields) > 19 else None  # field 22, counted after the command name


def _alive(pid: int, started: str | None) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # another user's process: alive
    except OSError:
        return False
    now = _proc_start(pid) if started else None
    return now is None or now == started  # a different start time: the pid was reused


_MY_START = _proc_start(os.getpid())


class LeaseTable(StoreBase):
    async def _lease_row(self, sid: str) -> Any:
        return await first_row(self.conn, "SELECT * FROM session_leases WHERE session_id = ?", (sid,))

    @staticmethod
    def _held(row: Any) -> bool:
        """Whether the lease's holder is still there: its pid alive here, or recent writes from elsewhere."""
        if row["host"] != HOST:
            return bool(time.time() - row["heartbeat"] < LEASE_STALE_S)
        return _alive(row["pid"], row["started"])

    def _busy(self, sid: str, row: Any) -> SessionBusy:
        where = f" on {row['host']}" if row["host"] != HOST else ""
        return SessionBusy(
            self.path,
            f"session {sid} is open in another myrm (pid {row['pid']}{where}); close it there, "
            f"or fork it: myrm sessions --fork {sid}",
        )

    async def lease_holder(self, sid: str) -> SessionBusy | None:
        """The one-line refusal if another live myrm holds the session's lease, else None."""
        row = await self._lease_row(sid)
        if row is None or row["token"] == self._leases.get(sid) or not self._held(row):
            return None
        return self._busy(sid, row)

    async def acquire_lease(self, sid: str) -> None:
        """Become the session's one writer; :class:`SessionBusy` if another live myrm is. A lease of a
        dead process (or a stale one of another host) is taken over.

        A cancel does not cut it short either (as :meth:`release_lease`): a lease row committed but not
        remembered would make the session read as another live myrm's."""
        # guard: a-lease-taken-as-a-cancel-lands
        await self._to_the_end(self._acquire_lease(sid))

    async def _acquire_lease(self, sid: str) -> None:
        async with self.transaction() as conn:
            row = await self._lease_row(sid)
            mine = self._leases.get(sid)
            # guard: one-writer-per-session-the-lease-refuses
            if row is not None and row["token"] != mine and self._held(row):
                raise self._busy(sid, row)
            token = mine if mine is not None and row is not None else uuid.uuid4().hex
            now = time.time()
            await conn.execute(
                "INSERT INTO session_leases (session_id, token, pid, host, started, acquired_at, heartbeat) "
                "VALUES (?,?,?,?,?,?,?) ON CONFLICT(session_id) DO UPDATE SET token = excluded.token, "
                "pid = excluded.pid, host = excluded.host, started = excluded.started, "
                "acquired_at = excluded.acquired_at, heartbeat = excluded.heartbeat",
                (sid, token, os.getpid(), HOST, _MY_START, now, now),
            )
        self._leases[sid] = token

    async def _to_the_end(self, coro: Coroutine[Any, Any, None]) -> None:
        # guard: a-lease-taken-or-released-inside
        if self._owner is not None and self._owner is asyncio.current_task():
            # Inside this task's own transaction (a savepoint): a task of its own would wait for that
            # transaction, which waits for it. (Should that transaction then roll back, this store's
            # memory of the lease would not; no caller takes or releases a lease inside one today.)
            await coro
        else:
            await to_the_end(coro)

    async def release_lease(self, sid: str) -> None:
        """Let go of the session. A cancel (quit during a session switch) does not cut it short: the
        token is forgotten only once its row is gone, else the session would read as another live
        myrm's, and this process could neither write nor delete it."""
        # guard: a-leases-token-is-forgotten-only-once
        token = self._leases.get(sid)
        if token is None:
            return

        async def release() -> None:
            await self._write("DELETE FROM session_leases WHERE session_id = ? AND token = ?", (sid, token))
            if self._leases.get(sid) == token:
                del self._leases[sid]

        # guard: a-lease-released-as-a-cancel-lands
        await self._to_the_end(release())

    async def _guard(self, conn: aiosqlite.Connection, sid: str) -> None:
        """Inside a write transaction: refuse to write ``sid`` unless this store holds its lease or no live
        process does; refresh the heartbeat of a held lease now and then."""
        row = await self._lease_row(sid)
        mine = self._leases.get(sid)
        if row is None:
            if mine is not None:  # taken over, and released by the one that took it
                del self._leases[sid]
                raise SessionBusy(
                    self.path,
                    f"session {sid} was taken over by another myrm; this one stopped writing it "
                    "(nothing was overwritten) — reopen the session",
                )
            return
        if mine is not None and row["token"] == mine:
            if time.time() - row["heartbeat"] > _HEARTBEAT_S:
                await conn.execute(
                    "UPDATE session_leases SET heartbeat = ? WHERE session_id = ?", (time.time(), sid)
                )
            return
        if mine is not None or self._held(row):
            raise self._busy(sid, row)
