"""Prove that every hand-probe fact is reachable in the raw history of its conversation.

Usage: python bench/probes/check.py [--corpus-dir ../shared/corpus]

Rules checked for each probe (a problem string is reported for every break):
- the fields are exactly conv_id, probe_id, type, question, expected_facts, evidence_msg_index,
  evidence_frac; type is one of recall / artifact / decision / continuation; 1-4 facts; probe_id unique
  within its conversation;
- a fact is a string or a non-empty list of alternative strings; a list fact is reachable when at least one
  alternative is (alternatives that are not found are reported as warnings, not problems);
- a fact's first appearance is a case-sensitive substring match over each message's text: the content plus the
  ``arguments`` of its tool calls (what ``myrm bench`` scores, see ``runner.view_text``);
- it first appears after the first user message (index > that message's index) and before the
  conversation's last assistant message, since the bench scores probes on the view sent for that last
  assistant turn;
- ``evidence_msg_index`` is where the FIRST listed fact first appears (for a list fact: the earliest of its
  alternatives), and ``evidence_frac`` is that index / (len(messages) - 1), rounded to 3 places.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

TYPES = ("recall", "artifact", "decision", "continuation")
FIELDS = {"conv_id", "probe_id", "type", "question", "expected_facts", "evidence_msg_index", "evidence_frac"}
HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
DEFAULT_CORPUS = REPO.parent / "shared" / "corpus"
# probe file -> corpus file it draws on
PAIRS = {"swe-dev-hand.jsonl": "swe-dev.jsonl.gz", "tau-dev-hand.jsonl": "tau-dev.jsonl.gz"}


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    opener: Any = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def message_texts(messages: list[dict[str, Any]]) -> list[str]:
    """The scored text of each message: content (text parts) plus its tool calls' arguments."""
    out = []
    for m in messages:
        c = m.get("content")
        if isinstance(c, list):
            c = "\n".join(str(p.get("text", "")) for p in c if p.get("type") == "text")
        args = ""
        for call in m.get("tool_calls") or []:
            a = (call.get("function") or {}).get("arguments")
            args += a if isinstance(a, str) else json.dumps(a if a is not None else {}, ensure_ascii=False)
        out.append((c or "") + args)
    return out


def first_index(texts: list[str], needle: str) -> int | None:
    return next((i for i, t in enumerate(texts) if needle in t), None)


def alternatives(fact: Any) -> list[str] | None:
    if isinstance(fact, str):
        return [fact]
    if isinstance(fact, list) and fact and all(isinstance(a, str) for a in fact):
        return fact
    return None


def load_probes(probes_path: Path) -> list[dict[str, Any]]:
    return read_jsonl(probes_path)


