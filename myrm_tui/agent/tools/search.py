"""``grep`` and ``glob`` over the workspace, in pure Python (no ripgrep needed), skipping VCS and
virtual-env folders and binary files."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from myrm_tui.agent.tools.base import ToolContext, ToolError, ToolResult, resolve_in_workspace

SKIP_DIRS = frozenset({".git", ".hg", ".svn", ".venv", "venv", "node_modules", "__pycache__", ".mypy_cache", ".myrm"})
MAX_MATCHES = 400
MAX_FILES = 1000


def _walk(root: Path, pattern: str = "**/*") -> list[Path]:
    out = []
    for p in root.glob(pattern):
        if any(part in SKIP_DIRS for part in p.relative_to(root).parts):
            continue
        out.append(p)
    return out


class GrepTool:
    name = "grep"
    description = "Search file contents of the workspace with a regular expression. Optional path (folder or file) and glob filter."
    parameters = {
        "type": "object",
        "properties": {"pattern": {"type": "string"}, "path": {"type": "string"}, "glob": {"type": "string"}},
        "required": ["pattern"],
    }

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        try:
            rx = re.compile(str(args.get("pattern", "")))
        except re.error as exc:
            raise ToolError(f"invalid regular expression: {exc}") from exc
        base = resolve_in_workspace(ctx.workspace, str(args.get("path") or "."))
        files = [base] if base.is_file() else [p for p in _walk(base, str(args.get("glob") or "**/*")) if p.is_file()]
        root = ctx.workspace.resolve()
        hits: list[str] = []
        for f in files[:20_000]:
            try:
                data = f.read_bytes()
            except OSError:
                continue
            if b"\x00" in data[:4096]:
                continue
            for n, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
                if rx.search(line):
                    hits.append(f"{f.relative_to(root)}:{n}:{line[:300]}")
                    if len(hits) >= MAX_MATCHES:
                        return ToolResult("\n".join(hits) + f"\n[stopped at {MAX_MATCHES} matches]")
        return ToolResult("\n".join(hits) if hits else "no matches")


class GlobTool:
    name = "glob"
    description = "List workspace files matching a glob pattern such as '**/*.py'."
    parameters = {"type": "object", "properties": {"pattern": {"type": "string"}}, "required": ["pattern"]}

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        pattern = str(args.get("pattern") or "")
        if not pattern or pattern.startswith("/") or ".." in Path(pattern).parts:
            raise ToolError("pattern must be relative to the workspace and must not contain '..'")
        root = ctx.workspace.resolve()
        paths = sorted(str(p.relative_to(root)) for p in _walk(root, pattern))
        if not paths:
            return ToolResult("no files match")
        extra = f"\n[… {len(paths) - MAX_FILES} more]" if len(paths) > MAX_FILES else ""
        return ToolResult("\n".join(paths[:MAX_FILES]) + extra)
