"""Where myrm's bench cost goes: replay a corpus through ``myrm`` as ``myrm bench`` does and split each
request's bill by why a token was read from or written to the provider cache.

    python bench/explore/cost_breakdown.py CORPUS --window 16000 --limit 60 [--json OUT]

Uncached (written at the cache-write price) tokens by cause: new content (a message never sent before),
the compaction's re-send (messages sent before, after the prefix a compaction rewrote), the summary block a
compaction writes, the answered trim's short copy, and any other break (named by
``report/cache_break.py``); those after the request's last cache mark are sent as plain input
("unwritten").  Cached (read) tokens by what they are: tool schemas, the protected head,
summary blocks, tool outputs whole / filtered / trimmed, assistant and user messages. Breaks are counted by
cause. Every figure uses the bench's own segments, prefix-cache simulator and prices.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections import Counter
from pathlib import Path

from myrm_tui.agent.fingerprint import builtin_tool_schemas
from myrm_tui.bench.corpus import load_conversations
from myrm_tui.bench.runner import LOOKBACK, Prices, _segments, billed, cache_marks
from myrm_tui.bench.strategies import MyrmStrategy
from myrm_tui.context.tokens import TokenCounter
from myrm_tui.context.types import Message
from myrm_tui.testing.prefix_cache import PrefixCacheSimulator, fingerprint


def kind(m: Message, head: int, i: int) -> str:
    if i < head:
        return "head"
    if m.meta.get("kind") == "summary":
        return "summary"
    if m.role == "tool":
        if "#trim" in m.id:
            return "tool trimmed"
        if "#" in m.id:
            return "tool " + m.id.split("#", 1)[1].split("#")[0]
        return "tool whole"
    return m.role


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus")
    ap.add_argument("--window", type=int, default=16000)
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--json", type=Path, default=None)
    a = ap.parse_args()
    counter = TokenCounter()
    prices = Prices.for_model("claude-sonnet-4-5")
    tools = builtin_tool_schemas()
    tools_fp = (fingerprint(tools), counter.schemas(tools))
    s = MyrmStrategy(counter)
    written: Counter[str] = Counter()
    unwritten: Counter[str] = Counter()
    cost = 0.0
    read: Counter[str] = Counter()
    breaks: Counter[str] = Counter()
    break_lost: Counter[str] = Counter()
    requests = compactions = 0
    # the write of a whole output the answered trim cut on the next request, and what it then wrote
    trimmed_full = trimmed_short = 0
    for conv in load_conversations(Path(a.corpus), a.limit):
        cache = PrefixCacheSimulator("explicit", lookback=LOOKBACK)
        s.start(conv.id, a.window)
        s.bind_tools(tools_fp[1])
        seen: set[str] = set()
        sent_whole: dict[str, int] = {}
        turns = [i for i, m in enumerate(conv.messages) if m.role == "assistant" and i > 0]
        for k, i in enumerate(turns):
            view = await s.build(conv.messages[:i], k)
            m = s.last_metrics
            requests += 1
            compactions += bool(m.compacted)
            if m.cache_break:
                breaks[m.cache_break["cause"]] += 1
                break_lost[m.cache_break["cause"]] += int(m.cache_break["lost_tokens"])
            segs = _segments(view, tools, counter, tools_fp)
            marks = cache_marks(s, view, tools_fp) or []
            c = cache.request(conv.id, segs, marks)
            cost += billed(c, True, prices)[0]
            last_mark = sum(seg[1] for seg in segs[: marks[-1] + 1]) if marks else 0
            head = len(s.state.protected_head) if hasattr(s.state, "protected_head") else 0
            head = next((j + 1 for j, x in enumerate(view) if x.role == "user"), 0)
            run = 0
            for j, (seg, msg) in enumerate(zip(segs, [None, *view], strict=True)):
                n = seg[1]
                what = "tools" if msg is None else kind(msg, head, j - 1)
                if run + n <= c.cached_tokens:
                    read[what] += n
                else:
                    base = msg.id.split("#", 1)[0] if msg is not None else "tools"
                    if msg is not None and msg.meta.get("kind") == "summary":
                        cause = "summary block"
                    elif msg is None or base not in seen:
                        cause = "new"
                    elif m.compacted:
                        cause = "re-sent after a compaction"
                    elif "#trim" in msg.id and msg.id not in seen:
                        cause = "answered trim's copy"
                        trimmed_short += n
                        trimmed_full += sent_whole.get(base, 0)
                    else:
                        why = (m.cache_break or {}).get("cause", "not written before (an early mark)")
                        cause = f"re-sent, {why}"
                    (written if run + n <= max(last_mark, c.cached_tokens) else unwritten)[cause] += n
                run += n
            for x in view:
                seen.add(x.id.split("#", 1)[0])
                seen.add(x.id)
                if x.role == "tool" and "#" not in x.id:
                    sent_whole[x.id] = counter.message(x)
    cost_r = sum(read.values()) * prices.cache_read
    cost_w = sum(written.values()) * prices.cache_write
    cost_i = sum(unwritten.values()) * prices.input
    out = {
        "requests": requests,
        "compactions": compactions,
        "cost_usd": round(cost, 4),
        "read_usd": round(cost_r, 4),
        "written_usd": round(cost_w, 4),
        "unwritten_usd": round(cost_i, 4),
        "written_tokens": dict(written.most_common()),
        "unwritten_tokens": dict(unwritten.most_common()),
        "read_tokens": dict(read.most_common()),
        "breaks": dict(breaks.most_common()),
        "break_lost_tokens": dict(break_lost.most_common()),
        "trimmed_outputs_written_whole_tokens": trimmed_full,
        "trimmed_copies_tokens": trimmed_short,
    }
    print(json.dumps(out, indent=1))
    if a.json:
        a.json.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    asyncio.run(main())
