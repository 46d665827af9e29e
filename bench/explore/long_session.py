"""Pipeline time per request on a long session: the longest dev conversations joined into one session of at
least N messages (each later conversation's task arrives as a new user message), replayed through ``myrm``
at a window as the bench replays it.

    python bench/explore/long_session.py [--messages 500] [--window 32000] [--runs 3] [--profile OUT.prof]
    python bench/explore/long_session.py --each --corpus bench/foreign  # each conversation on its own
    python bench/explore/long_session.py --gc default  # the interpreter's collector, not myrm's policy

Prints p50 / p99 / max pipeline ms over the session's requests (wall and CPU), its compactions, and a
digest of the views sent, so a speed-up can be shown to send the same requests. ``--each`` replays every
conversation of the corpus apart (a fresh strategy each, as the bench does) and pools their requests.
``--runs N`` replays it all N times and takes each request's least time (the machine is shared: a request
is as slow as its code, or slower); the views must be the same each time. The collector runs as in
``myrm`` (``gc_policy``: its thresholds, and what is alive after start-up frozen out of the walks) unless
``--gc default``; the collections that ran inside requests are counted (``gc.callbacks``) and printed.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import hashlib
import json
import time
from dataclasses import replace
from pathlib import Path

from myrm_tui import gc_policy
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


async def replay(
    conv: Conversation, window: int, collections: Collections
) -> tuple[list[float], list[float], list[str], int]:
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
        collections.on = True
        view = await s.build(conv.messages[:i], k)
        collections.on = False
        times.append((time.perf_counter() - t) * 1000)
        cpu.append((time.process_time() - c) * 1000)
        compactions += s.last_metrics.compacted
        digest.update(json.dumps([m.to_api() for m in view], sort_keys=True).encode())
    return times, cpu, [digest.hexdigest()], compactions


class Collections:
    """The collector's runs, by generation, and their CPU ms (``gc.callbacks``), while ``on``."""

    def __init__(self) -> None:
        self.on = False
        self.count = [0, 0, 0]
        self.ms = [0.0, 0.0, 0.0]
        self._start = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if not self.on:
            return
        if phase == "start":
            self._start = time.process_time()
        else:
            self.count[info["generation"]] += 1
            self.ms[info["generation"]] += (time.process_time() - self._start) * 1000


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--messages", type=int, default=500)
    ap.add_argument("--window", type=int, default=32000)
    ap.add_argument("--corpus", type=Path, default=CORPUS)
    ap.add_argument("--profile", type=Path)
    ap.add_argument("--each", action="store_true", help="every conversation apart, not one joined session")
    ap.add_argument("--runs", type=int, default=1, help="replays; each request's least time is taken")
    ap.add_argument("--gc", choices=("myrm", "default"), default="myrm", help="the collector's policy")
    a = ap.parse_args()
    convs = load_conversations(a.corpus) if a.each else [long_session(a.corpus, a.messages)]
    if a.gc == "myrm":  # as ``myrm`` runs: its thresholds (cli.main), start-up's objects frozen
        gc_policy.configure()
        gc_policy.settle()
    collections = Collections()
    gc.callbacks.append(collections)
    prof = cProfile.Profile() if a.profile else None
    if prof:
        prof.enable()
    times: list[float] = []
    cpu: list[float] = []
    digest: list[str] = []
    compactions = 0
    for run in range(max(a.runs, 1)):
        rt: list[float] = []
        rc: list[float] = []
        rd: list[str] = []
        n_compactions = 0
        for conv in convs:
            t, c, d, n = asyncio.run(replay(conv, a.window, collections))
            rt, rc, rd, n_compactions = rt + t, rc + c, rd + d, n_compactions + n
        if run and (rd != digest or n_compactions != compactions):
            raise SystemExit(f"run {run + 1} sent other views than run 1")
        times = [min(x, y) for x, y in zip(times, rt, strict=True)] if run else rt
        cpu = [min(x, y) for x, y in zip(cpu, rc, strict=True)] if run else rc
        digest, compactions = rd, n_compactions
    if prof:
        prof.disable()
        prof.dump_stats(a.profile)

    def pct(xs: list[float]) -> str:
        s = sorted(xs)
        p99 = s[min(len(s) - 1, int(0.99 * len(s)))]
        return f"p50 {s[len(s) // 2]:.2f}, p99 {p99:.2f}, max {s[-1]:.2f} ms"

    views = digest[0] if len(digest) == 1 else hashlib.sha256("".join(digest).encode()).hexdigest()
    runs = f" (least of {a.runs} runs)" if a.runs > 1 else ""
    gens = ", ".join(
        f"gen {g} {n} ({ms:.0f} ms)"
        for g, (n, ms) in enumerate(zip(collections.count, collections.ms, strict=True))
    )
    print(
        f"{sum(len(c.messages) for c in convs)} messages in {len(convs)} sessions, {len(times)} requests "
        f"at {a.window:,}{runs}: wall {pct(times)}; CPU {pct(cpu)}; {compactions} compactions; "
        f"views sha256 {views[:16]}; gc {a.gc}, collections in requests (all runs): {gens}"
    )


if __name__ == "__main__":
    main()
