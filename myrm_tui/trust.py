"""Which folders may configure myrm themselves: a folder's own configuration (today its filter rules,
``.myrm/filters/*.yaml``) is honoured only in a folder the user trusted.

A cloned repository is someone else's: its filter rules decide which lines of command output the model
sees (a rule can hide a failing test or a warning). As Claude Code and Codex CLI do, the full screen asks
once per folder ("trust this folder?") and remembers the answer in the user's config folder
(``trusted-folders.json`` beside ``config.toml``); ``myrm ask`` and ``myrm acp`` have nobody to ask: a
folder is untrusted there unless it was trusted before, ``--trust`` is given or the ``trust_workspace``
setting is true. An untrusted folder's configuration is skipped with a one-line notice naming it.

Not gated, by design: hooks, MCP servers and every other setting are read only from the user's own config,
environment and database, never from the workspace; ``AGENTS.md`` / ``CLAUDE.md`` are prompt text the model
reads as it would read any file of the workspace (``docs/permissions.md`` says why).
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from pathlib import Path

from myrm_tui.paths import config_file

log = logging.getLogger(__name__)

WORKSPACE_FILTERS = Path(".myrm") / "filters"


def trust_file() -> Path:
    """The remembered answers: beside the config file (``$MYRM_CONFIG`` moves both)."""
    return config_file().with_name("trusted-folders.json")


def workspace_config(workspace: Path) -> list[Path]:
    """The configuration files ``workspace`` provides itself (what trusting it would honour)."""
    folder = workspace / WORKSPACE_FILTERS
    try:
        return sorted(p for p in folder.glob("*.y*ml") if p.is_file()) if folder.is_dir() else []
    except OSError:
        log.warning("cannot list %s", folder, exc_info=True)
        return []


def _key(workspace: Path) -> str:
    return str(workspace.resolve())


def _answers() -> dict[str, bool]:
    path = trust_file()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError):
        log.warning("%s cannot be read: no folder counts as trusted", path, exc_info=True)
        return {}
    folders = data.get("folders") if isinstance(data, dict) else None
    if not isinstance(folders, dict):
        log.warning('%s: expected {"folders": {path: true|false}}; no folder counts as trusted', path)
        return {}
    return {str(k): v for k, v in folders.items() if isinstance(v, bool)}


def remembered(workspace: Path) -> bool | None:
    """The user's answer for this folder: True (trusted), False (not), None (never asked)."""
    return _answers().get(_key(workspace))


def remember(workspace: Path, trusted: bool) -> None:
    """Store the answer for this folder (the file is rewritten whole, atomically, mode 0600)."""
    answers = _answers()
    answers[_key(workspace)] = trusted
    path = trust_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".trusted-folders.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump({"folders": answers}, f, indent=2, sort_keys=True)
            f.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def is_trusted(workspace: Path, setting: bool = False) -> bool:
    """Whether ``workspace``'s own configuration is honoured: ``setting`` (``trust_workspace``, ``--trust``)
    or the user trusted this folder before."""
    # guard: trust-an-unasked-folder-is-untrusted
    return setting or remembered(workspace) is True


def skipped_notice(workspace: Path, files: list[Path]) -> str:
    """One line naming what an untrusted folder's configuration was, and how to honour it."""
    names = ", ".join(str(p.relative_to(workspace)) for p in files[:3])
    more = f" and {len(files) - 3} more" if len(files) > 3 else ""
    return (
        f"This folder is not trusted: its filter rules ({names}{more}) were skipped. Trust it in the full "
        "screen (`myrm` there asks once), or pass --trust to `myrm ask` / `myrm acp`."
    )
