"""The facts myrm never recorded, at the Record fit that folded them, and what predicts a later use.

For each probe fact ``why.py`` finds *compacted away, never recorded*: the compaction whose fold held its
message, how many candidate lines the Record had there and how many fit its share, the rank of the fact's
line in the fit's drop order (1: the last to go) and the ranks that out-ranked it, or "no candidate line"
when no Record line held it at all, and whether a later message of the same fold (or the view left after
it) repeats the fact. Then, over every fit of the replayed conversations, the model check: each candidate
line with a fact-like token (``ledger.line_facts``), by kind and by whether the fold or the view after it
repeats a token, kept or dropped, and how often it is *needed* after the compaction (the agent uses one of
its tokens in a later message and nothing the view keeps — the rest of the Record, the messages left —
holds that token); the same by the quarter of the fold the line came from; and the agent's stated facts
(``ledger.stated_facts``, its own) by whether anything came back to them before the fold.

    python bench/foreign/record_trace.py --corpus bench/foreign --window 32000 \\
        --probes bench/probes/foreign-toolfacts-tune.jsonl \\
        --probes bench/probes/foreign-assistantfacts-tune.jsonl

Tune halves only (choices are made there); ``--conversations N`` the first N of each probe file,
``--markdown FILE`` appends the tables.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
import why

from myrm_tui.bench.corpus import load_conversations
from myrm_tui.bench.runner import view_text
from myrm_tui.context.steps import summarize as summarize_step
from myrm_tui.context.summary import fields as summary_model
from myrm_tui.context.summary import ledger
from myrm_tui.context.tokens import TokenCounter

NAMES = {9: "user", 8: "result", 7: "call", 6: "located", 5: "decision", 3: "prose/code", 2: "fill"}
WHERE = ("repeated in the fold", "repeated in the view after", "not repeated")

# What the hooks saw: the compacting request's fold and view, then its Record fit.
_now: dict[str, Any] = {}
FITS: dict[tuple[str, int], dict[str, Any]] = {}
SOURCE: dict[int, int] = {}  # a candidate line's id -> its message's place in the fold (-1: an old block's)
# (kind, where repeated, kept, needed) / (whose, quarter of the fold, kept, needed) / (seen again, needed)
MODEL: Counter[tuple[str, str, bool, bool]] = Counter()
PLACE: Counter[tuple[str, int, bool, bool]] = Counter()
STATED: Counter[tuple[str, bool]] = Counter()
MODELLED: set[str] = set()


def _hook() -> None:
    run, fit_block, mark = summarize_step.Summarize.run, summary_model.fit_block, ledger.mark_referred

    async def traced_run(self: Any, v: Any, s: Any) -> Any:
        _now["folded"] = [m for m in v.folded if m.meta.get("kind") != "summary"] if v.compacting else []
        _now["view"] = list(v.messages)
        return await run(self, v, s)

    def traced_mark(lines: Any, k: int, later: Any) -> Any:
        out = mark(lines, k, later)
        SOURCE.update(dict.fromkeys(map(id, out), k))
        return out

    def traced_fit(fresh: Any, merged: Any, lines: Any, seen: Any, *a: Any, **kw: Any) -> Any:
        out = fit_block(fresh, merged, lines, seen, *a, **kw)
        FITS[(_now["conv"], _now["req"])] = {
            "lines": list(lines),
            "source": [SOURCE.get(id(ln), -1) for ln in lines],
            "seen": set(seen),
            "kept": list(out.record),
            "folded": _now.get("folded", []),
            "view": _now.get("view", []),
        }
        return out

    summarize_step.Summarize.run = traced_run  # type: ignore[method-assign]
    summary_model.fit_block = traced_fit
    ledger.mark_referred = traced_mark


async def _replay(
    conv: Any, counter: TokenCounter, window: int, name: str = "myrm"
) -> tuple[list[list[Any]], list[bool]]:
    """``why._replay``, with the request's place where the hooks read it."""
    if name != "myrm":  # ``why.trace --against``: nothing of the Record to see
        return await _why_replay(conv, counter, window, name)

    def at(req: int) -> None:
        _now["conv"], _now["req"] = conv.id, req

    out = await _why_replay(conv, counter, window, "myrm", at)
    _model(conv)
    return out


_why_replay = why._replay


def _kind(ln: ledger.Line) -> str:
    if ln.text.startswith(ledger.USED_PREFIX):
        return "used-later line"
    return "agent's words" if ln.decided else NAMES.get(ln.priority, "other")


