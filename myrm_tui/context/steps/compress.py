"""Priority-aware compression: Dedup → Truncate → Remove, background first.

Runs only when Pre-Compact decided this request compacts. The protected head and the tail (the
newest turns, up to ``tail_budget`` tokens) are never touched. Everything between is ranked into
four tiers and shortened in order until the view fits ``target_tokens``:

- SYSTEM_CRITICAL: system and real user messages — never shortened; removed last, and then kept
  verbatim in the summary.
- ACTIVE: what the CompressionIntent protects (focus files, recently failed calls).
- OLDER: ordinary earlier turns.
- BACKGROUND: stale outputs (the same command re-run later), failures resolved later, old
  pipeline-made messages.

Removal works on whole tool-call groups, so pairing is never broken; what is removed goes to
Summarize as the ``Condensation``'s ``folded`` messages.

After a provider's context-overflow answer (``Request.hard_limit``, stream recovery)
the emergency level makes stage 1 shrink every tool output, active and tail ones included; if the
view is still over the limit, stage 2 drops the oldest rounds whatever their tier, keeping the newest
round and the current instruction.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import IntEnum

from myrm_tui.context.compaction.intent import CompressionIntent
from myrm_tui.context.invariants import group_spans
from myrm_tui.context.step import Condensation, Configured, Level, Request, Trace, View
from myrm_tui.context.text import signals
from myrm_tui.context.text.call_args import call_args, whole_text
from myrm_tui.context.text.trimming import head_tail, pointer_note
from myrm_tui.context.tokens import TokenCounter
from myrm_tui.context.types import Message, ToolCall
from myrm_tui.context.vault import ArtifactVault

SHRINK_MIN_TOKENS = 600
SHRINK_KEEP_CHARS = 1_600


def _cut(text: str, uri: str, keep: int = SHRINK_KEEP_CHARS) -> str:
    if len(text) <= keep:
        return text
    head, tail = text[: keep * 2 // 3], text[-keep // 3 :]
    return f"{head}\n[… {len(text) - len(head) - len(tail):,} chars cut; full text: {uri} …]\n{tail}"


def _cut_value(value: object, uri: str, keep: int) -> object:
    """A non-string argument as it is when short, else its JSON text cut (a huge list, a deep object)."""
    text = json.dumps(value, ensure_ascii=False)
    return value if len(text) <= keep else _cut(text, uri, keep)


def _shrunk(m: Message, vault: ArtifactVault, keep: int = SHRINK_KEEP_CHARS) -> Message:
    """``m`` with long text and long tool-call arguments cut to about ``keep`` characters each, or
    the arguments whole behind a pointer when ``keep`` is 0 (arguments stay valid JSON)."""
    uri = vault.put(
        json.dumps({"content": m.text, "tool_calls": [c.to_api() for c in m.tool_calls]}, ensure_ascii=False),
        "archive",
        m.name or "",
        reason="emergency_shrink",
    )
    calls = []
    for c in m.tool_calls:
        args = call_args(c)
        if keep <= 0:  # the tightest cut: the whole arguments behind one pointer
            short = json.dumps({"cut": f"{len(c.arguments):,} chars of arguments; full text: {uri}"})
        elif args.ok:
            cut = {
                k: _cut(v, uri, keep) if isinstance(v, str) else _cut_value(v, uri, keep)
                for k, v in args.fields.items()
            }
            short = whole_text(json.dumps(cut, ensure_ascii=False))
        else:
            short = json.dumps({"truncated": _cut(c.arguments, uri, keep)})
        calls.append(ToolCall(c.id, c.name, short))
    content = _cut(m.text, uri, max(keep, 40)) if isinstance(m.content, str) else m.content
    return m.derive("shrink", content=content, tool_calls=tuple(calls), meta={**m.meta, "vault_uri": uri})


class Tier(IntEnum):
    BACKGROUND = 0
    OLDER = 1
    ACTIVE = 2
    SYSTEM_CRITICAL = 3


@dataclass(frozen=True, slots=True)
class CompressSettings:
    max_context_tokens: int
    input_budget: int
    compress_threshold: int
    target_tokens: int
    tail_budget: int
    recovery_tail_budget: int
    summary_budget_tokens: int
    consolidate_floor_tokens: int
    truncate_chars: int


@dataclass
class _Run:
    """One compaction's working set (private to this step, gone when it returns)."""

    req: Request
    s: CompressSettings
    level: Level
    trace: Trace = field(default_factory=Trace)
    folded: list[Message] = field(default_factory=list)

    @property
    def counter(self) -> TokenCounter:
        return self.req.counter

    def tokens(self, view: list[Message]) -> int:
        return self.req.counter.messages(view)

    @property
    def tail_budget(self) -> int:
        return self.s.tail_budget if self.req.hard_limit is None else self.s.recovery_tail_budget


