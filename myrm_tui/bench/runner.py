"""The replay loop: for each recorded assistant turn, build the request a strategy would send, then
measure it — validity (provider rules, window), tokens, prefix-cache hits, cost, pipeline time —
and append what was really recorded. Probe facts are scored on each conversation's last request.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from myrm_tui.bench.corpus import Conversation, Probe
from myrm_tui.bench.strategies import Strategy
from myrm_tui.context.tokens import TokenCounter
from myrm_tui.context.types import Message
from myrm_tui.testing.prefix_cache import PrefixCacheSimulator, fingerprint
from myrm_tui.testing.validation import validate_openai


@dataclass(frozen=True)
class Prices:
    """USD per token; cache writes fall back to the plain input price where a model has none."""

    model: str
    input: float
    cache_read: float
    cache_write: float

    @classmethod
    def for_model(cls, model: str) -> Prices:
        from myrm_tui.llm.registry import model_info

        info = model_info(model) or {}
        inp = float(info.get("input_cost_per_token") or 3e-6)
        return cls(
            model,
            inp,
            float(info.get("cache_read_input_token_cost") or inp * 0.1),
            float(info.get("cache_creation_input_token_cost") or inp),
        )


@dataclass
class StrategyResult:
    name: str
    conversations: int = 0
    requests: int = 0
    rejected_requests: int = 0
    rejections: dict[str, int] = field(default_factory=dict)
    input_tokens: int = 0
    cached_input_tokens: int = 0
    cost_usd: float = 0.0
    peak_request_tokens: int = 0
    times_ms: list[float] = field(default_factory=list)
    first_quarter_ms: list[float] = field(default_factory=list)
    last_quarter_ms: list[float] = field(default_factory=list)
    probe_facts_total: int = 0
    probe_facts_kept: int = 0
    probe_facts_recoverable: int = 0
    compactions: int = 0

    def as_json(self) -> dict[str, Any]:
        def pct(xs: list[float], q: float) -> float:
            if not xs:
                return 0.0
            s = sorted(xs)
            return round(s[min(len(s) - 1, int(q * len(s)))], 4)

        return {
            "conversations": self.conversations,
            "requests": self.requests,
            "rejected_requests": self.rejected_requests,
            "rejections": self.rejections,
            "input_tokens": self.input_tokens,
            "cached_input_tokens": self.cached_input_tokens,
            "cache_hit_ratio": round(self.cached_input_tokens / self.input_tokens, 4) if self.input_tokens else 0.0,
            "cost_usd": round(self.cost_usd, 4),
            "peak_request_tokens": self.peak_request_tokens,
            "pipeline_ms_p50": pct(self.times_ms, 0.5),
            "pipeline_ms_p99": pct(self.times_ms, 0.99),
            "pipeline_ms_p50_first_quarter": pct(self.first_quarter_ms, 0.5),
            "pipeline_ms_p50_last_quarter": pct(self.last_quarter_ms, 0.5),
            "probe_facts_total": self.probe_facts_total,
            "probe_facts_kept": self.probe_facts_kept,
            "probe_retention": round(self.probe_facts_kept / self.probe_facts_total, 4) if self.probe_facts_total else None,
            "probe_recoverable": round(self.probe_facts_recoverable / self.probe_facts_total, 4) if self.probe_facts_total else None,
            "compactions": self.compactions,
        }


def _segments(view: Sequence[Message], tools: list[dict[str, Any]], counter: TokenCounter, tools_fp: tuple[str, int] | None) -> list[tuple[str, int]]:
    segs: list[tuple[str, int]] = [tools_fp] if tools_fp else []
    for m in view:
        fp = f"{m.id}|{len(m.text)}|{hash(m.text[:256])}" if m.id else fingerprint(m.to_api())
        segs.append((fp, counter.message(m)))
    return segs


def view_text(view: Sequence[Message]) -> str:
    return "\n".join(m.text + "".join(c.arguments for c in m.tool_calls) for m in view).lower()


async def replay(
    conv: Conversation, strategy: Strategy, result: StrategyResult, window: int, counter: TokenCounter,
    prices: Prices, probes: Sequence[Probe] = (), cache: PrefixCacheSimulator | None = None,
    on_request: Callable[[], None] | None = None,
) -> None:
    cache = cache or PrefixCacheSimulator("automatic")
    cache.reset(conv.id)
    strategy.start(conv.id, window)
    tools_tokens = sum(counter.text(json.dumps(t, sort_keys=True, ensure_ascii=False, default=str)) for t in conv.tools)
    tools_fp = (fingerprint(conv.tools), tools_tokens) if conv.tools else None
    turns = [i for i, m in enumerate(conv.messages) if m.role == "assistant" and i > 0]
    last_view: list[Message] = []
    for k, i in enumerate(turns):
        history = conv.messages[:i]
        t = time.perf_counter()
        view = await strategy.build(history, k)
        ms = (time.perf_counter() - t) * 1000
        result.times_ms.append(ms)
        if k < len(turns) / 4:
            result.first_quarter_ms.append(ms)
        elif k >= 3 * len(turns) / 4:
            result.last_quarter_ms.append(ms)
        tokens = counter.messages(view) + tools_tokens
        body = {"model": "bench", "messages": [m.to_api() for m in view], "tools": conv.tools or None}
        rej = validate_openai(body, window, tokens)
        result.requests += 1
        if rej is not None:
            result.rejected_requests += 1
            key = rej.code or rej.message.split(":")[0][:60]
            result.rejections[key] = result.rejections.get(key, 0) + 1
        # Rejected requests are billed as if sent: that is what they would have cost where accepted.
        c = cache.request(conv.id, _segments(view, conv.tools, counter, tools_fp))
        result.input_tokens += c.input_tokens
        result.cached_input_tokens += c.cached_tokens
        result.cost_usd += c.cached_tokens * prices.cache_read + c.uncached_tokens * prices.cache_write
        result.peak_request_tokens = max(result.peak_request_tokens, c.input_tokens)
        m = getattr(strategy, "last_metrics", None)
        if m is not None and m.compacted:
            result.compactions += 1
        last_view = view
        if on_request:
            on_request()
    result.conversations += 1
    if probes:
        text = view_text(last_view)
        vault = "\n".join(strategy.vault_texts()).lower()
        for p in probes:
            for fact in p.expected_facts:
                f = fact.lower()
                result.probe_facts_total += 1
                kept = f in text
                result.probe_facts_kept += kept
                result.probe_facts_recoverable += kept or f in vault
