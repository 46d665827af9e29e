"""Probes nobody tuned on: facts a tool returned that the agent later used, derived from a corpus by rule.

A fact qualifies when it first appears in the conversation in a tool output (not in the system prompt, the
task, or the call that asked for it) and reappears later in an assistant message or a tool call's arguments:
the agent read it there and acted on it. Kinds, by general rules (no corpus-specific strings): ids (letters
and digits mixed: ``ZFA04Y``, ``credit_card_7407366``), numbers (amounts, counts, line numbers: 3+ digits or
decimals),
``path:line`` and paths, code identifiers (``snake_case``, ``CamelCase``, dotted names), short JSON string
values (statuses, names, cabins) and error lines. Each conversation gives at most ``per_conv`` probes of one
fact each, spread over the kinds; the choice within a kind is by a hash of the fact, so it is deterministic
and blind to where the fact sits.

Facts the agent concluded (``--source assistant``): a fact stated first by an assistant message — in its prose
or its tool calls' arguments — and found again in a later message. Kinds, by the sentence or place it is in:
``decision`` (a code line or ``sed`` replacement the agent wrote in a call — not an import or a print —, or
a span of a sentence that decides: "I'll", "instead", "the fix"), ``finding`` (a sentence that concludes:
"the bug is", "because", "this means") and ``attempt`` (a sentence about a failure: "failed", "still",
"didn't work"). A span is a backticked string or one of the tool-fact patterns above. ``per_conv`` of them at
most, round-robin over the kinds.

Hold-out: ``half(conv_id)`` splits a corpus by a hash of each conversation's id into ``tune`` and ``judge``;
tune on one, report both.

``python -m myrm_tui.bench.probegen --corpus CORPUS --out bench/probes/NAME.jsonl [--source assistant]``
writes the probes, and ``NAME-tune.jsonl`` / ``NAME-judge.jsonl`` beside it.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

PER_CONV = 10
MAX_FACT_CHARS = 120
# Minimum conversation length: shorter ones are never compacted, so every strategy keeps everything.
MIN_MESSAGES = 12

_ID = re.compile(r"(?<![\w#/.-])(?=[\w#-]*\d)(?=[\w#-]*[A-Za-z])[A-Za-z0-9#][\w#-]{4,39}(?![\w/-])")
_NUMBER = re.compile(r"(?<![\w.])\d[\d,]*\.\d+(?![\w.])|(?<![\w.,])\d{3,}(?![\w.,])")
_PATH_LINE = re.compile(r"(?<![\w/.-])[\w.-]*[\w-]/?[\w./-]*\.[A-Za-z]\w{0,5}:\d+")
_PATH = re.compile(r"(?<![\w/.-])(?:[\w.-]+/)+[\w.-]+\.[A-Za-z]\w{0,5}(?![\w/])")
_IDENT = re.compile(
    r"(?<![\w.])(?:[A-Za-z_]\w*_\w+|[A-Z][a-z]+(?:[A-Z][a-z0-9]+)+|[a-z]+(?:\.[A-Za-z_]\w*){2,})(?![\w])"
)
_ERROR = re.compile(r"^\s*(?:[\w.]*(?:Error|Exception)\b:.*|(?:FAILED|ERROR)\b.*|Error: .*)$", re.M)
KINDS = ("id", "number", "path_line", "path", "identifier", "value", "error")
TYPE_OF = {
    "id": "artifact",
    "path_line": "artifact",
    "path": "artifact",
    "identifier": "artifact",
    "number": "recall",
    "value": "recall",
    "error": "recall",
}


def half(conv_id: str) -> str:
    """``tune`` or ``judge``: a stable split of a corpus by a hash of the conversation id."""
    return "tune" if hashlib.sha256(conv_id.encode()).digest()[0] % 2 == 0 else "judge"


def message_texts(messages: Sequence[dict[str, Any]]) -> list[str]:
    """What the bench scores of each message: text content plus its tool calls' arguments."""
    out = []
    for m in messages:
        c = m.get("content")
        if isinstance(c, list):
            c = "\n".join(
                str(p.get("text", "")) for p in c if isinstance(p, dict) and p.get("type") == "text"
            )
        args = ""
        for call in m.get("tool_calls") or []:
            a = (call.get("function") or {}).get("arguments")
            args += a if isinstance(a, str) else json.dumps(a if a is not None else {}, ensure_ascii=False)
        out.append((c if isinstance(c, str) else "") + args)
    return out


