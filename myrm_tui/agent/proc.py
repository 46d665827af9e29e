"""Child processes of the tools: bounded capture (``run_captured``), killing a process group, decoding
output, and the reaper that ends every tool process when myrm dies.

Tool commands run in their own process group (``start_new_session``: the terminal's Ctrl+C goes to
myrm, which stops them itself). A ``kill -9`` of myrm gives it no chance to do so, and the groups would
be re-parented to init and run on. So the first tool process starts a tiny watcher
(this file run as a script) that holds the read end of a pipe from myrm: myrm tells it each
group (and each job-log folder) it owns and when it is gone. When myrm dies, however it dies, the
kernel closes the pipe; the watcher reads end-of-file, kills every group still registered, removes the
folders and exits. (PR_SET_PDEATHSIG would only reach the group's leader, not the commands it started,
and fires when the spawning *thread* ends.)

A command can leave its group and session (``setsid cmd &``, a daemon's double fork). So myrm makes
itself a child subreaper (``PR_SET_CHILD_SUBREAPER``): such an orphan is re-parented to myrm instead of
init, and stays findable. After each tool process ends, and every half second in the watcher, myrm's
children are listed from ``/proc`` and each one is recorded (pid and start time); at myrm's death
the watcher kills those still alive and every process of their sessions. Every tool process also
carries ``MYRM_TOOL_OWNER`` (myrm's pid and start time) in its environment, inherited by what it starts:
at myrm's death the watcher kills each process that has it, and every process of a session one of them
leads. A command waits at a gate until its group is registered, so one that clears its environment at
once (``exec env -i …``) is still known to the watcher. Not reached: a process that escapes, clears its
environment and then dies leaving children in a session it did not lead, within half a second of myrm's
death. Orphans that exit while myrm runs stay zombies until myrm exits (myrm does not reap processes it
did not start, so no exit status of its own children is stolen).
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import errno
import logging
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import AsyncIterator, Callable, Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from myrm_tui.aio import within

if TYPE_CHECKING:
    from myrm_tui.agent.limits import PidCgroup
    from myrm_tui.agent.sandbox import Confinement

READ_CHUNK = 65_536
LIVE_TAIL = 4_096  # bytes of the newest output given to the live view
SPILL_LIMIT = 50_000_000  # beyond this even the vault copy is cut
SHELL_ENV = {"PAGER": "cat", "GIT_PAGER": "cat", "TERM": "dumb"}
# Words (any case) of a secret-looking environment variable's name: provider keys (``OPENAI_API_KEY``,
# ``AWS_SECRET_ACCESS_KEY``), tokens (``HF_TOKEN``, ``GH_TOKEN``), passwords, credentials files. An agent's
# command never gets them from myrm's environment, whatever its sandbox, unless the user names them in
# ``shell_env_keep`` (as Codex's ``shell_environment_policy`` drops ``*KEY*``, ``*SECRET*``, ``*TOKEN*``):
# a prompt-injected model's ``echo $OPENAI_API_KEY`` or ``env | curl …`` finds nothing.
SECRET_WORDS = ("KEY", "TOKEN", "SECRET", "PASSW", "CREDENTIAL")
PR_SET_CHILD_SUBREAPER = 36
WATCH_POLL = 0.5  # seconds between the watcher's looks at myrm's children
OWNER_ENV = "MYRM_TOOL_OWNER"  # in every tool process's environment: which myrm started it

log = logging.getLogger(__name__)


def _proc_stat(pid: int | str) -> tuple[int, int, int, str] | None:
    """(ppid, session id, start time in clock ticks, state) of ``pid`` from ``/proc``, or None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return int(fields[1]), int(fields[3]), int(fields[19]), fields[0].decode()


def _pids() -> list[str]:
    """Every process's ``/proc`` entry (none where there is no ``/proc``)."""
    return [e for e in os.listdir("/proc") if e.isdigit()] if os.path.isdir("/proc") else []


def children_of(owner: int) -> list[tuple[int, int]]:
    """(pid, start time) of every live process whose parent is ``owner``."""
    out = []
    for entry in _pids():
        if (st := _proc_stat(entry)) and st[0] == owner and st[3] != "Z":
            out.append((int(entry), st[2]))
    return out


