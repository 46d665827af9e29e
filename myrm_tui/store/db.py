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

A database myrm cannot use raises :class:`StoreError`, one line naming the file and what to do; the
file is never overwritten or deleted, and the connection (and its thread) is closed before raising.
"""

from __future__ import annotations

import asyncio
import json
import os
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

BUSY_TIMEOUT_S = 10.0  # how long a write waits for another process's transaction before giving up
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
        await self.conn.close()

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
                except BaseException:
                    await self._rollback()
                    raise
                try:
                    await self._run_or_explain("COMMIT")
                except BaseException:
                    await self._rollback()
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
            await conn.execute("DELETE FROM sessions WHERE id = ?", (sid,))
            for table in ("messages", "vault", "checkpoints", "context_state", "metrics"):
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
                                        tool_call_id, name, reasoning, meta, token_count, created_at)
                   SELECT ?, seq, role, content, content_is_json, tool_calls, tool_call_id, name, reasoning,
                          meta, token_count, created_at
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
    async def append_message(self, sid: str, msg: Message, token_count: int = 0) -> Message:
        """Append and commit one message; returns it with its stored id (``m<seq>``) and timestamp."""
        now = msg.created_at or time.time()
        content_is_json = not isinstance(msg.content, str) and msg.content is not None
        content = json.dumps(msg.content, ensure_ascii=False) if content_is_json else msg.content
        calls = (
            json.dumps([c.to_api() for c in msg.tool_calls], ensure_ascii=False) if msg.tool_calls else None
        )
        meta_d = {**msg.meta, "synthetic": True} if msg.synthetic else msg.meta
        meta = json.dumps(meta_d, ensure_ascii=False, default=str) if meta_d else None
        async with self.transaction() as conn:
            seq = await self._max_seq(sid) + 1  # inside the write lock: no other writer takes the same seq
            await conn.execute(
                """INSERT INTO messages (session_id, seq, role, content, content_is_json, tool_calls,
                                        tool_call_id, name, reasoning, meta, token_count, created_at)
                   VALUES (?,?,?,?,?,?,?,?,?,?,?,?)""",
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
        if not rows:
            return 0
        async with self.transaction() as conn:
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
        async with self.conn.execute("SELECT state FROM context_state WHERE session_id = ?", (sid,)) as cur:
            row = await cur.fetchone()
        return row[0] if row else None

    async def save_state(self, sid: str, state_json: str) -> None:
        await self._write(_UPSERT_STATE, (sid, state_json, time.time()))

    async def begin_compaction(self, sid: str, backup_json: str) -> int:
        """Record the pre-compact backup; returns the checkpoint id to commit or roll back."""
        return await self._write(
            "INSERT INTO checkpoints (session_id, kind, status, state, created_at) VALUES (?, "
            "'precompact', 'pending', ?, ?)",
            (sid, backup_json, time.time()),
        )

    async def commit_compaction(self, sid: str, checkpoint_id: int, state_json: str) -> None:
        """Atomically: the new state is saved and the backup checkpoint marked committed."""
        async with self.transaction() as conn:
            await conn.execute(_UPSERT_STATE, (sid, state_json, time.time()))
            await conn.execute("UPDATE checkpoints SET status = 'committed' WHERE id = ?", (checkpoint_id,))

    async def rollback_compaction(self, sid: str, checkpoint_id: int) -> str | None:
        """Restore the backup of a failed compaction; returns the restored state JSON."""
        async with self.transaction() as conn:
            async with conn.execute("SELECT state FROM checkpoints WHERE id = ?", (checkpoint_id,)) as cur:
                row = await cur.fetchone()
            if row is None:
                return None
            await conn.execute(_UPSERT_STATE, (sid, row[0], time.time()))
            await conn.execute("UPDATE checkpoints SET status = 'rolled_back' WHERE id = ?", (checkpoint_id,))
        return str(row[0])

    async def recover(self) -> list[int]:
        """Roll back compactions a crash left half-done; returns their checkpoint ids."""
        async with self.conn.execute(
            "SELECT id, session_id FROM checkpoints WHERE status = 'pending' ORDER BY id"
        ) as cur:
            pending = [(int(r[0]), str(r[1])) for r in await cur.fetchall()]
        for cid, sid in pending:
            await self.rollback_compaction(sid, cid)
        return [cid for cid, _ in pending]

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
