"""Check the compaction-point model (``myrm_tui/context/README.md``, "When a compaction comes") on every
window of a dev corpus: replay its tune-half conversations through ``myrm`` and compare the compactions per
100 requests the model predicts from where compactions come (T), where they land (L) and the usual round
(u) with the measured ones, counted from each session's first compaction on (before it a session only
grows from nothing).

    python bench/explore/compaction_model.py swe 4000,8000,16000,32000,64000,128000 [--corpus-dir DIR]
    python bench/explore/compaction_model.py bench/foreign 16000,32000,64000   # a recorded corpus's directory

A name (``swe``, ``tau``) is the dev corpus ``DIR/NAME-dev.jsonl.gz`` with its probes
``bench/probes/NAME-dev-*-tune.jsonl``; a path (a directory of ``myrm bench --corpus``) is read as the bench
reads it, its tune half from ``bench/probes/BASENAME-*-tune.jsonl``.

Per window, as shares of the input budget: the median planned point T, the median view a compaction fired
at (T plus the round that crossed it), the median landing L and the mean round u after a session's first
compaction (what is sent grows by, every trim applied); the predicted interval (at - L) / u in requests,
the predicted and the measured compactions per 100 requests after each session's first, all compactions
per 100 requests, and the share the emergency net took.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
from pathlib import Path

from myrm_tui.agent.fingerprint import builtin_tool_schemas
from myrm_tui.bench.corpus import load_conversations
from myrm_tui.bench.strategies import MyrmStrategy
from myrm_tui.context.step import settings_for
from myrm_tui.context.steps.precompact import PreCompactSettings, band_for, landed_tokens
from myrm_tui.context.tokens import TokenCounter

ROOT = Path(__file__).resolve().parents[2]


def tune_ids(prefix: str) -> set[str]:
    ids: set[str] = set()
    for kind in ("toolfacts", "agentfacts", "assistantfacts"):
        path = ROOT / "bench" / "probes" / f"{prefix}-{kind}-tune.jsonl"
        if path.exists():
            ids |= {json.loads(ln)["conv_id"] for ln in path.read_text().splitlines() if ln.strip()}
    return ids


async def check(corpus: str, window: int, corpus_dir: Path) -> str:
    path = Path(corpus)
    if path.exists():  # a recorded corpus (bench/foreign, bench/hermes): its probes are named after it
        ids, source = tune_ids(path.name), path
    else:
        ids, source = tune_ids(f"{corpus}-dev"), corpus_dir / f"{corpus}-dev.jsonl.gz"
    convs = [c for c in load_conversations(source) if c.id in ids]
    counter = TokenCounter()
    s = MyrmStrategy(counter)
    points: list[float] = []
    landings: list[float] = []
    rounds: list[int] = []
    fired: list[float] = []
    requests = compactions = emergencies = after = compacted_after = 0
    budget = 1
    for conv in convs:
        s.start(conv.id, window)
        s.bind_tools(counter.schemas(builtin_tool_schemas()))
        budget = s.config.fit_budget
        settings = settings_for(PreCompactSettings, s.config)
        turns = [i for i, m in enumerate(conv.messages) if m.role == "assistant" and i > 0]
        seen_one, last_out = False, 0
        for k, i in enumerate(turns):
            band = band_for(settings, s.state.round_growth, landed_tokens(s.state))
            await s.build(conv.messages[:i], k)
            m = s.last_metrics
            requests += 1
            after += seen_one
            compacted_after += seen_one and m.compacted
            if m.compacted:
                compactions += 1
                emergencies += not m.compaction_reason.startswith("threshold")
                points.append(band.warm / budget)
                fired.append((m.tokens_planned or m.tokens_in) / budget)
                landings.append(m.tokens_out / budget)
                seen_one = True
            elif seen_one:
                rounds.append(m.tokens_out - last_out)  # what is sent grows by, all trims applied
            last_out = m.tokens_out
    if not compactions:
        return f"{corpus} {window:>7,} | - | - | - | - | - | - | - | 0.00 | -"
    t, at, lnd = statistics.median(points), statistics.median(fired), statistics.median(landings)
    u = statistics.mean(rounds) / budget if rounds else 0.0
    interval = (at - lnd) / u if u else float("inf")
    return (
        f"{corpus} {window:>7,} | {t:.2f} | {at:.2f} | {lnd:.2f} | {u:.3f} | {interval:.1f} | "
        f"{100 / max(interval, 1.0):.2f} | {100 * compacted_after / max(after, 1):.2f} | "
        f"{100 * compactions / requests:.2f} | {emergencies / compactions:.2f}"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus")
    ap.add_argument("windows")
    ap.add_argument("--corpus-dir", type=Path, default=ROOT.parent / "shared" / "corpus")
    a = ap.parse_args()
    print(
        "corpus window | T | at | L | u | interval | predicted /100 after first | "
        "measured /100 after first | all /100 | emergency share"
    )
    for w in map(int, a.windows.split(",")):
        print(asyncio.run(check(a.corpus, w, a.corpus_dir)), flush=True)


if __name__ == "__main__":
    main()