def check(probes_path: Path, corpus_path: Path, warnings: list[str] | None = None) -> list[str]:
    """Every rule break in ``probes_path`` against ``corpus_path``; empty when all probes hold."""
    convs = {str(d["id"]): d["messages"] for d in read_jsonl(corpus_path)}
    problems: list[str] = []
    seen: set[tuple[str, str]] = set()
    for n, p in enumerate(load_probes(probes_path), 1):
        where = f"{probes_path.name}:{n} {p.get('conv_id')}/{p.get('probe_id')}"
        if set(p) != FIELDS:
            problems.append(f"{where}: fields {sorted(set(p) ^ FIELDS)} differ from the format")
            continue
        key = (p["conv_id"], str(p["probe_id"]))
        if key in seen:
            problems.append(f"{where}: probe_id repeated in this conversation")
        seen.add(key)
        if p["type"] not in TYPES:
            problems.append(f"{where}: type {p['type']!r} not one of {TYPES}")
        if not str(p["question"]).strip():
            problems.append(f"{where}: empty question")
        msgs = convs.get(p["conv_id"])
        if msgs is None:
            problems.append(f"{where}: conversation not in {corpus_path.name}")
            continue
        facts = p["expected_facts"]
        if not isinstance(facts, list) or not 1 <= len(facts) <= 4:
            problems.append(f"{where}: needs 1-4 facts")
            continue
        texts = message_texts(msgs)
        first_user = next(i for i, m in enumerate(msgs) if m["role"] == "user")
        last_assistant = max(i for i, m in enumerate(msgs) if m["role"] == "assistant")
        firsts: list[int | None] = []
        for fact in facts:
            alts = alternatives(fact)
            if alts is None:
                problems.append(f"{where}: fact {fact!r} is neither a string nor a list of strings")
                firsts.append(None)
                continue
            hits = {a: first_index(texts, a) for a in alts}
            found = [i for i in hits.values() if i is not None]
            missing = [a for a, i in hits.items() if i is None]
            if not found:
                problems.append(f"{where}: fact {fact!r} not verbatim in the conversation")
                firsts.append(None)
                continue
            if missing and warnings is not None:
                warnings.append(f"{where}: alternatives {missing!r} never appear")
            first = min(found)
            firsts.append(first)
            if first <= first_user:
                problems.append(
                    f"{where}: fact {fact!r} already at message {first} (first user message {first_user})"
                )
            if first >= last_assistant:
                problems.append(
                    f"{where}: fact {fact!r} first at message {first}, not before the last assistant turn "
                    f"{last_assistant} (the bench could never keep it)"
                )
        if firsts and firsts[0] is not None:
            if p["evidence_msg_index"] != firsts[0]:
                shown = p["evidence_msg_index"]
                problems.append(f"{where}: evidence_msg_index {shown} but first fact first at {firsts[0]}")
            frac = round(firsts[0] / (len(msgs) - 1), 3)
            if p["evidence_frac"] != frac:
                problems.append(f"{where}: evidence_frac {p['evidence_frac']} but {frac}")
    return problems


def third(frac: float) -> str:
    return "first" if frac < 1 / 3 else "middle" if frac < 2 / 3 else "last"


def summary(probes: Iterable[dict[str, Any]]) -> dict[str, Counter[str]]:
    out: dict[str, Counter[str]] = {"type": Counter(), "third": Counter(), "conversations": Counter()}
    for p in probes:
        out["type"][p["type"]] += 1
        out["third"][third(float(p["evidence_frac"]))] += 1
        out["conversations"][p["conv_id"]] += 1
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus-dir", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--probes-dir", type=Path, default=HERE)
    ap.add_argument(
        "-v", "--verbose", action="store_true", help="also print warnings (unmatched alternatives)"
    )
    args = ap.parse_args(argv)
    problems: list[str] = []
    warnings: list[str] = []
    total: list[dict[str, Any]] = []
    for probe_file, corpus_file in PAIRS.items():
        probes_path, corpus_path = args.probes_dir / probe_file, args.corpus_dir / corpus_file
        if not corpus_path.exists():
            print(f"corpus file missing: {corpus_path}", file=sys.stderr)
            return 2
        problems += check(probes_path, corpus_path, warnings)
        probes = load_probes(probes_path)
        total += probes
        s = summary(probes)
        print(f"{probe_file}: {len(probes)} probes over {len(s['conversations'])} conversations")
        print("  by type: " + ", ".join(f"{t} {s['type'][t]}" for t in TYPES))
        print("  by third: " + ", ".join(f"{t} {s['third'][t]}" for t in ("first", "middle", "last")))
    s = summary(total)
    print(
        f"total: {len(total)} probes over {len(s['conversations'])} conversations, "
        f"{sum(len(p['expected_facts']) for p in total)} facts"
    )
    print("  by type: " + ", ".join(f"{t} {s['type'][t]}" for t in TYPES))
    print(
        "  by third: "
        + ", ".join(
            f"{t} {s['third'][t]} ({s['third'][t] / max(len(total), 1):.0%})"
            for t in ("first", "middle", "last")
        )
    )
    if args.verbose:
        for w in warnings:
            print("warning: " + w)
    for p in problems:
        print("PROBLEM: " + p)
    print(f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
