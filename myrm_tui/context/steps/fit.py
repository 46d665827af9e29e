"""Fit to budget — every request fits the input budget by construction.

Two steps share this module:

- ``HeadAnchor`` (before Compress): when a compaction finds the protected head too big for the window
  (a long first message: a spec, a pasted log), the middle of the first user message goes to the vault.
  Its opening, its closing lines and its salient lines stay, with a ``vault://`` pointer and the line
  range that was cut: the human anchor becomes a pointer, it is never silently dropped.
- ``FitToBudget`` (after Post-Compaction Reread, before Normalize): the last word on size. When the
  view is over its goal — the input budget, or for a compaction the landing level (a compaction must
  leave room for several turns: that is what makes it progress) — it escalates in a fixed order, each
  stage only while the view is still over:

  1. summary blocks merged into one block within their share;
  2. the first user message cut to its share (``HeadAnchor``'s cut);
  3. injected parts (notes, re-read files, workspace rules and environment, hook context, pinned
     items) cut to their share, with a pointer;
  4. older tool outputs cut to their ledger lines, older long calls shrunk;
  5. the oldest rounds dropped (their ledger lines join the summary block);
  6. the newest round's outputs shrunk.

  What remains over the budget after that is the system prompt and the newest message themselves: the
  turn refuses it (the preflight guard) with one line naming what is too big.

A cut or drop made on a request that was not compacting turns it into one (``reason`` "fit to
budget"), so the result is frozen as the new base and later requests stay byte-identical (cached).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from myrm_tui.context.invariants import group_spans
from myrm_tui.context.step import (
    CompactionPlan,
    Configured,
    Level,
    Rewritten,
    StepResult,
    Trace,
    View,
)
from myrm_tui.context.steps.compress import _shrunk
from myrm_tui.context.steps.pinned import PIN_SHARE, pinned_text
from myrm_tui.context.summary import fields as summary_model
from myrm_tui.context.summary import ledger
from myrm_tui.context.tokens import TokenCounter
from myrm_tui.context.types import Message, synthetic_user
from myrm_tui.context.vault import ArtifactVault

CHARS_PER_TOKEN = 3  # cut texts are measured afterwards; this only sizes the first try
MIN_CUT_TOKENS = 120  # a message shorter than this is not worth a pointer
FIT_REASON = "fit to budget"


@dataclass(frozen=True, slots=True)
class FitSettings:
    input_budget: int
    fit_budget: int
    landing_tokens: int
    anchor_tokens: int
    head_limit_tokens: int
    injected_tokens: int
    reread_budget_tokens: int
    fit_summary_tokens: int


@dataclass(frozen=True, kw_only=True)
class Fitted(StepResult):
    """``FitToBudget``'s result: the fitted messages and, when it had to cut, the plan that freezes them."""

    messages: list[Message]
    plan: CompactionPlan | None = None

    def apply(self, view: View) -> View:
        if self.plan is None:
            return view if self.messages is view.messages else view.evolve(messages=self.messages)
        return view.evolve(messages=self.messages, plan=self.plan)


