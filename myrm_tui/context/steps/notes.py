"""Session Notes: what the agent wrote with the ``session_notes`` tool, kept in context for free.

Notes live in ``ContextState.notes``. Before any compaction they are visible as the tool calls that
wrote them; when a compaction removes those calls, the notes are re-inserted (no LLM call) as one
marked user-role message right after the summary, so they survive every compaction.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from myrm_tui.context.step import Configured, Rewritten, Trace, View
from myrm_tui.context.types import Message, synthetic_user

SHORT_NOTE_CHARS = 160  # what an older note keeps when the notes pass their share


@dataclass(frozen=True, slots=True)
class NotesSettings:
    injected_tokens: int  # the notes' share of the window


class SessionNotes(Configured[NotesSettings]):
    name = "session_notes"
    Settings = NotesSettings

    async def run(self, v: View, s: NotesSettings) -> Rewritten:
        view, state = v.messages, v.request.state
        if not v.compacting or not state.notes:
            return Rewritten(messages=view)
        req = v.request
        trace = Trace()
        # guard: notes-within-their-share
        notes = bounded_notes(state.notes, s.injected_tokens, req.counter.text)
        if notes != list(state.notes):
            uri = req.vault.put("\n\n".join(state.notes), "archive", "session_notes", reason="notes")
            notes.append(f"(older notes shortened or left out to fit their share; all of them: {uri})")
            trace.event(f"session notes over their share ({s.injected_tokens:,} tokens): shortened")
        body = "Session notes (written by you earlier with session_notes):\n" + "\n".join(
            f"{i + 1}. {n}" for i, n in enumerate(notes)
        )
        msg = synthetic_user(body, f"notes-{state.compactions}-{len(state.notes)}", "session_notes")
        at = _after_summary(view, len(v.request.protected_head))
        return Rewritten(messages=[*view[:at], msg, *view[at:]], trace=trace)


def bounded_notes(notes: list[str], max_tokens: int, count: Callable[[str], int]) -> list[str]:
    """The notes within ``max_tokens``: the newest whole, older ones shortened, the oldest left out."""
    budget = max_tokens - 40
    if sum(count(n) + 4 for n in notes) <= budget:
        return list(notes)
    kept: list[str] = []
    shortening = False
    for n in reversed(notes):
        whole = count(n) + 4
        if not shortening and whole <= budget:
            kept.append(n)
            budget -= whole
            continue
        shortening = True
        short = n[:SHORT_NOTE_CHARS] + ("…" if len(n) > SHORT_NOTE_CHARS else "")
        cost = count(short) + 4
        if cost > budget:
            break
        kept.append(short)
        budget -= cost
    return list(reversed(kept))


def _after_summary(view: list[Message], start: int) -> int:
    i = start
    while i < len(view) and view[i].synthetic:
        i += 1
    return i
