"""The store's one connection and its lock: transactions (one at a time per store, savepoints when
nested), and the one-line errors for a database myrm cannot use. The tables' classes build on it."""

from __future__ import annotations

import asyncio
import fcntl
import logging
import os
import sqlite3
import time
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Any, Self

import aiosqlite

from myrm_tui.aio import within
from myrm_tui.context.text.call_args import whole_text
from myrm_tui.logs import failure_logged
from myrm_tui.store import history

log = logging.getLogger(__name__)

# How long a write waits for other processes' transactions before giving up. SQLite's busy handler polls
# (every 100 ms at most), so a writer can lose the race to a process that writes back to back: on a loaded
# 2-core machine two `ask`s sharing a database once waited 10 s. Waiting costs the user little (the write
# runs in aiosqlite's thread, the UI stays live); failing costs the turn.
BUSY_TIMEOUT_S = 30.0
_ELSEWHERE = "or point --db / MYRM_DB at another file"


def _whole(params: Any) -> Any:
    """``params`` (a sequence or a mapping) with each text UTF-8 cannot hold made whole."""
    if isinstance(params, dict):
        return {k: whole_text(v) if isinstance(v, str) else v for k, v in params.items()}
    return [whole_text(v) if isinstance(v, str) else v for v in params]


class _WholeTextCursor(sqlite3.Cursor):
    def execute(self, sql: str, parameters: Any = (), /) -> Self:
        try:
            return super().execute(sql, parameters)
        except UnicodeEncodeError:  # raised while binding, before the statement ran: retrying is safe
            return super().execute(sql, _whole(parameters))

    def executemany(self, sql: str, seq_of_parameters: Iterable[Any], /) -> Self:
        # Rows before a bad one would already be written: every row is made whole first.
        return super().executemany(sql, [_whole(p) for p in seq_of_parameters])


class WholeTextConnection(sqlite3.Connection):
    """A connection that stores any ``str``: a lone surrogate (JSON's ``"\\ud800"`` in a model's reply
    or an MCP result, a file name or an argument Python decoded with ``surrogateescape``) cannot be
    encoded as UTF-8, and sqlite3 would raise instead of writing the message, the title or the query. Such
    a text is written with U+FFFD in the surrogate's place; the common case pays nothing."""

    def cursor(self, factory: Any = _WholeTextCursor) -> Any:
        return super().cursor(factory)

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        return self.cursor().execute(sql, parameters)

    def executemany(self, sql: str, parameters: Iterable[Any], /) -> sqlite3.Cursor:
        return self.cursor().executemany(sql, parameters)


class StoreError(Exception):
    """A database myrm cannot use. ``str()`` is one line: the path, what is wrong, what to do."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(message)
        self.path = path


class DatabaseLocked(StoreError):
    """Another process held the database's write lock for longer than the busy timeout."""


class WriteFailed(StoreError):
    """A write the disk refused (full, I/O error, read-only): the transaction rolled back, nothing stored
    before it is lost, and what it carried is kept in memory to be written by the next one."""


async def first_row(conn: aiosqlite.Connection, sql: str, params: Iterable[Any] = ()) -> Any:
    """The first row of a query, or None, in one trip to aiosqlite's thread (``async with
    conn.execute(...)`` then ``fetchone`` takes three: the statement, the fetch, the cursor's close; each
    a hand-off between threads, ~1/3 of a message append's CPU went to them)."""
    rows = await conn.execute_fetchall(sql, tuple(params))
    return next(iter(rows), None)


def _write_failure(exc: BaseException) -> bool:
    low = str(exc).lower()
    return isinstance(exc, sqlite3.OperationalError) and any(
        w in low for w in ("full", "disk i/o", "readonly", "read-only", "no space")
    )


class SessionBusy(StoreError):
    """Another live myrm holds the session's write lease (or took it over from this one)."""


class SessionNeeded(SessionBusy):
    """Other sessions point into this one's stored outputs (a fork's ``vault://…`` pointers, a parent's
    into its subagent's): deleting it would lose what they point to."""


class StateConflict(StoreError):
    """The session's context state changed in the database since this store loaded it."""


class TransactionError(RuntimeError):
    """A programming error in the use of :meth:`Store.transaction`."""


def locked_message(path: str, waited: float, timeout: float = BUSY_TIMEOUT_S) -> str:
    """``waited``: measured. A lock that never came within the timeout reads as the timeout; a refusal that
    came sooner (SQLite answers some conflicts at once) says so."""
    how = f"waited {timeout:g} s" if waited >= 0.9 * timeout else f"refused after {waited:.1f} s"
    return f"{path} is locked by another program ({how}); close the other myrm or try again"