def frozen_end(view: list[Message], r: _Run) -> int:
    """Where compression may start: after the protected head and the summary blocks of earlier
    compactions, which stay byte-identical (cached) — unless together they have outgrown their budget,
    then they are folded again (consolidated) with the rest."""
    head = len(r.req.protected_head)
    k = head
    while k < len(view) and view[k].meta.get("kind") == "summary":
        k += 1
    blocks = sum(r.counter.message(m) for m in view[head:k])
    if (
        r.req.hard_limit is not None
        or blocks > r.s.summary_budget_tokens
        # Several blocks behind a big head (a long first message) would leave no room: merge them.
        or (k - head >= 2 and r.counter.messages(view[:head]) + blocks > r.s.consolidate_floor_tokens)
    ):
        return head  # after a provider overflow nothing is frozen: the blocks must fit the limit too
    return k


def tail_start(view: list[Message], first: int, counter: TokenCounter, budget: int) -> int:
    """Index where the reserved tail begins: whole groups from the end, within ``budget`` tokens."""
    spans = group_spans(view)
    used = 0
    start = len(view)
    for a, b in reversed(spans):
        if a < first:
            break
        n = sum(counter.message(m) for m in view[a:b])
        if used + n > budget and start < len(view):
            break
        used += n
        start = a
    return max(start, first)


def classify(view: list[Message], first: int, end: int, intent: CompressionIntent) -> list[Tier]:
    """Tier of each span start in view[first:end] (tool results share their call's tier)."""
    tiers = [Tier.OLDER] * len(view)
    later_commands: dict[str, int] = {}
    later_ok: set[str] = set()
    call_cmd: dict[str, str] = {}
    for m in view[first:]:
        for c in m.tool_calls:
            call_cmd[c.id] = signals.command_of(c)
    # Walk backwards so "is there a later run of the same command" is a dict lookup.
    for i in range(len(view) - 1, first - 1, -1):
        m = view[i]
        if i >= end:
            if m.role == "tool":
                cmd = call_cmd.get(m.tool_call_id or "", "")
                later_commands[cmd] = i
                if not signals.is_failure(m):
                    later_ok.add(cmd)
            continue
        if m.role in ("system",) or (m.role == "user" and not m.synthetic):
            tiers[i] = Tier.SYSTEM_CRITICAL
            continue
        if m.synthetic:
            tiers[i] = Tier.BACKGROUND
            continue
        if m.role == "tool":
            cmd = call_cmd.get(m.tool_call_id or "", "")
            if intent.protects(m, cmd):
                tiers[i] = Tier.ACTIVE
            elif cmd and cmd in later_commands:
                tiers[i] = Tier.BACKGROUND  # superseded by a later run
            elif signals.is_failure(m) and cmd in later_ok:
                tiers[i] = Tier.BACKGROUND  # resolved error
            later_commands[cmd] = i
            if not signals.is_failure(m):
                later_ok.add(cmd)
        elif m.role == "assistant" and intent.mentions_focus(m.text[:2000]):
            tiers[i] = Tier.ACTIVE
    # A call group is as important as its most important result (or its call text, when that is ACTIVE).
    for a, b in group_spans(view):
        if a < first or a >= end or b - a < 2:
            continue
        top = max(tiers[a + 1 : b])
        if tiers[a] == Tier.ACTIVE:
            top = max(top, Tier.ACTIVE)
        for k in range(a, b):
            tiers[k] = top
    return tiers


