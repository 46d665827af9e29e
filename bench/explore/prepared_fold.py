"""What ``Pipeline.settle`` writes ahead for a compaction, and how much of it a compaction used: the base's
JSON (``ContextState.base_json``: Pre-Compact's archive and checkpoint) and each message's archive JSON and
block (``state.message_json``: the compaction record's archive of the folded messages, made once a view was
sent near the point, ``summarize.PREPARE_FROM``). The rest is work done on a guess that missed: a message
the session never folded (it ended first), a base no compaction followed.

    python bench/explore/prepared_fold.py --messages 500 --window 32000   # swe-dev's longest, joined
    python bench/explore/prepared_fold.py --each --corpus bench/foreign --window 32000

One replay as ``long_session.py`` replays (settling after each request), CPU (``time.process_time``) of the
writes made after sending, counted by wrapping the two functions.
"""

from __future__ import annotations

import argparse
import asyncio
import operator
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import long_session

from myrm_tui.agent.fingerprint import builtin_tool_schemas
from myrm_tui.bench.corpus import Conversation, load_conversations
from myrm_tui.bench.strategies import MyrmStrategy
from myrm_tui.context import state as state_module
from myrm_tui.context.compaction import record
from myrm_tui.context.state import ContextState
from myrm_tui.context.tokens import TokenCounter


class Tally:
    """The writes made after sending (by the object written) and what the compactions used of them."""

    def __init__(self) -> None:
        self.settling = False
        self.messages: dict[int, tuple[Any, float]] = {}  # id -> (message, CPU ms)
        self.folded: set[int] = set()
        self.bases: list[tuple[tuple[int, ...], float]] = []  # (its messages' ids, CPU ms)
        self.bases_used: set[tuple[int, ...]] = set()

    def install(self) -> None:
        made, folded, base_json = state_module.message_json, record._folded, ContextState.base_json

        def message_json(m: Any, keep: bool = True) -> Any:
            hit = state_module._JSON_MADE.get(id(m))
            if not self.settling or (hit is not None and hit[0] is m):
                return made(m, keep)
            c = time.process_time()
            out = made(m, keep)
            self.messages[id(m)] = (m, (time.process_time() - c) * 1000)
            return out

        def folded_of(messages: Any, vault: Any, counter: Any) -> Any:
            self.folded.update(id(m) for m in messages if self.messages.get(id(m), (None,))[0] is m)
            return folded(messages, vault, counter)

        def base_of(state: ContextState) -> str:
            known = state.base_made
            hit = known is not None and len(known[0]) == len(state.base)
            hit = hit and all(map(operator.is_, known[0], state.base))  # type: ignore[index]
            key = tuple(map(id, state.base))
            if self.settling and not hit and state.base:
                c = time.process_time()
                out = base_json(state)
                self.bases.append((key, (time.process_time() - c) * 1000))
                return out
            if not self.settling and hit and state.base:
                self.bases_used.add(key)
            return base_json(state)

        state_module.message_json = message_json  # type: ignore[assignment]
        record._folded = folded_of  # type: ignore[assignment]
        ContextState.base_json = base_of  # type: ignore[method-assign,assignment]


async def replay(convs: list[Conversation], window: int, tally: Tally) -> tuple[int, int, float]:
    requests = compactions = 0
    settle_ms = 0.0
    for conv in convs:
        counter = TokenCounter()
        s = MyrmStrategy(counter)
        s.start(conv.id, window)
        s.bind_tools(counter.schemas(builtin_tool_schemas()))
        turns = [i for i, m in enumerate(conv.messages) if m.role == "assistant" and i > 0]
        for k, i in enumerate(turns):
            await s.build(conv.messages[:i], k)
            requests += 1
            compactions += s.last_metrics.compacted
            tally.settling = True
            c = time.process_time()
            s.settle()
            settle_ms += (time.process_time() - c) * 1000
            tally.settling = False
    return requests, compactions, settle_ms


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--messages", type=int, default=500)
    ap.add_argument("--window", type=int, default=32000)
    ap.add_argument("--corpus", type=Path, default=long_session.CORPUS)
    ap.add_argument("--each", action="store_true", help="every conversation apart, not one joined session")
    a = ap.parse_args()
    convs = load_conversations(a.corpus) if a.each else [long_session.long_session(a.corpus, a.messages)]
    long_session.use_gc("myrm")
    tally = Tally()
    tally.install()
    requests, compactions, settle_ms = asyncio.run(replay(convs, a.window, tally))
    made_ms = sum(ms for _, ms in tally.messages.values())
    missed = [ms for k, (_, ms) in tally.messages.items() if k not in tally.folded]
    bases_missed = [ms for key, ms in tally.bases if key not in tally.bases_used]
    print(f"{requests} requests, {compactions} compactions at {a.window:,}; settle {settle_ms:.0f} ms CPU")
    print(
        f"messages written ahead: {len(tally.messages)} ({made_ms:.1f} ms), folded by a compaction "
        f"{len(tally.messages) - len(missed)}, never folded {len(missed)} ({sum(missed):.1f} ms)"
    )
    print(
        f"bases written ahead: {len(tally.bases)} ({sum(ms for _, ms in tally.bases):.1f} ms), used by a "
        f"compaction {len(tally.bases) - len(bases_missed)}, "
        f"never {len(bases_missed)} ({sum(bases_missed):.1f} ms)"
    )


if __name__ == "__main__":
    main()
