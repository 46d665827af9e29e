"""``ContextState``: what the pipeline remembers about one session between requests.

The stored history is append-only; this state is what makes the *view* stable between compactions
(the "only-append" policy): ``base`` is the view frozen at the last compaction, covering the first
``base_upto`` raw messages, and ``decisions`` holds per-message rewrites made the first time a
message was seen, so a message looks the same in every request until the next compaction.
"""

from __future__ import annotations

import json
import operator
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from myrm_tui.context.memo import Memo
from myrm_tui.context.summary.fields import Summary
from myrm_tui.context.types import Message, ToolCall
from myrm_tui.context.vault import BlockParts, block_parts


@dataclass
class ContextState:
    base: list[Message] = field(default_factory=list)
    base_upto: int = 0
    decisions: dict[str, Message] = field(default_factory=dict)
    summary: Summary | None = None
    notes: list[str] = field(default_factory=list)
    # ArtifactTracker: path -> [op, order]; order grows with every touch so "most recent" is a max.
    artifacts: dict[str, list[Any]] = field(default_factory=dict)
    artifact_clock: int = 0
    observed_upto: int = 0  # raw messages the ArtifactTracker has seen
    compactions: int = 0
    low_yield_streak: int = 0
    backoff_level: str = ""  # after low-yield compactions, wait for this level before compacting again
    last_request_at: float | None = None
    last_compaction: dict[str, Any] = field(default_factory=dict)
    # cache_break_detector: the previous request's segment fingerprints and sizes; break counts by cause.
    last_fingerprints: list[str] = field(default_factory=list)
    last_sizes: list[int] = field(default_factory=list)
    cache_breaks: dict[str, int] = field(default_factory=dict)
    handovers: list[dict[str, Any]] = field(default_factory=list)  # AgentHandoverState of each subagent run
    # brought back by the user (context/steps/pinned.py)
    pinned: list[dict[str, str]] = field(default_factory=list)
    # What each recent request added to the view sent before it (newest last, ``growth_rounds`` kept):
    # Pre-Compact predicts the next round from it, so the planned compaction comes before the net.
    round_growth: list[int] = field(default_factory=list)
    last_sent_tokens: int = 0  # the view last sent, as Pre-Compact counts it
    # What the steps read of this session's messages, kept between requests (``memo.py``); never stored.
    memo: Memo = field(default_factory=Memo, compare=False, repr=False)
    # Each Record line as Summarize wrote it (its priority, whether the agent wrote it): the text alone
    # cannot tell whose it was, and another session's identical line may be another's. Never stored.
    record_written: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    # ``base`` as JSON (``base_json``) and the messages it was made of: the base is fixed between
    # compactions, so the one that comes next finds it made (after sending). Never stored.
    base_made: tuple[tuple[Message, ...], str] | None = field(default=None, compare=False, repr=False)

    # -- serialisation (stored as JSON in the checkpoints table) -------------------------------------
    def base_json(self) -> str:
        """``json.dumps([message_to_dict(m) for m in self.base], ensure_ascii=False)``, made once a base: a
        hit needs the very message objects it was made of (messages are immutable)."""
        made, base = self.base_made, self.base
        # guard: the-base-json-is-of-these-very-messages
        if made is not None and len(made[0]) == len(base) and all(map(operator.is_, made[0], base)):
            return made[1]
        text = json.dumps([message_to_dict(m) for m in base], ensure_ascii=False)
        self.base_made = (tuple(base), text)
        return text

    def to_json(self) -> str:
        # The base's JSON spliced in first: ``json.dumps`` of the whole dict writes ``{"base": …, `` and then
        # the other members exactly as it writes them alone.
        rest = json.dumps(
            {
                "base_upto": self.base_upto,
                "decisions": {k: message_to_dict(v) for k, v in self.decisions.items()},
                "summary": self.summary.to_json() if self.summary is not None else None,
                "notes": self.notes,
                "artifacts": self.artifacts,
                "artifact_clock": self.artifact_clock,
                "observed_upto": self.observed_upto,
                "compactions": self.compactions,
                "low_yield_streak": self.low_yield_streak,
                "backoff_level": self.backoff_level,
                "last_request_at": self.last_request_at,
                "last_compaction": self.last_compaction,
                "cache_breaks": self.cache_breaks,
                "handovers": self.handovers,
                "pinned": self.pinned,
                "round_growth": self.round_growth,
                "last_sent_tokens": self.last_sent_tokens,
                # Fingerprints use Python's per-process string hash: only meaningful in this process.
                "fingerprints": {"pid": os.getpid(), "fps": self.last_fingerprints, "sizes": self.last_sizes},
            },
            ensure_ascii=False,
        )
        return f'{{"base": {self.base_json()}, {rest[1:]}'

    @classmethod
    def from_json(cls, text: str) -> ContextState:
        d = json.loads(text)
        return cls(
            base=[message_from_dict(m) for m in d.get("base", [])],
            base_upto=int(d.get("base_upto", 0)),
            decisions={k: message_from_dict(v) for k, v in d.get("decisions", {}).items()},
            # Sessions stored by older versions hold a plain dict (any shape): it loads as a Summary.
            summary=Summary.from_json(d["summary"]) if d.get("summary") is not None else None,
            notes=list(d.get("notes", [])),
            artifacts=dict(d.get("artifacts", {})),
            artifact_clock=int(d.get("artifact_clock", 0)),
            observed_upto=int(d.get("observed_upto", 0)),
            compactions=int(d.get("compactions", 0)),
            low_yield_streak=int(d.get("low_yield_streak", 0)),
            backoff_level=str(d.get("backoff_level", "")),
            last_request_at=d.get("last_request_at"),
            last_compaction=dict(d.get("last_compaction", {})),
            cache_breaks=dict(d.get("cache_breaks", {})),
            handovers=list(d.get("handovers", [])),
            pinned=list(d.get("pinned", [])),
            round_growth=[int(n) for n in d.get("round_growth", [])],
            last_sent_tokens=int(d.get("last_sent_tokens", 0)),
            last_fingerprints=list(fp.get("fps", []))
            if (fp := d.get("fingerprints") or {}).get("pid") == os.getpid()
            else [],
            last_sizes=list(fp.get("sizes", [])) if fp.get("pid") == os.getpid() else [],
        )

    def touch_artifact(self, path: str, op: str) -> None:
        self.artifact_clock += 1
        first = self.artifacts.get(path, [op, 0, self.artifact_clock])
        self.artifacts[path] = [op, self.artifact_clock, first[2] if len(first) > 2 else self.artifact_clock]

    def recent_artifacts(self, n: int) -> list[str]:
        ranked = sorted(self.artifacts.items(), key=lambda kv: kv[1][1], reverse=True)
        return [p for p, _ in ranked[:n]]


