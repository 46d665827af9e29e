"""Resource limits of every shell command, so that none can take the machine (or myrm) down: how many
processes, how much memory a process, how large a file, no core dumps. ``sandbox_exec.py`` applies them in
the command's own process before it becomes the command; everything it starts inherits them.

- processes (``limit_processes``): a pid cgroup made for the command, where this process may make one (a
  cgroup v1 ``pids`` hierarchy, or a v2 cgroup whose ``pids`` controller is delegated to its children);
  it counts this command's processes and threads alone, root's too. Elsewhere RLIMIT_NPROC, set to the
  uid's current count plus the limit (it counts every process of the uid, and the kernel never applies
  it to root: as root without a pid cgroup there is no process limit).
- memory (``limit_memory_mb``): RLIMIT_DATA, a process's private writable memory. Not RLIMIT_AS: the address
  space a runtime only reserves counts there (``java -version`` needs 4 GiB of it, ``node -e 1`` 1 GiB;
  under RLIMIT_DATA 512 MiB and 256 MiB). Not a memory cgroup: this machine's belong to whatever runs
  myrm. Per process: a command's processes together may use more (the pid limit bounds how many).
- file size (``limit_file_size_mb``): RLIMIT_FSIZE; a write past it fails (EFBIG) and SIGXFSZ ends the
  writer ("File size limit exceeded").
- core dumps: none (RLIMIT_CORE 0), always.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
import signal
from dataclasses import dataclass, field
from pathlib import Path

from myrm_tui.config import DEFAULT_FILE_SIZE_MB, half_the_memory_mb, processes_for

log = logging.getLogger(__name__)

MIB = 1 << 20
SIGXFSZ = 25
_serial = itertools.count()


@dataclass(frozen=True)
class Limits:
    """One command's limits (0: none of that kind); by default the settings' defaults."""

    processes: int = field(default_factory=lambda: processes_for(os.cpu_count()))
    memory_mb: int = field(default_factory=half_the_memory_mb)
    file_size_mb: int = DEFAULT_FILE_SIZE_MB

    @classmethod
    def of(cls, processes: int, memory_mb: int, file_size_mb: int) -> Limits | None:
        """The settings' limits; None when all three are 0 (commands start without the wrapper)."""
        return cls(processes, memory_mb, file_size_mb) if processes or memory_mb or file_size_mb else None

    def rlimits(self) -> dict[str, str]:
        """``sandbox_exec``'s ``--limit`` items: NAME -> amount."""
        out = {"core": "0"}
        if self.memory_mb:
            out["data"] = str(self.memory_mb * MIB)
        if self.file_size_mb:
            out["fsize"] = str(self.file_size_mb * MIB)
        return out


