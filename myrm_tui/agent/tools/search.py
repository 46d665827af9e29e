"""``grep`` and ``glob`` over the workspace, on ripgrep (``rg``, from the ``ripgrep`` wheel).

ripgrep runs as a child process with a time limit (``SEARCH_TIMEOUT``), killed with its process group
when the turn is cancelled; its regex engine is linear-time, so a pattern such as ``(a+)+$`` cannot
hang, and no model-supplied regex runs in myrm's own process. It honours ``.gitignore`` (also outside
a git repository), ``.ignore`` and ``.rgignore``, skips VCS and virtual-env folders, binary files and
files over ``MAX_GREP_BYTES``.

Two steps keep the workspace confinement: ``rg --files --follow`` lists the files (names only), each is
resolved (symlinks followed) and kept only when it lands inside the workspace — a link such as
``etcdir -> /etc`` or ``passwd -> /etc/passwd`` is counted and left out, never searched — and only the
kept files, by their resolved paths, are given to the searching ``rg``. Glob patterns match like
``pathlib``'s: per path component, ``**`` for any number of folders, folders listed too.
"""

from __future__ import annotations

import fnmatch
import os
import shutil
import stat
import sys
import sysconfig
import time
from pathlib import Path
from typing import Any

from myrm_tui.agent.proc import Listed, run_lines, unpassable
from myrm_tui.agent.tools.base import (
    ToolContext,
    ToolError,
    ToolResult,
    confined,
    not_regular,
    resolve_in_workspace,
    workspace_root,
)
from myrm_tui.paths import private_in, private_paths
from myrm_tui.safe_text import listed_name

SKIP_DIRS = frozenset(
    {".git", ".hg", ".svn", ".venv", "venv", "node_modules", "__pycache__", ".mypy_cache", ".myrm"}
)
MAX_MATCHES = 400
MAX_FILES = 1000
MAX_SCANNED = 20_000
MAX_LISTED = 200_000  # file names read from ``rg --files`` before the listing is cut
MAX_GREP_BYTES = 20_000_000  # a bigger file is skipped
SEARCH_TIMEOUT = 30.0  # seconds for one grep or glob, listing and search together
BATCH_BYTES = 100_000  # file arguments per searching rg (far under the kernel's ARG_MAX)
LINE_CHARS = 300


def rg_binary() -> str | None:
    """The ``rg`` of the ``ripgrep`` wheel installed beside this Python, else one on PATH."""
    for folder in (sysconfig.get_path("scripts"), str(Path(sys.executable).parent)):
        cand = Path(folder) / ("rg.exe" if os.name == "nt" else "rg")
        if cand.is_file() and os.access(cand, os.X_OK):
            return str(cand)
    return shutil.which("rg")


def _rg() -> str:
    rg = rg_binary()
    if rg is None:
        raise ToolError("ripgrep (rg) is not installed; grep and glob need it: pip install ripgrep")
    return rg


def _pattern(pattern: str, what: str) -> str:
    if pattern.startswith(("/", "~")) or ".." in Path(pattern).parts:
        raise ToolError(f"{what} must be relative to the workspace and must not contain '..'")
    return pattern


def glob_match(parts: tuple[str, ...], pattern: tuple[str, ...]) -> bool:
    """Whether the path ``parts`` matches the glob ``pattern`` component by component (``**``: zero or
    more components), as ``Path.glob`` does. Dynamic programming: linear in both lengths' product."""
    reach = [True] + [False] * len(parts)  # reach[i]: parts[:i] matched by the pattern so far
    for pat in pattern:
        if pat == "**":
            for i in range(1, len(reach)):
                reach[i] = reach[i] or reach[i - 1]
        else:
            reach = [False] + [reach[i] and fnmatch.fnmatchcase(parts[i], pat) for i in range(len(parts))]
    return reach[-1]


def _stat(full: Path) -> os.stat_result | None:
    try:
        return os.stat(full)
    except OSError:  # gone since it was listed, or not ours to read: rg would say nothing of it either
        return None


