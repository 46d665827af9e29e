"""Real ``myrm`` processes without paying ``import litellm`` for each one.

Some tests need a process of their own: it is killed with SIGKILL, a second one writes the same
database, it must exit while a tool still holds its output, the test signals it. Started with
``python -m myrm_tui.cli`` each paid about 2 s of CPU importing litellm before doing anything, and
half a second more collecting its objects at exit. Here one *warm* interpreter has imported litellm
(and myrm's other large dependencies) once, and each of those processes is forked from it: its own
pid, standard streams, working folder, environment, exit code and signals; it imports myrm's own
package afresh, runs ``-m myrm_tui.cli`` as ``python -m`` does (``runpy``) or a ``-c`` script, and ends
through the interpreter's own exit (``atexit``, finalizers, flushed streams), as the real command does.
The pytest controller starts one for all its workers (``share``); a process without one starts its own
on first use.

What a fork cannot show is still tested by executing ``python``: the executable's own start-up
(``configure_offline_env`` before litellm is imported, the installed wheel, the full-screen app in a
terminal, what the first frame imports) and what its shutdown prints (the fork's interpreter has more
modules and a frozen heap to finalize). ``Popen`` and ``run`` refuse any command line but
``python -m myrm_tui.cli ...`` and ``python -c SCRIPT ...`` (``myrm`` with no command runs only as far as
its checks of the database and settings: no terminal). What an interpreter reads only as it starts
(``PYTHONPATH``, the hash seed, ``PYTHONWARNINGS``) comes from the warm one: every forked process has the
same hash seed.

The warm interpreter stays single-threaded (a fork copies one thread: a lock another held would stay
held); if an import ever starts a thread it says so, and every process is executed as before."""

from __future__ import annotations

import atexit
import contextlib
import gc
import io
import json
import os
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parents[1]
# Only what myrm imports from others: a module of myrm's own may hold what it read of its process when
# imported (``leases._MY_START``, this process's start time), which a fork would carry over to another.
PRELOAD = ("litellm", "typer", "aiosqlite", "tiktoken")


# -- the warm interpreter (``python -m tests.warm SOCKET``) ---------------------------------------------


def _serve(path: str) -> None:
    me = os.getpid()
    try:
        _loop(path)
    finally:
        if os.getpid() == me:  # not in a forked process leaving through here
            # A worker that finds this runs its processes as before, without waiting for a socket.
            Path(path + ".none").touch()
            with contextlib.suppress(OSError):
                os.unlink(path)


def _loop(path: str) -> None:
    from myrm_tui.offline import configure_offline_env

    configure_offline_env()  # what `myrm` does before its first import of litellm
    for name in PRELOAD:
        __import__(name)
    for name in [m for m in sys.modules if m.partition(".")[0] in ("myrm_tui", "tests")]:
        del sys.modules[name]  # each process imports the package afresh
    # As ``myrm`` does once litellm is in (``gc_policy.settle``): no collection walks the imports again. In
    # a fork it also keeps the collector from touching (and so copying) every page the imports filled.
    gc.freeze()
    if threading.active_count() != 1:  # a fork would copy a process whose other threads are gone
        return
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path + ".tmp")
    listener.listen(64)
    os.rename(path + ".tmp", path)  # there once it takes connections
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)  # a handler, so the wake-up fd hears of each exit
    sel = selectors.DefaultSelector()
    sel.register(listener, selectors.EVENT_READ, "accept")
    sel.register(wake_r, selectors.EVENT_READ, "child")
    sel.register(sys.stdin, selectors.EVENT_READ, "parent")
    running: dict[int, _Child] = {}

    def close_ours() -> None:  # in a child: none of the warm interpreter's own files
        sel.close()
        listener.close()
        os.close(wake_r)
        os.close(wake_w)
        for c in running.values():
            c.conn.close()

    while True:
        for key, _ in sel.select():
            if key.data == "parent" and not os.read(sys.stdin.fileno(), 1):
                return  # the test process is gone
            if key.data == "child":
                with contextlib.suppress(BlockingIOError):
                    os.read(wake_r, 4096)
            elif key.data == "accept":
                conn, _ = listener.accept()
                try:
                    pid = _start(conn, close_ours)
                    conn.sendall(f"{pid}\n".encode())
                except Exception as exc:  # one bad request ends its own connection, not the others'
                    if not isinstance(exc, ConnectionError | TimeoutError):  # the test went away: its own
                        print(f"warm: a request failed: {exc!r}", file=sys.stderr, flush=True)
                    conn.close()
                    continue
                running[pid] = _Child(conn)
                sel.register(conn, selectors.EVENT_READ, pid)
            elif isinstance(key.data, int):  # the test closed its side: reaped once it has exited
                child = running[key.data]
                with contextlib.suppress(OSError):
                    child.conn.recv(64)
                child.closed = True
                sel.unregister(child.conn)
        _report(running)


