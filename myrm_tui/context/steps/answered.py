"""``AnsweredOutputTrim`` (compression's background tier, applied at the tail): once the agent has answered a
long tool output, later requests carry its salient lines, not all of it.

A tool output is read in full exactly once — by the reply that follows it. From the next request on,
every request re-reads it (at the cache-read price), until a compaction folds it, or the session ends;
in the SWE sessions answered outputs are a third of all tokens re-read. Trimming it right after its
answer is nearly free for the provider cache: the cut sits at the tail (the output, then the reply,
then what is new — the reply and the new content were never cached anyway), so the one-time cost is
writing the trimmed text, and every later request reads fewer tokens. Later compactions also come
later, and each is smaller.

What stays is what later turns refer back to: the fact ledger's salient lines (result and error lines,
``path:12:`` hits, definitions, paths, ids, a JSON output's items, the last line), the lines the reply
quoted or refers to (``text/referred.py``: a token its text or calls use, a line a call quotes whole — taken
from the whole output when the filter had cut them), and all of a short output; within the same share.
The full text goes to the vault; the trim says where. The rewrite is sticky (a decision), so the message
then looks the same in every request until a compaction.
"""

from __future__ import annotations

from dataclasses import dataclass

from myrm_tui.context.filters.processor import split_header
from myrm_tui.context.filters.room import DEFAULT_ROUND_TOKENS, requests_so_far
from myrm_tui.context.filters.shell import strip_ansi
from myrm_tui.context.step import Configured, Rewritten, Trace, View
from myrm_tui.context.summary import ledger
from myrm_tui.context.text.referred import as_numbered_view, merged, referred_lines, with_arrows
from myrm_tui.context.types import Message

# Anthropic's prices relative to uncached input (the dearest common case; OpenAI's are gentler): a cache
# read, a cache write, and input after the request's last cache mark (neither read nor written).
READ, WRITE, INPUT = 0.1, 1.25, 1.0
URI_CHARS, URI_TOKENS = 40, 20  # vault://<namespace>/<16 hex digits>]
HEAD_LINES = 8  # an output whose salient lines are fewer keeps its first lines too


@dataclass(frozen=True, slots=True)
class TrimSettings:
    trim_answered_tokens: int  # outputs at most this long stay whole; 0 turns the step off
    trim_keep_ratio: float  # of the output's characters, the most the salient lines may take
    exempt_tools: frozenset[str]
    trim_margin: float
    warm_compact_threshold: int  # where the next compaction comes (while the cache is warm)


