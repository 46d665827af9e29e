"""Summarize: replace what compression removed with a 14-field structured summary.

With a summarizer LLM, the model writes the summary as JSON (prompt in ``prompts/summary.md``) and
the ``SummaryAuditor`` checks it; a rejected summary is retried once, then the deterministic
extractive summary is used. Summaries merge incrementally with the previous one, are redacted
(credentials, PII) before they are kept, and enter the view as an assistant-role message right
after the protected head — never as a user message, so it cannot pass for the user's words.
"""

from __future__ import annotations

import json
import logging
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

from myrm_tui.context import memo
from myrm_tui.context.compaction.record import gist
from myrm_tui.context.privacy.redact import redact
from myrm_tui.context.state import messages_json_ahead
from myrm_tui.context.step import Configured, Request, Rewritten, SummaryBlock, SummaryRecord, Trace, View
from myrm_tui.context.summary import fields as summary_model
from myrm_tui.context.summary import ledger, prepared
from myrm_tui.context.summary.fields import Summary
from myrm_tui.context.summary.prepared import AuditResult as AuditResult
from myrm_tui.context.summary.prepared import SummaryAuditor, parse_summary_json
from myrm_tui.context.text import signals
from myrm_tui.context.types import Message, synthetic_user
from myrm_tui.context.vault import VaultEntry

log = logging.getLogger(__name__)

SUMMARY_PROMPT = "summary.md"
MAX_TRANSCRIPT_CHARS = 120_000
ORIGINAL_SCAN_CHARS = 24_000
RENDER_OVERHEAD_TOKENS = 400  # a block's headings, fields and continuity sections around its Record
LEDGER_CACHE = 20_000
SHRUNK_MESSAGE_TOKENS = 600  # messages whose ledger lines are remembered (oldest forgotten first)
# Kept blocks are merged into the new one when they leave less than a quarter of the summaries' share;
# before that a block appends and the earlier ones stay byte-identical (cached). Merging at half the share
# kept one more swe-dev 16K fact (0.968 against 0.962) but rewrote the blocks at almost every compaction.
CONSOLIDATE_AT = 4
# The Record's lines are chosen from the newest folded messages worth this many input budgets: a fold of a
# history far over the window (a 10,000-message session opened with a small model: 2.3M tokens into a few
# thousand) spent 75 s ranking lines it had no room for, its cost growing with the square of the history.
# A compaction within the window folds under one budget, so its lines are all considered as before; the
# older ones stay in the archive every item that left points to.
LEDGER_SPAN_BUDGETS = 4
MIN_BLOCK_TOKENS = 120  # a block is never rendered smaller (the fit step then cuts elsewhere)


@dataclass(frozen=True, slots=True)
class SummarizeSettings:
    max_context_tokens: int
    input_budget: int
    injected_tokens: int
    anchor_tokens: int
    summary_budget_tokens: int
    summary_role: str
    ledger_ratio: float
    ledger_min_tokens: int
    fit_summary_tokens: int
    consolidate_ratio: float
    max_blocked_items: int
    max_next_steps: int


def ledger_start(messages: Sequence[Message], req: Request, span: int) -> int:
    """Index of the oldest of ``messages`` within the newest ``span`` tokens (0: all of them)."""
    total = 0
    for i in range(len(messages) - 1, -1, -1):
        total += req.counter.message(messages[i])
        if total > span:
            return i + 1
    return 0


