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
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from myrm_tui import gc_policy
from myrm_tui.agent.fingerprint import builtin_tool_schemas
from myrm_tui.bench.corpus import Conversation, load_conversations
from myrm_tui.bench.strategies import MyrmStrategy
from myrm_tui.context.tokens import TokenCounter
from myrm_tui.context.types import Message

ROOT = Path(__file__).resolve().parents[2]
# The shared corpora sit beside the repository (``/work/shared`` for ``/work/main``; a worktree's own
# parent may not hold them).
SHARED = next(
    (p / "shared" for p in ROOT.parents if (p / "shared" / "corpus").is_dir()), ROOT.parent / "shared"
)
CORPUS = SHARED / "corpus" / "swe-dev.jsonl.gz"
FOREIGN = ROOT / "bench" / "foreign"
DEFAULT_THRESHOLDS = gc.get_threshold()  # as Python started, before any policy


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
) -> tuple[list[float], list[float], list[str], int, list[float]]:
    counter = TokenCounter()
    s = MyrmStrategy(counter)
    s.start(conv.id, window)
    s.bind_tools(counter.schemas(builtin_tool_schemas()))
    times: list[float] = []
    cpu: list[float] = []  # CPU time of this process: on a loaded machine wall time waits for a core
    after: list[float] = []  # CPU of what is read after the request is sent (``settle``), as the agent does
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
        c = time.process_time()
        collections.on = True
        s.settle()
        collections.on = False
        after.append((time.process_time() - c) * 1000)
        compactions += s.last_metrics.compacted
        digest.update(json.dumps([m.to_api() for m in view], sort_keys=True).encode())
    return times, cpu, [digest.hexdigest()], compactions, after


@dataclass
class Collections:
    """The collector's runs, by generation, and their CPU ms (``gc.callbacks``), while ``on``."""

    on: bool = False
    count: list[int] = field(default_factory=lambda: [0, 0, 0])
    ms: list[float] = field(default_factory=lambda: [0.0, 0.0, 0.0])
    _start: float = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if not self.on:
            return
        if phase == "start":
            self._start = time.process_time()
        else:
            self.count[info["generation"]] += 1
            self.ms[info["generation"]] += (time.process_time() - self._start) * 1000


@dataclass
class Measure:
    """Pipeline ms per request (each request's least over the runs), compactions, the views' digest, the
    collections that ran inside requests (summed over the runs), and the CPU ms read after each request
    was sent (``settle``: while the model answers; not in ``cpu``)."""

    sessions: int
    messages: int
    runs: int
    wall: list[float]
    cpu: list[float]
    compactions: int
    views: str
    collections: Collections
    after: list[float] = field(default_factory=list)


def use_gc(policy: str) -> None:
    """The collector as ``myrm`` runs it (its thresholds, what is alive now frozen) or as Python starts."""
    if policy == "myrm":
        gc_policy.configure()
        gc_policy.settle()
    else:
        gc.unfreeze()
        gc.set_threshold(*DEFAULT_THRESHOLDS)


def replay_all(convs: list[Conversation], window: int) -> dict[str, Any]:
    """One replay of ``convs`` in this process: each request's ms, the compactions, the views' digest and
    the collections that ran inside requests."""
    collections = Collections()
    gc.callbacks.append(collections)
    wall: list[float] = []
    cpu: list[float] = []
    after: list[float] = []
    digest: list[str] = []
    compactions = 0
    try:
        for conv in convs:
            t, c, d, n, a = asyncio.run(replay(conv, window, collections))
            wall, cpu, digest, compactions, after = wall + t, cpu + c, digest + d, compactions + n, after + a
    finally:
        gc.callbacks.remove(collections)
    views = digest[0] if len(digest) == 1 else hashlib.sha256("".join(digest).encode()).hexdigest()
    return {
        "wall": wall,
        "cpu": cpu,
        "after": after,
        "compactions": compactions,
        "views": views,
        "gc": asdict(collections),
    }


def measure(args: list[str], runs: int) -> Measure:
    """``runs`` replays, each in a process of its own (a later replay in one process would find the
    process-wide caches warm: not what a session meets), each request's least time taken."""
    import subprocess
    import sys
    import tempfile

    got: list[dict[str, Any]] = []
    for _ in range(max(runs, 1)):
        with tempfile.NamedTemporaryFile(suffix=".json") as out:
            subprocess.run([sys.executable, __file__, *args, "--one", out.name], check=True)
            got.append(json.loads(Path(out.name).read_text()))
    first = got[0]
    if any(g["views"] != first["views"] or g["compactions"] != first["compactions"] for g in got):
        raise SystemExit("the runs sent other views")
    collections = Collections()
    for g in got:
        collections.count = [a + b for a, b in zip(collections.count, g["gc"]["count"], strict=True)]
        collections.ms = [a + b for a, b in zip(collections.ms, g["gc"]["ms"], strict=True)]
    return Measure(
        first["sessions"],
        first["messages"],
        len(got),
        [min(x) for x in zip(*(g["wall"] for g in got), strict=True)],
        [min(x) for x in zip(*(g["cpu"] for g in got), strict=True)],
        first["compactions"],
        first["views"],
        collections,
        [min(x) for x in zip(*(g["after"] for g in got), strict=True)],
    )


def pct(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))]


