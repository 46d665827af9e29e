"""``ReasoningTrim``: the agent's long thinking-aloud before a tool call is sent back once, shortened.

An assistant message that calls a tool is read in full by nobody but the provider: the model wrote it,
and from the next request on every request re-reads it. In the SWE sessions such prose (``THOUGHT: …``)
is a fifth of all tokens re-read. Shortening it the first time it is sent back costs the cache nothing
— it sits at the tail and was never cached — and every later request reads less.

What stays is what later turns refer back to: the opening sentence, every sentence naming a fact-like
span (backticked code, a path, an identifier, a number) and every deciding one ("the fix is", "I'll",
"because"). On the dev sessions that keeps 0.995 of the fact-like spans while dropping 55 % of those
messages' tokens (``bench/explore`` has the check). Replies to the user (no tool call) are left whole:
what they offer or conclude is what the user answers to. The full text goes to the vault; the trim
says where. The rewrite is a sticky decision, so the message looks the same in every later request.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from myrm_tui.context.step import Configured, Rewritten, Trace, View
from myrm_tui.context.summary.ledger import DECIDE
from myrm_tui.context.types import Message

# A fact-like span: backticked code, a file name, snake_case / camelCase / CamelCase identifiers, a number
# of two or more digits (ids, line numbers, counts, versions).
_EXT = "py|pyi|txt|cfg|toml|ini|rst|md|json|ya?ml|c|h|cpp|js|ts|rs|go|sh|html"
# Every alternative but the first starts at a word boundary, and the file name's stem is possessive: half
# the time of the plain form on long THOUGHTs (it runs on every sentence of every long one).
FACT_SPAN = re.compile(
    r"`[^`\n]{2,80}`|\b(?:[\w/-]++(?:\.[\w/-]+)*?\.(?:" + _EXT + r")\b|[A-Za-z_]+_[A-Za-z_0-9]+\b"
    r"|[a-z]+[A-Z]\w+\b|[A-Z][a-z]+[A-Z]\w+\b|\d{2,}(?:\.\d+)*\b"
    r"|[A-Za-z]+\d\w*\b|[A-Za-z_]\w+(?:\.[A-Za-z_]\w+)+\b)|\w\(\)"
)
# Sentence ends and line breaks, kept as separators (a line break stays one, so code lines stay lines).
_PARTS = re.compile(r"((?<=[.!?])\s+|\n+)")
_PREFIX = re.compile(r"^\s*(THOUGHT:\s*)?")
# Where the work stands ("I'm done", "the tests passed"): the final-state facts a later turn asks about.
_STATE = re.compile(r"(?i)\b(done|finished|complete[ds]?|passed|succeeded|resolved|failed|reproduced)\b")
MARK_TOKENS = 4  # " [trimmed]"


@dataclass(frozen=True, slots=True)
class ReasoningSettings:
    trim_reasoning_tokens: int  # prose at most this long stays whole; 0 turns the step off


def spans(text: str) -> set[str]:
    return {x.strip("`") for x in FACT_SPAN.findall(text)}


def shorten(text: str, known: str = "") -> str | None:
    """The opening sentence of ``text``, then, in order, each sentence that names a fact-like span not named
    before (here or in ``known``: the call's arguments, sent whole) or that decides or says where the work
    stands, each once; None if that is all of it."""
    prefix = _PREFIX.match(text).group(0)  # type: ignore[union-attr]
    parts = _PARTS.split(text[len(prefix) :].strip())
    said = known  # what is said so far; a span is new if it is not in it
    kept: list[str] = []
    seen: set[str] = set()
    dropped = dropped_since = False
    for k in range(0, len(parts), 2):
        sentence = parts[k].strip()
        if not sentence:
            continue
        fresh = any(x not in said for x in spans(sentence))
        if sentence not in seen and (not kept or fresh or DECIDE.search(sentence) or _STATE.search(sentence)):
            if kept:
                kept.append(" … " if dropped_since else ("\n" if "\n" in parts[k - 1] else " "))
            kept.append(sentence)
            said += "\n" + sentence
            seen.add(sentence)
            dropped_since = False
        else:
            dropped = dropped_since = True
    if not dropped:
        return None
    return (prefix.strip() + " " if prefix.strip() else "") + "".join(kept)


class ReasoningTrim(Configured[ReasoningSettings]):
    name = "reasoning_trim"
    Settings = ReasoningSettings

    async def run(self, v: View, s: ReasoningSettings) -> Rewritten:
        req, view = v.request, v.messages
        earlier = req.state.decisions
        out: list[Message] | None = None
        # Earlier trims again (only tool outputs' decisions are applied by FilterProcessor).
        newest = None
        for i in range(req.new_start, len(view)):
            m = view[i]
            if m.role != "assistant":
                continue
            newest = i
            decided = earlier.get(m.id)
            if decided is not None and decided is not m:
                out = out if out is not None else list(view)
                out[i] = decided
        if s.trim_reasoning_tokens <= 0 or newest is None:
            return Rewritten(messages=view if out is None else out)
        m = view[newest]
        last = req.state.last_request_at
        if (
            not m.tool_calls
            or m.id in earlier
            or not isinstance(m.content, str)
            or (req.resume and last and (m.created_at or 0) <= last)  # already sent as it is
            or (full := req.counter.text(m.content)) <= s.trim_reasoning_tokens
        ):
            return Rewritten(messages=view if out is None else out)
        short = shorten(m.content, " ".join(c.arguments for c in m.tool_calls))
        kept = req.counter.text(short) + MARK_TOKENS if short is not None else full
        if kept >= full:
            return Rewritten(messages=view if out is None else out)
        uri = req.vault.put(m.content, "archive", reason="reasoning_trim")
        content = f"{short} [trimmed]"
        new = m.derive("reason", content=content, meta={**m.meta, "vault_uri": uri})
        out = out if out is not None else list(view)
        out[newest] = new
        trace = Trace()
        trace.add_removed(self.name, full - kept)
        trace.add_vaulted(self.name, len(m.content))
        return Rewritten(messages=out, decisions={m.id: new}, trace=trace)
