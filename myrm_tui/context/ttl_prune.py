"""Layer 2 — Cache TTL prune: archive stale tool outputs, but only when the provider cache is cold.

An output older than ``cache_ttl_seconds`` is replaced by a one-line pointer into the vault
(archived, restorable — never deleted). While the prefix cache is warm, pruning would cost more
(a cache miss) than it saves, so nothing is pruned then.
"""

from __future__ import annotations

from myrm_tui.context.processor import PipelineContext
from myrm_tui.context.types import Message

MIN_PRUNE_CHARS = 600


class CacheTTLPrune:
    name = "cache_ttl_prune"

    async def process(self, view: list[Message], ctx: PipelineContext) -> list[Message]:
        if ctx.cache_warm:
            return view
        cutoff = ctx.now - ctx.config.cache_ttl_seconds
        exempt = ctx.config.exempt_tools
        out = view
        tail_start = max(len(view) - 6, ctx.new_start)
        for i in range(ctx.new_start, tail_start):
            m = view[i]
            if (
                m.role != "tool"
                or m.created_at is None
                or m.created_at > cutoff
                or len(m.text) < MIN_PRUNE_CHARS
                or (m.name or "") in exempt
                or m.meta.get("archived")
                or ctx.intent.protects(m)
            ):
                continue
            uri = ctx.vault.put(m.text, "archive", m.name or "", reason="cache_ttl")
            new = m.derive(
                "ttl",
                content=f"[output archived after {ctx.config.cache_ttl_seconds / 60:.0f} min: "
                f"{len(m.text):,} chars at {uri}]",
                meta={**m.meta, "archived": True, "vault_uri": uri},
            )
            ctx.state.decisions[m.id] = new
            ctx.metrics.add_removed(self.name, ctx.counter.message(m) - ctx.counter.message(new))
            if out is view:
                out = list(view)
            out[i] = new
        return out