def owner_tag() -> str:
    """This process's mark in the environment of its tool processes: pid and start time (a pid alone may
    be reused by the time the watcher looks)."""
    st = _proc_stat(os.getpid()) if os.path.isdir("/proc") else None
    return f"{os.getpid()}-{st[2] if st else 0}"


def _tagged(tag: str, name: str = OWNER_ENV) -> list[int]:
    """Every process whose environment carries ``name=tag`` (by default ``OWNER_ENV``: what myrm's tools
    started), inherited down to grandchildren, in or out of their group."""
    want = f"{name}={tag}".encode()
    out = []
    for entry in _pids():
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                env = f.read()
        except OSError:
            continue
        if want in env.split(b"\0"):
            out.append(int(entry))
    return out


def kill_marked(tag: str, name: str = OWNER_ENV, spare: int = 0) -> int:
    """SIGKILL every process but ``spare`` whose environment carries ``name=tag``, and every process in a
    session one of them leads (a tool's command leads its own: a member that cleared its environment,
    ``env -i``, carries no mark); how many marked ones there were."""
    pids = [pid for pid in _tagged(tag, name) if pid != spare]
    sessions = {pid for pid in pids if (st := _proc_stat(pid)) is not None and st[1] == pid}
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    # guard: the-marked-kill-ends-the-sessions-marked
    _kill_sessions(sessions, spare)
    return len(pids)


def _kill_sessions(sessions: set[int], spare: int = 0) -> None:
    """SIGKILL every process (but ``spare``) in one of ``sessions``."""
    if not sessions:
        return
    for entry in _pids():
        if (st := _proc_stat(entry)) and st[1] in sessions and int(entry) != spare:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(int(entry), signal.SIGKILL)


def holders_of(fd: int) -> list[int]:
    """Every process but this one that holds the pipe ``fd`` is an end of (by its ``/proc`` fd links)."""
    try:
        want = f"pipe:[{os.fstat(fd).st_ino}]"
    except OSError:
        return []
    out = []
    for entry in _pids():
        if int(entry) == os.getpid():
            continue
        try:
            links = os.listdir(f"/proc/{entry}/fd")
        except OSError:
            continue
        for n in links:
            with contextlib.suppress(OSError):
                if os.readlink(f"/proc/{entry}/fd/{n}") == want:
                    out.append(int(entry))
                    break
    return out


def _kill_holders(proc: asyncio.subprocess.Process) -> bool:
    """SIGKILL whatever still holds ``proc``'s output, and the sessions those lead (``setsid cmd &``
    left the command's group); False when the output is closed already (read to its end: nothing holds
    it; on a loaded machine the grace can run out between that and the reader's wake-up)."""
    pipe = getattr(getattr(proc.stdout, "_transport", None), "get_extra_info", lambda _: None)("pipe")
    # guard: an-output-read-to-its-end-is-not-held
    if pipe is None or pipe.closed:
        return False
    pids = holders_of(pipe.fileno())
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    _kill_sessions({pid for pid in pids if (st := _proc_stat(pid)) is not None and st[1] == pid}, os.getpid())
    return True


