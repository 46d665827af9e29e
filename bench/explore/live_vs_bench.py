"""The trigger mix of a live replay against the bench's (issue 46.5): the same conversations, the same
window, once through the real agent (``Replay``: the recorded replies served by the ``replay/`` provider
through litellm, the recorded outputs by its tools, the real pipeline and store) and once through
``myrm bench``'s ``myrm`` strategy with the conversations' own tool schemas (what a replay binds).

    python bench/explore/live_vs_bench.py CORPUS WINDOW [--limit N | --ids ID,ID] [--corpus-dir DIR]

Prints, for each side, the compactions by trigger and depth (``threshold at FULL``, ``emergency at
EMERGENCY``…), the requests, and the planned share; then each kind's share on both sides and the difference
in percentage points.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from collections import Counter
from pathlib import Path

from myrm_tui.agent.events import CompactionMade
from myrm_tui.agent.replay import Replay
from myrm_tui.bench.corpus import Conversation, load_conversations
from myrm_tui.bench.runner import Prices, StrategyResult, replay
from myrm_tui.bench.strategies import MyrmStrategy
from myrm_tui.config import resolve
from myrm_tui.context.tokens import TokenCounter
from myrm_tui.context.types import Message
from myrm_tui.store.db import Store

ROOT = Path(__file__).resolve().parents[2]


async def live(conv: Conversation, window: int, tmp: Path) -> tuple[Counter[str], int]:
    """Compactions by trigger of one conversation replayed through the agent, and its requests."""
    store = await Store.open(tmp / f"{abs(hash(conv.id))}.db")
    try:
        rep = Replay(conv, delay=0)
        agent = await rep.start(store, resolve({}, {}, {}, env={"MYRM_CONTEXT_WINDOW": str(window)}), tmp)
        triggers: Counter[str] = Counter()
        async for ev in rep.play(agent):
            if isinstance(ev, CompactionMade):
                triggers[f"{ev.record.trigger} at {ev.record.level}"] += 1
        return triggers, rep.feed.served
    finally:
        await store.close()


class Recorded(MyrmStrategy):
    """``myrm`` as the bench runs it, each compaction's trigger and depth noted."""

    def __init__(self, counter: TokenCounter) -> None:
        super().__init__(counter)
        self.triggers: Counter[str] = Counter()

    async def build(self, history: list[Message], step: int) -> list[Message]:
        view = await super().build(history, step)
        record = self.last_metrics.compaction
        if self.last_metrics.compacted and record is not None:
            self.triggers[f"{record.trigger} at {record.level}"] += 1
        return view


async def bench(convs: list[Conversation], window: int) -> tuple[Counter[str], int]:
    counter = TokenCounter()
    res = StrategyResult("myrm")
    strategy = Recorded(counter)
    for conv in convs:
        await replay(conv, strategy, res, window, counter, Prices.for_model("claude-sonnet-4-5"))
    return strategy.triggers, res.requests


def mix(triggers: Counter[str], requests: int) -> str:
    total = sum(triggers.values())
    planned = sum(v for k, v in triggers.items() if k.startswith("threshold")) / total if total else 0.0
    parts = ", ".join(f"{k} {v}" for k, v in sorted(triggers.items()))
    return f"{total} compactions ({parts}) in {requests} requests; planned {planned:.1%}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus")
    ap.add_argument("window", type=int)
    ap.add_argument("--limit", type=int, default=5)
    ap.add_argument("--ids", default="")
    ap.add_argument("--corpus-dir", type=Path, default=ROOT.parent / "shared" / "corpus")
    a = ap.parse_args()
    path = a.corpus_dir / f"{a.corpus}-dev.jsonl.gz"
    ids = [x for x in a.ids.split(",") if x]
    convs = [c for c in load_conversations(path) if c.id in ids] if ids else load_conversations(path, a.limit)

    async def go() -> None:
        live_triggers: Counter[str] = Counter()
        live_requests = 0
        with tempfile.TemporaryDirectory(prefix="myrm-live-") as tmp:
            for conv in convs:
                t, n = await live(conv, a.window, Path(tmp))
                live_triggers.update(t)
                live_requests += n
        bench_triggers, bench_requests = await bench(convs, a.window)
        print(f"{len(convs)} conversations of {path.name} at {a.window:,}")
        print("live :", mix(live_triggers, live_requests))
        print("bench:", mix(bench_triggers, bench_requests))
        lt, bt = sum(live_triggers.values()), sum(bench_triggers.values())
        for k in sorted(set(live_triggers) | set(bench_triggers)):
            lp = live_triggers.get(k, 0) / lt if lt else 0.0
            bp = bench_triggers.get(k, 0) / bt if bt else 0.0
            print(f"  {k}: live {lp:.1%}, bench {bp:.1%}, difference {100 * (lp - bp):+.1f} points")

    asyncio.run(go())


if __name__ == "__main__":
    main()