class _Child:
    def __init__(self, conn: socket.socket) -> None:
        self.conn = conn
        self.reported = False
        self.closed = False


def _report(running: dict[int, _Child]) -> None:
    """Send each exit to its test as soon as it happens, but reap the child only once the test has closed
    its side: till then its pid stays taken (a zombie), as a ``subprocess.Popen`` child's does until it
    is waited for, so a signal the test sends late cannot reach another process."""
    for pid, c in list(running.items()):
        if not c.reported:
            info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            if info is not None and info.si_pid == pid:
                code = info.si_status if info.si_code == os.CLD_EXITED else -info.si_status
                with contextlib.suppress(OSError):
                    c.conn.sendall(f"{code}\n".encode())
                c.reported = True
        if c.closed and c.reported:
            os.waitpid(pid, 0)
            c.conn.close()
            del running[pid]


def _start(conn: socket.socket, close_ours: Callable[[], None]) -> int:
    """Fork one process for the request on ``conn``; in the child, run it and never return."""
    conn.settimeout(10)  # a client that connects and says nothing does not hold up the others
    msg, fds, _, _ = socket.recv_fds(conn, 1 << 16, 3)
    try:
        while not msg.endswith(b"\n"):  # the request is one line; a long one may come in pieces
            more = conn.recv(1 << 16)
            if not more:
                raise ConnectionError("the request was cut")
            msg += more
        request = json.loads(msg)
        if len(fds) != 3:
            raise ConnectionError(f"{len(fds)} file descriptors, not 3")
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise
    if pid:
        conn.settimeout(None)
        for fd in fds:
            os.close(fd)
        return pid
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        close_ours()
        conn.close()
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        _child(request)
    except SystemExit as exc:
        code = exc.code
    except KeyboardInterrupt:
        sys.excepthook(*sys.exc_info())
        code = 128 + signal.SIGINT  # a real interpreter dies of the signal instead (no test sends it)
    except BaseException:
        sys.excepthook(*sys.exc_info())  # the hook the code installed (typer's), as an interpreter does
        code = 1
    else:
        code = 0
    # Leave through the interpreter's own exit, as the real command does: atexit handlers, finalizers,
    # flushed streams. (Nothing in the warm interpreter's loop catches it.)
    raise SystemExit(code)


def _child(request: dict[str, Any]) -> None:
    env: dict[str, str] = request["env"]
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(env)
    unbuffered = bool(env.get("PYTHONUNBUFFERED"))
    for name, fd, mode in (("stdin", 0, "r"), ("stdout", 1, "w"), ("stderr", 2, "w")):
        stream = _stream(fd, mode, unbuffered, getattr(sys, f"__{name}__"))
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)
    kind, target, args = request["kind"], request["target"], request["args"]
    import runpy
    import types

    if kind == "-m":
        sys.argv = [target, *args]
        sys.path[0] = request["cwd"]
        runpy._run_module_as_main(target)  # type: ignore[attr-defined]  # what ``python -m`` calls
    else:
        sys.argv = ["-c", *args]
        sys.path[0] = ""
        main = types.ModuleType("__main__")
        sys.modules["__main__"] = main
        exec(compile(target, "<string>", "exec"), main.__dict__)


def _stream(fd: int, mode: str, unbuffered: bool, was: Any) -> io.TextIOWrapper:
    """A standard stream on ``fd`` as an interpreter starting with it makes one: the warm interpreter's
    encoding and error handler (the same locale), no newline translation, buffering by whether it is a
    terminal and ``PYTHONUNBUFFERED`` (stderr: by line)."""
    tty = os.isatty(fd)
    raw = io.FileIO(fd, mode, closefd=False)
    buffered: Any = raw
    if mode == "r":
        buffered = io.BufferedReader(raw)
    elif not unbuffered:
        buffered = io.BufferedWriter(raw)
    return io.TextIOWrapper(
        buffered,
        encoding=was.encoding,
        errors=was.errors,
        newline="\n",
        line_buffering=mode == "w" and (tty or fd == 2) and not unbuffered,
        write_through=unbuffered and mode == "w",
    )