def _model(conv: Any) -> None:
    """The model check's counts for ``conv``'s fits (each conversation once, whichever probe file replays
    it first)."""
    if conv.id in MODELLED:
        return
    MODELLED.add(conv.id)
    turns = [i for i, m in enumerate(conv.messages) if m.role == "assistant" and i > 0]
    agent = [view_text([m]) if m.role == "assistant" else "" for m in conv.messages]
    for (c, req), f in FITS.items():
        if c != conv.id:
            continue
        future = "\n".join(agent[turns[req] :]) if req < len(turns) else ""
        folded = [view_text([m]) for m in f["folded"]]
        after = "\n".join(view_text([m]) for m in f["view"] if m.meta.get("kind") != "summary")
        have = set(f["kept"])
        carried = (after + "\n" + "\n".join(f["kept"])).lower()
        for k, m in enumerate(f["folded"]):
            if m.role != "assistant" or m.synthetic:
                continue
            for t in ledger.stated_facts(m):
                low = t.lower()
                if any(low in x for x in folded[:k]):
                    continue  # not its own
                seen = (
                    "in the fold"
                    if any(low in x for x in folded[k + 1 :])
                    else "in the view after"
                    if low in after
                    else "not yet"
                )
                STATED[(seen, low in future and low not in carried)] += 1
        for ln, k in zip(f["lines"], f["source"], strict=True):
            toks = [t.lower() for t in ledger.line_facts(ln.text)]
            if k < 0 or not toks:
                continue
            later = "\n".join(folded[k + 1 :])
            where = (
                WHERE[0]
                if any(t in later for t in toks)
                else WHERE[1]
                if any(t in after for t in toks)
                else WHERE[2]
            )
            kept = ln.text in have or ledger.squeezed(ln.text) in have
            own = ln.text.lower()
            needed = any(t in future and carried.count(t) <= (own.count(t) if kept else 0) for t in toks)
            MODEL[(_kind(ln), where, kept, needed)] += 1
            whose = "agent" if ln.decided or ln.priority == ledger.P_CALL else "output"
            PLACE[(whose, 4 * k // max(len(folded), 1), kept, needed)] += 1


def _holds(text: str, lows: list[str]) -> bool:
    t = text.lower()
    return any(a in t for a in lows)


def explain(row: dict[str, Any], conv: Any, alts: list[str]) -> dict[str, Any]:
    """The fit whose fold held ``row``'s message, and the fact's place in it."""
    lows = [a.lower() for a in alts]
    raw_id = conv.messages[row["message"]].id
    fits = [
        (req, f)
        for (c, req), f in sorted(FITS.items())
        if c == conv.id and any(m.id.split("#")[0] == raw_id for m in f["folded"])
    ]
    if not fits:
        return {"fit": "no fit folded it"}
    req, f = fits[0]
    fitter = ledger.Fitter(f["lines"], f["seen"])
    uniq, order = fitter.uniq, fitter.order()
    pos = {i: n for n, i in enumerate(order)}  # drop position: 0 goes first
    have = set(f["kept"])

    def kept(ln: ledger.Line) -> bool:  # a line the room took back squeezed was kept
        return ln.text in have or ledger.squeezed(ln.text) in have

    folded = f["folded"]
    at = next(k for k, m in enumerate(folded) if m.id.split("#")[0] == raw_id)
    out: dict[str, Any] = {
        "fit": req,
        "candidates": len(uniq),
        "fits": sum(kept(ln) for ln in uniq),
        "in_fold": any(_holds(view_text([m]), lows) for m in folded[at + 1 :]),
        "after_fold": any(_holds(view_text([m]), lows) for m in f["view"] if m.meta.get("kind") != "summary"),
    }
    cand = [i for i, ln in enumerate(uniq) if _holds(ln.text, lows)]
    if not cand:
        return out | {"line": "no candidate line"}
    best = max(cand, key=lambda i: pos[i])
    ln = uniq[best]
    return out | {
        "line": "kept" if kept(ln) else "dropped",
        "rank": len(uniq) - pos[best],
        "priority": ln.priority,
        "referred": ln.referred,
        "own": ln.own,
        "len": len(ln.text),
        "above": Counter(NAMES.get(ledger.rank(uniq[i]), "other") for i in order[pos[best] + 1 :]),
    }


async def run(corpus: Path, probe_files: list[Path], window: int) -> list[dict[str, Any]]:
    _hook()
    why._replay = _replay  # type: ignore[assignment]
    convs = {c.id: c for c in load_conversations(corpus)}
    rows = await why.trace(corpus, probe_files, window)
    facts = {(pf.name, p.conv_id, p.probe_id): p.facts for pf in probe_files for p in why.load_probes(pf)}
    out: list[dict[str, Any]] = []
    for r in rows:
        if str(r["how"]).startswith("never recorded"):
            alts = next(a for a in facts[(r["probes"], r["conv"], r["probe"])] if a[0] == r["fact"])
            set_name = r["probes"].removesuffix(".jsonl")
            out.append({"set": set_name, **r, **explain(r, convs[r["conv"]], list(alts))})
    return out


def _share(a: int, b: int) -> str:
    return f"{a}/{b} ({a / b:.2f})" if b else "–"


def _median(xs: list[int]) -> str:
    return str(sorted(xs)[len(xs) // 2]) if xs else "–"


def lost_tables(rows: list[dict[str, Any]], window: int) -> str:
    lines = [
        f"\n### The never-recorded facts at window {window:,}: the Record fit that folded them\n",
        "| set | never recorded | no candidate line | dropped by the fit | candidates (median) "
        "| fit (median) | fact line's rank (median) | its priority | repeated later in the fold "
        "| in the view after |",
        "|---|---:|---:|---:|---:|---:|---:|---|---:|---:|",
    ]
    for s in sorted({r["set"] for r in rows}):
        rs = [r for r in rows if r["set"] == s]
        dropped = [r for r in rs if r.get("line") == "dropped"]
        prios = Counter(NAMES.get(r["priority"], "other") for r in dropped).most_common()
        lines.append(
            f"| {s} | {len(rs)} | {sum(r.get('line') == 'no candidate line' for r in rs)} | {len(dropped)} "
            f"| {_median([r['candidates'] for r in rs if 'candidates' in r])} "
            f"| {_median([r['fits'] for r in rs if 'fits' in r])} | {_median([r['rank'] for r in dropped])} "
            f"| {', '.join(f'{k} {n}' for k, n in prios)} | {sum(bool(r.get('in_fold')) for r in rs)} "
            f"| {sum(bool(r.get('after_fold')) for r in rs)} |"
        )
    lines += [
        "",
        "| set | fact | fit at request | candidates / fit | rank | its line | in fold / after "
        "| out-ranked by |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        fact = str(r["fact"]).replace("|", "\\|").replace("\n", " ")[:40]
        what, above = r.get("line", r.get("fit")), ""
        if "rank" in r:
            what = f"{NAMES.get(r['priority'])} {r['len']} ch"
            what += f", referred {int(r['referred'])}, own {int(r['own'])}"
            above = ", ".join(f"{k} {n}" for k, n in r["above"].most_common(3))
        lines.append(
            f"| {r['set']} | `` {fact} `` | {r.get('fit')} "
            f"| {r.get('candidates', '–')} / {r.get('fits', '–')} | {r.get('rank', '–')} | {what} "
            f"| {int(bool(r.get('in_fold')))} / {int(bool(r.get('after_fold')))} | {above} |"
        )
    return "\n".join(lines) + "\n"


def model_tables() -> str:
    lines = [
        "\n| candidate line | its tokens | lines | kept | needed after the compaction: of kept / dropped |",
        "|---|---|---:|---:|---|",
    ]
    for kind in sorted({k[0] for k in MODEL}):
        for where in WHERE:
            n = {(kp, u): MODEL[(kind, where, kp, u)] for kp in (True, False) for u in (True, False)}
            kept, dropped = n[(True, True)] + n[(True, False)], n[(False, True)] + n[(False, False)]
            if kept + dropped:
                lines.append(
                    f"| {kind} | {where} | {kept + dropped} | {kept} "
                    f"| {_share(n[(True, True)], kept)} / {_share(n[(False, True)], dropped)} |"
                )
    lines += ["\n| whose line | quarter of the fold (0: oldest) | lines | needed: of kept / of dropped |"]
    lines += ["|---|---:|---:|---|"]
    for whose in ("agent", "output"):
        for q in range(4):
            n = {(kp, u): PLACE[(whose, q, kp, u)] for kp in (True, False) for u in (True, False)}
            kept, dropped = n[(True, True)] + n[(True, False)], n[(False, True)] + n[(False, False)]
            lines.append(
                f"| {whose} | {q} | {kept + dropped} | {_share(n[(True, True)], kept)} / "
                f"{_share(n[(False, True)], dropped)} |"
            )
    lines += ["\n| the agent's own stated facts, came back to | facts | needed after the compaction |"]
    lines += ["|---|---:|---:|"]
    for seen in ("in the fold", "in the view after", "not yet"):
        a, b = STATED[(seen, True)], STATED[(seen, False)]
        lines.append(f"| {seen} | {a + b} | {_share(a, a + b)} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, required=True)
    ap.add_argument("--probes", type=Path, action="append", required=True)
    ap.add_argument("--window", type=int, default=16_000)
    ap.add_argument("--conversations", type=int, help="only the first N conversations of each probe file")
    ap.add_argument("--markdown", type=Path)
    a = ap.parse_args()
    if a.conversations:
        load = why.load_probes

        def first(path: Path) -> Any:
            probes = load(path)
            keep = list(dict.fromkeys(p.conv_id for p in probes))[: a.conversations]
            return [p for p in probes if p.conv_id in keep]

        why.load_probes = first
    rows = asyncio.run(run(a.corpus, a.probes, a.window))
    text = lost_tables(rows, a.window) + model_tables()
    print(text)
    if a.markdown:
        with a.markdown.open("a", encoding="utf-8") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
