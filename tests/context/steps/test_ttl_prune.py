"""``CacheTTLPrune``: stale outputs archived only when the cache is cold."""

from __future__ import annotations

from dataclasses import replace

from myrm_tui.context.steps.ttl_prune import CacheTTLPrune
from tests.helpers import conversation, run_step, view_for


async def test_ttl_prune_archives_old_outputs_only_when_cache_cold() -> None:
    raw = conversation(10, prefix="p")
    raw = [m if m.role != "tool" else replace(m, created_at=1000.0) for m in raw]
    warm = await run_step(CacheTTLPrune(), view_for(raw, now=1000.0 + 7200, cache_warm=True))
    assert warm.messages == raw
    cold = view_for(raw, now=1000.0 + 7200)
    result = await run_step(CacheTTLPrune(), cold)
    out = result.messages
    archived = [m for m in out if m.meta.get("archived")]
    assert archived and all("vault://" in m.text for m in archived)
    assert all(cold.request.vault.get_cached(m.meta["vault_uri"]) is not None for m in archived)
    assert list(result.decisions.values()) == archived  # kept sticky by the Transaction
    assert out[-1] == raw[-1]  # the tail is left alone
