"""The tool protocol, tool results, and workspace confinement shared by every tool."""

from __future__ import annotations

import errno
import logging
import os
import stat
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from myrm_tui.agent.limits import Limits
from myrm_tui.agent.permissions import Assessment, CommandRules
from myrm_tui.agent.proc import decode_output  # noqa: F401  (re-exported: its old home)
from myrm_tui.agent.tools.errors import ToolError
from myrm_tui.context.edits import StateEdit
from myrm_tui.context.steps.reread import FileIntegrityGuard
from myrm_tui.context.vault import ArtifactVault
from myrm_tui.paths import private_in, private_paths

if TYPE_CHECKING:
    from myrm_tui.agent.tools.job_manager import JobManager
    from myrm_tui.store.history import Hit

log = logging.getLogger(__name__)


@dataclass
class ToolResult:
    content: str
    is_error: bool = False
    meta: dict[str, Any] = field(default_factory=dict)
    images: list[dict[str, Any]] = field(default_factory=list)  # image_url parts, after the text
    # What the call asks of the context state (a note, a handover): applied by the session once the
    # result is stored, never by the tool itself (``context/edits.py``).
    edits: tuple[StateEdit, ...] = ()


# The user's answer to a command the rules do not cover; "always" remembers its commands for the session.
Approval = Literal["yes", "no", "always", "unattended"]  # unattended: no one to ask (myrm ask)
# (tool, command, assessment) -> the answer.
Approver = Callable[[str, str, Assessment], Awaitable[Approval]]
# A task for a child agent -> its distilled result (``agent/subagents.py``).
Spawn = Callable[[str], Awaitable["ToolResult"]]
# (resolved path, content before or None if it did not exist, content after, call id) -> kept for /undo.
KeepFile = Callable[[Path, str | None, str, str], Awaitable[None]]
# (query, limit) -> the session history's best hits (``store/history.py``).
HistorySearch = Callable[[str, int], Awaitable[Sequence["Hit"]]]


class EditorFiles(Protocol):
    """The files of an editor that drives myrm (``myrm acp``): what it shows, unsaved changes included."""

    async def read_text(self, full: Path) -> str | None:
        """The file's text as the editor has it, or None when the editor cannot say (read it from disk)."""
        ...

    async def write_text(self, full: Path, text: str) -> bool:
        """Write through the editor (its buffer and the disk); False when it cannot (write to disk)."""
        ...


@dataclass
class ToolContext:
    workspace: Path
    vault: ArtifactVault
    notes: Callable[[], Sequence[str]] = tuple  # the session's notes now (read-only)
    integrity: FileIntegrityGuard = field(default_factory=FileIntegrityGuard)
    approver: Approver | None = None
    auto_approve: bool = False
    allowed_commands: CommandRules = field(default_factory=CommandRules)
    sandbox: str = "read-only-auto"  # config ``sandbox``: the OS sandbox of shell commands (agent/sandbox.py)
    # config ``shell_env_keep``: the secret-looking environment variables shell commands still get
    env_keep: frozenset[str] = frozenset()
    bash_timeout: float = 120.0
    limits: Limits | None = field(default_factory=Limits)  # each shell command's (agent/limits.py)
    max_output_bytes: int = 2_000_000
    extra_vault_namespaces: set[str] = field(default_factory=set)  # parents (forks) and children (subagents)
    # A parent's entries only up to when this session's line was forked from it (``Store.forked_at``).
    vault_until: dict[str, float] = field(default_factory=dict)
    jobs: JobManager | None = None  # background shell jobs; None where they are not allowed
    job_output_chars: int = 30_000  # new job output over this goes to the vault (output spill)
    subagent: Spawn | None = None  # runs a task in a child session; None in a child (no grandchildren)
    on_output: Callable[[str], None] | None = None  # a running call's output tail, for the live view
    files: EditorFiles | None = None  # an editor's view of the files (``myrm acp``); None: the disk alone
    history: HistorySearch | None = None  # history_search over the store; None where it has none
    keep_file: KeepFile | None = None  # a file's content before a file tool changes it (``agent/undo.py``)
    call_id: str = ""  # the running call's (set per call by the tool runner)
    # Held while the call asks the user: the questions of one reply come in its calls' order (tool runner).
    # A tool checks its grants again inside it: an "always" given meanwhile may answer this call too.
    asking: Callable[[], AbstractAsyncContextManager[object]] = nullcontext
    done_asking: Callable[[], None] = lambda: None  # the call asks nothing more: later ones need not wait