class AnsweredOutputTrim(Configured[TrimSettings]):
    name = "answered_trim"
    Settings = TrimSettings

    async def run(self, v: View, s: TrimSettings) -> Rewritten:
        req, view = v.request, v.messages
        if s.trim_answered_tokens <= 0:
            return Rewritten(messages=view)
        # The outputs the last reply answered: between the two newest assistant messages. Only these,
        # so a cut always lands at the tail (an older untrimmed output stays as it was sent).
        replies = [i for i in range(len(view) - 1, req.new_start - 1, -1) if view[i].role == "assistant"]
        if not replies:
            return Rewritten(messages=view)
        last = replies[0]
        first = replies[1] + 1 if len(replies) > 1 else req.new_start
        count = req.counter.message
        candidates = [i for i in range(first, last) if self._trimmable(view[i], v, s)]
        if not candidates:
            return Rewritten(messages=view)
        later = self._later_requests(v, s)
        out, trace = list(view), Trace()
        decisions: dict[str, Message] = {}
        for i in candidates:
            m = view[i]
            uri = m.meta.get("vault_uri")  # a filtered output's original is in the vault already
            original = req.vault.original(uri, "tool_output")
            caller = next((view[j] for j in range(i - 1, -1, -1) if view[j].role == "assistant"), None)
            whole = original.content if original is not None else None
            kept = self._trim(m, view[last], s, whole, caller)
            if kept is None:
                continue
            full, short = count(m), req.counter.text(kept) + URI_TOKENS
            # Trimming writes the short text once at the cache-write price; keeping the output re-reads
            # it whole at the cache-read price now and on each later request until it is folded. The
            # margin stands for what the estimate cannot see: a session that ends, or a compaction that
            # comes, sooner.
            if READ * ((full - short) * later + full) <= s.trim_margin * WRITE * short:
                continue
            if original is None:
                uri = req.vault.put(m.text, "tool_output", m.name or "", reason="answered_trim")
            new = m.derive(
                "trim", content=f"{kept}{uri}]", meta={**m.meta, "trimmed": True, "vault_uri": uri}
            )
            # Keyed by the stored output's id (a filtered copy's is derived from it): FilterProcessor
            # repeats the decisions so keyed on every later request.
            out[i] = decisions[m.id.split("#", 1)[0]] = new
            trace.add_removed(self.name, full - count(new))
            trace.add_vaulted(self.name, len(m.text))
        return Rewritten(messages=out, decisions=decisions, trace=trace)

    @staticmethod
    def _trimmable(m: Message, v: View, s: TrimSettings) -> bool:
        """An output the trim may shorten: a tool's text over the threshold, not trimmed yet, not of an
        exempt tool, not one the compression intent protects."""
        return (
            m.role == "tool"
            and not m.meta.get("trimmed")
            and (m.name or "") not in s.exempt_tools
            and isinstance(m.content, str)
            and v.request.counter.message(m) > s.trim_answered_tokens
            and not v.request.intent.protects(m)
        )

    @staticmethod
    def _later_requests(v: View, s: TrimSettings) -> float:
        """How many more requests will re-read an output: until the next compaction (the room left below
        the compaction point over what a round has added since the last one), and no more than the session
        has made so far — a session's length is not known ahead, and one that has run n requests is as
        likely to end before n more as after (a subagent's few reads end in its report: trimming them cost
        more than it saved, and lost what the report was to say)."""
        req, view = v.request, v.messages
        new = view[req.new_start :]
        rounds = sum(1 for m in new if m.role == "assistant")
        base = req.counter.messages(view[: req.new_start])
        grown = req.counter.messages(new)
        per_round = grown / rounds if rounds >= 2 else DEFAULT_ROUND_TOKENS
        until = max(0.0, (s.warm_compact_threshold - base - grown) / max(per_round, 1.0))
        # guard: the-answered-trim-expects-no-more-requests
        return min(until, float(requests_so_far(req.raw, until)))

    @staticmethod
    def cut_next(v: View, s: TrimSettings) -> int | None:
        """The first output at the view's tail (after its newest assistant message) that this step will cut
        on the next request whatever the reply says: the trim's own price test passes with the largest copy
        it makes (``trim_keep_ratio`` of the output) and one later request fewer than it counts now, on an
        output of many lines. None when there is none (the prompt cache then writes the whole tail: the next
        request reads it)."""
        req, view = v.request, v.messages
        newest = next((i for i in range(len(view) - 1, -1, -1) if view[i].role == "assistant"), None)
        if s.trim_answered_tokens <= 0 or newest is None or newest < req.new_start:
            return None
        later = max(0.0, AnsweredOutputTrim._later_requests(v, s) - 1)
        for i in range(newest + 1, len(view)):
            m = view[i]
            # A few long lines may all be salient: such an output may be kept whole.
            if not AnsweredOutputTrim._trimmable(m, v, s) or m.text.count("\n") < 2 * HEAD_LINES:
                continue
            full = req.counter.message(m)
            short = full * s.trim_keep_ratio + URI_TOKENS
            # guard: a-cut-is-foreseen-only-when-the-trim-pays-for-any-reply
            if READ * ((full - short) * later + full) > s.trim_margin * WRITE * short:
                return i
        return None

    @staticmethod
    def _trim(
        m: Message,
        reply: Message,
        s: TrimSettings,
        original: str | None = None,
        caller: Message | None = None,
    ) -> str | None:
        """The trimmed text of ``m`` up to its vault URI, or None when the salient lines are all of it.
        ``original``: the output as it came, when ``m`` is a filtered copy of it; ``caller``: the message
        whose call it answers."""
        text, arrows = as_numbered_view(m.text)
        header, body, footer = split_header(text)
        plain = strip_ansi(body)
        # The whole text, as the summary ledger read it when the output came (salient_lines drops the
        # returncode wrapper itself): its lines are remembered.
        lines = ledger.promote_quoted(ledger.salient_lines(strip_ansi(text)), reply.text, plain)
        # What the reply refers to, from the whole output: a line the filter cut is taken back. In the same
        # share: the reply's lines outrank the other salient ones.
        whole = as_numbered_view(original)[0] if original is not None else None
        source = strip_ansi(split_header(whole)[1]) if whole is not None else plain
        refs = referred_lines(source, [reply])
        if caller is not None:  # what the agent wrote and the output shows back (an edit's new code)
            refs += referred_lines(source, [caller], tokens=False)
        # guard: a-trim-keeps-the-lines-the-reply-refers-to
        lines = merged(lines, refs, source)
        if len(lines) < HEAD_LINES:  # little stands out (a data file): its head says what it is
            have = {ln.text for ln in lines}
            rows = [ledger.Line(r, ledger.P_FILL) for r in plain.splitlines()[:HEAD_LINES] if r.strip()]
            lines = [r for r in rows if r.text not in have] + lines
        kept = ledger.fit(lines, int(len(m.text) * s.trim_keep_ratio))
        total = sum(1 for ln in body.splitlines() if ln.strip())
        if not kept or len(kept) >= total:
            return None
        body = "\n".join(kept)
        if arrows:
            body = with_arrows(body)
        out = f"{header}{body}{footer}\n[trimmed to {len(kept)} of {total} lines; full text: "
        return out if len(out) + URI_CHARS < len(m.text) else None
