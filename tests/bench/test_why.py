"""bench/foreign/why.py: the facts it follows to their loss are exactly the ones ``myrm bench`` scores lost
for myrm, each with one of its named ways out; its comparison section reads the bench's JSON as written."""

from __future__ import annotations

import importlib.util
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from myrm_tui.agent.fingerprint import builtin_tool_schemas
from myrm_tui.bench import probegen
from myrm_tui.bench.run import run_bench

ROOT = Path(__file__).resolve().parents[2]


def _why() -> Any:
    spec = importlib.util.spec_from_file_location("bench_foreign_why", ROOT / "bench" / "foreign" / "why.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def _session(n: int) -> list[dict[str, Any]]:
    """A long audit: each read returns unique values among filler lines; the next reply names three."""
    out: list[dict[str, Any]] = [{"role": "user", "content": "audit every module and note its build id"}]
    for k in range(n):
        cid = f"c{k}"
        args = json.dumps({"path": f"src/mod{k}.py"})
        out.append(
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"id": cid, "type": "function", "function": {"name": "read", "arguments": args}}
                ],
            }
        )
        body = "\n".join(f"line {i}: value {k * 1000 + i} of module {k}" for i in range(60))
        out.append({"role": "tool", "tool_call_id": cid, "content": f"build id BX{k:04d}Q\n{body}"})
        picked = ", ".join(str(k * 1000 + i) for i in (7, 23, 41))
        out.append({"role": "assistant", "content": f"Module {k} (build BX{k:04d}Q) reads {picked}."})
        out.append({"role": "user", "content": "next"})
    out.append({"role": "assistant", "content": "All modules audited."})
    return out


async def test_why_follows_exactly_the_facts_the_bench_scores_lost(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    rows = [
        {"id": f"audit-{n}", "messages": _session(n), "meta": {"agent": a}}
        for n, a in ((40, "claude-code"), (50, "codex"))
    ]
    corpus.write_text("".join(json.dumps(r) + "\n" for r in rows))
    probes = tmp_path / "probes.jsonl"
    probegen.write(probes, probegen.generate(corpus))
    result = await run_bench(
        corpus, probes, 4000, ["myrm", "truncate", "window"], schemas=builtin_tool_schemas()
    )
    lost = {(f["conv_id"], f["probe_id"], f["fact"]) for f in result["strategies"]["myrm"]["probe_lost"]}
    assert lost, "the window is small enough that myrm loses some facts"
    why = _why()
    traced = await why.trace(corpus, [probes], 4000)
    assert {(r["conv"], r["probe"], r["fact"]) for r in traced} == lost
    ways = ("never recorded", "recorded in the summary", "filtered", "trimmed", "shrunk", "in view")
    assert all(str(r["how"]).startswith(ways) or " > " in str(r["how"]) for r in traced), traced
    assert all(0 < r["left_at"] < r["requests"] and r["message"] > 0 for r in traced)
    causes = ("cut on arrival", "folded, said again later", "folded")
    assert all(r["cause"] in causes and r["last"] >= r["message"] and r["last_age"] >= 0 for r in traced)
    # Against a peer: the facts each keeps are the bench's counts, and those traced are the peer's only.
    tally: Counter[tuple[str, str]] = Counter()
    only = await why.trace(corpus, [probes], 4000, against="truncate", tally=tally)
    for name in ("myrm", "truncate"):
        assert tally[(probes.name, name)] == result["strategies"][name]["probe_facts_kept"]
    assert len(only) == tally[(probes.name, "truncate only")]
    assert tally[(probes.name, "myrm only")] == tally[(probes.name, "myrm")] - (
        tally[(probes.name, "truncate")] - tally[(probes.name, "truncate only")]
    )
    section = why.markdown(traced, corpus, [probes], 4000)
    assert section.count("\n| audit-") == len(traced)

    out = tmp_path / "bench.json"
    out.write_text(json.dumps(result))
    text = why.compare(corpus, [out])
    kept = {n: s["probe_retention_reachable"] for n, s in result["strategies"].items()}
    for name, value in kept.items():
        assert f"| {name} | 0 | {value:.3f} |" in text
    lower = [b for b in ("window", "truncate") if kept["myrm"] < kept[b]]
    for b in lower:
        assert f"probes.jsonl: myrm {kept['myrm']:.3f} below {b} {kept[b]:.3f}" in text
    assert ("- nowhere" in text) == (not lower and "level with" not in text)


async def test_why_against_a_strategy_follows_only_what_that_one_keeps(tmp_path: Path) -> None:
    """``--against truncate``: the facts myrm loses and truncate's last request still holds, no others;
    ``--limit`` reads the corpus's first conversations only, as the bench's does."""
    corpus = tmp_path / "corpus.jsonl"
    rows = [{"id": f"audit-{n}", "messages": _session(n)} for n in (40, 50)]
    corpus.write_text("".join(json.dumps(r) + "\n" for r in rows))
    probes = tmp_path / "probes.jsonl"
    probegen.write(probes, probegen.generate(corpus))
    result = await run_bench(corpus, probes, 4000, ["myrm", "truncate"], schemas=builtin_tool_schemas())

    def lost(name: str) -> set[tuple[str, str, str]]:
        return {(f["conv_id"], f["probe_id"], f["fact"]) for f in result["strategies"][name]["probe_lost"]}

    why = _why()
    traced = await why.trace(corpus, [probes], 4000, against="truncate")
    got = {(r["conv"], r["probe"], r["fact"]) for r in traced}
    assert got == lost("myrm") - lost("truncate")
    assert lost("myrm") - got, "truncate loses some of what myrm loses: those are left out"
    first = await why.trace(corpus, [probes, probes], 4000, limit=1)
    assert first and {r["conv"] for r in first} == {"audit-40"}
    assert {r["probes"] for r in first} == {"probes.jsonl"}
