"""View properties: the invariants every view sent to a model must satisfy, named and checked here once.

- ``tool_pairing``: each assistant message with tool calls is followed, before any other role, by one
  tool result per call id; no tool result stands anywhere else.
- ``protected_head``: the view starts with the raw history's protected head (leading system messages
  and the first real user message), each unchanged or — when it alone would not fit the window — cut,
  with a ``vault://`` pointer to its whole text (never silently dropped).
- ``synthetic_marked``: every pipeline-made user-role message carries the synthetic tag.
- ``non_empty``: no message but an assistant with tool calls has empty content.

On entry the raw history gets ``unique_ids`` (``with_unique_ids``): the steps key messages by id (filter
and trim decisions, token counts, cache fingerprints), so an empty, repeated or ``#``-bearing id (a derived
id's separator) would make one message's decision another's.

Helpers for grouping by ``tool_call_id`` (not position) live here too, since the processors that
cut the history must cut between groups, never inside one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from myrm_tui.context.types import SYNTHETIC_TAG, Message


@dataclass(frozen=True, slots=True)
class Violation:
    prop: str
    index: int
    detail: str

    def __str__(self) -> str:
        return f"{self.prop} at message {self.index}: {self.detail}"


def extract_protected_head(raw: Sequence[Message]) -> list[Message]:
    """Leading system messages (and the session's synthetic environment message), plus the first
    real user message.

    Runs on the raw history, before any synthetic message exists, so it cannot pick a summary or a
    note by mistake: correct by construction, not by inspecting flags.
    """
    head: list[Message] = []
    for m in raw:
        if m.role == "system" or (m.role == "user" and m.synthetic):
            head.append(m)  # system prompt, and the session's environment message before the first turn
            continue
        if m.role == "user":
            head.append(m)
        break
    return head


def with_unique_ids(raw: Sequence[Message]) -> Sequence[Message]:
    """``raw`` itself when every id is non-empty, unique and free of ``#``; otherwise a copy whose offending
    messages carry a positional id (``@<index>``, after the stored id when there is one). The history only
    grows by appends, so a message's id is the same on every request; the stored messages keep theirs."""
    ids = [m.id for m in raw]
    if "" not in ids and len(set(ids)) == len(ids) and not any("#" in i for i in ids):
        return raw  # the usual case, in O(n) set operations
    seen: set[str] = set()
    out = list(raw)
    for k, m in enumerate(raw):
        mid = m.id
        if not mid or mid in seen or "#" in mid:
            mid = f"{mid.replace('#', '_')}@{k}"
            while mid in seen:  # a stored id that happens to look positional
                mid += "@"
            out[k] = replace(m, id=mid)
        seen.add(mid)
    return out


def group_spans(view: Sequence[Message]) -> list[tuple[int, int]]:
    """Split a (normalized) view into atomic spans: an assistant with its tool results is one span."""
    spans: list[tuple[int, int]] = []
    i, n = 0, len(view)
    while i < n:
        j = i + 1
        if view[i].role == "assistant" and view[i].tool_calls:
            while j < n and view[j].role == "tool":
                j += 1
        spans.append((i, j))
        i = j
    return spans


def check_tool_pairing(view: Sequence[Message]) -> list[Violation]:
    out: list[Violation] = []
    i, n = 0, len(view)
    while i < n:
        m = view[i]
        if m.role == "tool":
            out.append(
                Violation("tool_pairing", i, f"tool result {m.tool_call_id!r} without a preceding call")
            )
            i += 1
            continue
        if m.role == "assistant" and m.tool_calls:
            wanted = [c.id for c in m.tool_calls]
            j = i + 1
            seen: set[str] = set()
            while j < n and view[j].role == "tool":
                tid = view[j].tool_call_id or ""
                if tid not in wanted or tid in seen:
                    out.append(Violation("tool_pairing", j, f"tool result {tid!r} answers no open call"))
                seen.add(tid)
                j += 1
            missing = [w for w in wanted if w not in seen]
            if missing:
                out.append(Violation("tool_pairing", i, f"calls without results: {missing}"))
            i = j
            continue
        i += 1
    return out


def check_protected_head(view: Sequence[Message], raw: Sequence[Message]) -> list[Violation]:
    head = extract_protected_head(raw)
    for k, m in enumerate(head):
        if k >= len(view) or view[k].role != m.role:
            return [Violation("protected_head", k, "protected head changed or missing")]
        if view[k].content != m.content and not is_cut_with_pointer(view[k], m):
            return [Violation("protected_head", k, "protected head changed without a pointer to it")]
    return []


def is_cut_with_pointer(cut: Message, original: Message) -> bool:
    """``cut`` is ``original`` shortened to fit the window, its whole text in the vault (fit.py)."""
    uri = cut.meta.get("vault_uri")
    return (
        cut.id.startswith(f"{original.id}#")
        and isinstance(uri, str)
        and uri in cut.text
        and len(cut.text) < len(original.text)
    )


def check_synthetic_marked(view: Sequence[Message]) -> list[Violation]:
    return [
        Violation("synthetic_marked", i, "synthetic user message without marker")
        for i, m in enumerate(view)
        if m.role == "user" and m.synthetic and f"<{SYNTHETIC_TAG}" not in m.text
    ]


def check_non_empty(view: Sequence[Message]) -> list[Violation]:
    out = []
    for i, m in enumerate(view):
        if m.role == "assistant" and m.tool_calls:
            continue
        if not m.text.strip() and not m.has_media:
            out.append(Violation("non_empty", i, f"empty {m.role} message"))
    return out


def check_view(view: Sequence[Message], raw: Sequence[Message] | None = None) -> list[Violation]:
    """All view properties; an empty list means the view is valid."""
    out = check_tool_pairing(view) + check_synthetic_marked(view) + check_non_empty(view)
    if raw is not None:
        out += check_protected_head(view, raw)
    return out