def _regular(files: list[tuple[str, Path]]) -> tuple[list[tuple[str, Path]], int]:
    """The regular files of ``files`` that grep reads, and how many it skips for their size. rg applies
    ``--max-filesize`` only to the files it finds itself and reads every file it is given whole (a 20 GB
    file, sparse or a log a command wrote, took the whole time limit, every time); a FIFO would hold it
    until the time limit."""
    kept: list[tuple[str, Path]] = []
    big = 0
    for name, full in files:
        st = _stat(full)
        if st is None or not stat.S_ISREG(st.st_mode):
            continue
        # guard: grep-skips-files-over-its-size-limit
        if st.st_size > MAX_GREP_BYTES:
            big += 1
            continue
        kept.append((name, full))
    return kept, big


def _outside_note(n: int) -> str:
    return f"[{n} path{'s' if n != 1 else ''} leading outside the workspace (symlinks) left out]" if n else ""


def _timed_out(what: str) -> ToolError:
    return ToolError(
        f"{what} took longer than {SEARCH_TIMEOUT:g} s and was stopped; "
        "narrow it with path or glob, or a more specific pattern"
    )


def _left(deadline: float, what: str) -> float:
    """Seconds left before ``deadline`` (one limit for the listing and every search batch together)."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise _timed_out(what)
    return left


async def _list(
    root: Path, base: Path, pattern: str, dirs: bool, deadline: float
) -> tuple[list[tuple[str, Path]], int, bool]:
    """(name under the workspace, resolved path) of each file (and folder when ``dirs``) below ``base``
    matching ``pattern`` and inside the workspace; how many matches led outside; whether the listing
    was cut."""
    # NUL-separated: a name may hold a line break
    argv = [
        _rg(),
        "--no-config",
        "--files",
        "--null",
        "--follow",
        "--hidden",
        "--no-require-git",
        "--no-messages",
    ]
    argv += [f"--glob=!{d}/" for d in sorted(SKIP_DIRS)]
    try:
        listed = await run_lines(argv, base, _left(deadline, "listing the files"), MAX_LISTED, b"\0")
    except TimeoutError as exc:
        raise _timed_out("listing the files") from exc
    names: set[str] = set()
    for raw in listed.lines:
        rel = raw.decode("utf-8", "surrogateescape")
        names.add(rel)
        if dirs:
            parent = os.path.dirname(rel)
            while parent and parent not in names:
                names.add(parent)
                parent = os.path.dirname(parent)
    pat = tuple(p for p in Path(pattern).parts if p != ".")
    private = private_paths(root)  # myrm's database in the workspace: neither listed nor searched
    out: list[tuple[str, Path]] = []
    outside = 0
    for rel in sorted(names):
        if not glob_match(Path(rel).parts, pat):
            continue
        # guard: grep-glob-results-confined
        full = confined(root, base / rel)
        if full is None:
            outside += 1
            continue
        if private and private_in(full, private) is not None:
            continue
        out.append(((base / rel).relative_to(root).as_posix(), full))
    return out, outside, listed.stopped


def _batches(files: list[tuple[str, Path]]) -> list[list[tuple[str, Path]]]:
    out: list[list[tuple[str, Path]]] = [[]]
    size = 0
    for f in files:
        if size > BATCH_BYTES:
            out.append([])
            size = 0
        out[-1].append(f)
        size += len(str(f[1])) + 1
    return out


async def _search(
    rx: str, files: list[tuple[str, Path]], cwd: Path, deadline: float
) -> tuple[list[str], bool]:
    hits: list[str] = []
    argv = [
        _rg(),
        "--no-config",
        "--no-heading",
        "--with-filename",
        "--line-number",
        "--null",
        "--color=never",
        "--no-messages",
        f"--max-filesize={MAX_GREP_BYTES}",
        f"--max-columns={LINE_CHARS}",
        "--max-columns-preview",
        "--regexp",
        rx,
        "--",
    ]
    for batch in _batches(files):
        if not batch:
            continue
        shown: dict[str, list[str]] = {}  # two names (a link inside, its target) may share a file
        for name, full in batch:
            shown.setdefault(str(full), []).append(name)
        try:
            left = _left(deadline, "the search")
            res: Listed = await run_lines([*argv, *shown], cwd, left, MAX_MATCHES - len(hits) + 1)
        except TimeoutError as exc:
            raise _timed_out("the search") from exc
        if res.code == 2 and not res.lines:  # a bad pattern (rg's own words) or an unreadable file
            message = res.stderr.strip()
            if "regex" in message:
                detail = "\n".join(message.splitlines()[-3:])
                raise ToolError(f"invalid regular expression (ripgrep's syntax, no look-around):\n{detail}")
        # rg ends each hit with a line break, and a file's name may hold one: a name's part before one
        # waits for the rest of the name.
        cut = {
            os.fsencode(p)[:i] for p in shown if "\n" in p for i, ch in enumerate(os.fsencode(p)) if ch == 10
        }
        pending = b""
        for raw in res.lines:
            if pending:
                raw, pending = pending + b"\n" + raw, b""
            path, nul, rest = raw.partition(b"\0")
            if not nul:  # "binary file matches": binary files are skipped
                # guard: grep-reads-names-holding-line-breaks
                if raw in cut:
                    pending = raw
                continue
            no, _, text = rest.decode("utf-8", "replace").partition(":")
            for name in shown.get(path.decode("utf-8", "surrogateescape"), ()):
                hits.append(f"{listed_name(name)}:{no}:{text[:LINE_CHARS]}")
                if len(hits) >= MAX_MATCHES:
                    return sorted_hits(hits), True
    return sorted_hits(hits), False


def sorted_hits(hits: list[str]) -> list[str]:
    """By file name, then line number (rg reports files in the order it finishes them)."""

    def key(hit: str) -> tuple[str, int]:
        name, _, rest = hit.partition(":")
        no = rest.partition(":")[0]
        return name, int(no) if no.isdigit() else 0

    return sorted(hits, key=key)


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
        rx = str(args.get("pattern", ""))
        if not rx:
            raise ToolError("pattern is required")
        problem = unpassable(rx, "the pattern")
        if problem:
            raise ToolError(problem)
        deadline = time.monotonic() + SEARCH_TIMEOUT
        root = workspace_root(ctx.workspace)
        base = resolve_in_workspace(root, str(args.get("path") or "."))
        pattern = _pattern(str(args.get("glob") or "**/*"), "glob")
        shown = str(args.get("path") or ".")
        st = _stat(base)
        if st is None:
            raise ToolError(f"{shown}: no such file or folder")
        if stat.S_ISDIR(st.st_mode):
            found, outside, cut = await _list(root, base, pattern, False, deadline)
            searched, big = _regular(found)
            searched = searched[:MAX_SCANNED]
        else:
            kind = not_regular(st.st_mode)
            if kind is not None:
                raise ToolError(f"{shown} is {kind}, not a file or folder; only those can be searched")
            searched, big = _regular([(base.relative_to(root).as_posix(), base)])
            if big:
                raise ToolError(
                    f"{shown} is {st.st_size:,} bytes, over grep's limit of {MAX_GREP_BYTES:,}: not searched"
                )
            outside, cut = 0, False
        hits, stopped = await _search(rx, searched, root, deadline)
        notes = [
            n
            for n in (
                f"[stopped at {MAX_MATCHES} matches]" if stopped else "",
                f"[{big} file{'s' if big != 1 else ''} over {MAX_GREP_BYTES // 1_000_000} MB not searched]"
                if big
                else "",
                f"[only the first {MAX_LISTED:,} files were searched; narrow path or glob]" if cut else "",
                _outside_note(outside),
            )
            if n
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
        root = workspace_root(ctx.workspace)
        found, outside, cut = await _list(root, root, pattern, True, time.monotonic() + SEARCH_TIMEOUT)
        paths = [listed_name(name) for name in sorted(name for name, _ in found)]
        note = "\n".join(
            n
            for n in (
                _outside_note(outside),
                f"[only the first {MAX_LISTED:,} files were listed; narrow the pattern]" if cut else "",
            )
            if n
        )
        if not paths:
            return ToolResult("\n".join(["no files match", note]) if note else "no files match")
        extra = f"\n[… {len(paths) - MAX_FILES} more]" if len(paths) > MAX_FILES else ""
        return ToolResult("\n".join(paths[:MAX_FILES]) + extra + (f"\n{note}" if note else ""))
