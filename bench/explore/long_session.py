"""Pipeline time per request on a long session: the longest dev conversations joined into one session of at
least N messages (each later conversation's task arrives as a new user message), replayed through ``myrm``
at a window as the bench replays it.

    python bench/explore/long_session.py [--messages 500] [--window 32000] [--profile OUT.prof]
    python bench/explore/long_session.py --each --corpus bench/foreign  # each conversation on its own

Prints p50 / p99 / max pipeline ms over the session's requests (wall and CPU), its compactions, and a
digest of the views sent, so a speed-up can be shown to send the same requests. ``--each`` replays every
conversation of the corpus apart (a fresh strategy each, as the bench does) and pools their requests.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import hashlib
import json
import time
from dataclasses import replace
from pathlib import Path

from myrm_tui.agent.fingerprint import builtin_tool_schemas
from myrm_tui.bench.corpus import Conversation, load_conversations
from myrm_tui.bench.strategies import MyrmStrategy
from myrm_tui.context.tokens import TokenCounter
from myrm_tui.context.types import Message

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "swe-dev.jsonl.gz"


def long_session(corpus: Path, messages: int) -> Conversation:
    """The longest conversations, longest first, joined until the session holds ``messages`` messages."""
    convs = sorted(load_conversations(corpus), key=lambda c: -len(c.messages))
    out: list[Message] = []
    for n, conv in enumerate(convs):
        body = conv.messages if n == 0 else [m for m in conv.messages if m.role != "system"]
        for m in body:
            calls = tuple(replace(c, id=f"c{n}-{c.id}") for c in m.tool_calls)
            tcid = f"c{n}-{m.tool_call_id}" if m.tool_call_id else None
            out.append(replace(m, id=f"c{n}-{m.id or len(out)}", tool_calls=calls, tool_call_id=tcid))
        if len(out) >= messages:
            break
    return Conversation("long-session", out[:messages])


async def replay(conv: Conversation, window: int) -> tuple[list[float], list[float], list[str], int]:
    counter = TokenCounter()
    s = MyrmStrategy(counter)
    s.start(conv.id, window)
    s.bind_tools(counter.schemas(builtin_tool_schemas()))
    times: list[float] = []
    cpu: list[float] = []  # CPU time of this process: on a loaded machine wall time waits for a core
    digest = hashlib.sha256()
    compactions = 0
    turns = [i for i, m in enumerate(conv.messages) if m.role == "assistant" and i > 0]
    for k, i in enumerate(turns):
        t, c = time.perf_counter(), time.process_time()
        view = await s.build(conv.messages[:i], k)
        times.append((time.perf_counter() - t) * 1000)
        cpu.append((time.process_time() - c) * 1000)
        compactions += s.last_metrics.compacted
        digest.update(json.dumps([m.to_api() for m in view], sort_keys=True).encode())
    return times, cpu, [digest.hexdigest()], compactions


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--messages", type=int, default=500)
    ap.add_argument("--window", type=int, default=32000)
    ap.add_argument("--corpus", type=Path, default=CORPUS)
    ap.add_argument("--profile", type=Path)
    ap.add_argument("--each", action="store_true", help="every conversation apart, not one joined session")
    a = ap.parse_args()
    convs = load_conversations(a.corpus) if a.each else [long_session(a.corpus, a.messages)]
    prof = cProfile.Profile() if a.profile else None
    if prof:
        prof.enable()
    times: list[float] = []
    cpu: list[float] = []
    digest: list[str] = []
    compactions = 0
    for conv in convs:
        t, c, d, n = asyncio.run(replay(conv, a.window))
        times, cpu, digest, compactions = times + t, cpu + c, digest + d, compactions + n
    if prof:
        prof.disable()
        prof.dump_stats(a.profile)

    def pct(xs: list[float]) -> str:
        s = sorted(xs)
        p99 = s[min(len(s) - 1, int(0.99 * len(s)))]
        return f"p50 {s[len(s) // 2]:.2f}, p99 {p99:.2f}, max {s[-1]:.2f} ms"

    views = digest[0] if len(digest) == 1 else hashlib.sha256("".join(digest).encode()).hexdigest()
    print(
        f"{sum(len(c.messages) for c in convs)} messages in {len(convs)} sessions, {len(times)} requests "
        f"at {a.window:,}: wall {pct(times)}; CPU {pct(cpu)}; {compactions} compactions; "
        f"views sha256 {views[:16]}"
    )


if __name__ == "__main__":
    main()
