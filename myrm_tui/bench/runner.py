"""The replay loop: for each recorded assistant turn, build the request a strategy would send, then
measure it — validity (provider rules, window), tokens, prefix-cache hits, cost, pipeline time —
and append what was really recorded. Probe facts are scored on each conversation's last request.

Billing: an accepted request is billed (cache reads at the cache-read price, every other input token at
the cache-write price) and written to the simulated provider cache. A strategy that names its cache marks
(``breakpoints``: myrm's ``cache_control`` marks, as ``render`` sends them) is billed as Anthropic bills
them: it reads only a prefix written at an earlier mark (found within ``LOOKBACK`` segments of one of its
own), writes up to its last mark, and pays the plain input price for what follows it. A rejected request
costs nothing and writes no cache, but one rejection makes the strategy infeasible. Every request is also
accounted "as sent" (as if the provider had no window): that is the reference for ``none`` and the base
of ``rewrite_overhead``, whose floor is the new content each session must send once.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

from myrm_tui.bench.corpus import Conversation, Probe
from myrm_tui.bench.strategies import Strategy
from myrm_tui.bench.summarizer import BenchSummarizer
from myrm_tui.context.steps.cache_optimize import render
from myrm_tui.context.tokens import TokenCounter
from myrm_tui.context.types import Message
from myrm_tui.store import history as history_index
from myrm_tui.testing.prefix_cache import CacheResult, PrefixCacheSimulator, fingerprint
from myrm_tui.testing.validation import validate_openai


@dataclass(frozen=True)
class Prices:
    """USD per token; cache writes fall back to the plain input price where a model has none."""

    model: str
    input: float
    cache_read: float
    cache_write: float
    output: float = 0.0  # a summarizer's answer is billed; the recorded turns' replies are the same for all

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
            float(info.get("output_cost_per_token") or inp * 5),
        )


THIRDS = ("first third", "middle third", "last third")
ROLES = {"tool": "tool output", "assistant": "assistant", "user": "user", "system": "system"}
# Suffixes of derived message ids (``Message.derive``) → what the stage did to the message.
STAGES = {
    "filtered": "filtered",
    "trim": "trimmed after its answer",
    "reason": "reasoning trimmed",
    "trunc": "truncated",
    "shrink": "shrunk",
    "dedup": "deduplicated",
    "ttl": "archived (ttl)",
    "mask": "masked",
    "media": "media stripped",
    "empty": "emptied",
    "think": "thinking stripped",
}


@dataclass(frozen=True)
class FactResult:
    """One probe fact scored on one strategy's last request of its conversation."""

    conv_id: str
    probe_id: str
    type: str
    fact: str
    reachable: bool  # verbatim in one raw message of the history the last request was built from
    kept: bool
    recoverable: bool  # kept, or in the strategy's vault
    role: str = ""  # of the raw message the fact first appears in
    third: str = ""
    stage: str = ""  # for a lost reachable fact: what happened to that message
    # For a lost reachable fact: whether history_search with the fact's own words shows it in its top
    # ``SEARCH_TOP`` hits (None: not asked — the fact was kept, or is nowhere in the history).
    by_search: bool | None = None
    alts: tuple[str, ...] = ()  # the fact's accepted spellings


