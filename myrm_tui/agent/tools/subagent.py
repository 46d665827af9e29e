"""``subagent``: delegate a task to a child agent with the same context pipeline, and get back a
distilled result (see ``agent/distill.py``) instead of its raw output."""

from __future__ import annotations

from typing import Any

from myrm_tui.agent.tools.base import Spawn, ToolContext, ToolError, ToolResult

__all__ = ["Spawn", "SubagentTool"]


class SubagentTool:
    name = "subagent"
    description = (
        "Delegate a self-contained task (run a test suite, research the codebase) to a child agent. "
        "You get its final answer, distilled; long outputs are stored in the vault with a vault:// pointer."
    )
    parameters = {"type": "object", "properties": {"task": {"type": "string"}}, "required": ["task"]}

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        task = str(args.get("task") or "").strip()
        if not task:
            raise ToolError("task is required")
        if ctx.subagent is None:
            raise ToolError("subagents are not available here (a subagent cannot start another)")
        return await ctx.subagent(task)
