"""``Store``: the one SQLite database, through aiosqlite.

Durability: WAL with ``synchronous=NORMAL`` survives a killed process (kill -9) with every committed
transaction intact; each append commits on its own, so "committed" means "returned". Messages are
append-only (enforced by triggers). A compaction writes its backup checkpoint first and commits the
new context state together with marking that checkpoint done; a crash in between leaves a
``pending`` checkpoint that ``recover()`` rolls back on the next start.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiosqlite

from myrm_tui.context.types import Message, ToolCall
from myrm_tui.context.vault import VaultEntry
from myrm_tui.store.schema import MIGRATIONS


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


def _seq_of(msg_id: str) -> int:
    return int(msg_id[1:]) if msg_id.startswith("m") and msg_id[1:].isdigit() else -1


class Store:
    def __init__(self, conn: aiosqlite.Connection, path: str) -> None:
        self.conn = conn
        self.path = path

    @classmethod
    async def open(cls, path: str | Path) -> Store:
        p = str(path)
        if p != ":memory:":
            Path(p).parent.mkdir(parents=True, exist_ok=True)
            if not Path(p).exists():
                # The vault keeps raw tool outputs (which may hold secrets): owner-only from the start.
                fd = os.open(p, os.O_CREAT | os.O_WRONLY, 0o600)
                os.close(fd)
        conn = await aiosqlite.connect(p, isolation_level=None)
        conn.row_factory = aiosqlite.Row
        await conn.execute("PRAGMA journal_mode=WAL")
        await conn.execute("PRAGMA synchronous=NORMAL")
        await conn.execute("PRAGMA foreign_keys=ON")
        await conn.execute("PRAGMA busy_timeout=5000")
        store = cls(conn, p)
        await store._migrate()
        await store.recover()
        return store

    async def close(self) -> None:
        await self.conn.close()

    async def _migrate(self) -> None:
        async with self.conn.execute("PRAGMA user_version") as cur:
            row = await cur.fetchone()
        version = int(row[0]) if row else 0
        for i, script in enumerate(MIGRATIONS[version:], start=version + 1):
            await self.conn.executescript(f"BEGIN;\n{script}\nPRAGMA user_version={i};\nCOMMIT;")

    # -- sessions ---------------------------------------------------------------------------------
    async def create_session(self, title: str = "New session", model: str = "", workspace: str = "",
                             parent_id: str | None = None, forked_from_seq: int | None = None) -> SessionRow:
        sid = uuid.uuid4().hex[:12]
        now = time.time()
        await self.conn.execute(
            "INSERT INTO sessions (id, title, model, workspace, parent_id, forked_from_seq, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?)",
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
            "SELECT s.*, (SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id) AS n FROM sessions s WHERE id = ?", (sid,)
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
        return SessionRow(r["id"], r["title"], r["model"], r["workspace"], r["parent_id"], r["forked_from_seq"],
                          r["created_at"], r["updated_at"], r["n"])

    async def rename_session(self, sid: str, title: str) -> None:
        await self.conn.execute("UPDATE sessions SET title = ?, updated_at = ? WHERE id = ?", (title, time.time(), sid))

    async def set_session_model(self, sid: str, model: str) -> None:
        await self.conn.execute("UPDATE sessions SET model = ? WHERE id = ?", (model, sid))

    async def delete_session(self, sid: str) -> None:
        await self.conn.execute("BEGIN IMMEDIATE")
        try:
            await self.conn.execute("DELETE FROM sessions WHERE id = ?", (sid,))
            for table in ("messages", "vault", "checkpoints", "context_state", "metrics"):
                await self.conn.execute(f"DELETE FROM {table} WHERE session_id = ?", (sid,))
            await self.conn.execute("COMMIT")
        except BaseException:
            await self.conn.execute("ROLLBACK")
            raise

    async def fork_session(self, sid: str, upto_seq: int | None = None, title: str | None = None) -> SessionRow:
        """A new session holding a copy of ``sid``'s messages up to ``upto_seq`` (inclusive; all if None)."""
        src = await self.get_session(sid)
        if src is None:
            raise KeyError(f"no session {sid!r}")
        last = upto_seq if upto_seq is not None else (await self._max_seq(sid))
        await self.conn.execute("BEGIN IMMEDIATE")
        try:
            new_id = uuid.uuid4().hex[:12]
            now = time.time()
            await self.conn.execute(
                "INSERT INTO sessions (id, title, model, workspace, parent_id, forked_from_seq, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?)",
                (new_id, title or f"{src.title} (fork)", src.model, src.workspace, sid, last, now, now),
            )
            await self.conn.execute(
                """INSERT INTO messages (session_id, seq, role, content, content_is_json, tool_calls, tool_call_id, name, reasoning, meta, token_count, created_at)
                   SELECT ?, seq, role, content, content_is_json, tool_calls, tool_call_id, name, reasoning, meta, token_count, created_at
                   FROM messages WHERE session_id = ? AND seq <= ? ORDER BY seq""",
                (new_id, sid, last),
            )
            await self.conn.execute("COMMIT")
        except BaseException:
            await self.conn.execute("ROLLBACK")
            raise
        row = await self.get_session(new_id)
        assert row is not None
        return row

    async def _max_seq(self, sid: str) -> int:
        async with self.conn.execute("SELECT COALESCE(MAX(seq), -1) FROM messages WHERE session_id = ?", (sid,)) as cur:
            row = await cur.fetchone()
        return int(row[0]) if row else -1

    # -- messages ---------------------------------------------------------------------------------
    async def append_message(self, sid: str, msg: Message, token_count: int = 0) -> Message:
        """Append and commit one message; returns it with its stored id (``m<seq>``) and timestamp."""
        from dataclasses import replace

        now = msg.created_at or time.time()
        content_is_json = not isinstance(msg.content, str) and msg.content is not None
        content = json.dumps(msg.content, ensure_ascii=False) if content_is_json else msg.content
        calls = json.dumps([c.to_api() for c in msg.tool_calls], ensure_ascii=False) if msg.tool_calls else None
        meta_d = {**msg.meta, "synthetic": True} if msg.synthetic else msg.meta
        meta = json.dumps(meta_d, ensure_ascii=False, default=str) if meta_d else None
        await self.conn.execute("BEGIN IMMEDIATE")
        try:
            seq = await self._max_seq(sid) + 1
            await self.conn.execute(
                """INSERT INTO messages (session_id, seq, role, content, content_is_json, tool_calls, tool_call_id, name, reasoning, meta, token_count, created_at)
                   VALUES (?,?,?,?,?,?,?,?,?,?,?,?)""",
                (sid, seq, msg.role, content, int(content_is_json), calls, msg.tool_call_id, msg.name, msg.reasoning, meta, token_count, now),
            )
            await self.conn.execute("UPDATE sessions SET updated_at = ? WHERE id = ?", (now, sid))
            await self.conn.execute("COMMIT")
        except BaseException:
            await self.conn.execute("ROLLBACK")
            raise
        return replace(msg, id=f"m{seq}", created_at=now)

    async def load_messages(self, sid: str) -> list[Message]:
        async with self.conn.execute("SELECT * FROM messages WHERE session_id = ? ORDER BY seq", (sid,)) as cur:
            rows = await cur.fetchall()
        out = []
        for r in rows:
            content: Any = r["content"]
            if r["content_is_json"] and content is not None:
                content = json.loads(content)
            calls = tuple(
                ToolCall(c["id"], c["function"]["name"], c["function"]["arguments"]) for c in json.loads(r["tool_calls"] or "[]")
            )
            meta = json.loads(r["meta"] or "{}")
            synthetic = bool(meta.pop("synthetic", False))
            out.append(
                Message(
                    role=r["role"], content=content, id=f"m{r['seq']}", tool_calls=calls, tool_call_id=r["tool_call_id"],
                    name=r["name"], reasoning=r["reasoning"], created_at=r["created_at"], meta=meta, synthetic=synthetic,
                )
            )
        return out

    # -- settings ---------------------------------------------------------------------------------
    async def get_setting(self, key: str, default: Any = None) -> Any:
        async with self.conn.execute("SELECT value FROM settings WHERE key = ?", (key,)) as cur:
            row = await cur.fetchone()
        return json.loads(row[0]) if row else default

    async def set_setting(self, key: str, value: Any) -> None:
        await self.conn.execute(
            "INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, json.dumps(value)),
        )

    async def all_settings(self) -> dict[str, Any]:
        async with self.conn.execute("SELECT key, value FROM settings") as cur:
            return {r[0]: json.loads(r[1]) for r in await cur.fetchall()}

    # -- vault ------------------------------------------------------------------------------------
    async def vault_put(self, sid: str, entries: Iterable[VaultEntry]) -> int:
        rows = [(e.uri, sid, e.kind, e.tool_name, e.size, e.content, json.dumps(e.meta, default=str), e.created_at) for e in entries]
        if not rows:
            return 0
        await self.conn.execute("BEGIN IMMEDIATE")
        try:
            await self.conn.executemany(
                "INSERT OR IGNORE INTO vault (uri, session_id, kind, tool_name, size, content, meta, created_at) VALUES (?,?,?,?,?,?,?,?)", rows
            )
            await self.conn.execute("COMMIT")
        except BaseException:
            await self.conn.execute("ROLLBACK")
            raise
        return len(rows)

    async def vault_get(self, uri: str) -> VaultEntry | None:
        async with self.conn.execute("SELECT * FROM vault WHERE uri = ?", (uri,)) as cur:
            r = await cur.fetchone()
        if r is None:
            return None
        return VaultEntry(r["uri"], r["content"], r["kind"], r["tool_name"], r["created_at"], json.loads(r["meta"] or "{}"))

    async def vault_list(self, sid: str) -> list[dict[str, Any]]:
        async with self.conn.execute(
            "SELECT uri, kind, tool_name, size, created_at, meta FROM vault WHERE session_id = ? ORDER BY created_at DESC", (sid,)
        ) as cur:
            return [dict(r) | {"meta": json.loads(r["meta"] or "{}")} for r in await cur.fetchall()]

    # -- context state and compaction checkpoints -------------------------------------------------
    async def load_state(self, sid: str) -> str | None:
        async with self.conn.execute("SELECT state FROM context_state WHERE session_id = ?", (sid,)) as cur:
            row = await cur.fetchone()
        return row[0] if row else None

    async def save_state(self, sid: str, state_json: str) -> None:
        await self.conn.execute(
            "INSERT INTO context_state (session_id, state, updated_at) VALUES (?,?,?) "
            "ON CONFLICT(session_id) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at",
            (sid, state_json, time.time()),
        )

    async def begin_compaction(self, sid: str, backup_json: str) -> int:
        """Record the pre-compact backup; returns the checkpoint id to commit or roll back."""
        cur = await self.conn.execute(
            "INSERT INTO checkpoints (session_id, kind, status, state, created_at) VALUES (?, 'precompact', 'pending', ?, ?)",
            (sid, backup_json, time.time()),
        )
        return int(cur.lastrowid or 0)

    async def commit_compaction(self, sid: str, checkpoint_id: int, state_json: str) -> None:
        """Atomically: the new state is saved and the backup checkpoint marked committed."""
        await self.conn.execute("BEGIN IMMEDIATE")
        try:
            await self.conn.execute(
                "INSERT INTO context_state (session_id, state, updated_at) VALUES (?,?,?) "
                "ON CONFLICT(session_id) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at",
                (sid, state_json, time.time()),
            )
            await self.conn.execute("UPDATE checkpoints SET status = 'committed' WHERE id = ?", (checkpoint_id,))
            await self.conn.execute("COMMIT")
        except BaseException:
            await self.conn.execute("ROLLBACK")
            raise

    async def rollback_compaction(self, sid: str, checkpoint_id: int) -> str | None:
        """Restore the backup of a failed compaction; returns the restored state JSON."""
        async with self.conn.execute("SELECT state FROM checkpoints WHERE id = ?", (checkpoint_id,)) as cur:
            row = await cur.fetchone()
        if row is None:
            return None
        await self.conn.execute("BEGIN IMMEDIATE")
        try:
            await self.conn.execute(
                "INSERT INTO context_state (session_id, state, updated_at) VALUES (?,?,?) "
                "ON CONFLICT(session_id) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at",
                (sid, row[0], time.time()),
            )
            await self.conn.execute("UPDATE checkpoints SET status = 'rolled_back' WHERE id = ?", (checkpoint_id,))
            await self.conn.execute("COMMIT")
        except BaseException:
            await self.conn.execute("ROLLBACK")
            raise
        return str(row[0])

    async def recover(self) -> list[int]:
        """Roll back compactions a crash left half-done; returns their checkpoint ids."""
        async with self.conn.execute("SELECT id, session_id FROM checkpoints WHERE status = 'pending' ORDER BY id") as cur:
            pending = [(int(r[0]), str(r[1])) for r in await cur.fetchall()]
        for cid, sid in pending:
            await self.rollback_compaction(sid, cid)
        return [cid for cid, _ in pending]

    async def checkpoints(self, sid: str) -> list[dict[str, Any]]:
        async with self.conn.execute("SELECT id, kind, status, created_at FROM checkpoints WHERE session_id = ? ORDER BY id", (sid,)) as cur:
            return [dict(r) for r in await cur.fetchall()]

    # -- metrics ----------------------------------------------------------------------------------
    async def add_metrics(self, sid: str, turn: int, data: dict[str, Any]) -> None:
        await self.conn.execute(
            "INSERT INTO metrics (session_id, turn, data, created_at) VALUES (?,?,?,?)",
            (sid, turn, json.dumps(data, default=str), time.time()),
        )

    async def metrics(self, sid: str, limit: int = 500) -> list[dict[str, Any]]:
        async with self.conn.execute(
            "SELECT turn, data, created_at FROM metrics WHERE session_id = ? ORDER BY id DESC LIMIT ?", (sid, limit)
        ) as cur:
            rows = list(await cur.fetchall())
        return [{"turn": r[0], "created_at": r[2], **json.loads(r[1])} for r in reversed(rows)]