def become_subreaper() -> bool:
    """Make this process the child subreaper of its descendants (Linux); False where that is not to be had."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def decode_output(data: bytes) -> tuple[str, str | None]:
    """Text of ``data`` and a label when it was not clean UTF-8 text (binary or invalid bytes)."""
    # guard: binary-output-labelled
    if b"\x00" in data[:8192]:
        text = data.decode("utf-8", errors="replace")
        return text, f"[binary output: {len(data):,} bytes; shown with undecodable bytes replaced]"
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError:
        return data.decode(
            "utf-8", errors="replace"
        ), "[output was not valid UTF-8: undecodable bytes replaced with �]"


def kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


class Reaper:
    """myrm's side of the watcher: registers process groups and folders that must not outlive it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._watcher: subprocess.Popen[bytes] | None = None
        self._groups: set[int] = set()
        self._dirs: set[str] = set()
        self._seen: set[tuple[int, int]] = set()  # (pid, start time) of children told to the watcher
        self.subreaper = False
        self.tag = ""  # OWNER_ENV's value in this process's tools (set with the first watcher)

    def _send(self, line: str) -> None:
        with self._lock:
            watcher = self._watcher
            if watcher is None or watcher.poll() is not None:
                watcher = self._start()
                if watcher is None:
                    return
                # a restarted watcher learns what the last one knew (the new line is part of it)
                line = "".join(
                    [
                        *(f"+G {g}\n" for g in self._groups),
                        *(f"+D {d}\n" for d in self._dirs),
                        *(f"+P {pid} {start}\n" for pid, start in self._seen),
                    ]
                )
            assert watcher.stdin is not None
            try:
                watcher.stdin.write(line.encode())
                watcher.stdin.flush()
            except (BrokenPipeError, OSError):  # it died: the next line starts a new one
                self._watcher = None

    def prepare(self) -> None:
        """Before the first tool process starts: myrm becomes the subreaper of what it leaves behind (a
        command that exits at once would otherwise hand its orphans to init before the watcher is up), and
        the watcher runs (a kill -9 right after a tool started would otherwise find none)."""
        self._become_subreaper()
        self._send("")  # starts the watcher (again, with all it knew) when it is not running

    def _become_subreaper(self) -> None:
        if not self.subreaper:
            # guard: orphans-that-left-their-group-are
            self.subreaper = become_subreaper()

    def _start(self) -> subprocess.Popen[bytes] | None:
        self._become_subreaper()
        self.tag = self.tag or owner_tag()
        try:
            self._watcher = subprocess.Popen(
                # -I: run this file alone (stdlib only), without the package or its folder on sys.path
                [sys.executable, "-I", __file__, str(os.getpid()), self.tag],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,  # the terminal's signals must not end it before its groups
                cwd="/",
            )
        except OSError:  # no watcher: tools still run, only a kill -9 of myrm may leave them behind
            log.warning("could not start the process watcher", exc_info=True)
            self._watcher = None
        return self._watcher

    def adopt(self) -> None:
        """Tell the watcher about myrm's children it does not know yet: with myrm a subreaper, a process
        that left its tool's group (``setsid cmd &``) is one of them as soon as its parent has exited."""
        if not self.subreaper:
            return
        watcher = self.watcher_pid
        fresh = [
            (pid, start)
            for pid, start in children_of(os.getpid())
            if pid != watcher and (pid, start) not in self._seen
        ]
        if fresh:
            self._seen.update(fresh)
            self._send("".join(f"+P {pid} {start}\n" for pid, start in fresh))

    def guard(self, pgid: int) -> None:
        self._groups.add(pgid)
        self._send(f"+G {pgid}\n")

    def release(self, pgid: int) -> None:
        if pgid in self._groups:
            self._groups.discard(pgid)
            self._send(f"-G {pgid}\n")

    def guard_dir(self, path: Path) -> None:
        if "\n" not in str(path):
            self._dirs.add(str(path))
            self._send(f"+D {path}\n")

    def release_dir(self, path: Path) -> None:
        if str(path) in self._dirs:
            self._dirs.discard(str(path))
            self._send(f"-D {path}\n")

    @property
    def watcher_pid(self) -> int | None:
        return self._watcher.pid if self._watcher is not None else None


REAPER = Reaper()


# A tool's process waits at this gate until myrm has registered its group with the watcher, then
# becomes the command (``exec -a``: same pid, group and argv). Without it a command could run, and clear its
# environment (``exec env -i …``: no owner mark), before the registration; a kill -9 of myrm then
# left it to run on. If myrm dies at the gate, the pipe closes unwritten and the command never runs.
# bash, not sh: the pipe's descriptor may have two digits, which POSIX sh need not redirect.
# It first makes the command, and all it starts, the kernel's first choice when memory runs out
# (oom_score_adj 1000, inherited; raising it needs no privilege): a command that allocates without end
# is killed, not myrm, the embedded model or the user's editor. No limit of its own stops it sooner.
# guard: tool-processes-go-first-when-memory-runs-out
OOM_FIRST = "{{ echo 1000 >/proc/self/oom_score_adj; }} 2>/dev/null; "
# guard: a-tools-command-waits-for-its-groups
GATE = OOM_FIRST + 'read -r _ <&{fd} || exit 125; exec {fd}<&-; exec -a "$0" "$@"'