def _json_parts(text: str) -> tuple[list[str], set[str]]:
    """Short string values of a JSON output (statuses, names, cabins), deep ones included, and its keys
    (the schema, not facts: ``payment_id`` is what every such output says)."""
    s = text.strip()
    if not s or s[0] not in "[{":
        return [], set()
    try:
        value = json.loads(s)
    except (json.JSONDecodeError, RecursionError):
        return [], set()
    out: list[str] = []
    keys: set[str] = set()
    stack: list[object] = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            keys.update(str(k) for k in v)
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
        elif isinstance(v, str) and 4 <= len(v) <= 40 and "\n" not in v:
            out.append(v)
    return out[::-1], keys


def candidates(text: str) -> list[tuple[str, str]]:
    """(kind, fact) of one tool output, in the kinds' order, deduplicated."""
    values, keys = _json_parts(text)
    found: list[tuple[str, str]] = []
    for kind, rx in (
        ("id", _ID),
        ("number", _NUMBER),
        ("path_line", _PATH_LINE),
        ("path", _PATH),
        ("identifier", _IDENT),
    ):
        found += [(kind, m.group(0)) for m in rx.finditer(text)]
    found += [("value", v) for v in values]
    found += [("error", m.group(0).strip()[:MAX_FACT_CHARS]) for m in _ERROR.finditer(text)]
    seen: set[str] = set()
    out = []
    for kind, fact in found:
        fact = fact.strip().rstrip(".,:;")
        if len(fact) < 3 or fact in seen or fact in keys:
            continue
        seen.add(fact)
        out.append((kind, fact))
    return out


@dataclass(frozen=True)
class ToolFact:
    kind: str
    fact: str
    index: int  # the tool message it first appears in
    used_at: int  # the first later assistant message (content or call arguments) that holds it


class _Scan(NamedTuple):
    """What both fact finders read first: each message's text (and lower-cased), its role, the first user
    message, the assistant messages and the last of them."""

    texts: list[str]
    lows: list[str]
    roles: list[Any]
    first_user: int
    assistants: list[int]
    last: int

    @classmethod
    def of(cls, messages: Sequence[dict[str, Any]]) -> _Scan | None:
        """None where there is nothing to find: no user message or no assistant message."""
        texts = message_texts(messages)
        roles = [m.get("role") for m in messages]
        first_user = next((i for i, r in enumerate(roles) if r == "user"), None)
        assistants = [i for i, r in enumerate(roles) if r == "assistant"]
        if first_user is None or not assistants:
            return None
        return cls(texts, [t.lower() for t in texts], roles, first_user, assistants, assistants[-1])


def tool_facts(messages: Sequence[dict[str, Any]]) -> list[ToolFact]:
    """Every fact a tool returned first that a later assistant message used (see the module docstring)."""
    scan = _Scan.of(messages)
    if scan is None:
        return []
    texts, lows, roles, first_user, assistants, last = scan
    out: list[ToolFact] = []
    seen: set[str] = set()
    for i, role in enumerate(roles):
        if role != "tool" or not first_user < i < last:
            continue
        for kind, fact in candidates(texts[i]):
            low = fact.lower()
            if low in seen:
                continue
            seen.add(low)
            # First appearance in this output, case-sensitive and not (the bench scores case-insensitively).
            if any(low in lows[k] for k in range(i)):
                continue
            used = next((j for j in assistants if j > i and low in lows[j]), None)
            if used is not None:
                out.append(ToolFact(kind, fact, i, used))
    return out


