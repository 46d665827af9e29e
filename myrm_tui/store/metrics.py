"""Per-turn metrics of a session (the health panel and the bench read them)."""

from __future__ import annotations

import json
import time
from typing import Any

from myrm_tui.store.base import StoreBase


class MetricsTable(StoreBase):
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