@dataclass
class StrategyResult:
    name: str
    conversations: int = 0
    requests: int = 0
    rejected_requests: int = 0
    rejections: dict[str, int] = field(default_factory=dict)
    input_tokens: int = 0  # accepted requests only (billed)
    cached_input_tokens: int = 0
    cost_usd: float = 0.0
    sent_input_tokens: int = 0  # every request, as if none were rejected
    sent_cached_input_tokens: int = 0
    sent_cost_usd: float = 0.0
    peak_request_tokens: int = 0
    times_ms: list[float] = field(default_factory=list)
    first_quarter_ms: list[float] = field(default_factory=list)
    settle_ms: list[float] = field(default_factory=list)  # after each request was sent (``settle``)
    last_quarter_ms: list[float] = field(default_factory=list)
    stage_ms: list[tuple[float, dict[str, float]]] = field(
        default_factory=list
    )  # (total, per stage) when known
    facts: list[FactResult] = field(default_factory=list)
    extra_facts: dict[str, list[FactResult]] = field(default_factory=dict)  # further probe sets, by name
    compactions: int = 0
    compaction_triggers: dict[str, int] = field(default_factory=dict)  # the compaction record's trigger
    # Emergency compactions whose one new round was larger than the input budget less where the last
    # compaction left the view: no planned point could have come before them.
    emergency_rounds_over_room: int = 0
    summary_share_max: float = 0.0  # the summary blocks of a request together, as a share of the window
    compacted_after_first: int = 0  # compactions after a session's first (the amortized bound)
    requests_after_first: int = 0  # requests from a session's first compaction on
    over_window_requests: int = 0  # requests (with the tool schemas) larger than the window
    price_cache_read: float = 0.0
    price_cache_write: float = 0.0
    price_input: float = 0.0
    # Uncached tokens after a request's last cache mark: neither read nor written, billed at the input price
    # (only a strategy that names its marks has any).
    unwritten_input_tokens: int = 0
    sent_unwritten_input_tokens: int = 0
    summarizer_calls: int = 0  # every request the summarizer was sent, billed at its model's prices
    summarizer_input_tokens: int = 0
    summarizer_cached_input_tokens: int = 0
    summarizer_output_tokens: int = 0
    summarizer_cost_usd: float = 0.0
    summarizer_failures: int = 0  # no answer or a rejected one: the extractive summary stood in
    # The background summary's two routes, quoted at each preparation (main model reading its cache,
    # lite model sent the span): how often each was the cheaper, and what each would have cost in all.
    summary_routes: dict[str, int] = field(default_factory=dict)
    summary_route_quotes_usd: dict[str, float] = field(default_factory=dict)

    @property
    def probe_facts_total(self) -> int:
        return len(self.facts)

    @property
    def probe_facts_kept(self) -> int:
        return sum(f.kept for f in self.facts)

    def as_json(self) -> dict[str, Any]:
        def pct(xs: list[float], q: float) -> float:
            if not xs:
                return 0.0
            s = sorted(xs)
            return round(s[min(len(s) - 1, int(q * len(s)))], 4)

        def ratio(a: int, b: int) -> float | None:
            return round(a / b, 4) if b else None

        facts, reach = self.facts, [f for f in self.facts if f.reachable]
        uncached = self.input_tokens - self.cached_input_tokens
        sent_uncached = self.sent_input_tokens - self.sent_cached_input_tokens

        def uncached_usd(tokens: int, unwritten: int) -> float:
            return round((tokens - unwritten) * self.price_cache_write + unwritten * self.price_input, 4)

        return {
            "conversations": self.conversations,
            "requests": self.requests,
            "rejected_requests": self.rejected_requests,
            "feasible": self.rejected_requests == 0,
            "rejections": self.rejections,
            "over_window_requests": self.over_window_requests,
            "compactions_per_100_requests": round(100 * self.compactions / self.requests, 2)
            if self.requests
            else 0.0,
            # After a session's first compaction, the share of its requests that compacted (target <= 1/4).
            "compacted_share_after_first": ratio(self.compacted_after_first, self.requests_after_first),
            "input_tokens": self.input_tokens,
            "cached_input_tokens": self.cached_input_tokens,
            "uncached_input_tokens": uncached,
            "cache_hit_ratio": round(self.cached_input_tokens / self.input_tokens, 4)
            if self.input_tokens
            else 0.0,
            "cost_usd": round(self.cost_usd + self.summarizer_cost_usd, 4),
            "cost_main_usd": round(self.cost_usd, 4),
            "summarizer_calls": self.summarizer_calls,
            "summarizer_input_tokens": self.summarizer_input_tokens,
            "summarizer_cached_input_tokens": self.summarizer_cached_input_tokens,
            "summarizer_cache_hit_ratio": ratio(
                self.summarizer_cached_input_tokens, self.summarizer_input_tokens
            ),
            "summarizer_output_tokens": self.summarizer_output_tokens,
            "summarizer_cost_usd": round(self.summarizer_cost_usd, 4),
            "summarizer_failures": self.summarizer_failures,
            "summary_routes": dict(sorted(self.summary_routes.items())),
            "summary_route_quotes_usd": {
                k: round(v, 4) for k, v in sorted(self.summary_route_quotes_usd.items())
            },
            "cost_cached_usd": round(self.cached_input_tokens * self.price_cache_read, 4),
            "cost_uncached_usd": uncached_usd(uncached, self.unwritten_input_tokens),
            "unwritten_input_tokens": self.unwritten_input_tokens,
            "sent": {
                "input_tokens": self.sent_input_tokens,
                "cached_input_tokens": self.sent_cached_input_tokens,
                "uncached_input_tokens": sent_uncached,
                "cost_usd": round(self.sent_cost_usd, 4),
                "cost_cached_usd": round(self.sent_cached_input_tokens * self.price_cache_read, 4),
                "cost_uncached_usd": uncached_usd(sent_uncached, self.sent_unwritten_input_tokens),
                "unwritten_input_tokens": self.sent_unwritten_input_tokens,
            },
            "rewrite_overhead": None,  # filled in by run_bench against none's sent uncached tokens
            "peak_request_tokens": self.peak_request_tokens,
            "pipeline_ms_p50": pct(self.times_ms, 0.5),
            "pipeline_ms_p99": pct(self.times_ms, 0.99),
            # What the agent reads of a request's new messages while the model answers: not in the p99 above.
            "pipeline_settle_ms_p99": pct(self.settle_ms, 0.99),
            "pipeline_ms_p50_first_quarter": pct(self.first_quarter_ms, 0.5),
            "pipeline_ms_p50_last_quarter": pct(self.last_quarter_ms, 0.5),
            "pipeline_slowest_stages_ms": self._slowest_stages(),
            "pipeline_slowest_requests": max(1, len(self.stage_ms) // 100) if self.stage_ms else 0,
            "probe_facts_total": len(facts),
            "probe_facts_kept": sum(f.kept for f in facts),
            "probe_retention": ratio(sum(f.kept for f in facts), len(facts)),
            "probe_recoverable": ratio(sum(f.recoverable for f in facts), len(facts)),
            "probe_facts_reachable": len(reach),
            "probe_facts_reachable_kept": sum(f.kept for f in reach),
            "probe_retention_reachable": ratio(sum(f.kept for f in reach), len(reach)),
            "probe_by_type": _breakdown(facts, lambda f: f.type or "untyped", with_all=True),
            "probe_reachable_by_role": _breakdown(reach, lambda f: f.role),
            "probe_reachable_by_third": _breakdown(reach, lambda f: f.third, order=THIRDS),
            "probe_lost_by_stage": dict(Counter(f.stage for f in reach if not f.kept).most_common()),
            "probe_recoverable_by_search": _by_search(reach),
            "probe_lost": [
                {
                    "conv_id": f.conv_id,
                    "probe_id": f.probe_id,
                    "type": f.type,
                    "fact": f.fact,
                    "role": f.role,
                    "third": f.third,
                    "stage": f.stage,
                    "in_vault": f.recoverable,
                    "by_search": f.by_search,
                }
                for f in reach
                if not f.kept
            ],
            "probe_sets": {
                name: {
                    "probe_facts_total": len(fs),
                    "probe_facts_reachable": sum(f.reachable for f in fs),
                    "probe_retention": ratio(sum(f.kept for f in fs), len(fs)),
                    "probe_retention_reachable": ratio(
                        sum(f.kept for f in fs if f.reachable), sum(f.reachable for f in fs)
                    ),
                    "probe_recoverable_by_search": _by_search([f for f in fs if f.reachable]),
                }
                for name, fs in self.extra_facts.items()
            },
            "compactions": self.compactions,
            "compaction_triggers": dict(sorted(self.compaction_triggers.items())),
            "planned_compaction_share": planned_share(self.compaction_triggers),
            "emergency_rounds_over_room": self.emergency_rounds_over_room,
            "summary_share_max": round(self.summary_share_max, 4),
        }

    def _slowest_stages(self) -> dict[str, float]:
        """Per-stage time summed over the slowest 1 % of requests (where the strategy reports stages)."""
        if not self.stage_ms:
            return {}
        ranked = sorted(self.stage_ms, key=lambda x: x[0], reverse=True)[: max(1, len(self.stage_ms) // 100)]
        acc: Counter[str] = Counter()
        for _, stages in ranked:
            acc.update(stages)
        return {k: round(v, 3) for k, v in acc.most_common(5)}


SEARCH_TOP = 5
LOOKBACK = 20  # Anthropic finds a cached prefix about 20 blocks before a cache mark (a segment here)


def cache_marks(
    strategy: Strategy, view: Sequence[Message], tools_fp: tuple[str, int] | None
) -> list[int] | None:
    """The segments ``strategy`` marks for the provider cache in this request, as ``render`` sends them: the
    last tool definition (the tool schemas' segment) and its message marks; None when it names none (it is
    billed as if it marked every prefix)."""
    marks = getattr(strategy, "breakpoints", None)
    if marks is None:
        return None
    first = 1 if tools_fp else 0
    return [*([0] if tools_fp else []), *(i + first for i in marks if 0 <= i < len(view))]


def billed(c: CacheResult, marked: bool, prices: Prices) -> tuple[float, int]:
    """The price of one request's input and its uncached tokens after the last mark (the input price)."""
    unwritten = c.uncached_tokens - c.cache_write_tokens if marked else 0
    written = c.uncached_tokens - unwritten
    return (
        c.cached_tokens * prices.cache_read + written * prices.cache_write + unwritten * prices.input,
        unwritten,
    )


def _by_search(reach: Sequence[FactResult]) -> float | None:
    """Of the reachable facts lost from the last request, the share history_search recovers."""
    lost = [f for f in reach if not f.kept]
    return round(sum(bool(f.by_search) for f in lost) / len(lost), 4) if lost else None


_WORDS = re.compile(r"\w+")


def shows(fact: str, line: str) -> bool:
    """Whether ``line`` shows ``fact``: verbatim, or its words in order (a tool call's arguments are shown
    as ``amount: 39`` where the call sent ``"amount":39``)."""
    if fact.lower() in line.lower():
        return True
    words = " ".join(_WORDS.findall(fact.lower()))
    return bool(words) and f" {words} " in f" {' '.join(_WORDS.findall(line.lower()))} "


async def search_lost(history: Sequence[Message], facts: list[FactResult]) -> list[FactResult]:
    """``facts`` with ``by_search`` set on the lost reachable ones: does a history_search of the fact's
    own words, over the conversation's messages indexed as the store indexes them, show the fact in one
    of its top ``SEARCH_TOP`` hits?"""
    lost = [i for i, f in enumerate(facts) if f.reachable and not f.kept]
    if not lost:
        return facts
    conn = await history_index.memory_index(
        [
            (
                f"m{i}",
                m.role,
                history_index.message_text(
                    m.role, m.content, [c.to_api() for c in m.tool_calls], m.name, m.tool_call_id
                ),
            )
            for i, m in enumerate(history)
        ]
    )
    out = list(facts)
    try:
        for i in lost:
            f = facts[i]
            found = False
            for alt in f.alts or (f.fact,):
                hits = await history_index.search(conn, alt, "bench", limit=SEARCH_TOP)
                if any(shows(alt, ln) for h in hits for ln in h.lines):
                    found = True
                    break
            out[i] = replace(f, by_search=found)
    finally:
        await conn.close()
    return out


AUTOMATIC_TRIGGERS = ("threshold", "emergency", "fit")  # not manual, a fork's or a provider's overflow


def planned_share(triggers: Mapping[str, int]) -> float | None:
    """Of the automatic compactions, the share that fired at a threshold (planned, not the emergency net)."""
    auto = sum(triggers.get(t, 0) for t in AUTOMATIC_TRIGGERS)
    return round(triggers.get("threshold", 0) / auto, 4) if auto else None


def _breakdown(
    facts: Sequence[FactResult],
    key: Callable[[FactResult], str],
    with_all: bool = False,
    order: Sequence[str] = (),
) -> dict[str, dict[str, Any]]:
    groups: dict[str, list[FactResult]] = {k: [] for k in order}
    for f in facts:
        groups.setdefault(key(f), []).append(f)
    out: dict[str, dict[str, Any]] = {}
    for k, fs in groups.items():
        kept = sum(f.kept for f in fs)
        row: dict[str, Any] = {
            "facts": len(fs),
            "kept": kept,
            "retention": round(kept / len(fs), 4) if fs else None,
        }
        if with_all:
            r = [f for f in fs if f.reachable]
            rk = sum(f.kept for f in r)
            row |= {
                "reachable_facts": len(r),
                "reachable_kept": rk,
                "retention_reachable": round(rk / len(r), 4) if r else None,
            }
        out[k] = row
    return out


def _segments(
    view: Sequence[Message],
    tools: list[dict[str, Any]],
    counter: TokenCounter,
    tools_fp: tuple[str, int] | None,
) -> list[tuple[str, int]]:
    segs: list[tuple[str, int]] = [tools_fp] if tools_fp else []
    for m in view:
        fp = f"{m.id}|{len(m.text)}|{hash(m.text[:256])}" if m.id else fingerprint(m.to_api())
        segs.append((fp, counter.message(m)))
    return segs


def view_text(view: Sequence[Message]) -> str:
    return "\n".join(m.text + "".join(c.arguments for c in m.tool_calls) for m in view).lower()


def _stage(raw: Message, view: Sequence[Message]) -> str:
    """What happened to the raw message ``raw`` in ``view``, read from derived ids and summary markers."""
    if not any(m.id for m in view):
        return "unknown (the strategy keeps no message ids)"
    derived = [m.id for m in view if m.id.startswith(raw.id + "#")]
    if derived:
        suffixes = [s.split("#")[0] for s in derived[0][len(raw.id) + 1 :].split("#")]
        return " > ".join(STAGES.get(s, s) for s in suffixes)
    if any(m.id == raw.id for m in view):
        return "in view, fact cut from it"
    if any(m.meta.get("kind") == "summary" or m.id.startswith("summary") for m in view):
        return "compacted into summary"
    return "dropped"


def score_probes(
    history: Sequence[Message], view: Sequence[Message], vault: str, probes: Sequence[Probe]
) -> list[FactResult]:
    """Score each fact of ``probes`` on ``view`` (the last request), ``history`` being what it was built
    from."""
    raw = [view_text([m]) for m in history]
    text = view_text(view)
    out: list[FactResult] = []
    for p in probes:
        for alts in p.facts:
            lows = [a.lower() for a in alts]
            kept = any(a in text for a in lows)
            first = next((i for i, t in enumerate(raw) if any(a in t for a in lows)), None)
            rec = kept or any(a in vault for a in lows)
            if first is None:
                out.append(
                    FactResult(p.conv_id, p.probe_id, p.type, alts[0], False, kept, rec, alts=tuple(alts))
                )
                continue
            m = history[first]
            third = THIRDS[min(2, 3 * first // max(1, len(history)))]
            stage = "" if kept else _stage(m, view) + (" (in vault)" if rec else "")
            out.append(
                FactResult(
                    p.conv_id,
                    p.probe_id,
                    p.type,
                    alts[0],
                    True,
                    kept,
                    rec,
                    ROLES.get(m.role, m.role),
                    third,
                    stage,
                    alts=tuple(alts),
                )
            )
    return out


async def replay(
    conv: Conversation,
    strategy: Strategy,
    result: StrategyResult,
    window: int,
    counter: TokenCounter,
    prices: Prices,
    probes: Sequence[Probe] = (),
    cache: PrefixCacheSimulator | None = None,
    on_request: Callable[[], None] | None = None,
    extra_probes: Mapping[str, Sequence[Probe]] | None = None,
    schemas: Sequence[dict[str, Any]] | None = None,
) -> None:
    """``schemas``: the tool schemas each request carries (and every strategy's budget counts) in place of
    the conversation's recorded ones."""
    tools = list(schemas) if schemas is not None else conv.tools
    marking = getattr(strategy, "breakpoints", None) is not None
    if cache is None:
        cache = PrefixCacheSimulator("explicit", lookback=LOOKBACK) if marking else PrefixCacheSimulator()
    sent_cache = PrefixCacheSimulator(cache.policy, cache.min_tokens, cache.lookback)
    cache.reset(conv.id)
    aux_cache = PrefixCacheSimulator("automatic", cache.min_tokens)  # another model's: its own cache
    failures_before = getattr(strategy, "summarizer_failures", 0)
    result.price_cache_read, result.price_cache_write = prices.cache_read, prices.cache_write
    result.price_input = prices.input
    strategy.start(conv.id, window)
    tools_tokens = counter.schemas(tools)
    bind_tools = getattr(strategy, "bind_tools", None)
    if callable(bind_tools):  # budget the schemas as the live agent does
        bind_tools(tools_tokens)
    compacted_once = False
    last_out = landed = 0  # the previous request's size, and where the last compaction left the view
    tools_fp = (fingerprint(tools), tools_tokens) if tools else None
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
        m = getattr(strategy, "last_metrics", None)
        if m is not None and getattr(m, "timings_ms", None):
            result.stage_ms.append((ms, dict(m.timings_ms)))
        compacted = m.compacted if m is not None else getattr(strategy, "condensed", False)
        if compacted_once:
            result.requests_after_first += 1
            result.compacted_after_first += bool(compacted)
        if compacted:
            result.compactions += 1
            record = getattr(m, "compaction", None)
            trigger = getattr(record, "trigger", "") or "unrecorded"
            result.compaction_triggers[trigger] = result.compaction_triggers.get(trigger, 0) + 1
            budget = getattr(getattr(strategy, "config", None), "input_budget", None)
            # the round: what this request's view (before its steps) adds to the last request sent
            grown = getattr(m, "tokens_in", 0) - last_out
            if trigger == "emergency" and budget is not None and grown > budget - landed:
                result.emergency_rounds_over_room += 1
            landed = getattr(m, "tokens_out", 0)
            if not compacted_once:
                compacted_once = True
                result.requests_after_first += 1
        if m is not None and hasattr(m, "tokens_out"):
            last_out = m.tokens_out
        tokens = counter.messages(view) + tools_tokens
        summary = sum(counter.message(v) for v in view if v.meta.get("kind") == "summary")
        result.summary_share_max = max(result.summary_share_max, summary / window)
        result.over_window_requests += tokens > window
        # As the live client sends it (``render``): a tool result's images go to a user message after the
        # run of results, where OpenAI-style APIs take them (a Claude Code `Read` of a screenshot).
        # guard: bench-requests-rendered-as-the-client-sends-them
        body = {"model": "bench", "messages": render(view, "bench")["messages"], "tools": tools or None}
        rej = validate_openai(body, window, tokens)
        result.requests += 1
        segs = _segments(view, tools, counter, tools_fp)
        marks = cache_marks(strategy, view, tools_fp)
        s = sent_cache.request(conv.id, segs, marks or ())
        usd, unwritten = billed(s, marks is not None, prices)
        result.sent_input_tokens += s.input_tokens
        result.sent_cached_input_tokens += s.cached_tokens
        result.sent_cost_usd += usd
        result.sent_unwritten_input_tokens += unwritten
        result.peak_request_tokens = max(result.peak_request_tokens, s.input_tokens)
        if rej is not None:
            # Not billed and not cached: the provider refused it. The strategy is infeasible.
            result.rejected_requests += 1
            key = rej.code or rej.message.split(":")[0][:60]
            result.rejections[key] = result.rejections.get(key, 0) + 1
        else:
            c = cache.request(conv.id, segs, marks or ())
            usd, unwritten = billed(c, marks is not None, prices)
            result.input_tokens += c.input_tokens
            result.cached_input_tokens += c.cached_tokens
            result.cost_usd += usd
            result.unwritten_input_tokens += unwritten
        settle = getattr(strategy, "settle", None)
        if rej is None and settle is not None:  # what the agent reads while the model answers: off the path
            t = time.perf_counter()
            settle()
            result.settle_ms.append((time.perf_counter() - t) * 1000)
        after_sent = getattr(strategy, "after_sent", None)
        if rej is None and after_sent is not None:
            await after_sent(view, tools)
        _bill_summarizer(strategy, conv, result, counter, cache, aux_cache, tools_fp)
        last_view = view
        if on_request:
            on_request()
    result.summarizer_failures += getattr(strategy, "summarizer_failures", 0) - failures_before
    routes = getattr(strategy, "routes", None)
    for chosen, quotes in routes or ():
        result.summary_routes[chosen] = result.summary_routes.get(chosen, 0) + 1
        for route, usd in quotes.items():
            result.summary_route_quotes_usd[route] = result.summary_route_quotes_usd.get(route, 0.0) + usd
    if routes:
        routes.clear()
    result.conversations += 1
    history = conv.messages[: turns[-1]] if turns else conv.messages
    vault = "\n".join(strategy.vault_texts()).lower() if probes or extra_probes else ""
    if probes:
        result.facts += await search_lost(history, score_probes(history, last_view, vault, probes))
    for name, ps in (extra_probes or {}).items():
        scored = await search_lost(history, score_probes(history, last_view, vault, ps))
        result.extra_facts.setdefault(name, []).extend(scored)


def _bill_summarizer(
    strategy: Strategy,
    conv: Conversation,
    result: StrategyResult,
    counter: TokenCounter,
    cache: PrefixCacheSimulator,
    aux_cache: PrefixCacheSimulator,
    tools_fp: tuple[str, int] | None,
) -> None:
    """Bill the summarizer calls the strategy made since the last request, like a main request: the
    same cache rules (the conversation's cache when it is the main model, its own otherwise), at the
    summarizer model's prices, its answer at the output price."""
    aux = getattr(strategy, "summarizer", None)
    if not isinstance(aux, BenchSummarizer):
        return
    prices = _prices(aux.price_name)
    for call in aux.drain():
        segs = _segments(call.messages, conv.tools, counter, tools_fp if call.tools else None)
        # the agent marks a summary request's end (its whole input is written, as before marks were billed)
        c = (cache if call.shares_cache else aux_cache).request(conv.id, segs, [len(segs) - 1])
        out = counter.text(call.output)
        result.summarizer_calls += 1
        result.summarizer_input_tokens += c.input_tokens
        result.summarizer_cached_input_tokens += c.cached_tokens
        result.summarizer_output_tokens += out
        result.summarizer_cost_usd += (
            c.cached_tokens * prices.cache_read + c.uncached_tokens * prices.cache_write + out * prices.output
        )


@lru_cache(maxsize=8)
def _prices(model: str) -> Prices:
    return Prices.for_model(model)