def transcript(messages: Sequence[Message], limit: int = MAX_TRANSCRIPT_CHARS) -> str:
    parts: list[str] = []
    for m in messages:
        body = m.text
        if len(body) > 3000:
            body = body[:2000] + f"\n[… {len(body) - 2600} chars …]\n" + body[-600:]
        calls = "".join(f"\n[call {c.name}] {c.arguments[:1500]}" for c in m.tool_calls)
        parts.append(f"### {m.role}{' (' + m.name + ')' if m.name else ''}\n{body}{calls}")
    text = "\n\n".join(parts)
    return text if len(text) <= limit else text[: limit // 3] + "\n[… cut …]\n" + text[-2 * limit // 3 :]


REDACTED = "[redacted]"
# A view sent at this share of the input budget or above may be the last before a compaction (the point is
# 0.70-0.95 of it): the messages such a compaction would fold are written for its archive after sending.
PREPARE_FROM = 0.6


def prepare_fold(view: Sequence[Message], head: int) -> None:
    """What a compaction at the next request writes of each message it may fold (all but the protected head
    and the summary blocks): the archive's JSON of it (``state.message_json``), made once a message, oldest
    first (a compaction folds those first) as far as the bounds hold (``state.messages_json_ahead``)."""
    messages_json_ahead(m for m in view[head:] if m.meta.get("kind") != "summary")


def _safe(text: str) -> str:
    """``redact(text)``, or ``[redacted]`` when redaction itself fails: a failure never lets text through
    and never fails the compaction."""
    try:
        return redact(text)
    except Exception:
        log.warning("redaction failed; the text was replaced", exc_info=True)
        return REDACTED


def safe_redact_summary(summary: Summary, trace: Trace) -> Summary:
    """The summary redacted; if the one-pass redaction fails, field by field, and a field that still
    fails becomes ``[redacted]`` (said once in the trace)."""
    try:
        # guard: a-failing-redaction-degrades-to-redacted
        return summary_model.redact_summary(summary)
    except Exception as exc:
        log.warning("summary redaction failed; redacting field by field", exc_info=True)
        trace.event(f"redaction failed ({type(exc).__name__}); redacted field by field")
    values: dict[str, Any] = {}
    for f in summary_model.FIELDS:
        v = getattr(summary, f)
        values[f] = tuple(_safe(x) for x in v) if isinstance(v, tuple) else _safe(v)
    return Summary(**values)


def unfit_floor(view: Sequence[Message], req: Request, s: SummarizeSettings) -> str:
    """Why no compaction can make this request fit, or "" when one can: what the fit step never cuts
    below — the system prompt, the head's injected parts and the first message at their shares, the
    newest message as Compress's emergency shrink leaves it — is over the budget already."""
    count = req.counter.message
    system = sum(count(m) for m in view if m.role == "system")
    head = req.protected_head
    anchor = next((m for m in head if m.role == "user" and not m.synthetic), None)
    parts = sum(min(count(m), s.injected_tokens) for m in head if m.role == "user" and m.synthetic)
    first = min(count(anchor), s.anchor_tokens) if anchor is not None else 0
    newest = next(
        (
            m
            for m in reversed(view)
            if m.role == "user" and not m.synthetic and (anchor is None or m.id.split("#")[0] != anchor.id)
        ),
        None,
    )
    # Compress's emergency shrink cuts even the newest message to about this much (with a pointer).
    message = min(count(newest), SHRUNK_MESSAGE_TOKENS) if newest is not None else 0
    if system + parts + first + message <= s.input_budget:
        return ""
    return (
        f"the system prompt ({system:,} tokens), the injected context ({parts:,}) and the messages that "
        f"stay ({first + message:,}) pass {s.input_budget:,}"
    )


def _bare(text: str) -> str:
    """``text`` without its spaces and tabs: what ``ledger.squeezed`` leaves as it was."""
    return text.replace(" ", "").replace("\t", "")


def _redacted(lines: list[ledger.Line]) -> list[ledger.Line]:
    """A message's ledger lines with credentials and PII redacted — once, when the message enters the view
    (one pass over its lines together: a key split over lines is still found), not on the compacting
    request."""
    if not lines:
        return lines
    try:
        out = redact("\n".join(ln.text for ln in lines), keep_lines=True).split("\n")
    except Exception:
        log.warning("ledger redaction failed; redacting line by line", exc_info=True)
        out = []
    if len(out) != len(lines):  # a pattern spanned lines (or failed): redact each on its own
        return [replace(ln, text=_safe(ln.text)) for ln in lines]
    # A private key's lines come back empty after its first: they are left out.
    return [
        ln if t == ln.text else replace(ln, text=t)
        for ln, t in zip(lines, out, strict=True)
        if t or not ln.text
    ]


class Summarize(Configured[SummarizeSettings]):
    name = "summarize"
    Settings = SummarizeSettings

    def __init__(self, prompts_dir: Path | None = None, auditor: SummaryAuditor | None = None) -> None:
        self.prompts_dir = prompts_dir
        self.auditor = auditor or SummaryAuditor()
        self._ledger: dict[tuple[str, int], list[ledger.Line]] = {}  # (message id, content hash) -> lines
        # Requests whose new messages are read after the request is sent (``Request.reads_later``), oldest
        # first: (view, request, input budget).
        self._later: deque[tuple[tuple[Message, ...], Request, int]] = deque()

    async def run(self, v: View, s: SummarizeSettings) -> SummaryBlock | Rewritten:
        req, view = v.request, v.messages
        # What earlier requests left to read is read first, in their order: a message's lines are promoted
        # by the replies that quote them as they are read (``_observe``), so the order is part of the result.
        # Nothing is written ahead on this request's path: a compaction here writes what it folds itself.
        # guard: a-request-reading-what-was-left-writes-nothing-ahead
        self.settle(ahead=False)
        span = s.input_budget * LEDGER_SPAN_BUDGETS
        if not v.compacting or not v.folded:
            # guard: a-request-that-reads-later-leaves-its
            if req.reads_later:  # nothing in this request needs them: read while the model answers
                self._later.append((tuple(view), req, s.input_budget))
            else:
                self._observe(view, req, span)
            return Rewritten(messages=view)
        self._observe(view, req, span)
        trace = Trace()
        # The user's own first words: never a reminder myrm put before them (the environment message).
        # guard: summary-goal-from-the-users-words-not
        head_user = summary_model.first_user_words(req.protected_head) or summary_model.first_user_words(
            req.raw
        )
        state = req.state
        # A summary stored with a reminder as its goal (older versions) is repaired as it is merged.
        # guard: a-stored-reminder-goal-repaired-before
        previous = summary_model.repaired(state.summary, head_user)
        # Old blocks removed here are being consolidated: their Record lines carry over, re-fitted.
        folded = [m for m in v.folded if m.meta.get("kind") == "summary"]
        removed = [m for m in v.folded if m.meta.get("kind") != "summary"]
        fresh, source = await self._summarize(removed, head_user, previous, view, req, s, trace)
        fresh = safe_redact_summary(fresh, trace)
        merged = summary_model.merge(previous, fresh)  # the previous summary was redacted when it was made
        merged = replace(
            merged,
            blocked_items=merged.blocked_items[: s.max_blocked_items],
            next_steps=merged.next_steps[: s.max_next_steps],
        )
        covered = int(state.last_compaction.get("covered", 0)) + sum(1 for m in removed if not m.synthetic)
        number = state.compactions + 1
        head = len(req.protected_head)
        at = head
        while at < len(view) and view[at].meta.get("kind") == "summary":
            at += 1
        kept_blocks = view[head:at]
        # All blocks together stay within their share of the window: when the blocks kept byte-identical
        # (cached) leave too little of it, they are folded into this one, their Record lines re-fitted.
        share = s.fit_summary_tokens
        kept_tokens = req.tokens(kept_blocks)
        # guard: summary-blocks-within-their-share-kept
        if kept_blocks and share - kept_tokens < share // CONSOLIDATE_AT:
            trace.event(
                f"summary: {len(kept_blocks)} blocks ({kept_tokens:,} tokens) merged to stay in share"
            )
            folded = [*kept_blocks, *folded]
            view = [*view[:head], *view[at:]]
            at, kept_blocks, kept_tokens = head, [], 0
        seen = {ln.strip() for b in kept_blocks for ln in summary_model.record_lines(b.text)}
        later = ledger.LaterUse([*removed, *view])
        # Later outputs as they came: a trim that kept other lines of one does not hide that it shows a
        # fact the agent stated.
        # guard: referred-reads-later-outputs-as-they-came
        referred = ledger.Referred([self._referable(m, req) for m in [*removed, *view]], later)
        # guard: a-fold-far-over-the-window-the-record
        start = ledger_start(removed, req, s.input_budget * LEDGER_SPAN_BUDGETS)
        if start:
            trace.event(f"summary: Record lines from the newest {len(removed) - start:,} of {len(removed):,}")
        lines = [
            *ledger.mark_referred(
                [
                    ledger.reparse(ln, req.state.record_written)
                    for b in folded
                    for ln in summary_model.record_lines(b.text)
                ],
                -1,
                referred,
            ),
            *(
                ln
                for k, m in enumerate(removed[start:], start)
                for ln in ledger.mark_referred(self._folded_lines(m, k, later, req, referred), k, referred)
            ),
        ]
        # The block must fit what the request may still carry (after a provider overflow, the hard limit)
        # and the summaries' share; chars per token vary with the text, so fit_block measures the block.
        limit = min(s.input_budget, req.hard_limit or s.input_budget)
        room = limit - req.tokens(view)
        if req.hard_limit is not None:  # what Compress reserved for the summary when it cut to the limit
            room = min(room, s.max_context_tokens // 20, req.hard_limit // 4)
        # What the kept blocks leave of the share (capping a new block at half of it, so that more append
        # cached, lost 0.026 of swe-dev 16K's retention).
        room = min(room, share - kept_tokens)
        budget = max(min(self._budget_chars(removed, folded, req, s), room * ledger.CHARS_PER_TOKEN), 0)
        part = len(kept_blocks) + 1

        def whole() -> str:  # what a squeezed block shortened stays readable in the vault
            text = summary_model.render(merged, covered)
            return req.vault.put(text, "archive", "summary", reason="summary share")

        # The goal copied from the user's first message, which the protected head keeps in every request,
        # is not said twice: at a 4K window that copy was a tenth of the room a compaction leaves. Read from
        # the view's head, as HeadAnchor may have cut it: a cut that left the goal out keeps the section.
        in_view = summary_model.first_user_words(view[:head])
        shown = replace(fresh, user_goal="") if summary_model.copies_of(fresh.user_goal, in_view) else fresh
        fitted = summary_model.fit_block(
            shown,
            merged,
            lines,
            seen,
            covered,
            part,
            max(room - 8, MIN_BLOCK_TOKENS),
            req.counter.joined,
            budget,
            whole,
        )
        body, record = fitted.text, fitted.record  # redacted already, per message or when a block was made
        self._remember(lines, record, req.state.record_written)
        sid = f"summary-{number}"
        if s.summary_role == "user":
            msg = replace(synthetic_user(body, sid, "summary"), meta={"kind": "summary", "source": source})
        else:
            msg = Message(
                role="assistant",
                content=body,
                id=sid,
                synthetic=True,
                meta={"kind": "summary", "source": source},
            )
        trace.add_removed(self.name, -req.counter.message(msg))
        return SummaryBlock(
            messages=[*view[:at], msg, *view[at:]],
            record=SummaryRecord(merged, covered, source),
            trace=trace,
        )

    @staticmethod
    def _remember(lines: Sequence[ledger.Line], record: Sequence[str], written: dict[str, Any]) -> None:
        """Each Record line as written: its priority and whether the agent wrote it (redaction may have
        changed a line: it is guessed)."""
        made = {ln.text: ln for ln in lines}
        short: dict[str, ledger.Line] | None = None
        for text in record:
            hit = made.get(text)
            if hit is None:  # a line the fit kept squeezed (``ledger.squeezed``) is still whose it was
                if short is None:
                    # Squeezing keeps every character but spaces and tabs: only the lines equal to a missed
                    # text in the others are squeezed (squeezing every line was a twentieth of a compaction).
                    # guard: a-squeezed-lines-candidates-are-equal-but
                    missed = {_bare(t) for t in record if t not in made}
                    short = {
                        t: ln
                        for ln in lines
                        if _bare(ln.text) in missed and (t := ledger.squeezed(ln.text)) is not None
                    }
                hit = short.get(text)
            if hit is not None:
                written[text] = hit if hit.text == text else replace(hit, text=text)
        while len(written) > LEDGER_CACHE * 4:
            written.pop(next(iter(written)))

    def settle(self, most: int | None = None, ahead: bool = True) -> int:
        """Read the new messages of the requests that left them for later (``Request.reads_later``), oldest
        first, at most ``most`` requests' (all when None), each session's into its own memo; how many are
        left. ``ahead``: also write what the next compaction writes of the base and, near the point, of the
        messages it may fold (after sending; a request reading what was left before it does not)."""
        done = 0
        while self._later and (most is None or done < most):
            view, req, budget = self._later.popleft()
            with memo.active(req.state.memo):
                self._observe(view, req, budget * LEDGER_SPAN_BUDGETS)
            done += 1
            if not ahead:
                continue
            # What the next compaction writes of the base (fixed until then): its archive and checkpoint.
            req.state.base_json()
            # guard: the-fold-is-written-ahead-only-near-the-point
            if req.state.last_sent_tokens >= budget * PREPARE_FROM:
                # guard: the-messages-a-compaction-may-fold-written-ahead
                prepare_fold(view, len(req.protected_head))
        return len(self._later)

    def _observe(self, view: Sequence[Message], req: Request, span: int) -> None:
        """Ledger lines of each message when it first enters the view, so a compaction only looks them up:
        its time stays flat however much it folds (the request that compacts is the slow one otherwise).
        Only what a Record could hold (``ledger_start``): a resumed history far over the window is not read
        line by line before the compaction that folds it."""
        first = max(req.new_start, ledger_start(view, req, span))
        for i in range(first, len(view)):
            m = view[i]
            key = self._key(m, req)
            if key is not None and key in self._ledger:
                # Its lines are known to this pipeline (which serves every session of the agent), but this
                # session's memo may not hold its reads yet: a reopened session's first compaction.
                lines = self._ledger[key]
                req.state.memo.get(("prepared", key), partial(self._prepare, m, lines, req))
                continue
            lines = self._lines_of(m, req, key)
            if key is None:
                self._prepare(m, lines, req)
            else:
                req.state.memo.get(("prepared", key), partial(self._prepare, m, lines, req))
            for c in m.tool_calls:
                signals.read_files(c)  # cached: the extractive summary asks for it when the call is folded
            if m.role == "assistant" and not m.synthetic and "`" in m.text:
                # What this message quotes of the outputs just before it ranks as a result in their lines.
                k = i - 1
                while k >= 0 and view[k].role == "tool":
                    out = self._key(view[k], req)
                    if out is not None and out in self._ledger:
                        self._ledger[out] = ledger.promote_quoted(self._ledger[out], m.text)
                    k -= 1

    @staticmethod
    def _prepare(m: Message, lines: Sequence[ledger.Line], req: Request) -> None:
        """What a compaction reads of ``m`` and its ledger ``lines`` whatever else the fold holds, read now
        into the session's memo (``context/memo.py``): the request that compacts only looks it up."""
        gist(m)  # the compaction record's line for it
        # The block's count sums its lines' counts: those of result rank and above, counted now, are 85 % of
        # the lines the foreign 32K Records kept that came from here, and 20 % of all lines.
        req.counter.count_lines(ln.text for ln in lines if ln.priority >= ledger.P_RESULT)
        memo.each(ledger.redundant_shape, [ln.text for ln in lines])
        for ln in lines:
            if ln.decided:
                ledger.subject(ln.text)
                ledger.line_facts(ln.text)
        if m.synthetic:
            return
        # What ``Referred`` reads of an output is the output as it came (``_referable``), never a filtered
        # copy's text: only the one read is prepared (the copy's words and tokens were a third of the
        # reads on a request that brought a large filtered output).
        referable = Summarize._referable(m, req) if m.role == "tool" else m
        part = ledger.use_text(referable.text, tuple(c.arguments for c in referable.tool_calls))
        ledger.use_words(part)
        ledger.use_tokens(part)
        if m.role == "assistant":
            ledger.stated_facts(m)
        elif m.role == "tool":  # what the extractive summary reads of a folded output
            signals.last_exception_line(m.text)
            signals.diff_files(m.text)
            # Its facts and their index (``LaterUse.used_of``), of the original: what its fold reads.
            ledger.fact_index(Summarize._original(m, req).text)

    def _folded_lines(
        self, m: Message, k: int, later: ledger.LaterUse, req: Request, referred: ledger.Referred
    ) -> list[ledger.Line]:
        """The ledger lines of folded message ``m`` (``k``-th of the fold); of a tool output, also the facts
        of it the agent used later (an id, an amount, a status, a line number), kept as one short line; of
        an assistant message, what it stated that a later message (``referred``) comes back to."""
        lines = self._lines_of(m, req)
        if m.synthetic:
            return lines
        if m.role == "assistant":
            # guard: a-folded-assistant-message-keeps-what-it
            return [*lines, *_redacted(ledger.stated_used_lines(m, lines, k, referred))]
        if m.role != "tool":
            return lines
        out = ledger.fold_lines(self._original(m, req).text, lines, k, later)
        return [*out[: len(lines)], *_redacted(out[len(lines) :])]

    @staticmethod
    def _key(m: Message, req: Request) -> tuple[str, int] | None:
        """(stored id, hash of the original text): a filtered or trimmed copy shares its original's lines."""
        if not m.id:
            return None
        entry = Summarize._vaulted(m, req)
        content = entry.content if entry is not None else m.content
        return (m.id.split("#", 1)[0], hash(content) if isinstance(content, str) else 0)

    def _lines_of(self, m: Message, req: Request, key: tuple[str, int] | None = None) -> list[ledger.Line]:
        key = key if key is not None else self._key(m, req)
        hit = self._ledger.get(key) if key is not None else None
        if hit is None:
            hit = _redacted(ledger.record_one(self._original(m, req)))
            if key is not None:
                self._ledger[key] = hit
                if len(self._ledger) > LEDGER_CACHE:
                    self._ledger.pop(next(iter(self._ledger)))
        return hit

    @staticmethod
    def _vaulted(m: Message, req: Request) -> VaultEntry | None:
        """The original of a shortened message: a tool output as it came, a trimmed reasoning whole."""
        uri = m.meta.get("vault_uri")
        if m.role == "tool":
            return req.vault.original(uri, "tool_output")
        return req.vault.original(uri, "archive") if m.role == "assistant" else None

    @staticmethod
    def _original(m: Message, req: Request) -> Message:
        """A filtered, truncated or trimmed message as it first came (from the vault), so the ledger reads
        every line."""
        entry = Summarize._vaulted(m, req)
        if entry is None:
            return m
        text = entry.content
        if (
            len(text) > ORIGINAL_SCAN_CHARS
        ):  # a huge output: its salient lines are at its ends, and time matters
            half = ORIGINAL_SCAN_CHARS // 2
            text = text[:half] + "\n" + text[-half:]
        return replace(m, content=text)

    @staticmethod
    def _referable(m: Message, req: Request) -> Message:
        """What a message says, for which of the agent's lines later ones refer to: its original, and for
        a huge original read only at its ends, the copy in the view too (a trim keeps the middle lines a
        reply used)."""
        original = Summarize._original(m, req)
        if original is m or len(original.text) <= ORIGINAL_SCAN_CHARS:
            return original
        # guard: referred-a-huge-original-with-its-copy
        return replace(original, content=f"{original.text}\n{m.text}")

    @staticmethod
    def _budget_chars(
        removed: Sequence[Message], folded: Sequence[Message], req: Request, c: SummarizeSettings
    ) -> int:
        if folded:  # consolidation: all blocks into one, well under the budget that triggered it
            tokens = int(c.summary_budget_tokens * c.consolidate_ratio)
        else:
            tokens = max(int(req.counter.messages(removed) * c.ledger_ratio), c.ledger_min_tokens)
            # A third of the blocks' budget at most: several blocks append before a consolidation rewrites
            # them.
            tokens = min(tokens, c.summary_budget_tokens // 3)
        return tokens * ledger.CHARS_PER_TOKEN

    async def _summarize(
        self,
        removed: Sequence[Message],
        head_user: str,
        previous: Summary | None,
        view: Sequence[Message],
        req: Request,
        s: SummarizeSettings,
        trace: Trace,
    ) -> tuple[Summary, str]:
        extractive = summary_model.extract(removed, head_user)
        if req.prepared_summary is not None:
            adopted = prepared.adopt(req.prepared_summary, removed, head_user)
            if adopted is not None:
                trace.event(f"prepared summary: covers {adopted.covered} of {len(removed)} folded messages")
                source = req.prepared_summary.source + ("+extractive" if adopted.uncovered else "")
                return self._keep_ledger(adopted.summary, removed, req, trace), source
        if req.summarizer is None or self.prompts_dir is None or req.summary_in_background:
            return extractive, "extractive"
        floor = unfit_floor(view, req, s)
        # guard: no-summarizer-call-for-a-turn-that
        if floor:  # the turn will be refused whatever the summary says: do not pay for one
            trace.event(f"summarizer skipped: {floor}")
            return extractive, "extractive"
        system = (self.prompts_dir / SUMMARY_PROMPT).read_text(encoding="utf-8")
        # What the pipeline inserted (reminders, notes, re-reads, hook context) is no source of the summary.
        own = [m for m in removed if not m.synthetic or m.role == "tool"]
        body = (
            "Previous summary (merge into it):\n"
            f"{json.dumps(previous.to_json(), ensure_ascii=False) if previous else 'none'}\n\n"
            f"Focus: {req.focus_hint or '-'}\n\nMessages to summarize:\n{transcript(own)}"
        )
        for attempt in range(2):
            try:
                text = await req.summarizer(system, body)
            except Exception as exc:
                log.warning("summarizer failed", exc_info=True)
                trace.event(f"summarizer failed: {type(exc).__name__}: {exc}")
                break
            data = parse_summary_json(text)
            if data is None:
                trace.event(f"summary attempt {attempt + 1}: not JSON")
                continue
            data = {f: data[f] for f in summary_model.FIELDS if f in data}
            verdict = self.auditor.audit(data, removed, req.intent, s)
            if verdict.ok:
                written = summary_model.repaired(Summary.from_json(data), head_user) or Summary()
                return self._keep_ledger(summary_model.bound(written), removed, req, trace), "llm"
            trace.event(f"summary attempt {attempt + 1} rejected: {'; '.join(verdict.problems[:3])}")
            body += "\n\nYour previous answer was rejected: " + "; ".join(verdict.problems) + ". Fix it."
        return extractive, "extractive"

    def _keep_ledger(
        self, summary: Summary, removed: Sequence[Message], req: Request, trace: Trace
    ) -> Summary:
        """The auditor keeps the ledger: verbatim facts an LLM summary dropped come back as key facts."""
        lines = [ln for m in removed for ln in self._lines_of(m, req)]
        return self.auditor.keep_ledger(summary, lines, trace)
