"""Where things live: the database (platformdirs), the prompts folder, user config and filter folders."""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

from platformdirs import user_config_dir, user_data_dir

APP = "myrm"


def prompts_dir() -> Path:
    """Where the prompts are: ``MYRM_PROMPTS_DIR``, else inside the installed package (a wheel maps
    the top-level ``prompts/`` to ``myrm_tui/prompts``), else the checkout's ``prompts/`` beside it."""
    env = os.environ.get("MYRM_PROMPTS_DIR")
    if env:
        return Path(env)
    here = Path(__file__).resolve().parent
    packaged = here / "prompts"
    return packaged if (packaged / "identity.md").is_file() else here.parent / "prompts"


def default_db_path() -> Path:
    env = os.environ.get("MYRM_DB")
    return Path(env) if env else Path(user_data_dir(APP)) / "myrm.db"


def jobs_dir(db_path: str, session_id: str) -> Path:
    """Where a session's background-job logs go: beside the database (a temp folder for ``:memory:``)."""
    base = (
        Path(db_path).parent
        if db_path and db_path != ":memory:"
        else Path(tempfile.gettempdir()) / f"myrm-{os.getuid()}"
    )
    return base / "jobs" / session_id


def config_file() -> Path:
    env = os.environ.get("MYRM_CONFIG")
    return Path(env) if env else Path(user_config_dir(APP)) / "config.toml"


# Every database this process opened (``--db`` names one that is not the default): myrm's files too.
_DATABASES: set[str] = set()


def note_database(path: str) -> None:
    """``path`` is a database myrm opened: private like the default one (``myrm_files``)."""
    if path != ":memory:":
        _DATABASES.add(os.path.abspath(path))


def myrm_files() -> list[str]:
    """myrm's own folders and files: the databases (with their journals), the log, the config and the
    trusted folders' list beside it."""
    from platformdirs import user_log_dir

    from myrm_tui.logs import log_path

    out = [user_data_dir(APP), user_log_dir(APP), user_config_dir(APP), str(config_file()), str(log_path())]
    out.append(str(config_file().with_name("trusted-folders.json")))
    for db in sorted({str(default_db_path()), *_DATABASES} - {":memory:"}):
        out += [db + suffix for suffix in ("", "-wal", "-shm", "-journal", "-writer.lock")]
    return out


def home_dot_entries(home: Path, workspace: Path) -> list[str]:
    """The home folder's dot-entries, when the workspace holds the home folder (one inside the workspace
    is still the user's: ``~/.ssh``), except one that holds the workspace."""
    # guard: sandbox-home-dot-folders-hidden-when
    if not (workspace == home or workspace in home.parents):
        return []
    try:
        entries = [e for e in os.scandir(home) if e.name.startswith(".")]
    except OSError:
        return []
    return [e.path for e in entries if not (workspace == Path(e.path) or Path(e.path) in workspace.parents)]


def private_paths(workspace: Path) -> list[Path]:
    """What the agent's tools never touch and no command runs unasked on, though it lies inside the
    workspace (myrm run in the home folder, or ``MYRM_DB`` in the project): myrm's own files (the database
    holds every session and every output, the config may hold a provider key) and, when the workspace is
    the home folder, its dot-entries (``~/.ssh``, ``~/.aws``), as the sandbox hides them. Resolved, and
    only those inside the workspace (resolved)."""
    base = workspace.resolve()
    home = Path(os.environ.get("HOME") or "/").resolve()
    out = []
    for entry in [*myrm_files(), *home_dot_entries(home, base)]:
        full = Path(os.path.realpath(entry))
        if full == base or base in full.parents:
            out.append(full)
    return out


def private_in(full: Path, private: list[Path]) -> Path | None:
    """The entry of ``private`` (``private_paths``) that ``full`` (resolved) is or lies under, or None."""
    # guard: myrms-own-files-are-private-in-the-workspace
    return next((p for p in private if full == p or p in full.parents), None)


def user_filter_dirs(workspace: Path, *, trusted: bool) -> list[Path]:
    """The user's filter-rule folder, and the workspace's own when the folder is trusted (``trust.py``)."""
    mine = Path(user_config_dir(APP)) / "filters"
    # guard: trust-workspace-filters-only-when-trusted
    return [mine, workspace / ".myrm" / "filters"] if trusted else [mine]


def files_fingerprint(*roots: Path) -> str:
    """Cheap fingerprint of files under ``roots`` (path, size, mtime): changes when any file does."""
    h = hashlib.blake2b(digest_size=8)
    for root in roots:
        if root.is_file():
            paths = [root]
        elif root.is_dir():
            paths = sorted(p for p in root.rglob("*") if p.is_file())
        else:
            continue
        for p in paths:
            st = p.stat()
            h.update(f"{p}:{st.st_size}:{st.st_mtime_ns};".encode())
    return h.hexdigest()
