"""The tool protocol, tool results, and workspace confinement shared by every tool."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from myrm_tui.agent.permissions import Assessment, CommandRules
from myrm_tui.context.reread import FileIntegrityGuard
from myrm_tui.context.state import ContextState
from myrm_tui.context.vault import ArtifactVault

if TYPE_CHECKING:
    from myrm_tui.agent.tools.jobs import JobManager


class ToolError(Exception):
    """A failure the model should read (bad arguments, path outside the workspace...)."""


@dataclass
class ToolResult:
    content: str
    is_error: bool = False
    meta: dict[str, Any] = field(default_factory=dict)


# (tool, command, assessment) -> "yes", "no" or "always" (remember the assessment's commands for the session).
Approver = Callable[[str, str, Assessment], Awaitable[str]]


@dataclass
class ToolContext:
    workspace: Path
    vault: ArtifactVault
    state: ContextState
    integrity: FileIntegrityGuard = field(default_factory=FileIntegrityGuard)
    approver: Approver | None = None
    auto_approve: bool = False
    allowed_commands: CommandRules = field(default_factory=CommandRules)
    bash_timeout: float = 120.0
    max_output_bytes: int = 2_000_000
    extra_vault_namespaces: set[str] = field(default_factory=set)  # parents (forks) and children (subagents)
    jobs: JobManager | None = None  # background shell jobs; None where they are not allowed
    job_output_chars: int = 30_000  # new job output over this is spilled to the vault (L7)


class Tool(Protocol):
    name: str
    description: str
    parameters: dict[str, Any]

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult: ...


def schema(tool: Tool) -> dict[str, Any]:
    return {"type": "function", "function": {"name": tool.name, "description": tool.description, "parameters": tool.parameters}}


def resolve_in_workspace(root: Path, path: str) -> Path:
    """``path`` resolved inside ``root``; symlinks are followed, so a link out of the root is refused too."""
    if not path or not str(path).strip():
        raise ToolError("a path is required")
    if "\x00" in path:
        raise ToolError("path contains a NUL byte")
    base = root.resolve()
    candidate = Path(os.path.expanduser(path))
    full = (candidate if candidate.is_absolute() else base / candidate).resolve()
    if full != base and base not in full.parents:
        raise ToolError(f"{path!r} is outside the workspace ({base}); tools may only touch files inside it")
    return full


def decode_output(data: bytes) -> tuple[str, str | None]:
    """Text of ``data`` and a label when it was not clean UTF-8 text (binary or invalid bytes)."""
    if b"\x00" in data[:8192]:
        text = data.decode("utf-8", errors="replace")
        return text, f"[binary output: {len(data):,} bytes; shown with undecodable bytes replaced]"
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError:
        return data.decode("utf-8", errors="replace"), "[output was not valid UTF-8: undecodable bytes replaced with �]"
