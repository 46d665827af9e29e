"""The OS sandbox of shell commands: which profile a command runs in and what each one allows
(``sandbox_exec.py`` applies it in the command's own process, before bash starts).

The ``sandbox`` setting:

- ``"read-only-auto"`` (the default): a command that runs without asking because it only reads (the
  ``READ_ONLY`` commands of ``permissions.py``, all of its parts) runs in the **read-only** profile: the
  whole filesystem read-only but a private temp folder (``$TMPDIR``, removed afterwards) and ``/dev/null``;
  no network (Landlock refuses TCP bind/connect, a seccomp filter refuses every new socket, UDP and UNIX
  ones included, and io_uring); none of the home folder outside the workspace (its dot-folders even when
  the workspace is the home folder), ``/root``, ``/home``, myrm's database, logs and config, nor another
  process's ``/proc`` entry (its environment holds its keys); no signal to a process outside the sandbox;
  no device but null, zero, full, random and urandom (a terminal's path, a disk's as root); no temp
  file but its own (``/tmp``, ``/var/tmp`` hidden: a Kerberos ticket cache, another command's files);
  as root, nothing in ``/etc`` only root may read (shadow, ssh host keys). Its ``PATH`` has no
  relative folder and none in the workspace (``read_only_path``): ``cat`` is never a workspace's program.
  Secret-looking environment variables (``*KEY*``, ``*TOKEN*``, ``*SECRET*``…) are dropped. Commands the
  user approved (an ``allowed_commands`` rule, "yes", "always", ``approval = "auto"``) run unconfined.
- ``"workspace-write"``: as above, and approved commands run in the **workspace-write** profile: writes
  only in the workspace, the temp folder, ``/dev/null`` and ``/dev/shm``; reads and network as the user
  has them (the user saw the command: a ``git push`` needs ``~/.ssh`` and the network).
- ``"off"``: no OS sandbox; the permission rules alone decide, as before.

Where the kernel offers no Landlock (old kernels, macOS, containers that forbid it) or this machine's
seccomp numbers are unknown, ``support()`` says why, doctor and the side panel show it, and every shell
command asks first, since none can be confined (``approval = "auto"`` still runs everything, as chosen).
"""

from __future__ import annotations

import functools
import os
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from myrm_tui.agent import sandbox_exec
from myrm_tui.agent.limits import Limits
from myrm_tui.paths import home_dot_entries as _home_dot_entries
from myrm_tui.paths import myrm_files as _myrm_files

MODES = ("read-only-auto", "workspace-write", "off")
READ_ONLY = "read-only"
WORKSPACE_WRITE = "workspace-write"
UNCONFINED = "unconfined"  # no Landlock or seccomp: the resource limits alone (limits.py)
EXEC_FILE = sandbox_exec.__file__
# Environment variables a read-only command never needs and a hostile one would print: provider keys,
# tokens, passwords (``GIT_ASKPASS`` too: it names a program).
# The devices a read-only command may open besides /dev/null (written): they hold nothing. Every other
# one is hidden: a terminal (``/dev/pts/N``, myrm's own) would give away the keys the user types next.
HARMLESS_DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")
SECRET_ENV = ("KEY", "TOKEN", "SECRET", "PASSW", "CREDENTIAL", "AUTH", "COOKIE", "SESSION", "ASKPASS")


@dataclass(frozen=True)
class Support:
    """Whether commands can be confined here: the Landlock ABI and, when they cannot, why."""

    abi: int
    missing: str = ""  # why there is no sandbox ("" when there is one)

    @property
    def available(self) -> bool:
        return not self.missing

    def line(self, mode: str) -> str:
        """One line for doctor and the side panel."""
        if mode == "off":
            return 'off (sandbox = "off": read-only commands run unasked and unconfined)'
        if not self.available:
            return f"UNAVAILABLE ({self.missing}): every shell command asks first"
        return f"{mode} (Landlock ABI {self.abi} + seccomp)"


@functools.cache
def support() -> Support:
    """Landlock and a seccomp filter for this machine, probed once per process."""
    if sys.platform != "linux":
        return Support(0, f"Landlock is Linux only, this is {sys.platform}")
    abi = sandbox_exec.landlock_abi()
    if abi < 1:
        return Support(0, "the kernel offers no Landlock")
    if sandbox_exec.seccomp_arch() is None:
        return Support(abi, "no seccomp filter for this CPU architecture")
    return Support(abi)


