"""``subagent``: delegate a task to a child agent with the same context pipeline, and get back a
distilled result (see ``agent/distill.py``) instead of its raw output."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from myrm_tui.agent.tools.base import ToolContext, ToolError, ToolResult

Spawn = Callable[[str], Awaitable[ToolResult]]


class SubagentTool:
    name = "subagent"
    description = (
        "Delegate a self-contained task (run a test suite, research the codebase) to a child agent. "
        "You get its final answer, distilled; long outputs are stored in the vault with a vault:// pointer."
    )
    parameters = {"type": "object", "properties": {"task": {"type": "string"}}, "required": ["task"]}

    def __init__(self, spawn: Spawn) -> None:
        self.spawn = spawn

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        task = str(args.get("task") or "").strip()
        if not task:
            raise ToolError("task is required")
        return await self.spawn(task)
