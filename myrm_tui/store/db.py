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
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sqlite3
import time
import uuid
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypedDict

import aiosqlite

from myrm_tui.context.types import Message, ToolCall
from myrm_tui.context.vault import VaultEntry
from myrm_tui.store.schema import MIGRATIONS, statements

# How long a write waits for other processes' transactions before giving up. SQLite's busy handler polls
# (every 100 ms at most), so a writer can lose the race to a process that writes back to back: on a loaded
# 2-core machine two `ask`s sharing a database once waited 10 s. Waiting costs the user little (the write
# runs in aiosqlite's thread, the UI stays live); failing costs the turn.
BUSY_TIMEOUT_S = 30.0
LEASE_STALE_S = 3600.0  # a lease of another host whose holder wrote nothing for this long is taken over
_HEARTBEAT_S = 60.0
HOST = socket.gethostname()
_ELSEWHERE = "or point --db / MYRM_DB at another file"


class VaultListing(TypedDict):
    """One vault entry as the vault pane lists it (its content is loaded on open)."""

    uri: str
    kind: str
    tool_name: str
    size: int
    created_at: float
    meta: dict[str, Any]


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


def _write_failure(exc: BaseException) -> bool:
    low = str(exc).lower()
    return isinstance(exc, sqlite3.OperationalError) and any(
        w in low for w in ("full", "disk i/o", "readonly", "read-only", "no space")
    )


class SessionBusy(StoreError):
    """Another live myrm holds the session's write lease (or took it over from this one)."""


class StateConflict(StoreError):
    """The session's context state changed in the database since this store loaded it."""


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


class TransactionError(RuntimeError):
    """A programming error in the use of :meth:`Store.transaction`."""


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
        return DatabaseLocked(
            path,
            f"{path} is locked by another program (waited {busy_timeout:g} s); "
            "close the other myrm or try again",
        )
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


@dataclass(frozen=True)
class SessionRow:
    id: str
    title: str
    model: str
    workspace: str
    parent_id: str | None
    forked_from_seq: int | None
    created_at: float
    updated_at: float
    message_count: int = 0


_UPSERT_STATE = (
    "INSERT INTO context_state (session_id, state, updated_at) VALUES (?,?,?) "
    "ON CONFLICT(session_id) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at"
)