def cut_text(text: str, max_tokens: int, uri: str, label: str, counter: TokenCounter) -> str:
    """``text`` within ``max_tokens``: its opening and closing lines and, between them, its salient lines,
    with a pointer to the whole text (``uri``) and the line range that was cut."""
    lines = text.splitlines() or [text]
    budget = max(max_tokens, 40) * CHARS_PER_TOKEN
    for _ in range(6):
        head_room, tail_room = budget * 45 // 100, budget * 20 // 100
        head: list[str] = []
        used = 0
        for ln in lines:
            if used + len(ln) + 1 > head_room:
                if not head:  # one huge line: keep its start
                    head.append(ln[: max(head_room, 80)])
                break
            head.append(ln)
            used += len(ln) + 1
        tail: list[str] = []
        used = 0
        for ln in reversed(lines[len(head) :]):
            if used + len(ln) + 1 > tail_room:
                break
            tail.insert(0, ln)
            used += len(ln) + 1
        a, b = len(head) + 1, len(lines) - len(tail)  # 1-based, inclusive: the lines cut
        middle = "\n".join(lines[a - 1 : b])
        room = budget - sum(len(x) + 1 for x in head + tail)
        kept: list[str] = []
        for salient in ledger.salient_lines(middle, 40):
            if room - len(salient.text) - 1 < 0:
                break
            kept.append(salient.text)
            room -= len(salient.text) + 1
        if b < a:  # nothing cut by lines: one long line
            a, b = 1, len(lines)
        note = (
            f"[{label}: lines {a}-{b} of {len(lines)} cut here"
            + (f"; {len(kept)} salient lines of them kept below" if kept else "")
            + f". Whole text: {uri} — read it with "
            f'file_read_tool(paths=["{uri}"], line_range="{a}:{b}")]'
        )
        out = "\n".join([*head, note, *kept, *(["[…]"] if kept else []), *tail])
        if counter.text(out) <= max_tokens or budget <= 200:
            return out
        budget = int(budget * 0.7)
    return out


def cut_message(
    m: Message, max_tokens: int, vault: ArtifactVault, label: str, counter: TokenCounter, suffix: str
) -> Message | None:
    """``m`` cut to ``max_tokens`` (its whole text in the vault), or None when it is short enough already."""
    if not isinstance(m.content, str) or counter.message(m) <= max(max_tokens, MIN_CUT_TOKENS):
        return None
    uri = vault.put(m.content, "archive", m.name or "", reason=suffix)
    short = cut_text(m.content, max_tokens, uri, label, counter)
    if len(short) >= len(m.content):
        return None
    return m.derive(suffix, content=short, meta={**m.meta, "vault_uri": uri, "cut": suffix})


def anchor_index(view: Sequence[Message], head_len: int) -> int | None:
    """Index of the first real user message in the protected head."""
    for i in range(min(head_len, len(view))):
        if view[i].role == "user" and not view[i].synthetic:
            return i
    return None


def cut_anchor(
    view: list[Message], head_len: int, max_tokens: int, vault: ArtifactVault, counter: TokenCounter
) -> tuple[list[Message], int]:
    i = anchor_index(view, head_len)
    if i is None:
        return view, 0
    new = cut_message(view[i], max_tokens, vault, "first message, middle in the vault", counter, "headcut")
    if new is None:
        return view, 0
    saved = counter.message(view[i]) - counter.message(new)
    return [*view[:i], new, *view[i + 1 :]], saved


@dataclass(frozen=True, slots=True)
class AnchorSettings:
    input_budget: int
    anchor_tokens: int
    head_limit_tokens: int


class HeadAnchor(Configured[AnchorSettings]):
    """A compaction with a protected head over its limit cuts the first user message to its share."""

    name = "head_anchor"
    Settings = AnchorSettings

    async def run(self, v: View, s: AnchorSettings) -> Rewritten:
        req, view = v.request, v.messages
        head_len = len(req.protected_head)
        # guard: head-anchor-a-first-message-over
        if not v.compacting or req.counter.messages(view[:head_len]) <= s.head_limit_tokens:
            return Rewritten(messages=view)
        out, saved = cut_anchor(view, head_len, s.anchor_tokens, req.vault, req.counter)
        trace = Trace()
        if saved:
            trace.add_removed(self.name, saved)
            trace.event(f"first message over its share: {saved:,} tokens of it moved to the vault")
        return Rewritten(messages=out, trace=trace)


@dataclass
class _Fit:
    """One run's working set (private to the step)."""

    view: View
    s: FitSettings
    messages: list[Message]
    trace: Trace

    @property
    def counter(self) -> TokenCounter:
        return self.view.request.counter

    def total(self) -> int:
        return self.counter.messages(self.messages)


