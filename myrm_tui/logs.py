"""The package's log: stdlib ``logging`` to ``myrm.log`` in the state folder's log directory (beside the
embedded model's log). Nothing is logged to the terminal: the TUI owns it."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

LOGGER = "myrm_tui"
_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def log_path() -> Path:
    env = os.environ.get("MYRM_LOG")
    if env:
        return Path(env)
    from platformdirs import user_log_dir

    return Path(user_log_dir("myrm")) / "myrm.log"


def setup_logging(level: int = logging.INFO) -> Path:
    """Send the package's records to the log file (once per process; a failure to open it is not fatal)."""
    path = log_path()
    logger = logging.getLogger(LOGGER)
    if not any(getattr(h, "_myrm", False) for h in logger.handlers):
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            # guard: a-log-folder-this-user-may-not-write
            if not _writable(path):  # the file opens at the first record: there its failure was a traceback
                raise PermissionError(path)
            handler: logging.Handler = logging.FileHandler(path, encoding="utf-8", delay=True)
        except OSError:
            handler = logging.NullHandler()
        handler.setFormatter(logging.Formatter(_FORMAT))
        handler._myrm = True  # type: ignore[attr-defined]
        logger.addHandler(handler)
        logger.setLevel(level)
        logger.propagate = False
    return path


def root_records_logged_too() -> None:
    """Warnings and errors libraries log on the root logger (the ACP SDK's ``logging.exception`` for a
    request or notification it could not handle) go to the log file with their tracebacks, and still to
    stderr: without a root handler Python's last resort printed them to stderr alone. For ``myrm acp``,
    whose stderr an editor keeps apart; the full screen owns its terminal."""
    root = logging.getLogger()
    if any(getattr(h, "_myrm", False) for h in root.handlers):
        return
    to_stderr = logging.StreamHandler()  # sys.stderr when a record comes, as the last resort wrote
    to_stderr.setFormatter(logging.Formatter(_FORMAT))
    to_stderr._myrm = True  # type: ignore[attr-defined]
    for handler in [*logging.getLogger(LOGGER).handlers, to_stderr]:
        if getattr(handler, "_myrm", False):
            root.addHandler(handler)
    root.setLevel(logging.WARNING)  # what the last resort printed: no library's info or debug


def _writable(path: Path) -> bool:
    """Whether this user may append to ``path`` (or make it): a log folder made by another user (``sudo
    myrm`` once, a home shared with a service account) ended ``myrm`` with a traceback at its first record,
    before the one line that said what was wrong."""
    if path.exists():
        return os.access(path, os.W_OK, effective_ids=True)
    return os.access(path.parent, os.W_OK | os.X_OK, effective_ids=True)


@contextmanager
def failure_logged(logger: logging.Logger, what: str, level: int = logging.WARNING) -> Iterator[None]:
    """Go on past a failure of the block (as ``contextlib.suppress(Exception)``), but log it with its
    traceback: a cleanup that must not stop the caller still leaves a trace of why it failed."""
    try:
        yield
    except Exception:
        logger.log(level, "%s failed", what, exc_info=True)
