"""Session Notes: what the agent wrote with the ``session_notes`` tool, kept in context for free.

Notes live in ``ContextState.notes``. Before any compaction they are visible as the tool calls that
wrote them; when a compaction removes those calls, the notes are re-inserted (no LLM call) as one
marked user-role message right after the summary, so they survive every compaction.
"""

from __future__ import annotations

from myrm_tui.context.processor import PipelineContext
from myrm_tui.context.types import Message, synthetic_user


class SessionNotes:
    name = "session_notes"

    async def process(self, view: list[Message], ctx: PipelineContext) -> list[Message]:
        if not ctx.compacting or not ctx.state.notes:
            return view
        body = "Session notes (written by you earlier with session_notes):\n" + "\n".join(
            f"{i + 1}. {n}" for i, n in enumerate(ctx.state.notes)
        )
        msg = synthetic_user(body, f"notes-{ctx.state.compactions}-{len(ctx.state.notes)}", "session_notes")
        at = _after_summary(view, len(ctx.protected_head))
        return [*view[:at], msg, *view[at:]]


def _after_summary(view: list[Message], start: int) -> int:
    i = start
    while i < len(view) and view[i].synthetic:
        i += 1
    return i