def explain(path: str, exc: BaseException, busy_timeout: float = BUSY_TIMEOUT_S) -> StoreError:
    """The one-line :class:`StoreError` for an SQLite or OS error on the database at ``path``."""
    msg = str(exc)
    low = msg.lower()
    p = Path(path)
    if "not a database" in low:
        return StoreError(
            path, f"{path} is not a SQLite database; move it aside and myrm starts a new one there"
        )
    if "malformed" in low or "corrupt" in low:
        return StoreError(path, f"{path} is damaged ({msg}); move it aside and myrm starts a new one there")
    if "already exists" in low:  # a schema myrm did not write (its version says it has none)
        return StoreError(
            path, f"{path} is a SQLite database of another program ({msg}); move it aside {_ELSEWHERE}"
        )
    if "locked" in low or "busy" in low:
        return DatabaseLocked(path, locked_message(path, busy_timeout, busy_timeout))
    if "full" in low or "no space" in low:
        return WriteFailed(
            path,
            f"{path}: the disk is full ({msg}); the last write was not saved, everything before it is "
            "kept; free some space and run again",
        )
    if "disk i/o" in low:
        return WriteFailed(
            path, f"{path}: the disk failed a write ({msg}); everything before it is kept; check the disk"
        )
    if "readonly" in low or "read-only" in low:
        return StoreError(
            path, f"{path} is read-only; make it and its folder writable (chmod u+w) {_ELSEWHERE}"
        )
    if p.is_dir():
        return StoreError(path, f"{path} is a directory, not a database file; move it aside {_ELSEWHERE}")
    if isinstance(exc, PermissionError) or "permission" in low:
        return StoreError(
            path, f"{path} cannot be read or written (permission denied); fix its permissions {_ELSEWHERE}"
        )
    return StoreError(path, f"{path} cannot be used ({msg}); check the file and its folder {_ELSEWHERE}")


