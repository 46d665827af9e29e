"""Sessions (create, list, rename, fork, delete) and their append-only messages."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from myrm_tui.context.types import Message, ToolCall
from myrm_tui.context.vault import VaultEntry
from myrm_tui.store import history, lineage
from myrm_tui.store.base import SessionBusy, SessionNeeded, first_row
from myrm_tui.store.leases import HOST, LeaseTable
from myrm_tui.store.vault import insert_vault

# A synthetic message's meta holds this (``append_message``): the pipeline's, never the user's.
SYNTHETIC_META = '%"synthetic": true%'
LOAD_CHUNK = 500  # rows read at a time when a session's messages are loaded
# The messages a session's transcript shows (not the system prompt, not the pipeline's synthetic ones such
# as the environment block): an unused session counts 0, as its picker row says.
_SHOWN_COUNT = (
    "(SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id AND m.role != 'system' "
    "AND (m.meta IS NULL OR m.meta NOT LIKE ?))"
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


class SessionTable(LeaseTable):
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
        sql = f"SELECT s.*, {_SHOWN_COUNT} AS n FROM sessions s ORDER BY s.updated_at DESC"
        async with self.conn.execute(sql, (SYNTHETIC_META,)) as cur:
            rows = await cur.fetchall()
        return [self._session(r) for r in rows]

    async def get_session(self, sid: str) -> SessionRow | None:
        async with self.conn.execute(
            f"SELECT s.*, {_SHOWN_COUNT} AS n FROM sessions s WHERE id = ?", (SYNTHETIC_META, sid)
        ) as cur:
            row = await cur.fetchone()
        return self._session(row) if row else None

    async def forked_from(self, sid: str) -> set[str]:
        """Ids of the sessions ``sid`` was started from (forks, a subagent's parent), nearest first (a
        cycle cannot occur: a parent exists before its child, but the walk is bounded anyway)."""
        return {link.parent for link in await lineage.line(self.conn, sid)}

    async def find_session(self, prefix: str) -> SessionRow | None:
        """A session by id or unique id prefix (as users type them)."""
        exact = await self.get_session(prefix)
        if exact:
            return exact
        matches = await self.sessions_starting(prefix)
        return matches[0] if len(matches) == 1 else None

    async def sessions_starting(self, prefix: str) -> list[SessionRow]:
        """The sessions whose id starts with ``prefix``, the most recently updated first."""
        return [s for s in await self.list_sessions() if s.id.startswith(prefix)]

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
        """Title ``sid``; :class:`SessionBusy` (nothing changed) while another live myrm has it open: that
        one still titles a new session after its first turn, or at its exit, over the name given here."""
        async with self.transaction() as conn:
            row = await self._lease_row(sid)
            # guard: a-session-open-elsewhere-is-not-renamed
            if row is not None and row["token"] != self._leases.get(sid) and self._held(row):
                where = f" on {row['host']}" if row["host"] != HOST else ""
                raise SessionBusy(
                    self.path,
                    f"session {sid} is not renamed: it is open in another myrm (pid {row['pid']}{where}), "
                    "which may title it over your name; rename it once that myrm is closed",
                )
            await conn.execute(
                "UPDATE sessions SET title = ?, updated_at = ? WHERE id = ?", (title, time.time(), sid)
            )

    async def set_session_model(self, sid: str, model: str) -> None:
        await self._write("UPDATE sessions SET model = ? WHERE id = ?", (model, sid))

    async def delete_session(self, sid: str) -> None:
        """Delete ``sid`` and everything it holds; :class:`SessionNeeded` (nothing deleted) while another
        session points into its vault or messages (``pointing_into``)."""
        async with self.transaction() as conn:
            await self._guard(conn, sid)
            # guard: a-session-others-point-into-is-not-deleted
            if users := await self.pointing_into(sid):
                more = f" and {len(users) - 3} more" if len(users) > 3 else ""
                raise SessionNeeded(
                    self.path,
                    f"session {sid} is not deleted: session{'s' if len(users) > 1 else ''} "
                    f"{', '.join(users[:3])}{more} point{'' if len(users) > 1 else 's'} into its stored "
                    f"outputs (vault://{sid}/…); delete {'them' if len(users) > 1 else 'it'} first",
                )
            await conn.execute("DELETE FROM sessions WHERE id = ?", (sid,))
            self._leases.pop(sid, None)
            self._state_versions.pop(sid, None)
            for table in (
                *("messages", "vault", "checkpoints", "context_state", "metrics", "session_leases"),
                *("file_backups", "file_undos"),
            ):
                await conn.execute(f"DELETE FROM {table} WHERE session_id = ?", (sid,))
            if self.history_indexed:
                await conn.execute("DELETE FROM history_fts WHERE session_id = ?", (sid,))
            # guard: history-search-a-deleted-sessions-rowids-are-not-skipped
            await history.rewind(conn)

    async def pointing_into(self, sid: str) -> list[str]:
        """The other sessions whose messages, vault entries or context state hold a ``vault://<sid>/``
        pointer (a fork's copied history, a parent's to its subagent's output): they would lose what it
        points to if ``sid`` went. One scan of those tables (a delete is rare)."""
        needle = f"vault://{sid}/"
        found: list[str] = []
        for table, column in (("messages", "content"), ("vault", "content"), ("context_state", "state")):
            async with self.conn.execute(
                f"SELECT DISTINCT session_id FROM {table} WHERE session_id != ? AND instr({column}, ?) > 0",
                (sid, needle),
            ) as cur:
                found += [r[0] for r in await cur.fetchall() if r[0] not in found]
        return found

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
            if self.history_indexed:
                await self._index_history()
            row = await self.get_session(new_id)
        assert row is not None
        return row

    async def _max_seq(self, sid: str) -> int:
        row = await first_row(
            self.conn, "SELECT COALESCE(MAX(seq), -1) FROM messages WHERE session_id = ?", (sid,)
        )
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
            await insert_vault(conn, sid, vault)
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
            # guard: history-search-a-stored-message
            if self.history_indexed:  # in the same transaction: a stored message is a searchable one
                await self._index_history()
        return replace(msg, id=f"m{seq}", created_at=now)

    # The app shows a session's transcript and then builds its agent, each loading the same messages: the
    # second load of an unchanged session (append-only: same last seq) gets the first one's Message objects
    # (frozen) in a new list, instead of a second copy of every text (10 MB at 10,000 messages).
    _handoff: tuple[str, int, list[Message]] | None = None

    async def load_messages(self, sid: str) -> list[Message]:
        handed, self._handoff = self._handoff, None
        if handed is not None and handed[0] == sid:
            async with self.conn.execute("SELECT MAX(seq) FROM messages WHERE session_id = ?", (sid,)) as cur:
                row = await cur.fetchone()
            if row is not None and row[0] == handed[1]:
                return list(handed[2])
        out: list[Message] = []
        last = None
        async with self.conn.execute(
            "SELECT * FROM messages WHERE session_id = ? ORDER BY seq", (sid,)
        ) as cur:
            # In chunks: the raw rows of a 10,000-message session never all exist at once beside the
            # messages made of them (a peak the process keeps as resident memory)
            while rows := list(await cur.fetchmany(LOAD_CHUNK)):
                out += self._messages_of(rows)
                last = rows[-1]["seq"]
        if last is not None:
            self._handoff = (sid, last, out)
        return list(out)

    @staticmethod
    def _messages_of(rows: Iterable[Any]) -> list[Message]:
        out = []
        for r in rows:
            content: Any = r["content"]
            if r["content_is_json"] and content is not None:
                content = json.loads(content)
            # Empty lists and meta are stored as NULL: no parse for them (two of three a row, 10,000 rows
            # on a long session's reopen)
            calls_json, meta_json, thinking = r["tool_calls"], r["meta"], r["thinking_blocks"]
            calls = (
                tuple(
                    ToolCall(c["id"], c["function"]["name"], c["function"]["arguments"])
                    for c in json.loads(calls_json)
                )
                if calls_json
                else ()
            )
            meta = json.loads(meta_json) if meta_json else {}
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
                    thinking_blocks=tuple(json.loads(thinking)) if thinking else (),
                    created_at=r["created_at"],
                    meta=meta,
                    synthetic=synthetic,
                )
            )
        return out
