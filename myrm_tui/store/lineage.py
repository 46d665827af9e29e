"""The line a session descends by: its parent (a fork's source, a subagent's parent), that one's parent, and
so on. Its readers (which sessions' vaults a session may read, from when on a parent's work is another
branch's, which turns ``/undo`` sees) each take what they need from the one walk."""

from __future__ import annotations

from dataclasses import dataclass

import aiosqlite


@dataclass(frozen=True)
class Link:
    """One step up the line: ``child`` was made from ``parent``."""

    child: str
    parent: str
    forked_from_seq: int | None  # the child's last message copied from the parent (None: all, or a subagent)
    child_created_at: float


async def line(conn: aiosqlite.Connection, sid: str) -> list[Link]:
    """The steps up from ``sid``, nearest first. A cycle cannot occur (a parent exists before its child),
    but the walk stops at a session seen before, and after 100 steps, anyway."""
    links: list[Link] = []
    seen = {sid}
    at = sid
    while len(links) < 100:
        query = "SELECT parent_id, forked_from_seq, created_at FROM sessions WHERE id = ?"
        async with conn.execute(query, (at,)) as cur:
            row = await cur.fetchone()
        if row is None or not row[0] or row[0] in seen:
            break
        links.append(Link(at, row[0], row[1], float(row[2])))
        seen.add(row[0])
        at = row[0]
    return links
