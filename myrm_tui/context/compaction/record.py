"""``Compaction``: the typed record of one compaction, made by the pipeline's ``Transaction`` when it
freezes a compacted view, and carried typed to the store, the export and the UI.

It says why the compaction ran (``trigger``), what it cost and saved (tokens before → after, counted
like the ring: the view plus the tool schemas; duration; the rewrite's cache cost), what replaced the
history (the summary and its source) and **what left the view**: every message folded away or output
shortened, with a one-line gist and a ``vault://`` pointer with the line range where it can be read
again (``file_read_tool(paths=[uri], line_range=...)`` and the vault pane number lines the same way).

Was the module ``compaction`` (context's compaction.py before the rooms).
The spec has no class for it: it is the record of one compaction (Layer 4), whose summary it stores as
``compacted_summary``.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from myrm_tui.context.memo import memoized
from myrm_tui.context.text.call_args import call_args
from myrm_tui.context.types import Message, ToolCall
from myrm_tui.context.vault import VaultEntry, messages_text, readable

if TYPE_CHECKING:  # the UI shows compactions before the pipeline (and the summary model) is loaded
    from myrm_tui.context.tokens import TokenCounter
    from myrm_tui.context.vault import ArtifactVault

Trigger = Literal["threshold", "manual", "emergency", "overflow", "fork", "fit"]
GIST_CHARS = 100
_SHARED = ("role", "uri", "how")


def _gist_key(m: Message) -> tuple[str, str | None, str, tuple[ToolCall, ...]]:
    # guard: a-gist-is-keyed-on-all-it-reads
    return (m.role, m.name, m.text, m.tool_calls)  # all that ``gist`` reads of a message


@memoized(_gist_key)  # each message's once a session (``context/memo.py``), not at each compaction
def gist(m: Message) -> str:
    """One line that says what ``m`` was: a tool call's command, an output's first line, a message's start;
    redacted like the summary (it is stored in the metrics table and shown), before it is cut (a cut secret
    would no longer match its pattern)."""
    if m.tool_calls:
        c = m.tool_calls[0]
        args = call_args(c)
        arg = args.command or " ".join(args.read_paths) or c.arguments[: GIST_CHARS * 2]
        more = f" (+{len(m.tool_calls) - 1} calls)" if len(m.tool_calls) > 1 else ""
        text = f"{c.name}: {arg}{more}"
    else:
        lines = [ln.strip() for ln in m.text.splitlines() if ln.strip() and not ln.strip().startswith("<")]
        text = lines[0] if lines else m.text.strip()
        if m.role == "tool" and m.name:
            text = f"{m.name} output: {text}"
    from myrm_tui.context.privacy.redact import redact  # not on the first frame's path (the UI shows records)

    # guard: secrets-at-rest-a-compaction-records
    text = " ".join(redact(text).split())
    return text if len(text) <= GIST_CHARS else text[: GIST_CHARS - 1] + "…"


@dataclass(frozen=True, slots=True)
class LeftItem:
    """One message or output that left the view, and where to read it again."""

    role: str
    gist: str
    uri: str
    line_range: str  # "a:b", 1-based inclusive, in the vault pane's (``readable``) numbering
    tokens: int
    message_id: str = ""
    how: Literal["folded", "shortened"] = "folded"

    @property
    def pointer(self) -> str:
        return f"{self.uri} lines {self.line_range}"

    @property
    def first_line(self) -> int:
        head = self.line_range.partition(":")[0]
        return int(head) if head.isdigit() else 1


@dataclass(frozen=True, slots=True)
class Compaction:
    """One compaction, as the user sees it: ``planned (FULL level) · 12.4K → 10.5K · 6 ms · extractive``."""

    trigger: Trigger
    level: str
    reason: str
    tokens_before: int
    tokens_after: int
    duration_ms: float
    summary_source: str = ""  # "llm" | "extractive" | "" (nothing was summarized)
    summary: str = ""  # the summary blocks the view now starts with (redacted when they were made)
    cache_cost: int = 0  # tokens from the first rewritten message on: written to the provider's cache again
    left: tuple[LeftItem, ...] = ()
    focus: str = ""  # "/compact <focus>"
    at: float = 0.0
    archive_uri: str | None = None  # the pre-compaction base view
    seq: int = 0  # the stored history's length when it ran: where its row goes in the transcript

    @property
    def saved(self) -> int:
        return self.tokens_before - self.tokens_after

    @property
    def changed(self) -> bool:
        """It made the context smaller (a compaction that saved nothing is not news)."""
        return self.tokens_after < self.tokens_before

    @property
    def trigger_label(self) -> str:
        """What drove it: a planned compaction names its level (never the net's, even past 90 %: its
        depth was the full level's), the emergency net what it caught, the user their focus."""
        if self.trigger == "manual":
            return f"manual: {self.focus}" if self.focus else "manual"
        if self.trigger == "threshold":
            head, _, named = self.reason.partition(" ")
            level = named.split(";")[0] if head == "threshold" and named else self.level
            # guard: a-planned-compaction-is-labelled-planned
            return f"planned ({'FULL' if level == 'EMERGENCY' else level} level)"
        if self.trigger == "emergency":
            caught = "over budget" if self.reason.startswith("over budget") else "90% level"
            return f"emergency net ({caught})"
        if self.trigger == "overflow":
            return "overflow (provider said too long)"
        if self.trigger == "fit":
            return "fit to budget"
        return self.trigger

    def headline(self) -> str:
        source = self.summary_source or "no summary"
        return (
            f"{self.trigger_label} · {short_tokens(self.tokens_before)} → {short_tokens(self.tokens_after)}"
            f" · {self.duration_ms:.0f} ms · {source}"
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Compaction:
        # One compaction's items share their archive and a few roles: one string each, not one per item.
        left = tuple(
            LeftItem(**{**item, **{k: sys.intern(item[k]) for k in _SHARED if isinstance(item.get(k), str)}})
            for item in d.get("left", ())
        )
        known = {k: v for k, v in d.items() if k in cls.__dataclass_fields__ and k != "left"}
        return cls(**known, left=left)


def compactions_of(rows: Sequence[dict[str, Any]]) -> list[Compaction]:
    """The compaction records in a session's metrics rows (the store's ``metrics()`` order)."""
    return [
        Compaction.from_dict(r["compaction"])
        for r in rows
        if r.get("kind") == "compaction" and r.get("compaction")
    ]


def short_tokens(n: int) -> str:
    """12,367 → "12.4K" (the one rounding every compaction line uses)."""
    if abs(n) >= 1_000_000:
        return f"{n / 1_000_000:.1f}M"
    if abs(n) >= 1_000:
        return f"{n / 1_000:.1f}K"
    return str(n)


def trigger_for(reason: str, level: str, focus: str) -> Trigger:
    if reason == "forced":
        return "manual"
    if reason.startswith("context overflow"):
        return "overflow"
    if reason == "fit to budget":  # the fit step cut a request that was not compacting (context/steps/fit.py)
        return "fit"
    if reason.startswith("threshold"):  # planned, at any level (a planned compaction may pass 90 %)
        return "threshold"
    if reason.startswith(("emergency", "over budget")) or level == "EMERGENCY":
        return "emergency"
    return "threshold"


@dataclass
class CompactionInput:
    """What the ``Transaction`` knows when it freezes a compaction."""

    before: list[Message]  # the view as it stood before this run's steps
    after: list[Message]  # the frozen base
    folded: Sequence[Message]
    reason: str
    level: str
    focus: str
    tokens_before: int
    tokens_after: int
    duration_ms: float
    summary_source: str
    at: float
    archive_uri: str | None
    seq: int
    counter: TokenCounter
    vault: ArtifactVault
    extra: dict[str, Any] = field(default_factory=dict)


def build_compaction(c: CompactionInput) -> Compaction:
    summary = "\n\n".join(m.text for m in c.after if m.meta.get("kind") == "summary")
    return Compaction(
        trigger=trigger_for(c.reason, c.level, c.focus),
        level=c.level,
        reason=c.reason,
        tokens_before=c.tokens_before,
        tokens_after=c.tokens_after,
        duration_ms=round(c.duration_ms, 2),
        summary_source=c.summary_source,
        summary=summary,
        cache_cost=cache_cost(c.before, c.after, c.counter),
        left=(
            *_folded([*c.folded, *_dropped(c)], c.vault, c.counter),
            *_shortened(c.before, c.after, c.vault, c.counter),
        ),
        focus=_redacted(c.focus),  # the user's words, stored and shown with the record
        at=c.at,
        archive_uri=c.archive_uri,
        seq=c.seq,
    )


def _redacted(text: str) -> str:
    from myrm_tui.context.privacy.redact import redact

    return redact(text)


def cache_cost(before: Sequence[Message], after: Sequence[Message], counter: TokenCounter) -> int:
    """Tokens of ``after`` from the first message that differs from ``before``: the prefix the provider
    must cache again on the next request."""
    k = 0
    while k < min(len(before), len(after)) and before[k].id == after[k].id:
        k += 1
    return counter.messages(after[k:]) if k < len(after) else 0


def _dropped(c: CompactionInput) -> list[Message]:
    """Messages that left the view without being folded: whole rounds the fit step dropped."""
    kept = {m.id.split("#", 1)[0] for m in (*c.after, *c.folded)}
    return [m for m in c.before if not m.synthetic and m.id.split("#", 1)[0] not in kept]


def _folded(folded: Sequence[Message], vault: ArtifactVault, counter: TokenCounter) -> list[LeftItem]:
    """The folded messages, archived together in one vault entry; each points at its own block."""
    real = [m for m in folded if m.meta.get("kind") != "summary"]
    if not real:
        return []
    from myrm_tui.context.state import message_json

    # Each message's JSON is made once (``message_json``: while the model answered the request before,
    # for the messages a compaction was near): ``json.dumps`` of the list is its items' joined by ", ".
    parts = [message_json(m, keep=False) for m in real]
    content = "[" + ", ".join(text for text, _ in parts) + "]"
    uri = vault.put(content, "archive", reason="compaction_left")
    entry = vault.get_cached(uri) or VaultEntry(uri, content, "archive")
    # ``readable(entry)`` without reading the archive back: each message's block, made with its JSON.
    same = entry.kind == "archive" and entry.content == content
    shown = messages_text([p for _, p in parts]) if same else None
    spans = _block_spans(readable(entry) if shown is None else shown)
    out = []
    for i, m in enumerate(real):
        a, b = spans[i] if i < len(spans) else (1, 1)
        out.append(LeftItem(m.role, gist(m), uri, f"{a}:{b}", counter.message(m), m.id, "folded"))
    return out


def _block_spans(text: str) -> list[tuple[int, int]]:
    """1-based line spans of the ``─── #n …`` blocks of a rendered archive."""
    lines = text.splitlines()
    starts = [i + 1 for i, ln in enumerate(lines) if ln.startswith("─── #")]
    total = len(lines)
    return [(s, (starts[j + 1] - 2 if j + 1 < len(starts) else total)) for j, s in enumerate(starts)]


def _shortened(
    before: Sequence[Message], after: Sequence[Message], vault: ArtifactVault, counter: TokenCounter
) -> list[LeftItem]:
    """Outputs still in the view but cut by this compaction: the full text is behind their ``vault_uri``."""
    had = {m.id.split("#", 1)[0]: m for m in before}
    out = []
    for m in after:
        uri = m.meta.get("vault_uri")
        old = had.get(m.id.split("#", 1)[0])
        if not uri or old is None or old.meta.get("vault_uri") == uri or m.synthetic:
            continue
        entry = vault.get_cached(str(uri))
        lines = len(readable(entry).splitlines()) if entry is not None else 1
        saved = counter.message(old) - counter.message(m)
        out.append(LeftItem(m.role, gist(old), str(uri), f"1:{max(lines, 1)}", saved, old.id, "shortened"))
    return out