def _own_cgroup(version: str) -> str | None:
    """This process's cgroup path in the v1 ``pids`` hierarchy (``version`` "1") or the v2 one ("2")."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if (version == "1" and "pids" in controllers.split(",")) or (
            version == "2" and line.startswith("0::")
        ):
            return path
    return None


def pid_cgroup_parent() -> Path | None:
    """The cgroup folder under which this process may make a pid cgroup, or None."""
    v1 = _own_cgroup("1")
    if v1 is not None:
        folder = Path("/sys/fs/cgroup/pids") / v1.lstrip("/")
        return folder if os.access(folder, os.W_OK) else None
    v2 = _own_cgroup("2")
    if v2 is None:
        return None
    folder = Path("/sys/fs/cgroup") / v2.lstrip("/")
    try:
        delegated = "pids" in (folder / "cgroup.subtree_control").read_text().split()
    except OSError:
        return None
    return folder if delegated and os.access(folder, os.W_OK) else None


@dataclass
class PidCgroup:
    """A pid cgroup made for one command."""

    path: Path

    def hit(self) -> bool:
        """A fork was refused for the limit."""
        try:
            for line in (self.path / "pids.events").read_text().splitlines():
                name, _, count = line.partition(" ")
                if name == "max" and count.strip() != "0":
                    return True
        except OSError:
            pass
        return False

    def pids(self) -> list[int]:
        try:
            return [int(p) for p in (self.path / "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
            return []

    def live(self) -> list[int]:
        """Its processes that have not exited (a zombie waits for its parent, but has ended)."""
        out = []
        for pid in self.pids():
            try:
                with open(f"/proc/{pid}/stat", "rb") as f:
                    if f.read().rsplit(b")", 1)[1].split()[0] != b"Z":
                        out.append(pid)
            except (OSError, IndexError):
                continue
        return out

    async def kill(self, wait: float = 2.0) -> int:
        """SIGKILL every process in it, and the children a process forks while it is killed (the limit
        bounds how many), until none is left or ``wait`` seconds passed; how many were killed."""
        loop = asyncio.get_running_loop()
        ends = loop.time() + wait
        killed: set[int] = set()
        while pids := self.live():
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
                    killed.add(pid)
            if loop.time() > ends:
                log.warning("%d processes of %s outlived SIGKILL for %.0f s", len(pids), self.path, wait)
                break
            await asyncio.sleep(0.005)  # the kernel ends a killed process asynchronously
        return len(killed)

    def remove(self) -> bool:
        """Remove it (possible once no process is left in it)."""
        try:
            self.path.rmdir()
            return True
        except FileNotFoundError:
            return True
        except OSError:
            return False


def make_pid_cgroup(limit: int) -> PidCgroup | None:
    """A new pid cgroup allowing ``limit`` tasks, or None where none can be made."""
    parent = pid_cgroup_parent()
    if parent is None or limit <= 0:
        return None
    path = parent / f"myrm-{os.getpid()}-{next(_serial)}"
    try:
        path.mkdir()
    except OSError:
        log.warning("could not make a pid cgroup in %s", parent, exc_info=True)
        return None
    try:
        (path / "pids.max").write_text(str(limit))
    except OSError:
        log.warning("could not set the pid limit of %s", path, exc_info=True)
        with contextlib.suppress(OSError):
            path.rmdir()
        return None
    return PidCgroup(path)


# What a process that could not get memory prints: libc's ENOMEM, Python, C++, node, AddressSanitizer
# (whose terabytes of shadow memory no memory limit allows: limit_memory_mb = 0 for such builds)
OUT_OF_MEMORY = (
    "Cannot allocate memory",
    "MemoryError",
    "bad_alloc",
    "out of memory",
    "failed to allocate",
)


def limit_notes(limits: Limits, code: int, text: str, processes_hit: bool) -> list[str]:
    """One line for each limit the command's end shows it reached: which limit and how to raise it."""
    notes = []
    # A limit's message in the output of a command that succeeded (cat of an old log, grep over sources) is
    # text it showed, not a limit it reached: text is a sign only when the command failed.
    # guard: limits-no-note-for-a-command-that-succeeded
    failed = code != 0
    # guard: limits-say-which-limit-was-reached
    refused = "fork" in text and "Resource temporarily unavailable" in text  # bash's, without a pid cgroup
    if processes_hit or (limits.processes and failed and refused):
        notes.append(
            f"[stopped at the process limit: no more than {limits.processes} processes and threads "
            "(limit_processes in config.toml raises it, 0 = none)]"
        )
    if limits.file_size_mb and (code in (128 + SIGXFSZ, -SIGXFSZ) or (failed and "File too large" in text)):
        notes.append(
            f"[a write reached the file size limit of {limits.file_size_mb} MiB "
            "(limit_file_size_mb in config.toml raises it, 0 = none)]"
        )
    if limits.memory_mb and failed and any(m in text for m in OUT_OF_MEMORY):
        notes.append(
            f"[a process ran out of memory, perhaps at the limit of {limits.memory_mb} MiB a process "
            "(limit_memory_mb in config.toml raises it, 0 = none)]"
        )
    return notes
