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