def no_sandbox_reason(mode: str) -> str | None:
    """Why every command must ask (a sandbox is wanted and there is none), else None."""
    if mode == "off" or support().available:
        return None
    return f"no OS sandbox here ({support().missing}): every command asks"


def profile_for(mode: str, read_only: bool) -> str | None:
    """The profile of a command that runs: ``read_only`` when it runs unasked because it only reads."""
    if mode == "off" or not support().available:
        return None
    # guard: sandbox-unasked-read-only-commands-run
    if read_only:
        return READ_ONLY
    return WORKSPACE_WRITE if mode == "workspace-write" else None


def _user_settings(home: Path) -> list[str]:
    """The user's settings files of the read-only commands: git's (not its credentials file) and
    ripgrep's."""
    xdg = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config") / "git"
    files = [home / ".gitconfig", xdg / "config", xdg / "ignore", xdg / "attributes"]
    if os.environ.get("RIPGREP_CONFIG_PATH"):
        files.append(Path(os.environ["RIPGREP_CONFIG_PATH"]))
    return [str(f) for f in files]


def _git_dirs(workspace: Path) -> list[str]:
    """The repository of a workspace that is a linked worktree or a repository's subfolder: its git
    folder may lie in the hidden home folder (``~/proj/.git`` for ``~/proj-wt``)."""
    from myrm_tui.agent.permissions import git_dirs

    try:
        # Only a git folder: a downloaded repository's `.git` may name any folder (`gitdir: ~`), and what
        # is granted here is readable however hidden it is.
        # guard: sandbox-only-a-git-folder-is-granted
        return [str(d) for d in git_dirs(workspace) if _is_git_folder(d)]
    except (OSError, ValueError, RuntimeError):
        return []


def _is_git_folder(d: Path) -> bool:
    """``d`` holds what git's own folder holds: ``HEAD``, and ``objects`` (or, in a linked worktree's,
    ``commondir``)."""
    return (d / "HEAD").is_file() and ((d / "objects").is_dir() or (d / "commondir").is_file())


TEMP_FOLDERS = ("/tmp", "/var/tmp")
SAFE_PATH = ("/usr/bin", "/bin")
SYSTEM_SECRETS = "/etc"  # the folder whose owner-only entries are hidden (two levels: /etc/ssl/private)


def _owner_only(root: str, depth: int = 2) -> list[str]:
    """The entries under ``root`` (``depth`` levels) that not every user may read."""
    out: list[str] = []
    try:
        entries = list(os.scandir(root))
    except OSError:
        return out
    for e in entries:
        try:
            mode = e.stat(follow_symlinks=False).st_mode
        except OSError:
            continue
        if e.is_symlink():
            continue  # what it points to is granted, or not, where it lies
        # guard: sandbox-what-only-root-reads-in-etc
        if not mode & 0o004:
            out.append(e.path)
        elif depth > 1 and e.is_dir(follow_symlinks=False):
            out += _owner_only(e.path, depth - 1)
    return out


def read_only_path(workspace: Path) -> dict[str, str]:
    """``PATH`` for a command that runs unasked, without a relative folder (``.``, an empty entry) or
    one in the workspace (``./bin``, ``node_modules/.bin``): by them a read-only name (``cat``) would run
    a program the workspace holds, which a model may have written. Empty when nothing is dropped."""
    parts = os.environ.get("PATH", os.defpath).split(os.pathsep)
    real = workspace.resolve()

    def kept(entry: str) -> bool:
        if not os.path.isabs(entry):
            return False
        where = Path(os.path.realpath(entry))
        return not (where == real or real in where.parents)

    keep = [p for p in parts if kept(p)]
    if keep == parts:
        return {}
    return {"PATH": os.pathsep.join(keep or SAFE_PATH)}  # an empty PATH is the current folder again


def _holds_any(folder: str, paths: Sequence[str]) -> bool:
    """``folder`` (a real path) is one of ``paths`` (real paths) or holds one."""
    prefix = folder.rstrip("/") + "/"
    return any(p == folder or p.startswith(prefix) for p in paths)


