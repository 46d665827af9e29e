"""The vault: originals of the tool outputs the context points to (``vault://`` URIs)."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from typing import Any, TypedDict

import aiosqlite

from myrm_tui.context.vault import VAULT_SCHEME, VaultEntry
from myrm_tui.store import history, lineage
from myrm_tui.store.base import StoreBase, first_row


class VaultListing(TypedDict):
    """One vault entry as the vault pane lists it (its content is loaded on open)."""

    uri: str
    kind: str
    tool_name: str
    size: int
    created_at: float
    meta: dict[str, Any]


async def insert_vault(conn: aiosqlite.Connection, sid: str, entries: Iterable[VaultEntry]) -> int:
    """Insert ``entries`` (an entry already stored is kept) inside the caller's transaction."""
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


async def branch_points(conn: aiosqlite.Connection, sid: str) -> dict[str, float]:
    """For each session ``sid`` descends from (``lineage.line``): when its line left that
    one, the stored time of the last message copied from it (else when the child was made). What it
    stored later is another branch's, not ``sid``'s history."""
    points: dict[str, float] = {}
    for link in await lineage.line(conn, sid):
        query = "SELECT created_at FROM messages WHERE session_id = ? AND seq = ?"
        async with conn.execute(query, (link.parent, link.forked_from_seq)) as cur:
            row = await cur.fetchone()
        points[link.parent] = float(row[0]) if row is not None else link.child_created_at
    return points


class VaultTable(StoreBase):
    async def vault_put(self, sid: str, entries: Iterable[VaultEntry]) -> int:
        async with self.transaction() as conn:
            n = await insert_vault(conn, sid, entries)
            if self.history_indexed:
                await self._index_history()
            return n

    async def vault_get(self, uri: str) -> VaultEntry | None:
        """A vault entry, or a stored message by its ``vault://<session>/m<seq>`` pointer (what
        history_search returns), rendered as an archived message."""
        sid, _, ref = uri.removeprefix(VAULT_SCHEME).partition("/")
        if uri.startswith(VAULT_SCHEME) and (m := history.MESSAGE_REF.match(ref)):
            async with self.conn.execute(
                "SELECT * FROM messages WHERE session_id = ? AND seq = ?", (sid, int(m.group(1)))
            ) as cur:
                row = await cur.fetchone()
            if row is None:
                return None
            return VaultEntry(uri, history.row_text(row), "archive", row["name"] or "", row["created_at"])
        async with self.conn.execute("SELECT * FROM vault WHERE uri = ?", (uri,)) as cur:
            r = await cur.fetchone()
        if r is None:
            return None
        return VaultEntry(
            r["uri"], r["content"], r["kind"], r["tool_name"], r["created_at"], json.loads(r["meta"] or "{}")
        )

    async def forked_at(self, sid: str) -> dict[str, float]:
        """For each session ``sid`` descends from, when the child on ``sid``'s line was made from it: what
        that session stored later is another branch's. (Not ``branch_points``' last copied message: a
        parent vaults an output on the request after its message, which may be after that message and
        still before the fork.) A fork made at an earlier point (``/fork N``) is cut just before the
        parent's first message past that point: the next turn's and every later one's work is not the
        fork's, though stored before the fork was made."""
        out: dict[str, float] = {}
        for link in await lineage.line(self.conn, sid):
            at = link.child_created_at
            if link.forked_from_seq is not None:
                row = await first_row(
                    self.conn,
                    "SELECT MIN(created_at) FROM messages WHERE session_id = ? AND seq > ?",
                    (link.parent, link.forked_from_seq),
                )
                # guard: a-fork-at-an-earlier-point-is-cut-there
                if row is not None and row[0] is not None and float(row[0]) <= at:
                    at = math.nextafter(float(row[0]), -math.inf)
            out[link.parent] = at
        return out

    async def search_history(
        self, sid: str, query: str, limit: int = 5, others: Sequence[str] = ()
    ) -> list[history.Hit]:
        """history_search: ``sid``'s messages and the vault entries of it and ``others`` (its ancestors,
        its subagents); empty when the index is off (``history_indexed``)."""
        if not self.history_indexed:
            return []
        return await history.search(self.conn, query, sid, others, limit, await branch_points(self.conn, sid))

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