class PriorityCompressor(Configured[CompressSettings]):
    name = "compress"
    Settings = CompressSettings

    async def run(self, v: View, s: CompressSettings) -> Condensation:
        if not v.compacting:
            return Condensation(messages=v.messages)
        r = _Run(v.request, s, v.plan.depth)
        view = self._compress(v.messages, r)
        return Condensation(messages=view, folded=tuple(r.folded), trace=r.trace)

    def _compress(self, view: list[Message], r: _Run) -> list[Message]:
        req, s = r.req, r.s
        first = frozen_end(view, r)
        end = tail_start(view, first, r.counter, r.tail_budget)
        target = s.target_tokens
        if r.level >= Level.EMERGENCY:
            target = min(target, s.compress_threshold)
        room = None
        if req.hard_limit is not None:
            # Leave room for the summary of what goes (Summarize writes it after this step).
            room = req.hard_limit - min(s.max_context_tokens // 20, req.hard_limit // 4)
            target = min(target, room)
        view = self._dedup(view, first, end, r)
        if r.tokens(view) <= target:
            return view
        tiers = classify(view, first, end, req.intent)
        deep = r.level >= Level.FULL or req.force_compaction
        if not deep:  # light compaction: shorten in place, fold nothing
            return self._truncate(view, first, end, tiers, r, target)
        # A deep compaction folds whole spans into the summary first: truncating them before would only
        # hand the ledger cut text, and each in-place cut is one more rewrite of the cached view.
        view = self._remove(view, first, end, tiers, r, target)
        end = tail_start(view, first, r.counter, r.tail_budget)
        if r.tokens(view) > target:
            view = self._truncate(view, first, end, classify(view, first, end, req.intent), r, target)
        # Last line: one oversized message in the tail (a huge heredoc, a giant output) must not make
        # the request invalid. Shrink the largest messages outside the protected head until it fits.
        limit = target if r.level >= Level.EMERGENCY else s.input_budget
        if r.tokens(view) > limit:
            view = self._shrink(view, first, r, limit)
        if room is not None and r.tokens(view) > room:
            # guard: l4-stage-2-drop-oldest-rounds
            view = self._drop_oldest_rounds(view, first, r, room)
        return view

    def _drop_oldest_rounds(self, view: list[Message], first: int, r: _Run, limit: int) -> list[Message]:
        """Stream recovery, stage 2: whole rounds (a reply with its tool results, or one message), oldest
        first."""
        spans = [(a, b) for a, b in group_spans(view) if a >= first]
        current = max(
            (i for i in range(first, len(view)) if view[i].role == "user" and not view[i].synthetic),
            default=-1,
        )
        # The newest round stays (it is what the model answers), and so does the current instruction.
        return self._drop_spans(
            view,
            spans[:-1],
            r.tokens(view),
            limit,
            lambda a, b: a <= current < b,
            "drop_oldest_rounds",
            r,
        )

    def _shrink(self, view: list[Message], first: int, r: _Run, limit: int) -> list[Message]:
        out = list(view)
        order = sorted(range(first, len(view)), key=lambda i: -r.counter.message(view[i]))
        total = r.tokens(out)
        for i in order:
            if total <= limit:
                break
            m = out[i]
            before = r.counter.message(m)
            if before < SHRINK_MIN_TOKENS or m.synthetic:
                continue
            new = _shrunk(m, r.req.vault)
            saved = before - r.counter.message(new)
            if saved > 0:
                out[i] = new
                total -= saved
                r.trace.add_removed("emergency_shrink", saved)
        return out

    def _dedup(self, view: list[Message], first: int, end: int, r: _Run) -> list[Message]:
        seen: dict[str, int] = {}
        out = list(view)
        for i in range(len(view) - 1, first - 1, -1):
            m = view[i]
            if m.role != "tool" or len(m.text) < 200:
                continue
            h = hashlib.blake2b(m.text.encode("utf-8", "replace"), digest_size=12).hexdigest()
            if h in seen and i < end:
                uri = r.req.vault.put(m.text, "tool_output", m.name or "", reason="dedup")
                new = m.derive(
                    "dedup",
                    content=f"[identical to a later output of this session; original: {uri}]",
                    meta={**m.meta, "vault_uri": uri},
                )
                r.trace.add_removed("dedup", r.counter.message(m) - r.counter.message(new))
                out[i] = new
            else:
                seen.setdefault(h, i)
        return out

    def _truncate(
        self, view: list[Message], first: int, end: int, tiers: list[Tier], r: _Run, target: int
    ) -> list[Message]:
        out = list(view)
        limit = r.s.truncate_chars
        order = sorted(
            (i for i in range(first, end) if view[i].role == "tool" and len(view[i].text) > limit * 1.2),
            key=lambda i: (tiers[i], i),
        )
        total = r.tokens(out)
        for i in order:
            if total <= target or tiers[i] >= Tier.SYSTEM_CRITICAL:
                break
            if tiers[i] == Tier.ACTIVE and r.level < Level.EMERGENCY:
                continue
            m = out[i]
            uri = m.meta.get("vault_uri") or r.req.vault.put(
                m.text, "tool_output", m.name or "", reason="truncate"
            )
            short = head_tail(m.text, 12, 8, max_chars=limit)
            new = m.derive(
                "trunc",
                content=short + pointer_note(uri, "truncated", len(m.text), len(short)),
                meta={**m.meta, "vault_uri": uri},
            )
            saved = r.counter.message(m) - r.counter.message(new)
            if saved <= 0:
                continue
            total -= saved
            r.trace.add_removed("truncate", saved)
            out[i] = new
        return out

    def _remove(
        self, view: list[Message], first: int, end: int, tiers: list[Tier], r: _Run, target: int
    ) -> list[Message]:
        spans = [(a, b) for a, b in group_spans(view) if first <= a and b <= end]
        # Active and critical spans go last. They may go: what a span held survives as its ledger lines,
        # and sparing them (in a coding session most spans touch a focus file) made compactions shallow —
        # a rewrite of the whole view every few turns.
        ranked = sorted(spans, key=lambda s: (tiers[s[0]], s[0]))
        # Reserve room for the summary that replaces what goes.
        total = r.tokens(view) + r.s.max_context_tokens // 20
        return self._drop_spans(view, ranked, total, target, lambda a, b: False, "remove", r)

    @staticmethod
    def _drop_spans(
        view: list[Message],
        candidates: list[tuple[int, int]],
        total: int,
        limit: int,
        keep: Callable[[int, int], bool],
        layer: str,
        r: _Run,
    ) -> list[Message]:
        """Drop whole spans, in ``candidates`` order, until ``total`` is within ``limit``; ``keep`` spares
        one.

        What goes is handed to Summarize (``_Run.folded``) and counted under ``layer``."""
        drop: set[int] = set()
        for a, b in candidates:
            if total <= limit:
                break
            if keep(a, b):
                continue
            drop.update(range(a, b))
            total -= sum(r.counter.message(m) for m in view[a:b])
        removed = [view[i] for i in sorted(drop)]
        r.folded.extend(removed)
        r.trace.add_removed(layer, sum(r.counter.message(m) for m in removed))
        return [m for i, m in enumerate(view) if i not in drop]