async def spawn(
    *argv: str, cwd: Path, env: dict[str, str], stdin: int | None, stdout: int, stderr: int
) -> asyncio.subprocess.Process:
    """``argv`` in its own process group, which the reaper kills if myrm dies before it ends; it starts
    once the group is registered (where there is no bash to wait at the gate, at once)."""
    REAPER.prepare()
    # The tag also reaches the watcher whatever happens next (a watcher that could not be started).
    # guard: tool-processes-carry-the-owner-mark
    env = {**env, OWNER_ENV: REAPER.tag} if REAPER.tag else env
    path = env.get("PATH", os.defpath)
    program = shutil.which(argv[0], path=path)
    if program is None:  # what exec would raise; the gate's shell would only exit 127
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), argv[0])
    bash = shutil.which("bash", path=path)
    kw: dict[str, Any] = dict(
        cwd=str(cwd), stdin=stdin, stdout=stdout, stderr=stderr, start_new_session=True, env=env
    )
    if bash is None:
        proc = await asyncio.create_subprocess_exec(*argv, **kw)
        REAPER.guard(proc.pid)
        return proc
    gate, release = os.pipe()
    try:
        script = GATE.format(fd=gate)
        proc = await asyncio.create_subprocess_exec(
            bash, "-c", script, argv[0], program, *argv[1:], pass_fds=(gate,), **kw
        )
    except BaseException:
        os.close(release)
        raise
    finally:
        os.close(gate)
    try:
        # guard: tool-process-groups-end-with-myrm
        REAPER.guard(proc.pid)
    except BaseException:
        os.close(release)  # the gate reads end-of-file: an unregistered command never runs
        raise
    with contextlib.suppress(BrokenPipeError):  # it died at the gate (a signal): nothing to release
        os.write(release, b"\n")
    os.close(release)
    return proc


# The kernel passes one argument of at most 128 KiB to a program (MAX_ARG_STRLEN); a model's text is one
# (``bash -c COMMAND``, rg's pattern), inside the sandbox wrapper's command line for a background job.
MAX_ARGUMENT_BYTES = 120_000


def unpassable(text: str, what: str) -> str | None:
    """Why ``text`` (a model's) cannot be one argument of a program, else None: a NUL byte, a lone
    surrogate that is no byte of a file name (JSON's ``"\ud800"``; ``\udc80``-``\udcff`` stand for one), or
    more bytes than the kernel passes. Each made the call fail as a tool bug (ValueError,
    UnicodeEncodeError, OSError E2BIG)."""
    # guard: a-text-no-program-can-receive-is-one
    if "\x00" in text:
        return f"{what} holds a NUL byte (\\u0000), which no program can receive"
    try:
        size = len(text.encode("utf-8", "surrogateescape"))
    except UnicodeEncodeError as exc:
        return f"{what} holds {text[exc.start]!r}, a lone surrogate that is not text"
    # guard: a-text-over-the-kernels-limit-is-one
    if size > MAX_ARGUMENT_BYTES:
        return f"{what} is {size:,} bytes; a program is given at most {MAX_ARGUMENT_BYTES:,}"
    return None


def _close_pipes(proc: asyncio.subprocess.Process) -> None:
    """Close the child's pipes now. A process it started outside its group (``setsid cmd &`` in a hook)
    may hold stdout open after the group is gone; left to the garbage collector, the transport would
    close after the event loop and print a "Event loop is closed" traceback at exit."""
    transport = getattr(proc, "_transport", None)  # asyncio has no public way to close it
    if transport is not None:
        transport.close()


def _exit_of(proc: asyncio.subprocess.Process) -> asyncio.Future[Any]:
    """Done once ``proc`` itself has exited, though what it started may hold its output open: Python
    3.11's ``wait()`` also waits for every pipe to close (3.12 does not)."""
    done: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
    if proc.returncode is not None:
        done.set_result(None)
        return done
    protocol = getattr(getattr(proc, "_transport", None), "_protocol", None)  # no public hook for the exit
    if protocol is None:  # an asyncio without it: the output's end stands for the exit, as before
        return asyncio.ensure_future(proc.wait())
    told = protocol.process_exited

    def exited() -> None:
        told()
        if not done.done():
            done.set_result(None)

    protocol.process_exited = exited
    return done