def line(m: Measure, window: int, policy: str) -> str:
    def three(xs: list[float]) -> str:
        return f"p50 {pct(xs, 0.5):.2f}, p99 {pct(xs, 0.99):.2f}, max {max(xs):.2f} ms"

    runs = f" (least of {m.runs} runs)" if m.runs > 1 else ""
    c = m.collections
    gens = ", ".join(
        f"gen {g} {n} ({ms:.0f} ms)" for g, (n, ms) in enumerate(zip(c.count, c.ms, strict=True))
    )
    return (
        f"{m.messages} messages in {m.sessions} sessions, {len(m.cpu)} requests at {window:,}{runs}: "
        f"wall {three(m.wall)}; CPU {three(m.cpu)}; read after sending, CPU {three(m.after or [0.0])}; "
        f"{m.compactions} compactions; "
        f"views sha256 {m.views[:16]}; gc {policy}, collections in requests (all runs): {gens}"
    )


# The sessions ``--markdown`` measures: (name, corpus, one joined session of N messages or each apart, window)
TABLE = (
    ("swe-dev, 500 messages joined", CORPUS, 500, 32_000),
    ("swe-dev, 500 messages joined", CORPUS, 500, 16_000),
    ("foreign (27 sessions, each apart)", FOREIGN, 0, 32_000),
)


HEADER = (
    "| session | window | requests | compactions | CPU p50 / p99 / max, myrm's gc | gen 2, 1, 0 in requests "
    "| same, Python's gc | gen 2, 1, 0 | read after sending, p99 / max | views |\n"
    "|---|---:|---:|---:|---:|---|---:|---|---:|---|"
)


def markdown(path: Path, runs: int) -> None:
    """Measure ``TABLE`` with myrm's collector policy and Python's, and write it as ``path``'s pipeline
    section (``app.perf.write_section``)."""
    import os

    from myrm_tui.app.perf import _loads, _stamp, write_section

    before = os.getloadavg()
    rows = []
    for name, corpus, messages, window in TABLE:
        what = ["--messages", str(messages)] if messages else ["--each"]
        cells = []
        after: list[float] = []
        for policy in ("myrm", "default"):
            m = measure([*what, "--corpus", str(corpus), "--window", str(window), "--gc", policy], runs)
            print(line(m, window, policy))
            c = m.collections
            after = after or m.after
            cells.append(
                f"{pct(m.cpu, 0.5):.1f} / **{pct(m.cpu, 0.99):.1f}** / {max(m.cpu):.1f} | "
                + ", ".join(f"{c.count[g]} ({c.ms[g]:.0f} ms)" for g in (2, 1, 0))
            )
        rows.append(
            f"| {name} | {window // 1000}K | {len(m.cpu)} | {m.compactions} | {cells[0]} | {cells[1]} | "
            f"{pct(after, 0.99):.1f} / {max(after, default=0.0):.1f} | `{m.views[:16]}` |"
        )
    text = f"""## Pipeline time per request (`bench/explore/long_session.py --markdown docs/perf.md`)

CPU ms of the context pipeline per request (`time.process_time`, the least of {runs} replays of each request:
the machine is shared), replayed as `myrm bench` replays (myrm's tool schemas bound); with myrm's collector
policy (`gc_policy`: its thresholds, start-up's objects frozen, as `myrm` runs) and with Python's default
(700, 10, 10). Collections: the runs of each generation that landed inside requests, over all replays, and
their CPU ms (myrm's young collections come after 50,000 new containers: rare, 14-18 ms each). A request's
time is the pipeline's run until the view is ready to send; what it leaves to read of its new messages for a
later compaction (`Request.reads_later`) is read after it is sent, while the model answers, and shown
apart (myrm's gc, the least of the replays: not in the p99). The views' digest shows a speed-up sends the
same requests. {_stamp(_loads(before, os.getloadavg()))}.

{HEADER}
{chr(10).join(rows)}

Goal (issue 46): p99 ≤ 10 ms on the longest sessions.
"""
    write_section(path, "pipeline", text)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--messages", type=int, default=500)
    ap.add_argument("--window", type=int, default=32000)
    ap.add_argument("--corpus", type=Path, default=CORPUS)
    ap.add_argument("--profile", type=Path)
    ap.add_argument("--each", action="store_true", help="every conversation apart, not one joined session")
    ap.add_argument("--runs", type=int, default=1, help="replays; each request's least time is taken")
    ap.add_argument("--gc", choices=("myrm", "default"), default="myrm", help="the collector's policy")
    ap.add_argument("--markdown", type=Path, help="measure the standard sessions, write this page's section")
    ap.add_argument("--one", type=Path, help=argparse.SUPPRESS)  # one replay in this process, as JSON
    a = ap.parse_args()
    if a.markdown:
        markdown(a.markdown, max(a.runs, 3))
        return
    if a.one is None and (a.runs > 1 or not a.profile):
        what = ["--each"] if a.each else ["--messages", str(a.messages)]
        args = [*what, "--corpus", str(a.corpus), "--window", str(a.window), "--gc", a.gc]
        print(line(measure(args, a.runs), a.window, a.gc))
        return
    convs = load_conversations(a.corpus) if a.each else [long_session(a.corpus, a.messages)]
    use_gc(a.gc)
    prof = cProfile.Profile() if a.profile else None
    if prof:
        prof.enable()
    one = replay_all(convs, a.window)
    if prof:
        prof.disable()
        prof.dump_stats(a.profile)
    one.update(sessions=len(convs), messages=sum(len(c.messages) for c in convs))
    if a.one is not None:
        a.one.write_text(json.dumps(one))
    else:
        print(
            line(
                Measure(
                    one["sessions"],
                    one["messages"],
                    1,
                    one["wall"],
                    one["cpu"],
                    one["compactions"],
                    one["views"],
                    Collections(count=one["gc"]["count"], ms=one["gc"]["ms"]),
                    one["after"],
                ),
                a.window,
                a.gc,
            )
        )


if __name__ == "__main__":
    main()
