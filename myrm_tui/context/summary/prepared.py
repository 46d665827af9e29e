"""A summary prepared ahead of need, and what a compaction does with it.

The agent (or the bench) asks the summarizer in the background for the span the next compaction will
fold (``foldable``) and hands the answer to the pipeline as ``Request.prepared_summary``. This module
stays pure: it builds the summarize instruction, says which messages a summary covers, and adopts a
prepared summary for the messages a compaction really folds — what it does not cover gets the
extractive summary, at once.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from myrm_tui.context.compaction.intent import CompressionIntent
from myrm_tui.context.config import ContextConfig
from myrm_tui.context.invariants import extract_protected_head
from myrm_tui.context.step import Trace
from myrm_tui.context.summary import fields as summary_model
from myrm_tui.context.summary import ledger
from myrm_tui.context.summary.fields import PreparedSummary as PreparedSummary
from myrm_tui.context.summary.fields import Summary
from myrm_tui.context.text import signals
from myrm_tui.context.tokens import TokenCounter
from myrm_tui.context.types import Message

PREFIX_NOTE = (
    "\n\nThis is a maintenance request, not a turn of the task: do not call tools and do not continue the "
    "work. Summarize the conversation above{scope}. Summary blocks already in it are kept as they are: "
    "do not repeat them. Answer with the JSON object only."
)


def base_id(m: Message) -> str:
    """The stored message a view message stands for (a filtered or trimmed copy shares its original's)."""
    return m.id.split("#", 1)[0]


@dataclass(frozen=True, slots=True)
class Adopted:
    summary: Summary
    covered: int  # folded messages the prepared summary covered
    uncovered: tuple[Message, ...] = field(default=())


def foldable(view: Sequence[Message], counter: TokenCounter, tail_budget: int) -> list[Message]:
    """The real messages the next compaction may fold: after the protected head and the summary blocks,
    before the newest ``tail_budget`` tokens (Compress never folds its tail)."""
    start = len(extract_protected_head(view))
    while start < len(view) and view[start].meta.get("kind") == "summary":
        start += 1
    used, end = 0, len(view)
    for k in range(len(view) - 1, start - 1, -1):
        used += counter.message(view[k])
        if used > tail_budget:
            break
        end = k
    # Never split a tool call from its results: the span ends before an assistant turn.
    while start < end < len(view) and view[end].role == "tool":
        end -= 1
    return [m for m in view[start:end] if m.id and not m.synthetic]


def prefix_instruction(prompt: str, kept_last: int) -> str:
    """The final user message of a summarize request that reuses the conversation's cached prefix."""
    scope = f" except its last {kept_last} messages (they stay as they are)" if kept_last else ""
    return prompt + PREFIX_NOTE.format(scope=scope)


def adopt(prepared: PreparedSummary, removed: Sequence[Message], head_user: str) -> Adopted | None:
    """The prepared summary for the folded ``removed``; the messages it does not cover are summarized
    extractively and merged in. ``None`` when it covers none of them (it is about other messages)."""
    hit = [m for m in removed if base_id(m) in prepared.covers]
    if not hit:
        return None
    rest = tuple(m for m in removed if base_id(m) not in prepared.covers and not m.synthetic)
    summary = summary_model.repaired(prepared.summary, head_user) or prepared.summary
    if rest:
        summary = summary_model.merge(summary, summary_model.extract(rest, head_user))
    return Adopted(summary, len(hit), rest)


# A fact is a word with a digit, a path separator, an underscore or a dot inside: ids, paths, numbers.
_FACT = re.compile(r"[\w./:-]*[\d/_.][\w./:-]*")
KEEP_PRIORITY = ledger.P_LOCATED


def facts_of(line: str) -> list[str]:
    return [f.strip(".:-") for f in _FACT.findall(line) if len(f.strip(".:-")) >= 3]


def missing_ledger_lines(summary: Summary, lines: Sequence[ledger.Line]) -> list[str]:
    """Ledger lines (results, calls, located lines, the user's words) with a verbatim fact the summary
    lost, highest priority first, each once."""
    text = "\n".join(summary.texts())
    out: list[str] = []
    for ln in sorted(lines, key=lambda ln: -ln.priority):
        if ln.priority < KEEP_PRIORITY:
            continue
        facts = facts_of(ln.text)
        if facts and any(f not in text for f in facts):
            out.append(ln.text.strip())
    return list(dict.fromkeys(out))


LOST = "protected fact lost: "
# A new preparation is due when the foldable span holds this share of the window not yet covered.
STEP_RATIO = 0.25


def due(
    view: Sequence[Message],
    tokens: int,
    config: ContextConfig,
    counter: TokenCounter,
    covered: frozenset[str],
    start: int | None = None,
) -> tuple[list[Message], list[Message]] | None:
    """(span, new) when a preparation is due after a request of ``tokens``: from ``start`` (the session's
    ``precompact.prepare_from``; the monitor threshold if not given), once the foldable span holds enough
    that no earlier preparation covers. ``None`` otherwise."""
    if tokens < (config.monitor_threshold if start is None else start):
        return None
    span = foldable(view, counter, config.tail_budget)
    new = [m for m in span if base_id(m) not in covered]
    if not new or counter.messages(new) < config.view_window * STEP_RATIO:
        return None
    return span, new


def accept(
    text: str, new: Sequence[Message], intent: CompressionIntent, config: ContextConfig
) -> Summary | None:
    """A summarizer's answer as an audited, bounded summary with the ledger kept; ``None`` if rejected."""
    data = parse_summary_json(text)
    if data is None:
        return None
    auditor = SummaryAuditor()
    shape = auditor.shape_problems(data)
    if shape:
        return None
    # The ledger first: a path or result the model dropped comes back verbatim, then the audit judges.
    lines = [ln for m in new for ln in ledger.record_one(m)]
    kept = auditor.keep_ledger(Summary.from_json(data), lines)
    verdict = auditor.audit(kept, new, intent, config)
    lost = [p.removeprefix(LOST) for p in verdict.problems if p.startswith(LOST)]
    if lost and len(lost) == len(verdict.problems):
        # A written file or focus file the model left out: the ledger names it, so it is added.
        kept = replace(kept, artifacts=(*kept.artifacts, *(f"file: {p}" for p in lost)))
        verdict = auditor.audit(kept, new, intent, config)
    return summary_model.bound(kept) if verdict.ok else None


def merged(old: PreparedSummary | None, new: PreparedSummary) -> PreparedSummary:
    """Two preparations of one compaction epoch as one."""
    if old is None or old.epoch != new.epoch:
        return new
    return PreparedSummary(
        summary_model.merge(old.summary, new.summary), old.covers | new.covers, new.source, new.epoch
    )


# -- the auditor (used by Summarize for an inline answer and by ``accept`` for a prepared one) ---------
class Limits(Protocol):
    @property
    def max_blocked_items(self) -> int: ...
    @property
    def max_next_steps(self) -> int: ...


@dataclass(frozen=True)
class AuditResult:
    ok: bool
    problems: tuple[str, ...] = ()


def parse_summary_json(text: str) -> dict[str, Any] | None:
    m = re.search(r"\{[\s\S]*\}", text)
    if not m:
        return None
    try:
        data = json.loads(m.group(0))
    except json.JSONDecodeError:
        return None
    return data if isinstance(data, dict) else None


class SummaryAuditor:
    """Validates a summary: every field present with the right type, limits kept, protected facts kept."""

    @staticmethod
    def shape_problems(data: Mapping[str, Any]) -> list[str]:
        """What is wrong with a model's JSON before it becomes a ``Summary`` (a missing or mistyped field)."""
        problems: list[str] = []
        for f in summary_model.FIELDS:
            if f not in data:
                problems.append(f"missing field {f}")
            elif (f in summary_model.LIST_FIELDS) != isinstance(data[f], list):
                problems.append(f"field {f} has the wrong type")
        return problems

    def audit(
        self,
        s: Summary | Mapping[str, Any],
        removed: Sequence[Message],
        intent: CompressionIntent,
        limits: Limits,
    ) -> AuditResult:
        problems: list[str] = []
        if not isinstance(s, Summary):  # a model's JSON: its shape is judged first
            problems = self.shape_problems(s)
            s = Summary.from_json(s)
        if len(s.blocked_items) > limits.max_blocked_items:
            problems.append("more than 3 blocked_items")
        if len(s.next_steps) > limits.max_next_steps:
            problems.append("more than 5 next_steps")
        text = json.dumps(s.to_json(), ensure_ascii=False)
        for path in self.protected_facts(removed, intent):
            if path not in text:
                problems.append(f"protected fact lost: {path}")
        return AuditResult(not problems, tuple(problems))

    def keep_ledger(self, s: Summary, lines: Sequence[ledger.Line], trace: Trace | None = None) -> Summary:
        """``s`` with the extractive ledger's lines whose identifiers, paths or numbers it lost merged into
        its key facts, highest priority first; the model keeps at least half the field's room."""
        missing = missing_ledger_lines(s, lines)
        if not missing:
            return s
        if trace is not None:
            trace.event(f"summary auditor: {len(missing)} ledger lines merged back")
        lim = summary_model.LIMITS["key_facts"]
        own = s.key_facts[-max(lim - len(missing), lim // 2) :]  # at least half the room
        return replace(s, key_facts=(*own, *missing[: lim - len(own)]))

    @staticmethod
    def protected_facts(removed: Sequence[Message], intent: CompressionIntent) -> list[str]:
        """Focus files mentioned in the removed messages, and files they wrote: must survive."""
        facts: list[str] = []
        blob = None
        for f in intent.focus_files:
            blob = blob if blob is not None else "\n".join(m.text[:4000] for m in removed)
            if f in blob:
                facts.append(f)
        for m in removed:
            for c in m.tool_calls:
                facts.extend(p for p, _ in signals.written_files(c))
        return list(dict.fromkeys(facts))
