"""Cache TTL prune: archive stale tool outputs, but only when the provider cache is cold.

An output older than ``cache_ttl_seconds`` is replaced by a one-line pointer into the vault
(archived, restorable — never deleted). While the prefix cache is warm, pruning would cost more
(a cache miss) than it saves, so nothing is pruned then.
"""

from __future__ import annotations

from dataclasses import dataclass

from myrm_tui.context.step import Configured, Rewritten, Trace, View
from myrm_tui.context.types import Message

MIN_PRUNE_CHARS = 600


@dataclass(frozen=True, slots=True)
class TTLSettings:
    cache_ttl_seconds: float
    exempt_tools: frozenset[str]


class CacheTTLPrune(Configured[TTLSettings]):
    name = "cache_ttl_prune"
    Settings = TTLSettings

    async def run(self, v: View, s: TTLSettings) -> Rewritten:
        req, view = v.request, v.messages
        if req.cache_warm:
            return Rewritten(messages=view)
        cutoff = req.now - s.cache_ttl_seconds
        out = view
        trace = Trace()
        decisions: dict[str, Message] = {}
        tail_start = max(len(view) - 6, req.new_start)
        for i in range(req.new_start, tail_start):
            m = view[i]
            if (
                m.role != "tool"
                or m.created_at is None
                or m.created_at > cutoff
                or len(m.text) < MIN_PRUNE_CHARS
                or (m.name or "") in s.exempt_tools
                or m.meta.get("archived")
                or req.intent.protects(m)
            ):
                continue
            uri = req.vault.put(m.text, "archive", m.name or "", reason="cache_ttl")
            new = m.derive(
                "ttl",
                content=f"[output archived after {s.cache_ttl_seconds / 60:.0f} min: "
                f"{len(m.text):,} chars at {uri}]",
                meta={**m.meta, "archived": True, "vault_uri": uri},
            )
            decisions[m.id] = new
            trace.add_removed(self.name, req.counter.message(m) - req.counter.message(new))
            if out is view:
                out = list(view)
            out[i] = new
        return Rewritten(messages=out, decisions=decisions, trace=trace)
