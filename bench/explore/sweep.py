"""Compactions per 100 requests, retention and cost of ``myrm`` against ``none`` on every window of both dev
corpora: the check of the compaction-point model (``myrm_tui/context/README.md``).

    python bench/explore/sweep.py OUT_DIR [--windows 4000,8000,...] [--limit N] [--corpora swe,tau]

Runs ``myrm bench --strategies myrm,none`` once per corpus and window (JSON into OUT_DIR), then prints one
row each: compactions/100, planned share, hand / agentfacts / toolfacts retention per half (tune / judge),
cost as a share of ``none`` as sent, p50 / p99 ms. ``--table`` only prints the rows of an existing OUT_DIR.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "corpus"
WINDOWS = (4000, 8000, 16000, 32000, 64000, 128000)
SETS = ("agentfacts-tune", "agentfacts-judge", "toolfacts-tune", "toolfacts-judge")


def probes(corpus: str) -> list[Path]:
    d = ROOT / "bench" / "probes"
    return [d / f"{corpus}-dev-hand.jsonl", *(d / f"{corpus}-dev-{s}.jsonl" for s in SETS)]


def run(out: Path, corpus: str, window: int, limit: int | None, corpus_dir: Path) -> Path:
    dest = out / f"{corpus}-{window // 1000}k.json"
    data = str(corpus_dir / f"{corpus}-dev.jsonl.gz")
    cmd = [sys.executable, "-m", "myrm_tui.cli", "bench", "--corpus", data]
    for p in probes(corpus):
        cmd += ["--probes", str(p)]
    cmd += ["--window", str(window), "--strategies", "myrm,none", "--json", str(dest)]
    if limit:
        cmd += ["--limit", str(limit)]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return dest


def row(path: Path) -> str:
    data = json.loads(path.read_text())
    res = data["strategies"]
    m, none = res["myrm"], res["none"]
    sets = m.get("probe_sets", {})

    def ret(name: str) -> str:
        s = next((v for k, v in sets.items() if k.endswith(f"{name}.jsonl")), None)
        r = s and s.get("probe_retention_reachable")
        return f"{r:.3f}" if r is not None else "-"

    hand = m.get("probe_retention_reachable")
    cost = m["cost_usd"] / none["sent"]["cost_usd"] if none["sent"]["cost_usd"] else 0.0
    return " | ".join(
        [
            path.stem,
            f"{m['compactions_per_100_requests']:.2f}",
            str(m.get("planned_compaction_share")),
            f"{hand:.3f}" if hand is not None else "-",
            f"{ret('agentfacts-tune')} / {ret('agentfacts-judge')}",
            f"{ret('toolfacts-tune')} / {ret('toolfacts-judge')}",
            f"{cost:.3f}",
            str(m["rejected_requests"]),
            f"{m['pipeline_ms_p50']:.2f} / {m['pipeline_ms_p99']:.2f}",
        ]
    )


HEADER = (
    "run | compact/100 | planned | hand | agentfacts tune / judge | toolfacts tune / judge | cost × none | "
    "rejected | p50 / p99 ms"
)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out", type=Path)
    ap.add_argument("--windows", default=",".join(map(str, WINDOWS)))
    ap.add_argument("--corpora", default="swe,tau")
    ap.add_argument("--limit", type=int)
    ap.add_argument("--corpus-dir", type=Path, default=CORPUS)
    ap.add_argument("--table", action="store_true")
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    print(HEADER)
    for corpus in a.corpora.split(","):
        for w in map(int, a.windows.split(",")):
            dest = a.out / f"{corpus}-{w // 1000}k.json"
            if not a.table:
                dest = run(a.out, corpus, w, a.limit, a.corpus_dir)
            if dest.exists():
                print(row(dest), flush=True)


if __name__ == "__main__":
    main()