class Store:
    def __init__(self, conn: aiosqlite.Connection, path: str, busy_timeout: float = BUSY_TIMEOUT_S) -> None:
        self.conn = conn
        self.path = path
        self.busy_timeout = busy_timeout
        self._lock = asyncio.Lock()
        self._owner: asyncio.Task[Any] | None = None  # the task whose transaction is open
        self._depth = 0  # savepoints open inside it
        self._leases: dict[str, str] = {}  # session id -> this store's lease token
        self._state_versions: dict[str, int] = {}  # session id -> context-state version last read or written

    @classmethod
    async def open(cls, path: str | Path, busy_timeout: float = BUSY_TIMEOUT_S) -> Store:
        """Open (creating if missing), migrate and recover the database; :class:`StoreError` if unusable."""
        p = str(path)
        if p != ":memory:":
            _check_file(Path(p))
        try:
            conn = await aiosqlite.connect(p, isolation_level=None, timeout=busy_timeout)
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
            await store.recover()
        except BaseException as exc:
            # An open aiosqlite connection keeps a non-daemon thread alive: the process would never exit.
            with suppress(Exception):
                await asyncio.shield(conn.close())
            if isinstance(exc, sqlite3.Error):
                raise explain(p, exc, busy_timeout) from None
            raise
        return store

    async def close(self) -> None:
        for sid in list(self._leases):
            with suppress(Exception):  # a full disk must not keep the connection (and its thread) open
                await self.release_lease(sid)
        await self.conn.close()

    # -- the write lease of a session ---------------------------------------------------------------
    async def _lease_row(self, sid: str) -> Any:
        async with self.conn.execute("SELECT * FROM session_leases WHERE session_id = ?", (sid,)) as cur:
            return await cur.fetchone()

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
        dead process (or a stale one of another host) is taken over."""
        async with self.transaction() as conn:
            row = await self._lease_row(sid)
            mine = self._leases.get(sid)
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

    async def release_lease(self, sid: str) -> None:
        token = self._leases.pop(sid, None)
        if token is not None:
            await self._write("DELETE FROM session_leases WHERE session_id = ? AND token = ?", (sid, token))

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

    # -- transactions -----------------------------------------------------------------------------
    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[aiosqlite.Connection]:
        """``BEGIN IMMEDIATE`` … ``COMMIT`` (``ROLLBACK`` on any exception), one at a time per store.

        Other tasks wait for the transaction to end. A nested call from the task that holds it opens a
        ``SAVEPOINT`` instead: the inner block's writes are undone alone if it raises, and commit only
        with the outer transaction. (So a task started inside a transaction must not be awaited by it
        while it writes: it waits for the transaction, which waits for it.)"""
        task = asyncio.current_task()
        if task is not None and task is self._owner:
            async with self._savepoint():
                yield self.conn
            return
        async with self._lock:
            if self.conn.in_transaction:
                raise TransactionError(
                    "the connection is already in a transaction that Store.transaction() did not "
                    "open: some code ran BEGIN itself; every write goes through Store.transaction()"
                )
            self._owner = task
            try:
                await self._begin()
                try:
                    yield self.conn
                except BaseException as exc:
                    await self._rollback()
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
        try:
            await self.conn.execute(sql)
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                raise explain(self.path, exc, self.busy_timeout) from None
            raise

    async def _begin(self) -> None:
        """``BEGIN IMMEDIATE``. A task cancelled while it waits (Esc during a write) still lets it finish
        and rolls it back before the lock passes on: the statement runs in aiosqlite's thread all the same,
        and a transaction left open would make the next writer fail (a background summary, after Esc)."""
        begin = asyncio.ensure_future(self._run_or_explain("BEGIN IMMEDIATE"))
        try:
            await asyncio.shield(begin)
        except asyncio.CancelledError:
            with suppress(Exception):
                await begin
            await self._rollback()
            raise

    async def _rollback(self) -> None:
        # Shielded: a cancelled task still ends its transaction before the lock passes on.
        with suppress(sqlite3.Error):
            if self.conn.in_transaction:
                await asyncio.shield(self.conn.execute("ROLLBACK"))

    async def _write(self, sql: str, params: Iterable[Any] = ()) -> int:
        """One statement in its own transaction; returns the last inserted rowid."""
        async with self.transaction() as conn:
            cur = await conn.execute(sql, tuple(params))
            return int(cur.lastrowid or 0)

    async def _version(self) -> int:
        async with self.conn.execute("PRAGMA user_version") as cur:
            row = await cur.fetchone()
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

    # -- sessions ---------------------------------------------------------------------------------
    async def create_session(
        self,
        title: str = "New session",
        model: str = "",
        workspace: str = "",
        parent_id: str | None = None,
        forked_from_seq: int | None = None,
    ) -> SessionRow:
        sid = uuid.uuid4().hex[:12]
        now = time.time()
        await self._write(
            "INSERT INTO sessions (id, title, model, workspace, parent_id, forked_from_seq, "
            "created_at, updated_at) VALUES (?,?,?,?,?,?,?,?)",
            (sid, title, model, workspace, parent_id, forked_from_seq, now, now),
        )
        return SessionRow(sid, title, model, workspace, parent_id, forked_from_seq, now, now)

    async def list_sessions(self) -> list[SessionRow]:
        sql = """SELECT s.*, (SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id) AS n
                 FROM sessions s ORDER BY s.updated_at DESC"""
        async with self.conn.execute(sql) as cur:
            rows = await cur.fetchall()
        return [self._session(r) for r in rows]

    async def get_session(self, sid: str) -> SessionRow | None:
        async with self.conn.execute(
            "SELECT s.*, (SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id) AS n FROM "
            "sessions s WHERE id = ?",
            (sid,),
        ) as cur:
            row = await cur.fetchone()
        return self._session(row) if row else None

    async def find_session(self, prefix: str) -> SessionRow | None:
        """A session by id or unique id prefix (as users type them)."""
        exact = await self.get_session(prefix)
        if exact:
            return exact
        matches = [s for s in await self.list_sessions() if s.id.startswith(prefix)]
        return matches[0] if len(matches) == 1 else None

    @staticmethod
    def _session(r: Any) -> SessionRow:
        return SessionRow(
            r["id"],
            r["title"],
            r["model"],
            r["workspace"],
            r["parent_id"],
            r["forked_from_seq"],
            r["created_at"],
            r["updated_at"],
            r["n"],
        )

    async def rename_session(self, sid: str, title: str) -> None:
        await self._write(
            "UPDATE sessions SET title = ?, updated_at = ? WHERE id = ?", (title, time.time(), sid)
        )

    async def set_session_model(self, sid: str, model: str) -> None:
        await self._write("UPDATE sessions SET model = ? WHERE id = ?", (model, sid))

    async def delete_session(self, sid: str) -> None:
        async with self.transaction() as conn:
            await self._guard(conn, sid)
            await conn.execute("DELETE FROM sessions WHERE id = ?", (sid,))
            self._leases.pop(sid, None)
            self._state_versions.pop(sid, None)
            for table in ("messages", "vault", "checkpoints", "context_state", "metrics", "session_leases"):
                await conn.execute(f"DELETE FROM {table} WHERE session_id = ?", (sid,))

    async def fork_session(
        self, sid: str, upto_seq: int | None = None, title: str | None = None, copy_state: bool = False
    ) -> SessionRow:
        """A new session holding a copy of ``sid``'s messages up to ``upto_seq`` (inclusive; all if None),
        and of its context state if ``copy_state``; one transaction (a savepoint inside the caller's)."""
        async with self.transaction() as conn:
            src = await self.get_session(sid)
            if src is None:
                raise KeyError(f"no session {sid!r}")
            last = upto_seq if upto_seq is not None else (await self._max_seq(sid))
            new_id = uuid.uuid4().hex[:12]
            now = time.time()
            await conn.execute(
                "INSERT INTO sessions (id, title, model, workspace, parent_id, forked_from_seq, "
                "created_at, updated_at) VALUES (?,?,?,?,?,?,?,?)",
                (new_id, title or f"{src.title} (fork)", src.model, src.workspace, sid, last, now, now),
            )
            await conn.execute(
                """INSERT INTO messages (session_id, seq, role, content, content_is_json, tool_calls,
                                        tool_call_id, name, reasoning, meta, token_count, created_at,
                                        thinking_blocks)
                   SELECT ?, seq, role, content, content_is_json, tool_calls, tool_call_id, name, reasoning,
                          meta, token_count, created_at, thinking_blocks
                   FROM messages WHERE session_id = ? AND seq <= ? ORDER BY seq""",
                (new_id, sid, last),
            )
            if copy_state:
                await conn.execute(
                    "INSERT INTO context_state (session_id, state, updated_at) SELECT ?, state, ? "
                    "FROM context_state WHERE session_id = ?",
                    (new_id, now, sid),
                )
            row = await self.get_session(new_id)
        assert row is not None
        return row

    async def _max_seq(self, sid: str) -> int:
        async with self.conn.execute(
            "SELECT COALESCE(MAX(seq), -1) FROM messages WHERE session_id = ?", (sid,)
        ) as cur:
            row = await cur.fetchone()
        return int(row[0]) if row else -1

    # -- messages ---------------------------------------------------------------------------------
    async def append_message(
        self, sid: str, msg: Message, token_count: int = 0, vault: Iterable[VaultEntry] = ()
    ) -> Message:
        """Append and commit one message; returns it with its stored id (``m<seq>``) and timestamp.

        ``vault`` entries (the originals the message may point to) are written in the same transaction:
        a message is never stored with a ``vault://`` pointer to an entry that is not."""
        now = msg.created_at or time.time()
        content_is_json = not isinstance(msg.content, str) and msg.content is not None
        content = json.dumps(msg.content, ensure_ascii=False) if content_is_json else msg.content
        calls = (
            json.dumps([c.to_api() for c in msg.tool_calls], ensure_ascii=False) if msg.tool_calls else None
        )
        meta_d = {**msg.meta, "synthetic": True} if msg.synthetic else msg.meta
        meta = json.dumps(meta_d, ensure_ascii=False, default=str) if meta_d else None
        thinking = json.dumps(list(msg.thinking_blocks), ensure_ascii=False) if msg.thinking_blocks else None
        async with self.transaction() as conn:
            await self._guard(conn, sid)
            await self._vault_insert(conn, sid, vault)
            seq = await self._max_seq(sid) + 1  # inside the write lock: no other writer takes the same seq
            await conn.execute(
                """INSERT INTO messages (session_id, seq, role, content, content_is_json, tool_calls,
                                        tool_call_id, name, reasoning, meta, token_count, created_at,
                                        thinking_blocks)
                   VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)""",
                (
                    sid,
                    seq,
                    msg.role,
                    content,
                    int(content_is_json),
                    calls,
                    msg.tool_call_id,
                    msg.name,
                    msg.reasoning,
                    meta,
                    token_count,
                    now,
                    thinking,
                ),
            )
            await conn.execute("UPDATE sessions SET updated_at = ? WHERE id = ?", (now, sid))
        return replace(msg, id=f"m{seq}", created_at=now)

    async def load_messages(self, sid: str) -> list[Message]:
        async with self.conn.execute(
            "SELECT * FROM messages WHERE session_id = ? ORDER BY seq", (sid,)
        ) as cur:
            rows = await cur.fetchall()
        out = []
        for r in rows:
            content: Any = r["content"]
            if r["content_is_json"] and content is not None:
                content = json.loads(content)
            calls = tuple(
                ToolCall(c["id"], c["function"]["name"], c["function"]["arguments"])
                for c in json.loads(r["tool_calls"] or "[]")
            )
            meta = json.loads(r["meta"] or "{}")
            synthetic = bool(meta.pop("synthetic", False))
            out.append(
                Message(
                    role=r["role"],
                    content=content,
                    id=f"m{r['seq']}",
                    tool_calls=calls,
                    tool_call_id=r["tool_call_id"],
                    name=r["name"],
                    reasoning=r["reasoning"],
                    thinking_blocks=tuple(json.loads(r["thinking_blocks"] or "[]")),
                    created_at=r["created_at"],
                    meta=meta,
                    synthetic=synthetic,
                )
            )
        return out

    # -- settings ---------------------------------------------------------------------------------
    async def get_setting(self, key: str, default: Any = None) -> Any:
        async with self.conn.execute("SELECT value FROM settings WHERE key = ?", (key,)) as cur:
            row = await cur.fetchone()
        return json.loads(row[0]) if row else default

    async def set_setting(self, key: str, value: Any) -> None:
        await self._write(
            "INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value "
            "= excluded.value",
            (key, json.dumps(value)),
        )

    async def all_settings(self) -> dict[str, Any]:
        async with self.conn.execute("SELECT key, value FROM settings") as cur:
            return {r[0]: json.loads(r[1]) for r in await cur.fetchall()}

    # -- vault ------------------------------------------------------------------------------------
    async def vault_put(self, sid: str, entries: Iterable[VaultEntry]) -> int:
        async with self.transaction() as conn:
            return await self._vault_insert(conn, sid, entries)

    @staticmethod
    async def _vault_insert(conn: aiosqlite.Connection, sid: str, entries: Iterable[VaultEntry]) -> int:
        rows = [
            (
                e.uri,
                sid,
                e.kind,
                e.tool_name,
                e.size,
                e.content,
                json.dumps(e.meta, default=str),
                e.created_at,
            )
            for e in entries
        ]
        if rows:
            await conn.executemany(
                "INSERT OR IGNORE INTO vault (uri, session_id, kind, tool_name, size, content, "
                "meta, created_at) VALUES (?,?,?,?,?,?,?,?)",
                rows,
            )
        return len(rows)

    async def vault_get(self, uri: str) -> VaultEntry | None:
        async with self.conn.execute("SELECT * FROM vault WHERE uri = ?", (uri,)) as cur:
            r = await cur.fetchone()
        if r is None:
            return None
        return VaultEntry(
            r["uri"], r["content"], r["kind"], r["tool_name"], r["created_at"], json.loads(r["meta"] or "{}")
        )

    async def vault_list(self, sid: str) -> list[VaultListing]:
        async with self.conn.execute(
            "SELECT uri, kind, tool_name, size, created_at, meta FROM vault WHERE session_id = ? "
            "ORDER BY created_at DESC",
            (sid,),
        ) as cur:
            return [
                VaultListing(
                    uri=r["uri"],
                    kind=r["kind"],
                    tool_name=r["tool_name"],
                    size=r["size"],
                    created_at=r["created_at"],
                    meta=json.loads(r["meta"] or "{}"),
                )
                for r in await cur.fetchall()
            ]

    # -- context state and compaction checkpoints -------------------------------------------------
    async def load_state(self, sid: str) -> str | None:
        """The saved context state; its version is remembered, and the next save of this store expects it."""
        async with self.conn.execute(
            "SELECT state, version FROM context_state WHERE session_id = ?", (sid,)
        ) as cur:
            row = await cur.fetchone()
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
                async with conn.execute(
                    "SELECT version FROM context_state WHERE session_id = ?", (sid,)
                ) as c:
                    row = await c.fetchone()
                if row is not None or expected != 0:
                    raise StateConflict(
                        self.path,
                        f"session {sid}'s context state was saved by another myrm since this one read it "
                        f"(version {row[0] if row else 'gone'}, expected {expected}); not overwritten — "
                        "reopen the session",
                    )
                await conn.execute(_UPSERT_STATE, (sid, state_json, now))
        async with conn.execute("SELECT version FROM context_state WHERE session_id = ?", (sid,)) as c:
            row = await c.fetchone()
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

    # -- metrics ----------------------------------------------------------------------------------
    async def add_metrics(self, sid: str, turn: int, data: dict[str, Any]) -> None:
        await self._write(
            "INSERT INTO metrics (session_id, turn, data, created_at) VALUES (?,?,?,?)",
            (sid, turn, json.dumps(data, default=str), time.time()),
        )

    async def metrics(self, sid: str, limit: int = 500) -> list[dict[str, Any]]:
        async with self.conn.execute(
            "SELECT turn, data, created_at FROM metrics WHERE session_id = ? ORDER BY id DESC LIMIT ?",
            (sid, limit),
        ) as cur:
            rows = list(await cur.fetchall())
        return [{"turn": r[0], "created_at": r[2], **json.loads(r[1])} for r in reversed(rows)]


async def check_database(path: str | Path) -> None:
    """Open and close the database at ``path``: :class:`StoreError` (one line) if myrm cannot use it."""
    store = await Store.open(path)
    await store.close()
