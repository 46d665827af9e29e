"""Pinned: what the user brought back after a compaction, put into every request until unpinned.

Each pin (``ContextState.pinned``: a ``vault://`` pointer, its line range, a gist and the text) goes
into one marked message right after the protected head (system prompt, environment, first message) and
the summary blocks, so it
moves nothing else of the cached prefix and changes it only when a pin is added or removed. Pins share
``PIN_SHARE`` of the input budget; text over it is cut, with the pointer to read the rest. The step runs
after Normalize: the frozen base of a compaction never holds it, so a pin is never sent twice.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from myrm_tui.context.step import Configured, Rewritten, View
from myrm_tui.context.types import synthetic_user

PIN_SHARE = 0.10
CHARS_PER_TOKEN = 4
LEADING_KINDS = frozenset({"environment", "summary"})


@dataclass(frozen=True, slots=True)
class PinnedSettings:
    input_budget: int


def pinned_text(pins: list[dict[str, str]], budget_tokens: int) -> str:
    parts: list[str] = []
    room = budget_tokens * CHARS_PER_TOKEN
    for p in pins:
        head = f"[brought back by the user: {p.get('gist', '')} — {p['uri']} lines {p['line_range']}]"
        body = str(p.get("text", ""))
        if len(head) + len(body) > room:
            keep = max(room - len(head), 0)
            body = body[:keep] + f"\n[… cut: over the pinned share; read the rest: {p['uri']}]"
        parts.append(f"{head}\n{body}")
        room -= len(head) + len(body)
        if room <= 0:
            break
    return "\n\n".join(parts)


class PinnedContext(Configured[PinnedSettings]):
    name = "pinned"
    Settings = PinnedSettings

    async def run(self, v: View, s: PinnedSettings) -> Rewritten:
        pins = v.request.state.pinned
        if not pins:
            return Rewritten(messages=v.messages)
        text = pinned_text(pins, int(s.input_budget * PIN_SHARE))
        digest = hashlib.sha256(text.encode()).hexdigest()[:10]
        msg = synthetic_user(text, f"pinned-{digest}", "pinned")
        # After the protected head (it stays first: the view's invariant) and the summary blocks.
        k = min(len(v.request.protected_head), len(v.messages))
        while k < len(v.messages) and (
            v.messages[k].role == "system" or v.messages[k].meta.get("kind") in LEADING_KINDS
        ):
            k += 1
        return Rewritten(messages=[*v.messages[:k], msg, *v.messages[k:]])