# -- the test side -------------------------------------------------------------------------------------


# ``MYRM_TESTS_WARM=0``: no warm interpreter; every process is executed (``python -m …``) as a user's is.
OFF = "MYRM_TESTS_WARM"
SHARED = "TESTS_WARM_SOCKET"  # set by the pytest controller for its workers: one warm interpreter for all


class _Warm:
    """The warm interpreter this test process uses: the controller's (``share``), else its own, started
    on first use."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen[bytes] | None = None
        self.path = ""
        self.lock = threading.Lock()

    def start(self) -> str:
        """Start one (it is ready when its socket appears: ``connect`` waits for that)."""
        self.stop()  # one that died: its folder
        self.path = os.path.join(tempfile.mkdtemp(prefix="myrm-warm-"), "s")
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        for key in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "MYRM_MODEL", SHARED):
            env.pop(key, None)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.warm", self.path], stdin=subprocess.PIPE, cwd=ROOT, env=env
        )
        return self.path

    def share(self) -> None:
        """Start one now for the workers this process is about to start (they inherit the variable)."""
        if os.environ.get(OFF) != "0":
            os.environ[SHARED] = self.start()

    def connect(self) -> socket.socket | None:
        """A connection to the warm interpreter; None where there is none to be had or it is switched
        off (then the caller executes the command as before)."""
        if os.environ.get(OFF) == "0":
            return None
        with self.lock:
            path = os.environ.get(SHARED) or self.path
            if not path or (self.proc is not None and self.proc.poll() is not None and path == self.path):
                path = self.start()
        deadline = time.monotonic() + 120
        while True:
            if os.path.exists(path + ".none"):
                return None
            conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                conn.connect(path)
                return conn
            except (FileNotFoundError, ConnectionRefusedError):
                conn.close()
                if time.monotonic() > deadline:
                    return None
                time.sleep(0.05)  # still importing

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            self.proc.wait(10)
        if self.path:
            shutil.rmtree(os.path.dirname(self.path), ignore_errors=True)


_WARM = _Warm()
atexit.register(_WARM.stop)
share = _WARM.share


def _split(args: Sequence[str]) -> tuple[str, str, list[str]]:
    if (
        len(args) >= 3
        and args[0] == sys.executable
        and (args[1] == "-c" or list(args[1:3]) == ["-m", "myrm_tui.cli"])
    ):
        return args[1], args[2], list(args[3:])
    raise ValueError(f"not a command the warm interpreter runs: {args[:3]!r}")


class Forked:
    """A process forked by the warm interpreter, with what tests use of ``subprocess.Popen``: ``pid``,
    the piped streams, ``returncode``, ``poll``, ``wait``, ``communicate``, ``send_signal``, ``kill``."""

    def __init__(
        self,
        conn: socket.socket,
        args: list[str],
        request: dict[str, Any],
        streams: tuple[int | None, int | None, int | None],
        text: bool,
    ) -> None:
        self.args = args
        self.returncode: int | None = None
        self._conn = conn
        self._got = b""
        theirs: list[int] = []
        ours: list[IO[Any] | None] = []
        for n, how in enumerate(streams):
            if how == subprocess.PIPE:
                r, w = os.pipe()
                mine, child = (w, r) if n == 0 else (r, w)
                theirs.append(child)
                ours.append(os.fdopen(mine, ("w" if n == 0 else "r") + ("" if text else "b")))
            elif how == subprocess.DEVNULL:
                theirs.append(os.open(os.devnull, os.O_RDWR))
                ours.append(None)
            elif how == subprocess.STDOUT and n == 2:
                theirs.append(os.dup(theirs[1]))
                ours.append(None)
            else:
                theirs.append(os.dup(n))
                ours.append(None)
        self.stdin, self.stdout, self.stderr = ours
        try:
            socket.send_fds(self._conn, [json.dumps(request).encode() + b"\n"], theirs)
            self.pid = int(self._line())
        except BaseException:
            self._conn.close()
            _close_streams(self)
            raise
        finally:
            for fd in theirs:
                os.close(fd)

    def _line(self) -> bytes:
        """The next line from the warm interpreter: the pid, then the exit code (blocks as the socket is
        set to; at EOF without one the warm interpreter itself died)."""
        while b"\n" not in self._got:
            data = self._conn.recv(64)
            if not data:
                raise RuntimeError(f"the warm interpreter stopped before reporting on {self.args[:3]!r}")
            self._got += data
        line, self._got = self._got.split(b"\n", 1)
        return line

    def poll(self) -> int | None:
        if self.returncode is None:
            self._conn.setblocking(False)
            try:
                self._read_status()
            except BlockingIOError:
                self._conn.setblocking(True)
        return self.returncode

    def _read_status(self) -> None:
        self.returncode = int(self._line())
        self._conn.close()  # the warm interpreter reaps the process now

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            self._conn.settimeout(timeout)
            try:
                self._read_status()
            except (TimeoutError, BlockingIOError):
                raise subprocess.TimeoutExpired(self.args, timeout or 0) from None
            finally:
                if self.returncode is None:
                    self._conn.settimeout(None)
        assert self.returncode is not None
        return self.returncode

    def communicate(self, input: Any = None, timeout: float | None = None) -> tuple[Any, Any]:
        """What ``Popen.communicate`` returns: all of stdout and stderr (those piped), once it has exited."""
        chunks: dict[int, list[Any]] = {1: [], 2: []}
        jobs = [
            threading.Thread(target=lambda f=f, n=n: chunks[n].append(f.read()), daemon=True)
            for n, f in ((1, self.stdout), (2, self.stderr))
            if f is not None
        ]
        if self.stdin is not None:
            jobs.append(threading.Thread(target=self._feed, args=(input,), daemon=True))
        for job in jobs:  # all at once: a child writing before it reads must not block on a full pipe
            job.start()
        deadline = None if timeout is None else time.monotonic() + timeout
        for job in jobs:
            job.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
            if job.is_alive():
                raise subprocess.TimeoutExpired(self.args, timeout or 0)
        self.wait(None if deadline is None else max(0.0, deadline - time.monotonic()))
        _close_streams(self)
        return (chunks[1][0] if chunks[1] else None), (chunks[2][0] if chunks[2] else None)

    def _feed(self, input: Any) -> None:
        assert self.stdin is not None
        with contextlib.suppress(BrokenPipeError, OSError):
            if input:
                self.stdin.write(input)
            self.stdin.close()

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:  # till its exit is read here, its pid stays taken (see ``_report``)
            os.kill(self.pid, sig)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)


Process = Forked | subprocess.Popen[Any]


def _close_streams(proc: Process) -> None:
    for f in (proc.stdin, proc.stdout, proc.stderr):
        if f is not None:
            with contextlib.suppress(OSError):
                f.close()


def Popen(  # named as what it stands in for at the call sites
    args: Sequence[str],
    *,
    stdin: int | None = None,
    stdout: int | None = None,
    stderr: int | None = None,
    text: bool = False,
    env: Mapping[str, str] | None = None,
    cwd: str | Path | None = None,
) -> Process:
    """``subprocess.Popen`` for ``python -m myrm_tui.cli ...`` and ``python -c SCRIPT ...``: forked from the
    warm interpreter, or executed (a plain ``subprocess.Popen``) where there is none. ``stdin``,
    ``stdout`` and ``stderr`` take ``subprocess.PIPE``, ``DEVNULL``, ``STDOUT`` (stderr) or ``None``."""
    kind, target, rest = _split(args)
    conn = _WARM.connect()
    if conn is None:
        return subprocess.Popen(
            list(args), stdin=stdin, stdout=stdout, stderr=stderr, text=text, env=env, cwd=cwd
        )
    request = {
        "kind": kind,
        "target": target,
        "args": [os.fspath(a) for a in rest],
        "env": {k: os.fspath(v) for k, v in (os.environ if env is None else env).items()},
        "cwd": os.fspath(cwd if cwd is not None else Path.cwd()),
    }
    return Forked(conn, list(args), request, (stdin, stdout, stderr), text)


def run(
    args: Sequence[str],
    *,
    input: Any = None,
    capture_output: bool = False,
    text: bool = False,
    env: Mapping[str, str] | None = None,
    cwd: str | Path | None = None,
    timeout: float | None = None,
) -> subprocess.CompletedProcess[Any]:
    """``subprocess.run`` through ``Popen`` above (the process is killed if ``timeout`` passes)."""
    pipe = subprocess.PIPE if capture_output else None
    proc = Popen(
        args,
        stdin=subprocess.PIPE if input is not None else None,
        stdout=pipe,
        stderr=pipe,
        text=text,
        env=env,
        cwd=cwd,
    )
    try:
        out, err = proc.communicate(input, timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        _close_streams(proc)
        raise
    return subprocess.CompletedProcess(proc.args, proc.wait(), out, err)


if __name__ == "__main__":
    _serve(sys.argv[1])
