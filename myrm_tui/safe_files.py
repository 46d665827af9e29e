"""Reading a file that someone else put in the workspace (a cloned repository's): never blocking on it,
never following it somewhere else, never reading more than asked."""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

log = logging.getLogger(__name__)


def read_head(path: Path, limit: int) -> tuple[bytes, os.stat_result] | None:
    """Up to ``limit`` bytes of ``path`` and its status, or None when it is not a regular file *now*. It
    may have been one when stat'ed and swapped since: for a FIFO or a device, a plain ``open`` waits for
    a writer and holds the caller for ever; for a symbolic link, it reads where that points. So: open
    without blocking or following the last link, then judge the file actually opened."""
    try:
        # guard: attach-opens-without-blocking-or-following
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        log.info("%s could not be opened as a plain file", path, exc_info=True)
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):  # a folder opens too (and fdopen would raise)
            return None
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read(limit), st
    finally:
        os.close(fd)


def workspace_head(workspace: Path, name: str, limit: int) -> bytes | None:
    """Up to ``limit`` bytes of the workspace's file ``name`` when it is a regular file that lies inside
    the workspace once every link is followed; None otherwise (missing, a link out of it, a loop, a FIFO,
    a folder), logged when it exists."""
    base = workspace.resolve()
    given = base / name
    try:
        full = given.resolve(strict=True)
    except FileNotFoundError:
        if given.is_symlink():
            log.warning("%s is a link to nothing; not read", given)
        return None
    except (OSError, RuntimeError):  # a link loop, an unreadable folder
        log.warning("%s cannot be followed; not read", given, exc_info=True)
        return None
    # guard: workspace-files-read-unasked-stay-inside
    if not (full == base or base in full.parents):
        log.warning("%s leads out of the workspace (to %s); not read", given, full)
        return None
    got = read_head(full, limit)
    if got is None:  # a FIFO, a folder, a device: the user should find why the file was skipped
        log.warning("%s is not a regular file; not read", given)
        return None
    return got[0]