def message_to_dict(m: Message) -> dict[str, Any]:
    d = m.to_api()
    d["id"] = m.id
    if m.synthetic:
        d["synthetic"] = True
    if m.created_at is not None:
        d["created_at"] = m.created_at
    if m.meta:
        d["meta"] = m.meta
    return d


# A message's archive JSON and its block in the archive as shown (``message_json``), by the message object
# itself (the entry holds it, so its id is not reused while the entry lives). Made for one compaction and
# dropped by it; what no compaction took (a session that ended near its point) goes least recently asked
# first past the bounds (characters: the text of large outputs twice).
_JSON_MADE: dict[int, tuple[Message, str, BlockParts]] = {}
JSON_MADE_ENTRIES = 4_096
JSON_MADE_CHARS = 8_000_000
_json_chars = 0


def message_json(m: Message, keep: bool = True) -> tuple[str, BlockParts]:
    """``json.dumps(message_to_dict(m), ensure_ascii=False)`` and the ``block_parts`` of that JSON read back
    (what the vault pane shows of it), made once a message object (messages are immutable): what a
    compaction's archive of the folded messages is made of, so the messages it will fold can be written
    before the request that folds them. ``keep=False``: the compaction that folds ``m`` takes it, and it is
    not kept (``m`` leaves the view)."""
    global _json_chars
    hit = _JSON_MADE.get(id(m))
    if hit is not None and hit[0] is m:
        if keep:
            # guard: what-is-made-ahead-and-asked-again-goes-last
            _JSON_MADE[id(m)] = _JSON_MADE.pop(id(m))  # asked again: the last to go
        else:
            del _JSON_MADE[id(m)]
            _json_chars -= len(hit[1]) + len(hit[2][2])
        return hit[1], hit[2]
    text = json.dumps(message_to_dict(m), ensure_ascii=False)
    parts = block_parts(json.loads(text))
    if keep:
        _JSON_MADE[id(m)] = (m, text, parts)
        _json_chars += len(text) + len(parts[2])
        while len(_JSON_MADE) > JSON_MADE_ENTRIES or (_json_chars > JSON_MADE_CHARS and _JSON_MADE):
            _, old, (_, _, body) = _JSON_MADE.pop(next(iter(_JSON_MADE)))
            _json_chars -= len(old) + len(body)
    return text, parts


def messages_json_ahead(messages: Iterable[Message]) -> None:
    """``message_json`` of ``messages`` in their order, kept, up to half the bounds: a view whose messages
    go past them has its first ones made once and found made by each later pass (a pass over the bounds
    would push out, and make again, its own first ones every time), and another session's pass fits beside
    it (each may go one message past its half)."""
    chars = 0
    for entries, m in enumerate(messages):
        # guard: a-pass-made-ahead-stops-at-half-the-bounds
        if entries >= JSON_MADE_ENTRIES // 2 or chars >= JSON_MADE_CHARS // 2:
            return
        text, (_, _, body) = message_json(m)
        chars += len(text) + len(body)


def message_from_dict(d: dict[str, Any]) -> Message:
    m = Message.from_api(d, id=d.get("id", ""), created_at=d.get("created_at"))
    if d.get("synthetic") or d.get("meta"):
        from dataclasses import replace

        m = replace(m, synthetic=bool(d.get("synthetic")), meta=dict(d.get("meta") or {}))
    return m


__all__ = ["ContextState", "Message", "ToolCall", "message_from_dict", "message_to_dict"]