def _check_file(p: Path) -> None:
    """Refuse, before SQLite touches it, a path myrm could only fail on; create a missing file owner-only."""
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(
            str(p),
            f"cannot create the folder {p.parent} for {p.name} ({exc.strerror}); create it {_ELSEWHERE}",
        ) from None
    if p.is_dir():
        raise explain(str(p), IsADirectoryError(str(p)))
    if p.exists():
        try:
            with p.open("rb"):
                pass
        except OSError as exc:
            raise explain(str(p), exc) from None
        if not os.access(p, os.W_OK):
            raise explain(str(p), sqlite3.OperationalError("readonly"))
    else:
        try:
            # The vault keeps raw tool outputs (which may hold secrets): owner-only from the start.
            # O_EXCL: a file another process created meanwhile is opened, never truncated.
            # guard: database-owner-only
            os.close(os.open(p, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
        except FileExistsError:
            pass
        except OSError as exc:
            raise StoreError(
                str(p), f"cannot create {p} ({exc.strerror}); make its folder writable {_ELSEWHERE}"
            ) from None
    # WAL keeps two files beside the database (-wal, -shm): the folder must be writable too.
    if not os.access(p.parent, os.W_OK | os.X_OK):
        raise StoreError(
            str(p),
            f"the folder {p.parent} is read-only and SQLite writes {p.name}-wal beside "
            f"the database; make it writable {_ELSEWHERE}",
        )


class WriterLock:
    """Cross-process turns at writing, taken before ``BEGIN IMMEDIATE``: an advisory ``flock`` on a side
    file (``<db>-writer.lock``), waited for in a thread. SQLite's own busy handler polls (every 100 ms
    after the first few), so a process writing back to back could win every poll and starve another
    myrm for the whole busy timeout (seen once on a loaded 2-core machine: two ``ask``s on one database);
    a waiter blocked in ``flock`` is woken by the kernel when the lock is released, before the releasing
    process can come back for it. Programs that do not take it still meet SQLite's own locking."""

    def __init__(self, db_path: str) -> None:
        self.path = f"{db_path}-writer.lock"
        self._fd: int | None = None

    def _open(self) -> int:
        if self._fd is None:
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        return self._fd

    async def acquire(self, timeout: float) -> bool:
        """Wait up to ``timeout`` s; ``False`` if another process held it all that time. Cancelled while
        waiting, the lock is released as soon as the thread gets it (it cannot be interrupted)."""
        try:
            fd = self._open()
        except OSError:
            log.debug("writer lock file unavailable: SQLite's locking alone", exc_info=True)
            return True
        taken = asyncio.ensure_future(asyncio.to_thread(fcntl.flock, fd, fcntl.LOCK_EX))
        try:
            await within(asyncio.shield(taken), timeout)
            return True
        except (TimeoutError, asyncio.CancelledError) as exc:
            taken.add_done_callback(self._release_if_taken)
            if isinstance(exc, asyncio.CancelledError):
                raise
            return False

    def _release_if_taken(self, f: asyncio.Future[None]) -> None:
        if not f.cancelled() and f.exception() is None:
            self.release()

    def release(self) -> None:
        if self._fd is not None:
            with suppress(OSError):
                fcntl.flock(self._fd, fcntl.LOCK_UN)

    def close(self) -> None:
        if self._fd is not None:
            with suppress(OSError):
                os.close(self._fd)
            self._fd = None


class StoreBase:
    """The connection, its lock and what this store remembers per session (leases held, state versions)."""

    def __init__(self, conn: aiosqlite.Connection, path: str, busy_timeout: float = BUSY_TIMEOUT_S) -> None:
        self.conn = conn
        self.path = path
        self.busy_timeout = busy_timeout
        self._lock = asyncio.Lock()
        self._owner: asyncio.Task[Any] | None = None  # the task whose transaction is open
        self._depth = 0  # savepoints open inside it
        self._leases: dict[str, str] = {}  # session id -> this store's lease token
        self._state_versions: dict[str, int] = {}  # session id -> context-state version last read or written
        self.history_indexed = False  # history_search's FTS5 index exists and is kept current
        # guard: writers-of-two-processes-take-turns
        self._writer = WriterLock(path) if path != ":memory:" and not path.startswith("file:") else None

    # -- transactions -----------------------------------------------------------------------------
    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[aiosqlite.Connection]:
        """``BEGIN IMMEDIATE`` … ``COMMIT`` (``ROLLBACK`` on any exception), one at a time per store.

        Other tasks wait for the transaction to end. A nested call from the task that holds it opens a
        ``SAVEPOINT`` instead: the inner block's writes are undone alone if it raises, and commit only
        with the outer transaction. (So a task started inside a transaction must not be awaited by it
        while it writes: it waits for the transaction, which waits for it.)"""
        task = asyncio.current_task()
        # guard: store-a-nested-transaction
        if task is not None and task is self._owner:
            async with self._savepoint():
                yield self.conn
            return
        # guard: store-one-transaction-at-a-time
        async with self._lock:
            if self.conn.in_transaction:
                raise TransactionError(
                    "the connection is already in a transaction that Store.transaction() did not "
                    "open: some code ran BEGIN itself; every write goes through Store.transaction()"
                )
            self._owner = task
            try:
                started = time.monotonic()
                if self._writer is not None and not await self._writer.acquire(self.busy_timeout):
                    waited = time.monotonic() - started
                    raise DatabaseLocked(self.path, locked_message(self.path, waited, self.busy_timeout))
                await self._begin()
                try:
                    yield self.conn
                except BaseException as exc:
                    await self._rollback()
                    # guard: full-disk-one-line-not-a-traceback
                    if _write_failure(exc):  # a full disk is one line for the user, not a traceback
                        raise explain(self.path, exc, self.busy_timeout) from None
                    raise
                try:
                    await self._run_or_explain("COMMIT")
                except BaseException as exc:
                    await self._rollback()
                    if _write_failure(exc):
                        raise explain(self.path, exc, self.busy_timeout) from None
                    raise
            finally:
                self._owner = None
                self._depth = 0
                if self._writer is not None:
                    self._writer.release()

    @asynccontextmanager
    async def _savepoint(self) -> AsyncIterator[None]:
        self._depth += 1
        name = f"nested_{self._depth}"
        try:
            await self.conn.execute(f"SAVEPOINT {name}")
            try:
                yield
            except BaseException:
                await asyncio.shield(self._undo_savepoint(name))
                raise
            await self.conn.execute(f"RELEASE {name}")
        finally:
            self._depth -= 1

    async def _undo_savepoint(self, name: str) -> None:
        await self.conn.execute(f"ROLLBACK TO {name}")
        await self.conn.execute(f"RELEASE {name}")

    async def _run_or_explain(self, sql: str) -> None:
        started = time.monotonic()
        try:
            await self.conn.execute(sql)
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                waited = time.monotonic() - started
                log.warning("%s: %s after %.1f s", self.path, exc, waited)
                raise DatabaseLocked(
                    self.path, locked_message(self.path, waited, self.busy_timeout)
                ) from None
            raise

    async def _begin(self) -> None:
        """``BEGIN IMMEDIATE``. A task cancelled while it waits (Esc during a write) still lets it finish
        and rolls it back before the lock passes on: the statement runs in aiosqlite's thread all the same,
        and a transaction left open would make the next writer fail (a background summary, after Esc)."""
        begin = asyncio.ensure_future(self._run_or_explain("BEGIN IMMEDIATE"))
        try:
            await asyncio.shield(begin)
        except asyncio.CancelledError:
            with failure_logged(log, "BEGIN after a cancel", logging.DEBUG):
                await begin
            await self._rollback()
            raise

    async def _rollback(self) -> None:
        # Shielded: a cancelled task still ends its transaction before the lock passes on.
        with suppress(sqlite3.Error):
            if self.conn.in_transaction:
                await asyncio.shield(self.conn.execute("ROLLBACK"))

    async def _index_history(self) -> None:
        """Index what was stored since the last catch-up (``history.py``), inside the caller's transaction,
        in a savepoint of its own: a failed index write is undone alone and retried by the next write,
        never the message or output it follows."""
        try:
            async with self.transaction() as conn:
                await history.catch_up(conn)
        # guard: history-search-a-failed-index-write
        except sqlite3.Error:
            log.exception("history_search: indexing failed; the next write tries again")

    async def _write(self, sql: str, params: Iterable[Any] = ()) -> int:
        """One statement in its own transaction; returns the last inserted rowid."""
        async with self.transaction() as conn:
            cur = await conn.execute(sql, tuple(params))
            return int(cur.lastrowid or 0)