ASSISTANT_KINDS = ("decision", "finding", "attempt")
ASSISTANT_TYPE = {"decision": "decision", "finding": "recall", "attempt": "recall"}
ASSISTANT_PER_CONV = 6
_ATTEMPT = re.compile(
    r"(?i)\b(?:fail(?:s|ed|ing|ure)?|did(?: not|n't) work|does(?: not|n't) work|not working|"
    r"still (?:fails?|failing|broken|not|shows?|raises?|gets?|getting)|didn't|wrong)\b"
)
_FINDING = re.compile(
    r"(?i)\b(?:the (?:bug|issue|problem|error|cause|culprit|reason)|root cause|because|this means|"
    r"which means|caused by|is due to|turns out|found (?:that|the)|confirms?|appears to|seems to)\b"
)
_DECIDE = re.compile(
    r"(?i)\b(?:i(?:'ll| will)|let me|let's|i need to|i should|instead|decid\w*|i chose|the fix|"
    r"fix (?:it|this|the)|change|replace|modify|update)\b"
)
_WORD3 = re.compile(r"[A-Za-z0-9_]{3,}")
_TICK = re.compile(r"`([^`\n]{4,120})`")
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_CODE = re.compile(r"[(=]")  # a call, an assignment, a comparison: code that does something
_BOILERPLATE = re.compile(r"^(?:import|from|print)\b")  # imports and prints of a reproduction script
_SHELL = re.compile(
    r"^(?:cd|ls|cat|grep|sed|find|python3?|echo|git|pip|pytest|rm|mkdir|cp|mv|head|tail|wc|chmod|export|"
    r"source|nl|awk|diff|patch|EOF)\b|^[|&<>#]"
)
_SED = re.compile(r"\bs([/|#,])((?:\\.|(?!\1).)*)\1((?:\\.|(?!\1).)*)\1")


