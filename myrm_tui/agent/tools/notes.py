"""``session_notes``: notes the agent keeps for itself; they survive every compaction at zero LLM cost.

The tool never writes the context state: it reports its edit through its result, and the session
applies it (``context/edits.py``)."""

from __future__ import annotations

from typing import Any

from myrm_tui.agent.tools.base import ToolContext, ToolError, ToolResult
from myrm_tui.context.edits import AddNote, ClearNotes


class SessionNotesTool:
    name = "session_notes"
    description = (
        "Keep short notes for yourself that persist across context compaction. action: add | list | clear."
    )
    parameters = {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": ["add", "list", "clear"]},
            "text": {"type": "string"},
        },
        "required": ["action"],
    }

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        action = args.get("action")
        notes = ctx.notes()
        if action == "add":
            text = str(args.get("text") or "").strip()
            if not text:
                raise ToolError("text is required to add a note")
            # Unnumbered: calls of one step run in parallel and each sees the notes as the step began.
            return ToolResult("note saved", edits=(AddNote(text),))
        if action == "list":
            return ToolResult("\n".join(f"{i + 1}. {n}" for i, n in enumerate(notes)) or "no notes")
        if action == "clear":
            return ToolResult("notes cleared", edits=(ClearNotes(),))
        raise ToolError("action must be add, list or clear")
