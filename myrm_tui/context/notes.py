"""Session Notes: what the agent wrote with the ``session_notes`` tool, kept in context for free.

Notes live in ``ContextState.notes``. Before any compaction they are visible as the tool calls that
wrote them; when a compaction removes those calls, the notes are re-inserted (no LLM call) as one
marked user-role message right after the summary, so they survive every compaction.
"""

from __future__ import annotations

from myrm_tui.context.step import NoSettings, Rewritten, Unconfigured, View
from myrm_tui.context.types import Message, synthetic_user


class SessionNotes(Unconfigured):
    name = "session_notes"

    async def run(self, v: View, settings: NoSettings) -> Rewritten:
        view, state = v.messages, v.request.state
        if not v.compacting or not state.notes:
            return Rewritten(messages=view)
        body = "Session notes (written by you earlier with session_notes):\n" + "\n".join(
            f"{i + 1}. {n}" for i, n in enumerate(state.notes)
        )
        msg = synthetic_user(body, f"notes-{state.compactions}-{len(state.notes)}", "session_notes")
        at = _after_summary(view, len(v.request.protected_head))
        return Rewritten(messages=[*view[:at], msg, *view[at:]])


def _after_summary(view: list[Message], start: int) -> int:
    i = start
    while i < len(view) and view[i].synthetic:
        i += 1
    return i