class FitToBudget(Configured[FitSettings]):
    name = "fit"
    Settings = FitSettings

    async def run(self, v: View, s: FitSettings) -> Fitted:
        req = v.request
        # Pinned items join the request after this step (they are never frozen): keep their room.
        pins = pinned_tokens(req.state.pinned, s.input_budget, req.counter)
        budget = s.fit_budget - pins
        # A compaction lands low enough for several turns to append before the next one (its progress),
        # not just under the budget; and whatever this step cuts becomes a compaction.
        # guard: fit-to-budget-a-compaction-lands-under
        landing = min(budget, s.landing_tokens - pins)
        # guard: fit-to-budget-the-last-step
        if v.tokens() <= (landing if v.compacting else budget):
            return Fitted(messages=v.messages)
        goal = landing
        f = _Fit(v, s, list(v.messages), Trace())
        head_len = len(req.protected_head)
        stages = (
            ("merge_summaries", self._merge_summaries),
            ("anchor", self._anchor),
            ("injected", self._injected),
            ("older_outputs", self._older_outputs),
            ("drop_rounds", self._drop_rounds),
            ("shrink_newest", self._shrink_newest),
        )
        before = f.total()
        for name, stage in stages:
            total = f.total()
            if total <= goal:
                break
            if name == "shrink_newest":  # the newest round is cut only to make the request valid at all
                goal = max(goal, budget)
                if total <= goal:
                    break
            stage(f, head_len, goal)
            saved = total - f.total()
            if saved > 0:
                f.trace.add_removed(f"fit_{name}", saved)
        after = f.total()
        if after > s.input_budget:
            f.trace.event(
                f"fit: still {after:,} tokens after every stage (budget {s.input_budget:,}): "
                "the system prompt and the newest message alone are too big"
            )
        if after >= before:
            return Fitted(messages=v.messages, trace=f.trace)
        f.trace.event(f"fit: {before:,} → {after:,} tokens (goal {goal:,})")
        plan = None
        if not v.compacting:
            state = req.state
            backup = replace(state, decisions={**state.decisions, **v.decisions}).to_json()
            plan = CompactionPlan(
                max(v.plan.level, Level.FULL), True, FIT_REASON, backup=backup, seen_tokens=v.plan.seen_tokens
            )
        return Fitted(messages=f.messages, plan=plan, trace=f.trace)

    # -- stages, in order ----------------------------------------------------------------------------
    @staticmethod
    def _merge_summaries(f: _Fit, head_len: int, goal: int) -> None:
        """All summary blocks into one, its Record lines re-fitted to the summary share."""
        idx = [i for i, m in enumerate(f.messages) if m.meta.get("kind") == "summary"]
        if not idx:
            return
        blocks = [f.messages[i] for i in idx]
        if len(blocks) == 1 and f.counter.message(blocks[0]) <= f.s.fit_summary_tokens:
            return
        req = f.view.request
        summary = f.view.summary
        merged = summary.summary if summary is not None else (req.state.summary or summary_model.EMPTY)
        covered = summary.covered if summary is not None else int(req.state.last_compaction.get("covered", 0))
        lines = [ledger.reparse(ln) for b in blocks for ln in summary_model.record_lines(b.text)]
        new = _render(lines, merged, covered, f.s.fit_summary_tokens, f.counter, blocks[-1], req.vault)
        drop = set(idx[1:])
        out = [m for i, m in enumerate(f.messages) if i not in drop]
        out[idx[0]] = new
        f.messages = out

    @staticmethod
    def _anchor(f: _Fit, head_len: int, goal: int) -> None:
        f.messages, _ = cut_anchor(f.messages, head_len, f.s.anchor_tokens, f.view.request.vault, f.counter)

    @staticmethod
    def _injected(f: _Fit, head_len: int, goal: int) -> None:
        """Pipeline-made user messages (environment, notes, re-read files, hook context, pinned) to their
        share."""
        req = f.view.request
        out = list(f.messages)
        for i, m in enumerate(out):
            if not (m.role == "user" and m.synthetic) or m.meta.get("kind") == "summary":
                continue
            share = f.s.reread_budget_tokens if m.meta.get("kind") == "reread" else f.s.injected_tokens
            new = cut_message(m, share, req.vault, "cut to its share of the window", f.counter, "fitcut")
            if new is not None:
                out[i] = new
        f.messages = out

    @staticmethod
    def _older_outputs(f: _Fit, head_len: int, goal: int) -> None:
        """Tool outputs before the newest round to their ledger lines; long calls there shrunk; oldest
        first."""
        req = f.view.request
        out = list(f.messages)
        last = _newest_round(out)
        total = f.counter.messages(out)
        for i in range(head_len, last):
            if total <= goal:
                break
            m = out[i]
            before = f.counter.message(m)
            if before < MIN_CUT_TOKENS or m.meta.get("kind") == "summary" or m.synthetic:
                continue
            if m.role == "tool":
                new = _to_ledger(m, req.vault)
            elif m.role == "assistant" and m.tool_calls:
                new = _shrunk(m, req.vault)
            elif m.role == "assistant":
                new = cut_message(m, MIN_CUT_TOKENS * 2, req.vault, "older reply cut", f.counter, "fitcut")
            else:  # the user's own words are never cut here: a whole round goes (stage 5) before that
                continue
            if new is None:
                continue
            saved = before - f.counter.message(new)
            if saved > 0:
                out[i] = new
                total -= saved
        f.messages = out

    @staticmethod
    def _drop_rounds(f: _Fit, head_len: int, goal: int) -> None:
        """Whole rounds between the head (with its summary and injected parts) and the newest round,
        oldest first; the current instruction stays. Their ledger lines join the summary block."""
        out = f.messages
        start = head_len
        while start < len(out) and out[start].synthetic:
            start += 1
        last = _newest_round(out)
        current = max(
            (i for i in range(len(out)) if out[i].role == "user" and not out[i].synthetic), default=-1
        )
        total = f.counter.messages(out)
        drop: set[int] = set()
        for a, b in group_spans(out):
            if total <= goal:
                break
            if a < start or b > last or a <= current < b:
                continue
            drop.update(range(a, b))
            total -= f.counter.messages(out[a:b])
        if not drop:
            return
        gone = [out[i] for i in sorted(drop)]
        kept = [m for i, m in enumerate(out) if i not in drop]
        lines = ledger.record(gone)
        room = max(goal - f.counter.messages(kept), 0)
        at = next((i for i, m in enumerate(kept) if m.meta.get("kind") == "summary"), None)
        if lines and room > 80:
            req = f.view.request
            summary = f.view.summary
            merged = summary.summary if summary is not None else (req.state.summary or summary_model.EMPTY)
            covered = summary.covered if summary is not None else 0
            if at is not None:
                old = kept[at]
                lines = [ledger.reparse(ln) for ln in summary_model.record_lines(old.text)] + lines
                # The other blocks keep their room: all of them together stay within the share.
                others = sum(
                    f.counter.message(m) for i, m in enumerate(kept) if m.meta.get("kind") == "summary"
                )
                others -= f.counter.message(old)
                share = min(f.s.fit_summary_tokens - others, f.counter.message(old) + room)
                kept[at] = _render(lines, merged, covered, share, f.counter, old, req.vault)
            else:
                share = min(room, f.s.fit_summary_tokens)
                block = _render(lines, merged, covered, share, f.counter, None, req.vault)
                pos = head_len
                while pos < len(kept) and kept[pos].synthetic:
                    pos += 1
                kept.insert(pos, block)
        f.trace.event(f"fit: {len(gone)} messages of the oldest rounds dropped (ledger lines kept)")
        f.messages = kept

    @staticmethod
    def _shrink_newest(f: _Fit, head_len: int, goal: int) -> None:
        """The largest messages after the head (the newest round included) shrunk until the view fits;
        the newest real user message is kept whole (the turn refuses it if it alone is too big)."""
        req = f.view.request
        out = list(f.messages)
        current = max(
            (i for i in range(len(out)) if out[i].role == "user" and not out[i].synthetic), default=-1
        )
        total = f.counter.messages(out)
        order = sorted(range(head_len, len(out)), key=lambda i: -f.counter.message(out[i]))
        for i in order:
            if total <= goal:
                break
            m = out[i]
            before = f.counter.message(m)
            if i == current or before < MIN_CUT_TOKENS:
                continue
            over = total - goal
            share = max(before - over, MIN_CUT_TOKENS)
            if m.role == "assistant" and m.tool_calls:
                shrunk = _shrunk(m, req.vault)
                for keep in TIGHT_KEEP_CHARS:  # a small window: huge arguments down to a pointer
                    if f.counter.message(shrunk) > share:
                        shrunk = _shrunk(m, req.vault, keep)
                new: Message | None = shrunk
            else:
                new = cut_message(m, share, req.vault, "cut to fit the window", f.counter, "fitshrink")
            if new is None:
                continue
            saved = before - f.counter.message(new)
            if saved > 0:
                out[i] = new
                total -= saved
        f.messages = out


