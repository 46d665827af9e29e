"""``Store``: the one SQLite database, through aiosqlite.

Durability: WAL with ``synchronous=NORMAL`` survives a killed process (kill -9) with every committed
transaction intact; each append commits on its own, so "committed" means "returned". Messages are
append-only (enforced by triggers). A compaction writes its backup checkpoint first and commits the
new context state together with marking that checkpoint done; a crash in between leaves a
``pending`` checkpoint that ``recover()`` rolls back on the next start.

Concurrency: every write goes through :meth:`Store.transaction` (``BEGIN IMMEDIATE`` … ``COMMIT``)
under a per-store ``asyncio.Lock``. The connection is shared by every coroutine of the process (turns,
compaction, titles, metrics, keep-alive probes); without the lock their statements interleave on it,
one coroutine's ``BEGIN`` lands inside another's transaction ("cannot start a transaction within a
transaction") and plain writes join, and roll back with, a transaction they do not belong to. Other
processes are kept apart by SQLite's own locks (WAL, ``busy_timeout``). Reads do not wait for the lock;
on the shared connection they see an open transaction's writes (wrap them in ``transaction()`` when
they must not). A long transaction (a fork's compaction) holds the file's write lock for its length.

One writer per session: a process that writes a session takes its lease (``acquire_lease``: a row
with its pid, host and a token); another process's ``acquire_lease`` then raises :class:`SessionBusy`,
one line naming that pid, until the holder closes its store or dies (a dead pid's lease is taken over;
one from another host when it has not written for ``LEASE_STALE_S``). Every write of messages or
context state checks the lease in its transaction, so a writer whose lease was taken over fails
loudly instead of overwriting; context-state saves are also compare-and-set on a version.

A database myrm cannot use raises :class:`StoreError`, one line naming the file and what to do; the
file is never overwritten or deleted, and the connection (and its thread) is closed before raising.

One class per kind of data, all on the one connection and lock of :class:`~myrm_tui.store.base.StoreBase`:
sessions and messages (``sessions.py``), the vault (``vault.py``), context state and checkpoints
(``state.py``), settings, metrics, leases; :class:`Store` is all of them plus opening and migrating.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from pathlib import Path

import aiosqlite

from myrm_tui.logs import failure_logged
from myrm_tui.paths import note_database
from myrm_tui.store import history
from myrm_tui.store.base import (
    _ELSEWHERE,
    BUSY_TIMEOUT_S,
    DatabaseLocked,
    SessionBusy,
    SessionNeeded,
    StateConflict,
    StoreError,
    TransactionError,
    WholeTextConnection,
    WriteFailed,
    _check_file,
    explain,
    first_row,
)
from myrm_tui.store.file_backups import FileBackupTable
from myrm_tui.store.leases import HOST, LEASE_STALE_S
from myrm_tui.store.metrics import MetricsTable
from myrm_tui.store.schema import MIGRATIONS, statements
from myrm_tui.store.sessions import SessionRow, SessionTable
from myrm_tui.store.settings import SettingsTable
from myrm_tui.store.state import StateTable
from myrm_tui.store.vault import VaultListing, VaultTable

log = logging.getLogger(__name__)

__all__ = [
    "BUSY_TIMEOUT_S",
    "HOST",
    "LEASE_STALE_S",
    "DatabaseLocked",
    "SessionBusy",
    "SessionNeeded",
    "SessionRow",
    "StateConflict",
    "Store",
    "StoreError",
    "TransactionError",
    "VaultListing",
    "WriteFailed",
    "check_database",
    "explain",
]


class Store(SessionTable, StateTable, VaultTable, SettingsTable, MetricsTable, FileBackupTable):
    @classmethod
    async def open(cls, path: str | Path, busy_timeout: float = BUSY_TIMEOUT_S) -> Store:
        """Open (creating if missing), migrate and recover the database; :class:`StoreError` if unusable."""
        p = str(path)
        if p != ":memory:":
            _check_file(Path(p))
            note_database(p)  # the agent's tools and commands leave it alone (paths.private_paths)
        try:
            # guard: any-text-can-be-stored
            conn = await aiosqlite.connect(
                p, isolation_level=None, timeout=busy_timeout, factory=WholeTextConnection
            )
        except sqlite3.Error as exc:
            raise explain(p, exc, busy_timeout) from None
        store = cls(conn, p, busy_timeout)
        try:
            conn.row_factory = aiosqlite.Row
            await conn.execute(f"PRAGMA busy_timeout={int(busy_timeout * 1000)}")
            await conn.execute("PRAGMA journal_mode=WAL")
            await conn.execute("PRAGMA synchronous=NORMAL")
            await conn.execute("PRAGMA foreign_keys=ON")
            await store._migrate()
            await store._open_history_index()
            await store.recover()
        except BaseException as exc:
            # An open aiosqlite connection keeps a non-daemon thread alive: the process would never exit.
            with failure_logged(log, "closing the connection of a database that failed to open"):
                # guard: store-connection-closed-when-open-fails
                await asyncio.shield(conn.close())
            if store._writer is not None:
                store._writer.close()
            # guard: store-an-unusable-database-is-one-line
            if isinstance(exc, sqlite3.Error):
                raise explain(p, exc, busy_timeout) from None
            raise
        return store

    async def close(self) -> None:
        for sid in list(self._leases):
            # A full disk must not keep the connection (and its thread) open.
            with failure_logged(log, f"releasing the lease of session {sid}"):
                await self.release_lease(sid)
        try:
            await self.conn.close()
        finally:
            if self._writer is not None:
                self._writer.close()

    async def _open_history_index(self) -> None:
        """Create history_search's FTS5 table if missing and index what was stored without it; off (one
        warning) where this Python's sqlite3 has no FTS5."""
        if not history.fts5_available():
            log.warning("%s", history.UNAVAILABLE)
            return
        if await history.current(self.conn):  # no write transaction (nor its lock) on every open
            self.history_indexed = True
            return
        async with self.transaction() as conn:
            await history.create(conn)
            # guard: history-search-an-existing-database
            await history.catch_up(conn)
        self.history_indexed = True

    async def _version(self) -> int:
        row = await first_row(self.conn, "PRAGMA user_version")
        return int(row[0]) if row else 0

    async def _migrate(self) -> None:
        version = await self._version()
        if version > len(MIGRATIONS):
            raise StoreError(
                self.path,
                f"{self.path} was written by a newer myrm (schema {version}, this one knows "
                f"{len(MIGRATIONS)}); upgrade myrm {_ELSEWHERE}",
            )
        while version < len(MIGRATIONS):
            async with self.transaction() as conn:
                # Read again under the write lock: two processes opening a new file at once both saw
                # version 0, and the one that waited must not run the migration the other just ran.
                version = await self._version()
                if version >= len(MIGRATIONS):
                    break
                for stmt in statements(MIGRATIONS[version]):
                    await conn.execute(stmt)
                version += 1
                await conn.execute(f"PRAGMA user_version={version}")


async def check_database(path: str | Path) -> None:
    """Open and close the database at ``path``: :class:`StoreError` (one line) if myrm cannot use it."""
    store = await Store.open(path)
    await store.close()
