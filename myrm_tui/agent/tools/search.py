"""``grep`` and ``glob`` over the workspace, in pure Python (no ripgrep needed), skipping VCS and
virtual-env folders and binary files.

Every result is resolved (symlinks followed) and kept only when it lands inside the workspace: a
link such as ``etcdir -> /etc`` or ``passwd -> /etc/passwd`` is never searched, listed or read
through. Only regular files are read (a FIFO would block), and the walk runs in a worker thread.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

from myrm_tui.agent.tools.base import (
    ToolContext,
    ToolError,
    ToolResult,
    confined,
    read_regular,
    resolve_in_workspace,
)

SKIP_DIRS = frozenset(
    {".git", ".hg", ".svn", ".venv", "venv", "node_modules", "__pycache__", ".mypy_cache", ".myrm"}
)
MAX_MATCHES = 400
MAX_FILES = 1000
MAX_SCANNED = 20_000
MAX_GREP_BYTES = 20_000_000  # a bigger file is skipped, not read into memory


def _pattern(pattern: str, what: str) -> str:
    if pattern.startswith(("/", "~")) or ".." in Path(pattern).parts:
        raise ToolError(f"{what} must be relative to the workspace and must not contain '..'")
    return pattern


def _walk(root: Path, walk_from: Path, pattern: str = "**/*") -> tuple[list[tuple[Path, Path]], int]:
    """(path as named under the workspace, resolved path) for each match inside the workspace, and
    how many matches were left out because they lead outside it."""
    out: list[tuple[Path, Path]] = []
    outside = 0
    for p in walk_from.glob(pattern):
        if any(part in SKIP_DIRS for part in p.relative_to(walk_from).parts):
            continue
        full = confined(root, p)
        if full is None:
            outside += 1
            continue
        out.append((p, full))
    return out, outside


def _outside_note(n: int) -> str:
    return f"[{n} path{'s' if n != 1 else ''} leading outside the workspace (symlinks) left out]" if n else ""


def _grep(root: Path, base: Path, rx: re.Pattern[str], pattern: str) -> tuple[list[str], int, bool]:
    if base.is_file():
        files, outside = [(base, base)], 0
    else:
        found, outside = _walk(root, base, pattern)
        files = [(p, full) for p, full in found if full.is_file()]  # is_file: regular files only
    hits: list[str] = []
    for shown, full in files[:MAX_SCANNED]:
        try:
            data = read_regular(full, str(shown), MAX_GREP_BYTES)
        except ToolError:  # too big, swapped for a FIFO, unreadable
            continue
        if b"\x00" in data[:4096]:
            continue
        name = shown.relative_to(root)
        for n, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
            if rx.search(line):
                hits.append(f"{name}:{n}:{line[:300]}")
                if len(hits) >= MAX_MATCHES:
                    return hits, outside, True
    return hits, outside, False


class GrepTool:
    name = "grep"
    description = (
        "Search file contents of the workspace with a regular expression. Optional path "
        "(folder or file) and glob filter."
    )
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
        root = ctx.workspace.resolve()
        base = resolve_in_workspace(root, str(args.get("path") or "."))
        pattern = _pattern(str(args.get("glob") or "**/*"), "glob")
        hits, outside, stopped = await asyncio.to_thread(_grep, root, base, rx, pattern)
        notes = [
            n for n in (f"[stopped at {MAX_MATCHES} matches]" if stopped else "", _outside_note(outside)) if n
        ]
        return ToolResult("\n".join([*hits, *notes]) if hits else "\n".join(["no matches", *notes]))


class GlobTool:
    name = "glob"
    description = "List workspace files matching a glob pattern such as '**/*.py'."
    parameters = {"type": "object", "properties": {"pattern": {"type": "string"}}, "required": ["pattern"]}

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        pattern = _pattern(str(args.get("pattern") or ""), "pattern")
        if not pattern:
            raise ToolError("pattern must be relative to the workspace and must not contain '..'")
        root = ctx.workspace.resolve()
        found, outside = await asyncio.to_thread(_walk, root, root, pattern)
        paths = sorted(str(p.relative_to(root)) for p, _ in found)
        note = _outside_note(outside)
        if not paths:
            return ToolResult("\n".join(["no files match", note]) if note else "no files match")
        extra = f"\n[… {len(paths) - MAX_FILES} more]" if len(paths) > MAX_FILES else ""
        return ToolResult("\n".join(paths[:MAX_FILES]) + extra + (f"\n{note}" if note else ""))
