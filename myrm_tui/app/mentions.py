"""``@`` file mentions: the workspace's files for completion, a fuzzy match, and the attachment of the
mentioned files' text to the message (each within a budget; a larger file is cut, with a note)."""

from __future__ import annotations

import bisect
import itertools
import os
import re
from collections.abc import Iterator
from pathlib import Path

# Folders never offered: version control, dependencies, virtual environments, caches, build output.
SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        ".venv",
        "venv",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
        ".myrm",
        "dist",
        "build",
        ".idea",
    }
)
MAX_FILES = 20_000
FOLDER_SCAN = 200_000  # files of a typed folder read for the menu (past the index's cut), off the UI thread
QUERY = re.compile(r"(?:^|\s)@([\w.+/-]*)$")


def list_files(root: Path) -> list[str]:
    """Workspace-relative paths of its files (symlinks not followed), shortest first, at most
    ``MAX_FILES``."""
    out: list[str] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        rel = Path(folder).relative_to(root)
        out.extend((rel / f).as_posix() for f in sorted(files))
        if len(out) >= MAX_FILES:
            break
    return sorted(out[:MAX_FILES], key=lambda p: (p.count("/"), len(p), p))


def _score(query: str, path: str) -> int | None:
    """Lower is better; None when ``query`` is not a subsequence of ``path`` (case-insensitive)."""
    q, p = query.lower(), path.lower()
    name = p.rsplit("/", 1)[-1]
    if not q:
        return len(p)
    if name.startswith(q):
        return len(p)
    if q in name:
        return 1_000 + len(p)
    if q in p:
        return 2_000 + len(p)
    pos, gaps = -1, 0
    for ch in q:
        nxt = p.find(ch, pos + 1)
        if nxt < 0:
            return None
        gaps += nxt - pos - 1
        pos = nxt
    return 10_000 + gaps * 10 + len(p)


def fuzzy(query: str, paths: list[str], limit: int = 8) -> list[str]:
    """The best ``limit`` paths for ``query``: a file name starting with it, then containing it, then
    the path containing it, then the letters in order."""
    scored = [(s, p) for p in paths if (s := _score(query, p)) is not None]
    return [p for _, p in sorted(scored)[:limit]]


def typed_folder(query: str) -> str | None:
    """The folder part of ``query`` (``pkg/sub/mo`` -> ``pkg/sub``), or None when it names none."""
    folder, _, _ = query.rpartition("/")
    return folder or None


def folder_files(full: Path) -> Iterator[str]:
    """The names of the regular files in ``full`` (symlinks not followed), in the order the disk gives."""
    with os.scandir(full) as entries:
        for e in entries:
            if e.is_file(follow_symlinks=False):
                yield e.name


def read_folder(folder: str, root: Path) -> list[str]:
    """The names of the files of the workspace folder ``folder``, sorted case-insensitively (as
    ``in_listed`` looks them up): at most ``FOLDER_SCAN``; none outside the workspace or when it cannot be
    read. Blocking (a network mount may answer in seconds): the screen calls it off the UI thread."""
    base = root.resolve()
    try:
        full = (base / folder).resolve()
        if base not in full.parents:
            return []
        return sorted(itertools.islice(folder_files(full), FOLDER_SCAN), key=lambda n: (n.lower(), n))
    except (OSError, RuntimeError, ValueError):
        return []  # not a folder, gone, or unreadable: the index's matches alone


def in_listed(query: str, names: list[str], limit: int = 8) -> list[str]:
    """The first ``limit`` files of ``names`` (the folder ``query`` names, as ``read_folder`` sorts it) whose
    names start with its last part (``pkg/sub/mo`` -> ``pkg/sub/mo*``, case-insensitive)."""
    folder, _, start = query.rpartition("/")
    start = start.lower()
    # Found by bisection, not by a pass over the names: this runs on the UI thread at each key typed, and a
    # folder read past the index's cut holds up to ``FOLDER_SCAN`` names (a pass over 200,000: 20-50 ms).
    # guard: a-typed-folders-matches-are-bisected-not-scanned
    at = bisect.bisect_left(names, start, key=str.lower)
    out: list[str] = []
    for i in range(at, min(at + limit, len(names))):
        if not names[i].lower().startswith(start):
            break
        out.append(f"{folder}/{names[i]}")
    return out


def in_folder(query: str, root: Path, limit: int = 8) -> list[str]:
    """``in_listed`` on the folder read from the disk now (blocking)."""
    folder = typed_folder(query)
    return in_listed(query, read_folder(folder, root), limit) if folder else []


def needs_folder(query: str, files: list[str]) -> str | None:
    """The folder of ``query`` to read from the disk: only when the index was cut at ``MAX_FILES`` (a huge
    repository, where a file past the cut was never offered)."""
    # guard: a-typed-folder-past-the-index-cut-is-listed
    if len(files) < MAX_FILES:
        return None
    return typed_folder(query)


def candidates(query: str, files: list[str], listed: list[str] | None = None, limit: int = 8) -> list[str]:
    """The menu's paths for ``query``: the index's best matches, after the matching files of the typed
    folder when it was read (``listed``: its names, ``read_folder``)."""
    found = fuzzy(query, files, limit)
    if not listed:
        return found
    return list(dict.fromkeys([*in_listed(query, listed, limit), *found]))[:limit]


def query_at(line_before_cursor: str) -> str | None:
    """The partial path after an ``@`` that ends at the cursor (``None`` when the cursor is not in one)."""
    m = QUERY.search(line_before_cursor)
    return m.group(1) if m else None
