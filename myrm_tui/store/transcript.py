"""Queries over a session's stored messages that do not need every message loaded: what a long session's
reopen and exit ask (is there a message of the user's) answered by SQLite alone."""

from __future__ import annotations

from myrm_tui.store.db import Store
from myrm_tui.store.sessions import SYNTHETIC_META


async def token_counts(store: Store, sid: str) -> dict[str, int]:
    """Message id -> the token count stored with it (messages stored without one are left out)."""
    async with store.conn.execute(
        "SELECT seq, token_count FROM messages WHERE session_id = ? AND token_count > 0", (sid,)
    ) as cur:
        return {f"m{r[0]}": int(r[1]) async for r in cur}


async def has_user_message(store: Store, sid: str) -> bool:
    """Whether the session holds a message the user wrote (not a synthetic one)."""
    async with store.conn.execute(
        "SELECT 1 FROM messages WHERE session_id = ? AND role = 'user' AND (meta IS NULL OR meta NOT LIKE ?)"
        " LIMIT 1",
        (sid, SYNTHETIC_META),
    ) as cur:
        return await cur.fetchone() is not None
