"""Where each probe fact myrm loses goes, request by request: replays ``myrm`` (the bench's strategy, the
extractive summary, myrm's own tool schemas as ``myrm bench`` budgets them) over the conversations a probe
file names and, for each fact missing from the last request, says when it left the view and how:

- ``never recorded``: its message was compacted away and no summary ever held the fact;
- ``recorded, then pushed out``: a summary held it, a later compaction's summary did not;
- ``trimmed`` / ``filtered`` (the derived-id stage): its message is still in the view, cut.

With ``--against STRATEGY`` (``truncate``, ``window``, …) only the facts that strategy's last request still
holds are traced: where the other keeps what myrm loses; the run ends with each probe set's counts (kept by
myrm, by the other, by the other only, by myrm only).

Each fact also gets a ``cause`` by behaviour — ``cut on arrival`` (its message is still in myrm's view, a
filter or trim cut it), ``folded, said again later`` (a later message held it again and was folded too),
``folded`` (the one message holding it was) — and the last message holding it before the scored reply with
the tokens after it (``last_age``): within the input budget, a verbatim peer can still be sending it.

    python bench/foreign/why.py --corpus bench/hermes --probes bench/probes/hermes-toolfacts.jsonl \
        --window 16000
    python bench/foreign/why.py --corpus ../shared/corpus/tau-dev.jsonl.gz --limit 24 --window 8000 \
        --probes bench/probes/tau-dev-hand.jsonl --probes bench/probes/tau-dev-toolfacts-tune.jsonl \
        --against truncate
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from myrm_tui.agent.fingerprint import builtin_tool_schemas
from myrm_tui.bench.corpus import load_conversations, load_probes
from myrm_tui.bench.run import make_strategies
from myrm_tui.bench.runner import Prices, StrategyResult, _stage, replay, view_text
from myrm_tui.context.tokens import TokenCounter


def _summary_text(view: list[Any]) -> str:
    return view_text([m for m in view if m.meta.get("kind") == "summary"])


async def _replay(
    conv: Any,
    counter: TokenCounter,
    window: int,
    name: str = "myrm",
    at: Callable[[int], None] | None = None,
) -> tuple[list[list[Any]], list[bool]]:
    """Each request strategy ``name`` builds for ``conv``, and whether it compacted; ``at`` is told each
    request's number before it is built (a tracer's hooks read it)."""
    (strategy,) = make_strategies([name], [], counter, None, 10)
    views: list[list[Any]] = []
    compacted: list[bool] = []
    build = strategy.build

    async def keep(history: Any, k: int) -> Any:
        if at is not None:
            at(len(views))
        views.append(await build(history, k))
        m = getattr(strategy, "last_metrics", None)
        compacted.append(bool(m is not None and m.compacted))
        return views[-1]

    strategy.build = keep  # type: ignore[method-assign,assignment]
    prices = Prices.for_model("claude-sonnet-4-5")
    await replay(
        conv, strategy, StrategyResult("myrm"), window, counter, prices, schemas=builtin_tool_schemas()
    )
    return views, compacted


async def trace(
    corpus: Path,
    probe_paths: list[Path],
    window: int,
    limit: int | None = None,
    against: str | None = None,
    tally: Counter[tuple[str, str]] | None = None,
) -> list[dict[str, Any]]:
    """The facts of ``probe_paths`` missing from myrm's last request (and, with ``against``, still in that
    strategy's), each with how it left; ``tally`` counts, per probe set, the facts each keeps (``against``
    only)."""
    probes = [(path.name, p) for path in probe_paths for p in load_probes(path)]
    wanted = {p.conv_id for _, p in probes}
    counter = TokenCounter()
    out: list[dict[str, Any]] = []
    for conv in load_conversations(corpus, limit):
        if conv.id not in wanted:
            continue
        views, compacted = await _replay(conv, counter, window)
        other = view_text((await _replay(conv, counter, window, against))[0][-1]) if against else ""
        turns = [i for i, m in enumerate(conv.messages) if m.role == "assistant" and i > 0]
        texts = [view_text(v) for v in views]
        summaries = [_summary_text(v) for v in views]
        for source, p in ((s, p) for s, p in probes if p.conv_id == conv.id):
            for alts in p.facts:
                lows = [a.lower() for a in alts]
                mine = any(a in texts[-1] for a in lows)
                theirs = bool(against) and any(a in other for a in lows)
                if tally is not None and against:
                    tally[(source, "myrm")] += mine
                    tally[(source, against)] += theirs
                    tally[(source, f"{against} only")] += theirs and not mine
                    tally[(source, "myrm only")] += mine and not theirs
                if mine or (against and not theirs):
                    continue
                before = conv.messages[: turns[-1]]  # what the scored request is built from
                holding = [i for i, m in enumerate(before) if any(a in view_text([m]) for a in lows)]
                first, last = holding[0], holding[-1]
                raw = conv.messages[first]
                seen = [k for k, t in enumerate(texts) if turns[k] > first and any(a in t for a in lows)]
                held = [k for k, t in enumerate(summaries) if any(a in t for a in lows)]
                gone = (seen[-1] + 1) if seen else next(k for k, i in enumerate(turns) if i > first)
                stage = _stage(raw, views[gone])
                if held:
                    how = f"recorded in the summary (requests {held[0]}–{held[-1]}), then pushed out"
                elif stage in ("compacted into summary", "dropped"):
                    how = "never recorded: compacted away"
                else:
                    how = stage
                call = next(
                    (c for m in conv.messages[:first] for c in m.tool_calls if c.id == raw.tool_call_id), None
                )
                final = _stage(raw, views[-1])
                if final not in ("compacted into summary", "dropped"):
                    cause = "cut on arrival"
                else:
                    cause = "folded, said again later" if last > first else "folded"
                out.append(
                    {
                        "conv": conv.id,
                        "probes": source,
                        "probe": p.probe_id,
                        "type": p.type,
                        "fact": alts[0],
                        "message": first,
                        "role": raw.role,
                        "tool": call.name if call else "",
                        "tokens": counter.message(raw),
                        "requests": len(turns),
                        "left_at": gone,
                        "compaction": compacted[gone] if gone < len(compacted) else False,
                        "how": how,
                        "final_stage": final,
                        "cause": cause,
                        "last": last,
                        "last_role": conv.messages[last].role,
                        "last_age": sum(counter.message(m) for m in conv.messages[last + 1 : turns[-1]]),
                    }
                )
    return out


def _how(r: dict[str, Any]) -> str:
    return str(r["how"]).split(" (")[0]


def markdown(rows: list[dict[str, Any]], corpus: Path, probes: list[Path], window: int) -> str:
    """A results section: the lost facts by how they left, by tool, then one row each."""
    hows = Counter(_how(r) for r in rows).most_common()
    tools = Counter(f"{r['role']}/{r['tool']}" if r["tool"] else r["role"] for r in rows).most_common()
    lines = [
        f"\n### Why myrm lost them: {', '.join(p.name for p in probes)}, window {window:,}\n",
        f"`python bench/foreign/why.py --corpus {corpus} {' '.join(f'--probes {p}' for p in probes)} "
        f"--window {window}` — "
        f"{len(rows)} facts missing from myrm's last request of their conversation.\n",
        "By how they left: " + ", ".join(f"{h} {n}" for h, n in hows) + ".  ",
        "By the message that held them: " + ", ".join(f"{t} {n}" for t, n in tools) + ".\n",
        "| conversation | probe | fact | message, its tokens | left at request | how |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        fact = str(r["fact"]).replace("|", "\\|").replace("\n", " ")[:50]
        src = f"{r['message']} ({r['role']}{'/' + r['tool'] if r['tool'] else ''}, {r['tokens']:,})"
        at = f"{r['left_at']} of {r['requests']}{' (compaction)' if r['compaction'] else ''}"
        lines.append(f"| {r['conv']} | {r['probe']} | `` {fact} `` | {src} | {at} | {r['how']} |")
    return "\n".join(lines) + "\n"


def compare(corpus: Path, results: list[Path]) -> str:
    """A results section from ``myrm bench --json`` files: each strategy's retention of every probe set, and
    for the first set by agent, with the runs where myrm is not above ``window`` and ``truncate``."""
    agent = {c.id: str(c.meta.get("agent", "")) for c in load_conversations(corpus)}
    lines = ["\n### Where myrm stands against window and truncate\n"]
    below: list[str] = []
    for path in results:
        d = json.loads(path.read_text())
        first = Path(d["probes"]).name
        sets = [first, *(Path(x).name for x in d["extra_probes"])]
        probes = {(p.conv_id, p.probe_id) for p in load_probes(Path(d["probes"]))}
        agents = sorted({agent[c] for c, _ in probes})
        total = Counter(agent[c] for c, _ in probes)
        lines += [
            f"\n`{path}` (window {d['window']:,}); retention of reachable facts, `{first}` by agent:\n",
            "| strategy | rejected | " + " | ".join(sets) + " | " + " | ".join(agents) + " |",
            "|---|---:|" + "---:|" * (len(sets) + len(agents)),
        ]
        ret: dict[str, dict[str, float | None]] = {}
        for name, m in d["strategies"].items():
            lost = Counter(agent[f["conv_id"]] for f in m.get("probe_lost") or [])
            r = {first: m["probe_retention_reachable"]}
            r |= {x: m["probe_sets"][x]["probe_retention_reachable"] for x in sets[1:]}
            r |= {a: 1 - lost[a] / total[a] for a in agents}
            ret[name] = r
            cells = ["–" if v is None else f"{v:.3f}" for v in r.values()]
            lines.append(f"| {name} | {m['rejected_requests']} | " + " | ".join(cells) + " |")
        for col in [*sets, *agents]:
            mine = ret["myrm"][col]
            for base in ("window", "truncate"):
                theirs = ret.get(base, {}).get(col)
                if mine is not None and theirs is not None and mine <= theirs:
                    word = "below" if mine < theirs else "level with"
                    below.append(
                        f"- window {d['window']:,}, {col}: myrm {mine:.3f} {word} {base} {theirs:.3f}"
                    )
    lines += ["\nWhere myrm is not above both:\n", *(below or ["- nowhere"])]
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, required=True)
    ap.add_argument("--probes", type=Path, action="append", help="a probe file; repeat for more")
    ap.add_argument("--window", type=int, default=16_000)
    ap.add_argument("--limit", type=int, help="the corpus's first N conversations, as myrm bench --limit")
    ap.add_argument("--against", help="only the facts this strategy (truncate, window, …) keeps")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--markdown", type=Path, help="append a section with every lost fact to this file")
    ap.add_argument("--compare", type=Path, nargs="+", help="myrm bench --json files: a comparison section")
    a = ap.parse_args()
    if a.compare:
        text = compare(a.corpus, a.compare)
        print(text)
        if a.markdown:
            with a.markdown.open("a", encoding="utf-8") as f:
                f.write(text)
        return 0
    if a.probes is None:
        ap.error("--probes or --compare")
    tally: Counter[tuple[str, str]] = Counter()
    rows = asyncio.run(trace(a.corpus, a.probes, a.window, a.limit, a.against, tally))
    if a.markdown:
        with a.markdown.open("a", encoding="utf-8") as f:
            f.write(markdown(rows, a.corpus, a.probes, a.window))
    for r in rows:
        print(
            f"{r['conv'][-24:]:24} {r['probes'][:22]:22} {r['probe']:>4} {r['fact'][:40]!r:44} "
            f"msg {r['message']:>3} "
            f"{r['role']}/{r['tool'] or '-'} {r['tokens']:>6} tok  left at req {r['left_at']}/{r['requests']}"
            f"{' (a compaction)' if r['compaction'] else ''}: {r['how']}; {r['cause']}, last held by msg "
            f"{r['last']} ({r['last_role']}, {r['last_age']:,} tokens before the end)"
        )
    print(dict(Counter(_how(r) for r in rows).most_common()))
    print(dict(Counter(str(r["cause"]) for r in rows).most_common()))
    for source in dict.fromkeys(s for s, _ in tally):
        print(source, {k: n for (s, k), n in tally.items() if s == source})
    if a.json:
        a.json.write_text(json.dumps(rows, ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