# Seconds a command's output may stay open after the command ended (what it started finishing its writes).
OUTPUT_GRACE = 2.0


@dataclass
class Captured:
    """A finished command: ``text`` is what was kept (decoded), ``full`` the whole stream when more was
    read."""

    text: str
    label: str | None  # binary or invalid UTF-8
    full: str | None
    total: int  # bytes written by the command
    code: int  # 124 after a timeout, like coreutils' timeout
    timed_out: bool
    # The command ended, and a process it left running held its output open past ``OUTPUT_GRACE``: the
    # command's group and every process holding the output were stopped.
    held: bool = False
    processes_hit: bool = False  # a fork was refused at the pid cgroup's limit (limits.py)
    left_stopped: int = 0  # processes the command left running, stopped when it ended (its pid cgroup)


@dataclass
class Sandboxed:
    """A command as run in its sandbox: ``argv`` and, where one was made, its pid cgroup."""

    argv: list[str]
    cgroup: PidCgroup | None = None
    processes_hit: bool = False  # once it ended: a fork was refused at the cgroup's limit
    left_stopped: int = 0  # once it ended: processes it left running, stopped


@contextlib.asynccontextmanager
async def sandboxed(argv: list[str], confine: Confinement | None) -> AsyncIterator[Sandboxed]:
    """``argv`` as run in ``confine``'s sandbox, with a private temp folder and a pid cgroup (where the
    limits ask for one and one can be made) that are removed afterwards (and by the watcher if myrm dies
    first); ``argv`` itself without one."""
    if confine is None:
        yield Sandboxed(argv)
        return
    from myrm_tui.agent.limits import make_pid_cgroup
    from myrm_tui.agent.sandbox import UNCONFINED

    tmp = None if confine.profile == UNCONFINED else Path(tempfile.mkdtemp(prefix="myrm-sandbox-"))
    # guard: limits-a-pid-cgroup-for-each-command
    cgroup = make_pid_cgroup(confine.limits.processes) if confine.limits is not None else None
    for folder in (tmp, cgroup.path if cgroup else None):
        if folder is not None:
            REAPER.guard_dir(folder)
    run = Sandboxed(confine.argv(argv, tmp, cgroup.path if cgroup else None), cgroup)
    try:
        yield run
    finally:
        if cgroup is not None:
            run.processes_hit = cgroup.hit()
            # what is left of a command that has ended (a detached spinner, a fork bomb's rest)
            # guard: limits-what-a-command-leaves-is-stopped
            run.left_stopped = await cgroup.kill()
            if cgroup.remove():
                REAPER.release_dir(cgroup.path)
            else:
                log.warning("pid cgroup %s is still in use; removed when myrm exits", cgroup.path)
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
            REAPER.release_dir(tmp)


def secret_name(name: str) -> bool:
    """``name`` looks like a secret's (``SECRET_WORDS``)."""
    upper = name.upper()
    return any(word in upper for word in SECRET_WORDS)


def command_environment(keep: Collection[str] | None = ()) -> dict[str, str]:
    """myrm's environment as a command it starts gets it: without the secret-looking variables but those
    named in ``keep``; ``keep=None`` passes everything (a hook: the user's own program, not the agent's)."""
    if keep is None:
        return dict(os.environ)
    # guard: an-agents-command-gets-no-secret-variables
    return {k: v for k, v in os.environ.items() if k in keep or not secret_name(k)}


async def run_captured(
    command: str,
    cwd: Path,
    timeout: float,
    max_bytes: int,
    stdin: bytes | None = None,
    env: dict[str, str] | None = None,
    on_output: Callable[[str], None] | None = None,
    confine: Confinement | None = None,
    keep_env: Collection[str] | None = (),
) -> Captured:
    """Run ``command`` under bash in its own process group, stdout and stderr together; in ``confine``'s
    OS sandbox and limits when one is given. It gets myrm's environment without the secret-looking
    variables but ``keep_env`` (``command_environment``), and ``env``."""
    base = command_environment(keep_env)
    async with sandboxed(["bash", "-c", command], confine) as run:
        out = await _run_captured(run.argv, cwd, timeout, max_bytes, stdin, base, env, on_output)
    out.processes_hit, out.left_stopped = run.processes_hit, run.left_stopped
    return out