# A newest call's long arguments, cut further while the usual cut still does not fit.
TIGHT_KEEP_CHARS = (240, 40, 0)


def pinned_tokens(pins: list[dict[str, str]], input_budget: int, counter: TokenCounter) -> int:
    """What the Pinned step will add to this request (its message with the marker)."""
    if not pins:
        return 0
    text = pinned_text(pins, int(input_budget * PIN_SHARE))
    return counter.message(synthetic_user(text, "pinned", "pinned"))


def _newest_round(view: Sequence[Message]) -> int:
    """Start of the newest round: the last span (an assistant with its results, or one message)."""
    spans = group_spans(view)
    return spans[-1][0] if spans else len(view)


def _to_ledger(m: Message, vault: ArtifactVault) -> Message | None:
    lines = ledger.record_one(m)
    if not lines:
        return None
    uri = m.meta.get("vault_uri") or vault.put(m.text, "tool_output", m.name or "", reason="fit")
    body = "\n".join(ln.text for ln in lines[: ledger.MAX_OUTPUT_LINES])
    short = f"[output cut to its salient lines; whole output: {uri}]\n{body}"
    if len(short) >= len(m.text):
        return None
    return m.derive("fitledger", content=short, meta={**m.meta, "vault_uri": uri})


def _render(
    lines: list[ledger.Line],
    merged: summary_model.Summary,
    covered: int,
    max_tokens: int,
    counter: TokenCounter,
    like: Message | None,
    vault: ArtifactVault,
) -> Message:
    """One summary block of ``lines`` within ``max_tokens`` (its continuity sections shortened, never
    dropped, when the share is small: ``summary_model.fit_block``)."""

    def whole() -> str:
        return vault.put(summary_model.render(merged, covered), "archive", "summary", reason="summary share")

    fitted = summary_model.fit_block(
        summary_model.EMPTY, merged, lines, set(), covered, 1, max(max_tokens, 60), counter.text, None, whole
    )
    body = fitted.text
    source = like.meta.get("source", "extractive") if like is not None else "extractive"
    base_id = like.id.split("#", 1)[0] if like is not None else "summary-fit"
    sid, meta = f"{base_id}#fit{len(body)}", {"kind": "summary", "source": source}
    if like is not None and like.role == "user":  # a subagent's summary is a marked user message
        return replace(synthetic_user(body, sid, "summary"), meta=meta)
    return Message(role="assistant", content=body, id=sid, synthetic=True, meta=meta)
