"""``CompressionIntent``: what the current query says must survive compression.

Built from the current user query (plus a ``/compact <focus>`` hint) and the recent history: files
and modules under discussion are protected, and recently failed tool calls are kept so the agent can
retry or explain them. Every later layer asks ``intent.protects(message)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from myrm_tui.context.text import signals
from myrm_tui.context.types import Message

RECENT_WINDOW = 24  # messages scanned for failed calls
MAX_FAILED = 6


@lru_cache(maxsize=64)
def _focus(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """Files and modules a query names; cached, since the same query is parsed at every request of a turn."""
    return frozenset(signals.paths_in(text)), frozenset(signals.modules_in(text))


@dataclass(frozen=True)
class CompressionIntent:
    query: str = ""
    focus_files: frozenset[str] = field(default_factory=frozenset)
    focus_modules: frozenset[str] = field(default_factory=frozenset)
    failed_call_ids: frozenset[str] = field(default_factory=frozenset)

    @classmethod
    def build(cls, raw: Sequence[Message], focus_hint: str = "") -> CompressionIntent:
        query = ""
        for m in reversed(raw):
            if m.role == "user" and not m.synthetic:
                query = m.text
                break
        text = f"{query}\n{focus_hint}"
        failed: list[str] = []
        for m in reversed(raw[-RECENT_WINDOW:]):
            if m.role == "tool" and m.tool_call_id and signals.is_failure(m):
                failed.append(m.tool_call_id)
                if len(failed) >= MAX_FAILED:
                    break
        files, modules = _focus(text)
        return cls(query=query, focus_files=files, focus_modules=modules, failed_call_ids=frozenset(failed))

    def mentions_focus(self, text: str) -> bool:
        if not (self.focus_files or self.focus_modules):
            return False
        return any(f in text for f in self.focus_files) or any(m in text for m in self.focus_modules)

    def protects(self, msg: Message, call_text: str = "") -> bool:
        """True when ``msg`` (a tool result, with its call's text) is working context of this query."""
        if msg.role == "tool" and msg.tool_call_id in self.failed_call_ids:
            return True
        return self.mentions_focus(call_text) or (msg.role != "tool" and self.mentions_focus(msg.text[:2000]))