async def _run_captured(
    argv: list[str],
    cwd: Path,
    timeout: float,
    max_bytes: int,
    stdin: bytes | None,
    base: Mapping[str, str],
    env: dict[str, str] | None,
    on_output: Callable[[str], None] | None,
) -> Captured:
    proc = await spawn(
        *argv,
        cwd=cwd,
        stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        env={**base, **SHELL_ENV, **(env or {})},
    )
    kept = bytearray()
    spill = bytearray()
    tail = bytearray()
    total = 0
    timed_out = False

    async def feed() -> None:
        if stdin is None or proc.stdin is None:
            return
        try:
            proc.stdin.write(stdin)
            await proc.stdin.drain()
            proc.stdin.close()
        except (BrokenPipeError, ConnectionResetError):  # the command did not read its input
            pass

    async def pump() -> None:
        nonlocal total
        assert proc.stdout is not None
        while chunk := await proc.stdout.read(READ_CHUNK):
            total += len(chunk)
            if len(kept) < max_bytes:
                kept.extend(chunk[: max_bytes - len(kept)])
            if len(spill) < SPILL_LIMIT:
                spill.extend(chunk[: SPILL_LIMIT - len(spill)])
            if on_output is not None:
                tail.extend(chunk[-LIVE_TAIL:])
                del tail[:-LIVE_TAIL]
                on_output(tail.decode("utf-8", errors="replace"))

    exited = _exit_of(proc)
    gathered = asyncio.gather(feed(), pump(), proc.wait())
    # Cancelled by Esc, the gather ends with its children's CancelledError: read it, or asyncio logs
    # "exception was never retrieved" with a traceback.
    gathered.add_done_callback(lambda f: f.cancelled() or f.exception())
    loop = asyncio.get_running_loop()
    ends = loop.time() + timeout
    held = False
    try:
        await within(asyncio.shield(exited), timeout)
        left = ends - loop.time()
        try:
            await within(asyncio.shield(gathered), min(OUTPUT_GRACE, max(left, 0.0)))
        except TimeoutError:
            # The command ended and something it started holds its output open ('server &',
            # 'setsid x &'): it waited for that to end, the whole time limit, and lost the exit status.
            # guard: a-command-that-ended-is-not-waited
            if left <= OUTPUT_GRACE:
                raise
            gathered.cancel()
            kill_group(proc.pid)
            # guard: what-holds-an-ended-commands-output-is
            held = _kill_holders(proc)
    except TimeoutError:
        timed_out = True
        gathered.cancel()
        kill_group(proc.pid)
        await proc.wait()
    except BaseException:  # cancelled (Esc) or failed: the command must not run on unseen
        gathered.cancel()
        kill_group(proc.pid)
        raise
    finally:  # ended or killed: the group is no longer the watcher's concern, what it left behind is
        REAPER.release(proc.pid)
        REAPER.adopt()
        _close_pipes(proc)
    text, label = decode_output(bytes(kept))
    full = decode_output(bytes(spill))[0] if total > len(kept) else None
    code = 124 if timed_out else (proc.returncode if proc.returncode is not None else -1)
    return Captured(text, label, full, total, code, timed_out, held)


@dataclass
class Listed:
    """What ``run_lines`` read: stdout's records (at most ``max_lines``), stderr's start, the exit code."""

    lines: list[bytes]
    stderr: str
    code: int | None  # None when the child was stopped after max_lines
    stopped: bool