def _strings(value: object) -> list[str]:
    """Every string inside a parsed JSON value."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _code_lines(text: str) -> list[str]:
    """Code the agent wrote in a call: ``sed`` replacements and code-like lines that are no shell command."""
    out = [m.group(3).replace("\\", "") for m in _SED.finditer(text)]
    out += [ln.strip() for ln in text.splitlines()]
    return [
        c
        for c in out
        if 12 <= len(c) <= MAX_FACT_CHARS
        and _CODE.search(c)
        and not _SHELL.match(c)
        and not _BOILERPLATE.match(c)
    ]


def assistant_candidates(message: dict[str, Any]) -> list[tuple[str, str]]:
    """(kind, fact) of one assistant message: code lines of its calls (decisions), then the spans of its
    sentences that decide, conclude or report a failure; deduplicated."""
    found: list[tuple[str, str]] = []
    for call in message.get("tool_calls") or []:
        raw = (call.get("function") or {}).get("arguments")
        try:
            args = json.loads(raw) if isinstance(raw, str) else raw
        except (json.JSONDecodeError, RecursionError):
            args = raw
        for text in _strings(args):
            found += [("decision", c) for c in _code_lines(text)]
    c = message.get("content")
    prose = c if isinstance(c, str) else "\n".join(message_texts([{"content": c}])) if c else ""
    for sentence in _SENTENCE.split(prose):
        kind = (
            "attempt"
            if _ATTEMPT.search(sentence)
            else "finding"
            if _FINDING.search(sentence)
            else "decision"
            if _DECIDE.search(sentence)
            else None
        )
        if kind is None:
            continue
        spans = [m.group(1) for m in _TICK.finditer(sentence)] + [f for _, f in candidates(sentence)]
        found += [(kind, x) for x in spans]
    seen: set[str] = set()
    out = []
    for kind, fact in found:
        fact = fact.strip().rstrip(".,:;")
        # A span cut inside a string literal (an odd quote) or without a word of its own is no fact.
        if (
            len(fact) < 4
            or fact in seen
            or fact.count("'") % 2
            or fact.count('"') % 2
            or not _WORD3.search(fact)
        ):
            continue
        seen.add(fact)
        out.append((kind, fact))
    return out


def assistant_facts(messages: Sequence[dict[str, Any]]) -> list[ToolFact]:
    """Every fact an assistant message stated first that a later message holds again (any role: the diff
    that shows the code written, the agent or the user coming back to it)."""
    scan = _Scan.of(messages)
    if scan is None:
        return []
    texts, lows, _, first_user, assistants, last = scan
    out: list[ToolFact] = []
    seen: set[str] = set()
    for i in assistants:
        if not first_user < i < last:
            continue
        for kind, fact in assistant_candidates(messages[i]):
            low = fact.lower()
            # As scored: the raw text (a call's arguments as sent, JSON-escaped), first here.
            if low in seen or fact not in texts[i] or any(low in lows[k] for k in range(i)):
                continue
            seen.add(low)
            used = next((j for j in range(i + 1, len(messages)) if low in lows[j]), None)
            if used is not None:
                out.append(ToolFact(kind, fact, i, used))
    return out


def _rank(conv_id: str, fact: str) -> str:
    return hashlib.sha256(f"{conv_id}\0{fact}".encode()).hexdigest()


def choose(
    conv_id: str, facts: Sequence[ToolFact], per_conv: int = PER_CONV, kinds: Sequence[str] = KINDS
) -> list[ToolFact]:
    """At most ``per_conv`` facts, round-robin over the kinds, each kind in hash order; no fact inside
    another chosen one (it would be kept or lost with it)."""
    by_kind = {
        k: sorted((f for f in facts if f.kind == k), key=lambda f: _rank(conv_id, f.fact)) for k in kinds
    }
    picked: list[ToolFact] = []
    while len(picked) < per_conv and any(by_kind.values()):
        for k in kinds:
            if not by_kind[k] or len(picked) >= per_conv:
                continue
            f = by_kind[k].pop(0)
            low = f.fact.lower()
            if any(low in p.fact.lower() or p.fact.lower() in low for p in picked):
                continue
            picked.append(f)
    return sorted(picked, key=lambda f: (f.index, f.fact))


def probes(
    conv_id: str, messages: Sequence[dict[str, Any]], per_conv: int = PER_CONV, source: str = "tool"
) -> list[dict[str, Any]]:
    """The probe lines (bench/probes format) of one conversation: facts a tool returned (``source="tool"``)
    or an assistant message stated (``"assistant"``)."""
    if len(messages) < MIN_MESSAGES:
        return []
    span = max(len(messages) - 1, 1)
    out = []
    if source == "assistant":
        chosen = choose(conv_id, assistant_facts(messages), per_conv, ASSISTANT_KINDS)
    else:
        chosen = choose(conv_id, tool_facts(messages), per_conv)
    for n, f in enumerate(chosen, 1):
        if source == "assistant":
            kind, pid = ASSISTANT_TYPE[f.kind], f"a{n}"
            question = (
                f"Which {f.kind} did the assistant state at message {f.index} that message {f.used_at} "
                "came back to?"
            )
        else:
            kind, pid = TYPE_OF[f.kind], f"t{n}"
            question = (
                f"Which {f.kind.replace('_', ':')} did the tool output at message {f.index} "
                f"return that the agent used at message {f.used_at}?"
            )
        out.append(
            {
                "conv_id": conv_id,
                "probe_id": pid,
                "type": kind,
                "question": question,
                "expected_facts": [f.fact],
                "evidence_msg_index": f.index,
                "evidence_frac": round(f.index / span, 3),
            }
        )
    return out


def read_corpus(path: Path) -> Iterable[dict[str, Any]]:
    """Each conversation as ``{"id", "messages"}`` (chat format); other agents' transcripts (a file or a
    folder of them) are read as ``myrm bench`` reads them, so the probes' message indices match."""
    from myrm_tui.store.foreign import is_transcript

    if path.is_dir() or is_transcript(path):
        from myrm_tui.bench.corpus import load_conversations

        for c in load_conversations(path):
            yield {"id": c.id, "messages": [m.to_api() for m in c.messages]}
        return
    opener: Any = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)


def generate(corpus: Path, per_conv: int | None = None, source: str = "tool") -> list[dict[str, Any]]:
    n = per_conv or (ASSISTANT_PER_CONV if source == "assistant" else PER_CONV)
    return [p for d in read_corpus(corpus) for p in probes(str(d["id"]), d["messages"], n, source)]


def write(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--corpus", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--per-conv", type=int, default=None)
    ap.add_argument("--source", choices=("tool", "assistant"), default="tool")
    a = ap.parse_args(argv)
    rows = generate(a.corpus, a.per_conv, a.source)
    write(a.out, rows)
    stem = a.out.name.removesuffix(".jsonl")
    for h in ("tune", "judge"):
        write(a.out.with_name(f"{stem}-{h}.jsonl"), [r for r in rows if half(r["conv_id"]) == h])
    convs = {r["conv_id"] for r in rows}
    print(f"{a.out}: {len(rows)} probes over {len(convs)} conversations")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