@dataclass(frozen=True)
class Confinement:
    """One command's sandbox: its profile, the workspace, environment to set inside, and its resource
    limits (None: none)."""

    profile: str
    workspace: Path
    env: Mapping[str, str] = field(default_factory=dict)
    limits: Limits | None = None

    def spec(self, tmp: Path | None, cgroup: Path | None = None) -> dict[str, object]:
        """What ``sandbox_exec`` applies, for a command whose private temp folder is ``tmp`` (None for the
        unconfined profile, which has none) and whose pid cgroup is ``cgroup`` (None: RLIMIT_NPROC)."""
        spec = self._profile(tmp)
        if self.limits is not None:
            rlimits = self.limits.rlimits()
            if cgroup is not None:
                spec["cgroup"] = [str(cgroup)]
            elif self.limits.processes:
                rlimits["nproc"] = str(self.limits.processes)
            spec["limits"] = rlimits
        return spec

    def _profile(self, tmp: Path | None) -> dict[str, object]:
        if self.profile == UNCONFINED or tmp is None:
            return {"landlock": False, "setenv": dict(self.env)}
        env = {"TMPDIR": str(tmp), "TMP": str(tmp), "TEMP": str(tmp), **self.env}
        if self.profile == WORKSPACE_WRITE:
            # guard: sandbox-workspace-write-writes
            return {
                "read": ["/"],
                "write": [str(self.workspace), str(tmp), "/dev/null", "/dev/shm"],
                "network": True,
                "setenv": env,
            }
        home = Path(os.environ.get("HOME") or "/").resolve()
        hidden = ["/root", "/home", *([str(home)] if home != Path("/") else [])]
        # other programs' temp files (a Kerberos ticket cache, another command's temp folder): the command
        # has its own; and what only root may read in /etc (shadow, ssh host keys, ssl/private) when it
        # runs as root
        # guard: sandbox-no-temp-folder-but-its-own
        hidden += [
            *TEMP_FOLDERS,
            tempfile.gettempdir(),
            *(_owner_only(SYSTEM_SECRETS) if os.geteuid() == 0 else []),
        ]
        # hidden even inside the workspace (myrm run in `/` or in the home folder); /proc keeps the
        # system's entries, not another process's (its environment holds its keys)
        # guard: sandbox-myrms-database-and-logs-are
        # guard: sandbox-other-processes-proc-entries
        always = ["/proc", *_myrm_files(), *_home_dot_entries(home, self.workspace)]
        # no device but those that hold nothing: a terminal by its path (/dev/pts/N, myrm's own) gives
        # away the keys typed next, and as root a disk holds every file hidden here
        # guard: sandbox-no-terminal-or-device
        always.append("/dev")
        # a PATH folder that holds a hidden one (`~`, `/`) would make it readable again: not those
        real_hidden = [os.path.realpath(h) for h in hidden + always]
        path_dirs = [
            d
            for d in os.environ.get("PATH", "").split(os.pathsep)
            # guard: sandbox-a-path-folder-does-not-make
            if os.path.isabs(d) and not _holds_any(os.path.realpath(d), real_hidden)
        ]
        # guard: sandbox-the-home-folder-is-hidden
        return {
            "read": ["/"],
            "hidden": hidden,
            # readable again: the workspace, the folders of the programs a command runs (~/.local/bin),
            # and the user's own settings of those programs (git fails on an unreadable ~/.gitconfig)
            "read_more": [
                str(self.workspace),
                *path_dirs,
                *_user_settings(home),
                *_git_dirs(self.workspace),
                *HARMLESS_DEVICES[1:],  # /dev/null is written
            ],
            "hidden_always": always,
            "write": [str(tmp), "/dev/null"],
            "network": False,
            "setenv": env,
            # guard: sandbox-secret-looking-variables-dropped
            "drop_env": list(SECRET_ENV),
        }

    def argv(self, argv: Sequence[str], tmp: Path | None, cgroup: Path | None = None) -> list[str]:
        """``argv`` run through the sandbox wrapper (an isolated interpreter, stdlib only)."""
        spec = self.spec(tmp, cgroup)
        return [sys.executable, "-I", "-S", EXEC_FILE, *sandbox_exec.encode(spec), "--", *argv]