async def run_lines(argv: list[str], cwd: Path, timeout: float, max_lines: int, sep: bytes = b"\n") -> Listed:
    """Run ``argv`` (no shell) and read its stdout as ``sep``-ended records, for at most ``timeout``
    seconds: ``TimeoutError`` then. The group is killed on timeout, on cancellation (Esc), and once
    ``max_lines`` records were read."""
    proc = await spawn(
        *argv,
        cwd=cwd,
        env={k: v for k, v in os.environ.items() if k != "RIPGREP_CONFIG_PATH"},
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    lines: list[bytes] = []
    err = bytearray()
    stopped = False

    async def out() -> None:
        nonlocal stopped
        assert proc.stdout is not None
        buf = b""
        while chunk := await proc.stdout.read(READ_CHUNK):
            buf += chunk
            *done, buf = buf.split(sep)
            lines.extend(done)
            if len(lines) >= max_lines:
                del lines[max_lines:]
                stopped = True
                kill_group(proc.pid)
                return
        if buf:
            lines.append(buf)

    async def errors() -> None:
        assert proc.stderr is not None
        while chunk := await proc.stderr.read(READ_CHUNK):
            if len(err) < 4096:
                err.extend(chunk)

    try:
        # guard: grep-runs-outside-myrm-with-a-time-limit
        await within(asyncio.gather(out(), errors(), proc.wait()), timeout)
    except BaseException:  # the time limit, a cancelled turn, a failure: the child goes with it
        kill_group(proc.pid)
        raise
    finally:
        REAPER.release(proc.pid)
        _close_pipes(proc)
    return Listed(lines, err.decode("utf-8", "replace"), None if stopped else proc.returncode, stopped)


def _kill_escaped(escaped: dict[int, int]) -> None:
    """Kill each recorded child of myrm that is still the same process (pid and start time), then every
    process left in a session one of them led (a ``setsid`` command and what it started)."""
    sessions: set[int] = set()
    for pid, start in escaped.items():
        st = _proc_stat(pid)
        if st is None or st[2] != start:
            continue  # gone, or the pid now belongs to another process
        if st[1] == pid:
            sessions.add(pid)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    _kill_sessions(sessions)


def _watch(owner: int, tag: str = "") -> None:
    """The watcher: keep the registrations read from stdin and, every ``WATCH_POLL`` seconds, record
    ``owner``'s children (the processes re-parented to it); at the end of stdin (myrm died or closed it),
    kill them all, and every process whose environment carries ``tag`` (one started too late to be
    registered or recorded)."""
    groups: set[int] = set()
    dirs: set[str] = set()
    escaped: dict[int, int] = {}  # pid -> start time
    me = os.getpid()
    fd = sys.stdin.fileno()
    buf = b""
    while True:
        ready, _, _ = select.select([fd], [], [], WATCH_POLL)
        if owner > 0 and os.path.isdir("/proc"):
            for pid, start in children_of(owner):
                if pid != me:
                    escaped[pid] = start
        if not ready:
            continue
        chunk = os.read(fd, 65_536)
        if not chunk:
            break
        *lines, buf = (buf + chunk).split(b"\n")
        for raw in lines:
            op, _, arg = raw.decode("utf-8", "replace").partition(" ")
            if op in ("+G", "-G") and arg.isdigit():
                (groups.add if op == "+G" else groups.discard)(int(arg))
            elif op == "+D":
                dirs.add(arg)
            elif op == "-D":
                dirs.discard(arg)
            elif op == "+P" and len(parts := arg.split()) == 2 and all(p.isdigit() for p in parts):
                escaped[int(parts[0])] = int(parts[1])
    for pgid in groups:
        kill_group(pgid)
    if os.path.isdir("/proc"):
        # guard: the-watcher-kills-recorded-orphans
        _kill_escaped(escaped)
        if tag:
            kill_marked(tag, spare=me)
    for d in dirs:
        if os.path.isfile(os.path.join(d, "cgroup.procs")):
            # guard: the-watcher-empties-and-removes-pid-cgroups
            _end_cgroup_dir(d)
        else:
            shutil.rmtree(d, ignore_errors=True)


def _end_cgroup_dir(folder: str, wait: float = 5.0) -> None:
    """Kill what is left in a command's pid cgroup (``limits.py``) and remove it, for a myrm that died
    before it could."""
    import time

    ends = time.monotonic() + wait
    while time.monotonic() < ends:
        try:
            with open(os.path.join(folder, "cgroup.procs")) as f:
                pids = [int(p) for p in f.read().split()]
        except (OSError, ValueError):
            return
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            os.rmdir(folder)  # refused while a process in it has not exited yet
            return
        time.sleep(0.01)


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # argv: myrm's pid, and the tag its tools carry in their environment
    _watch(int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 0, "".join(sys.argv[2:3]))
