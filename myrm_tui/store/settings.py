"""Settings saved from the app (F2), one JSON value per key."""

from __future__ import annotations

import json
from typing import Any

from myrm_tui.store.base import StoreBase, first_row


class SettingsTable(StoreBase):
    async def get_setting(self, key: str, default: Any = None) -> Any:
        row = await first_row(self.conn, "SELECT value FROM settings WHERE key = ?", (key,))
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
