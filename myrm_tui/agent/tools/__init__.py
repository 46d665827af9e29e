"""The agent's tools. ``default_tools()`` is the set bound for a session (schemas frozen per session)."""

from __future__ import annotations

from myrm_tui.agent.tools.base import Tool, ToolContext, ToolError, ToolResult, schema
from myrm_tui.agent.tools.files import FileEditTool, FileReadTool
from myrm_tui.agent.tools.history import HistorySearchTool
from myrm_tui.agent.tools.jobs import BashOutputTool
from myrm_tui.agent.tools.notes import SessionNotesTool
from myrm_tui.agent.tools.search import GlobTool, GrepTool
from myrm_tui.agent.tools.shell import BashTool


def default_tools() -> list[Tool]:
    return [
        FileReadTool(),
        FileEditTool(),
        BashTool(),
        BashOutputTool(),
        GrepTool(),
        GlobTool(),
        SessionNotesTool(),
        HistorySearchTool(),
    ]


__all__ = ["Tool", "ToolContext", "ToolError", "ToolResult", "default_tools", "schema"]
