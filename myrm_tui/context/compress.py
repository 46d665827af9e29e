"""Layer 3 — priority-aware compression: Dedup → Truncate → Remove, background first.

Runs only when Pre-Compact decided this request compacts. The protected head and the tail (the
newest turns, up to ``tail_budget`` tokens) are never touched. Everything between is ranked into
four tiers and shortened in order until the view fits ``target_tokens``:

- SYSTEM_CRITICAL: system and real user messages — never shortened; removed last, and then kept
  verbatim in the summary.
- ACTIVE: what the CompressionIntent protects (focus files, recently failed calls).
- OLDER: ordinary earlier turns.
- BACKGROUND: stale outputs (the same command re-run later), failures resolved later, old
  pipeline-made messages.

Removal works on whole tool-call groups, so pairing is never broken; what is removed is handed to
Summarize through ``ctx.removed``.

After a provider's context-overflow answer (``ctx.hard_limit``, L4 stream recovery) the emergency
level makes stage 1 shrink every tool output, active and tail ones included; if the view is still
over the limit, stage 2 drops the oldest rounds whatever their tier, keeping the newest round and
the current instruction.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from enum import IntEnum

from myrm_tui.context import signals
from myrm_tui.context.invariants import group_spans
from myrm_tui.context.processor import Level, PipelineContext
from myrm_tui.context.trimming import head_tail, pointer_note
from myrm_tui.context.types import Message, ToolCall

SHRINK_MIN_TOKENS = 600
SHRINK_KEEP_CHARS = 1_600


def _cut(text: str, uri: str) -> str:
    if len(text) <= SHRINK_KEEP_CHARS:
        return text
    head, tail = text[: SHRINK_KEEP_CHARS * 2 // 3], text[-SHRINK_KEEP_CHARS // 3 :]
    return f"{head}\n[… {len(text) - len(head) - len(tail):,} chars cut; full text: {uri} …]\n{tail}"


def _shrunk(m: Message, ctx: PipelineContext) -> Message:
    """``m`` with long text and long tool-call arguments cut (arguments stay valid JSON)."""
    uri = ctx.vault.put(
        json.dumps({"content": m.text, "tool_calls": [c.to_api() for c in m.tool_calls]}, ensure_ascii=False),
        "archive",
        m.name or "",
        reason="emergency_shrink",
    )
    calls = []
    for c in m.tool_calls:
        try:
            args = c.parsed_arguments()
            short = json.dumps(
                {k: _cut(v, uri) if isinstance(v, str) else v for k, v in args.items()}, ensure_ascii=False
            )
        except ValueError:
            short = json.dumps({"truncated": _cut(c.arguments, uri)})
        calls.append(ToolCall(c.id, c.name, short))
    content = _cut(m.text, uri) if isinstance(m.content, str) else m.content
    return m.derive("shrink", content=content, tool_calls=tuple(calls), meta={**m.meta, "vault_uri": uri})


class Tier(IntEnum):
    BACKGROUND = 0
    OLDER = 1
    ACTIVE = 2
    SYSTEM_CRITICAL = 3


def frozen_end(view: list[Message], ctx: PipelineContext) -> int:
    """Where compression may start: after the protected head and the summary blocks of earlier
    compactions, which stay byte-identical (cached) — unless together they have outgrown their budget,
    then they are folded again (consolidated) with the rest."""
    head = len(ctx.protected_head)
    k = head
    while k < len(view) and view[k].meta.get("kind") == "summary":
        k += 1
    if (
        ctx.hard_limit is not None
        or sum(ctx.counter.message(m) for m in view[head:k]) > ctx.config.summary_budget_tokens
    ):
        return head  # after a provider overflow nothing is frozen: the blocks must fit the limit too
    return k


def tail_start(view: list[Message], ctx: PipelineContext, first: int) -> int:
    """Index where the reserved tail begins: whole groups from the end, within ``tail_budget``."""
    spans = group_spans(view)
    budget = ctx.config.tail_budget if ctx.hard_limit is None else ctx.config.recovery_tail_budget
    used = 0
    start = len(view)
    for a, b in reversed(spans):
        if a < first:
            break
        n = sum(ctx.counter.message(m) for m in view[a:b])
        if used + n > budget and start < len(view):
            break
        used += n
        start = a
    return max(start, first)


def classify(view: list[Message], first: int, end: int, ctx: PipelineContext) -> list[Tier]:
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
            if ctx.intent.protects(m, cmd):
                tiers[i] = Tier.ACTIVE
            elif cmd and cmd in later_commands:
                tiers[i] = Tier.BACKGROUND  # superseded by a later run
            elif signals.is_failure(m) and cmd in later_ok:
                tiers[i] = Tier.BACKGROUND  # resolved error
            later_commands[cmd] = i
            if not signals.is_failure(m):
                later_ok.add(cmd)
        elif m.role == "assistant" and ctx.intent.mentions_focus(m.text[:2000]):
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


class PriorityCompressor:
    name = "compress"

    async def process(self, view: list[Message], ctx: PipelineContext) -> list[Message]:
        if not ctx.compacting:
            return view
        first = frozen_end(view, ctx)
        end = tail_start(view, ctx, first)
        target = ctx.config.target_tokens
        if ctx.level >= Level.EMERGENCY:
            target = min(target, ctx.config.compress_threshold)
        room = None
        if ctx.hard_limit is not None:
            # Leave room for the summary of what goes (Summarize writes it after this step).
            room = ctx.hard_limit - min(ctx.config.max_context_tokens // 20, ctx.hard_limit // 4)
            target = min(target, room)
        view = self._dedup(view, first, end, ctx)
        if ctx.tokens(view) <= target:
            return view
        tiers = classify(view, first, end, ctx)
        deep = ctx.level >= Level.FULL or ctx.force_compaction
        if not deep:  # light compaction: shorten in place, fold nothing
            return self._truncate(view, first, end, tiers, ctx, target)
        # A deep compaction folds whole spans into the summary first: truncating them before would only
        # hand the ledger cut text, and each in-place cut is one more rewrite of the cached view.
        view = self._remove(view, first, end, tiers, ctx, target)
        end = tail_start(view, ctx, first)
        if ctx.tokens(view) > target:
            view = self._truncate(view, first, end, classify(view, first, end, ctx), ctx, target)
        # Last line: one oversized message in the tail (a huge heredoc, a giant output) must not make
        # the request invalid. Shrink the largest messages outside the protected head until it fits.
        limit = target if ctx.level >= Level.EMERGENCY else ctx.config.input_budget
        if ctx.tokens(view) > limit:
            view = self._shrink(view, first, ctx, limit)
        if room is not None and ctx.tokens(view) > room:
            view = self._drop_oldest_rounds(view, first, ctx, room)
        return view

    def _drop_oldest_rounds(
        self, view: list[Message], first: int, ctx: PipelineContext, limit: int
    ) -> list[Message]:
        """L4 stage 2: whole rounds (a reply with its tool results, or one message), oldest first."""
        spans = [(a, b) for a, b in group_spans(view) if a >= first]
        current = max(
            (i for i in range(first, len(view)) if view[i].role == "user" and not view[i].synthetic),
            default=-1,
        )
        # The newest round stays (it is what the model answers), and so does the current instruction.
        return self._drop_spans(
            view,
            spans[:-1],
            ctx.tokens(view),
            limit,
            lambda a, b: a <= current < b,
            "drop_oldest_rounds",
            ctx,
        )

    def _shrink(self, view: list[Message], first: int, ctx: PipelineContext, limit: int) -> list[Message]:
        out = list(view)
        order = sorted(range(first, len(view)), key=lambda i: -ctx.counter.message(view[i]))
        total = ctx.tokens(out)
        for i in order:
            if total <= limit:
                break
            m = out[i]
            before = ctx.counter.message(m)
            if before < SHRINK_MIN_TOKENS or m.synthetic:
                continue
            new = _shrunk(m, ctx)
            saved = before - ctx.counter.message(new)
            if saved > 0:
                out[i] = new
                total -= saved
                ctx.metrics.add_removed("emergency_shrink", saved)
        return out

    def _dedup(self, view: list[Message], first: int, end: int, ctx: PipelineContext) -> list[Message]:
        seen: dict[str, int] = {}
        out = list(view)
        for i in range(len(view) - 1, first - 1, -1):
            m = view[i]
            if m.role != "tool" or len(m.text) < 200:
                continue
            h = hashlib.blake2b(m.text.encode("utf-8", "replace"), digest_size=12).hexdigest()
            if h in seen and i < end:
                uri = ctx.vault.put(m.text, "tool_output", m.name or "", reason="dedup")
                new = m.derive(
                    "dedup",
                    content=f"[identical to a later output of this session; original: {uri}]",
                    meta={**m.meta, "vault_uri": uri},
                )
                ctx.metrics.add_removed("dedup", ctx.counter.message(m) - ctx.counter.message(new))
                out[i] = new
            else:
                seen.setdefault(h, i)
        return out

    def _truncate(
        self, view: list[Message], first: int, end: int, tiers: list[Tier], ctx: PipelineContext, target: int
    ) -> list[Message]:
        out = list(view)
        limit = ctx.config.truncate_chars
        order = sorted(
            (i for i in range(first, end) if view[i].role == "tool" and len(view[i].text) > limit * 1.2),
            key=lambda i: (tiers[i], i),
        )
        total = ctx.tokens(out)
        for i in order:
            if total <= target or tiers[i] >= Tier.SYSTEM_CRITICAL:
                break
            if tiers[i] == Tier.ACTIVE and ctx.level < Level.EMERGENCY:
                continue
            m = out[i]
            uri = m.meta.get("vault_uri") or ctx.vault.put(
                m.text, "tool_output", m.name or "", reason="truncate"
            )
            short = head_tail(m.text, 12, 8, max_chars=limit)
            new = m.derive(
                "trunc",
                content=short + pointer_note(uri, "truncated", len(m.text), len(short)),
                meta={**m.meta, "vault_uri": uri},
            )
            saved = ctx.counter.message(m) - ctx.counter.message(new)
            if saved <= 0:
                continue
            total -= saved
            ctx.metrics.add_removed("truncate", saved)
            out[i] = new
        return out

    def _remove(
        self, view: list[Message], first: int, end: int, tiers: list[Tier], ctx: PipelineContext, target: int
    ) -> list[Message]:
        spans = [(a, b) for a, b in group_spans(view) if first <= a and b <= end]
        # Active and critical spans go last. They may go: what a span held survives as its ledger lines,
        # and sparing them (in a coding session most spans touch a focus file) made compactions shallow —
        # a rewrite of the whole view every few turns.
        ranked = sorted(spans, key=lambda s: (tiers[s[0]], s[0]))
        # Reserve room for the summary that replaces what goes.
        total = ctx.tokens(view) + ctx.config.max_context_tokens // 20
        return self._drop_spans(view, ranked, total, target, lambda a, b: False, "remove", ctx)

    @staticmethod
    def _drop_spans(
        view: list[Message],
        candidates: list[tuple[int, int]],
        total: int,
        limit: int,
        keep: Callable[[int, int], bool],
        layer: str,
        ctx: PipelineContext,
    ) -> list[Message]:
        """Drop whole spans, in ``candidates`` order, until ``total`` is within ``limit``; ``keep`` spares
        one.

        What goes is handed to Summarize (``ctx.removed``) and counted under ``layer``."""
        drop: set[int] = set()
        for a, b in candidates:
            if total <= limit:
                break
            if keep(a, b):
                continue
            drop.update(range(a, b))
            total -= sum(ctx.counter.message(m) for m in view[a:b])
        removed = [view[i] for i in sorted(drop)]
        ctx.removed.extend(removed)
        ctx.metrics.add_removed(layer, sum(ctx.counter.message(m) for m in removed))
        return [m for i, m in enumerate(view) if i not in drop]