class Tool(Protocol):
    name: str
    description: str
    parameters: dict[str, Any]

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult: ...


def schema(tool: Tool) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": tool.name, "description": tool.description, "parameters": tool.parameters},
    }


def resolve_in_workspace(root: Path, path: str) -> Path:
    """``path`` resolved inside ``root``; symlinks are followed, so a link out of the root is refused too."""
    # a name all blanks is a name only when such a file is there (glob lists it)
    if not path or (not path.strip() and not os.path.lexists(root / path)):
        raise ToolError("a path is required")
    if "\x00" in path:
        raise ToolError("path contains a NUL byte")
    base = workspace_root(root)
    candidate = Path(os.path.expanduser(path))
    # guard: a-loop-of-links-is-one-line
    try:
        full = (candidate if candidate.is_absolute() else base / candidate).resolve()
    except RuntimeError as exc:  # Python 3.11's resolve raises it for a loop of links
        raise ToolError(f"{path!r} is a loop of symbolic links; it leads nowhere") from exc
    if not inside(base, full):
        raise ToolError(f"{path!r} is outside the workspace ({base}); tools may only touch files inside it")
    if private_in(full, private_paths(base)) is not None:
        log.info("a tool was refused %s: myrm's own file or a home dot-folder", full)
        raise ToolError(
            f"{path!r} is myrm's own data (its database, log or config) or the home folder's private "
            "settings; tools do not read or change it"
        )
    return full


def workspace_root(workspace: Path) -> Path:
    """The workspace folder resolved, or a ``ToolError`` when it is no longer a folder (deleted or renamed
    while myrm runs): a tool must not read, search, run or write in a folder made anew at its path."""
    base = workspace.resolve()
    # guard: a-workspace-that-is-gone-is-not
    if not base.is_dir():
        log.warning("the workspace %s is gone (deleted or renamed); the tool call is refused", workspace)
        raise ToolError(
            f"the workspace {workspace} is no longer there (deleted or renamed since myrm started); "
            "nothing was read, run or written. Restart myrm in the project's folder"
        )
    return base


def inside(base: Path, full: Path) -> bool:
    """Whether the resolved ``full`` is ``base`` (resolved) or below it."""
    # guard: workspace-confinement
    return full == base or base in full.parents


def confined(base: Path, path: Path) -> Path | None:
    """``path`` resolved (every symlink followed), or None when that leads outside ``base``."""
    try:
        full = path.resolve()
    except (OSError, RuntimeError):  # a symlink loop, an unreadable folder
        return None
    return full if inside(base, full) else None


_KINDS = (
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a directory"),
)


def not_regular(mode: int) -> str | None:
    """What a file of ``mode`` is when it is not a regular file ("a named pipe (FIFO)"...), else None."""
    # guard: only-regular-files-are-read
    return next(
        (name for test, name in _KINDS if test(mode)), None if stat.S_ISREG(mode) else "not a regular file"
    )


def read_regular(full: Path, shown: str, max_bytes: int) -> bytes:
    """The bytes of the regular file ``full`` (blocking: call it in a thread).

    Anything else is refused with a ``ToolError`` before it can block: a FIFO would wait for a writer
    forever, a device may never end. The file is opened non-blocking and checked again on the open
    descriptor, so one swapped in after the first check is refused too."""
    try:
        kind = not_regular(os.stat(full).st_mode)
        if kind is None:
            fd = os.open(full, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
            try:
                st = os.fstat(fd)
                kind = not_regular(st.st_mode)
                if kind is None:
                    if st.st_size > max_bytes:
                        raise ToolError(f"{shown}: file is {st.st_size:,} bytes; too large to read whole")
                    with os.fdopen(fd, "rb", closefd=False) as f:
                        return f.read(max_bytes + 1)[:max_bytes]
            finally:
                os.close(fd)
    except FileNotFoundError as exc:
        raise ToolError(f"{shown}: no such file") from exc
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # opening a socket
            kind = "a socket"
        else:
            raise ToolError(f"{shown}: cannot read: {exc.strerror or exc}") from exc
    raise ToolError(f"{shown} is {kind}, not a regular file; only regular files can be read")
