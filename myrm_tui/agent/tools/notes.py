"""``session_notes``: notes the agent keeps for itself; they survive every compaction at zero LLM cost."""

from __future__ import annotations

from typing import Any

from myrm_tui.agent.tools.base import ToolContext, ToolError, ToolResult

MAX_NOTES = 50
MAX_NOTE_CHARS = 2_000


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
        notes = ctx.state.notes
        if action == "add":
            text = str(args.get("text") or "").strip()
            if not text:
                raise ToolError("text is required to add a note")
            notes.append(text[:MAX_NOTE_CHARS])
            del notes[:-MAX_NOTES]
            return ToolResult(f"note {len(notes)} saved")
        if action == "list":
            return ToolResult("\n".join(f"{i + 1}. {n}" for i, n in enumerate(notes)) or "no notes")
        if action == "clear":
            notes.clear()
            return ToolResult("notes cleared")
        raise ToolError("action must be add, list or clear")
