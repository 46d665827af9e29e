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

What a fork cannot show, the executable's own start-up (``configure_offline_env`` before litellm is
imported, the installed wheel, the full-screen app in a terminal, what the first frame imports), is
still tested by executing ``python``; ``Popen`` and ``run`` refuse any command line but
``python -m myrm_tui.cli ...`` and ``python -c SCRIPT ...``. What an interpreter reads only as it starts
(``PYTHONPATH``, the hash seed) comes from the warm one.

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
        Path(path + ".none").touch()
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
    running: dict[int, socket.socket] = {}
    while True:
        for key, _ in sel.select():
            if key.data == "parent" and not os.read(sys.stdin.fileno(), 1):
                return  # the test process is gone
            if key.data == "child":
                with contextlib.suppress(BlockingIOError):
                    os.read(wake_r, 4096)
            if key.data == "accept":
                conn, _ = listener.accept()

                def close_ours() -> None:  # in the child: none of the warm interpreter's own files
                    sel.close()
                    listener.close()
                    os.close(wake_r)
                    os.close(wake_w)
                    for c in running.values():
                        c.close()

                pid = _start(conn, close_ours)
                running[pid] = conn
                conn.sendall(f"{pid}\n".encode())
            _reap(running)  # an exit may have come before its pid was known


def _reap(running: dict[int, socket.socket]) -> None:
    for pid in list(running):
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            conn = running.pop(pid)
            with contextlib.suppress(OSError):
                conn.sendall(f"{os.waitstatus_to_exitcode(status)}\n".encode())
            conn.close()


def _start(conn: socket.socket, close_ours: Callable[[], None]) -> int:
    """Fork one process for the request on ``conn``; in the child, run it and never return."""
    msg, fds, _, _ = socket.recv_fds(conn, 1 << 16, 3)
    while not msg.endswith(b"\n"):  # the request is one line; a long one may come in pieces
        more = conn.recv(1 << 16)
        if not more:
            raise ConnectionError("the request was cut")
        msg += more
    request = json.loads(msg)
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid:
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
    except KeyboardInterrupt:  # as an interpreter does: it dies of the signal
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
        code = 130
    except BaseException:
        import traceback

        traceback.print_exc()
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
        stream = _stream(fd, mode, unbuffered)
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)
    kind, target, args = request["kind"], request["target"], request["args"]
    import runpy

    if kind == "-m":
        sys.argv = [target, *args]
        sys.path[0] = request["cwd"]
        runpy.run_module(target, run_name="__main__", alter_sys=True)
    else:
        sys.argv = ["-c", *args]
        sys.path[0] = ""
        exec(compile(target, "<string>", "exec"), {"__name__": "__main__", "__builtins__": __builtins__})


def _stream(fd: int, mode: str, unbuffered: bool) -> io.TextIOWrapper:
    """A standard stream on ``fd`` as an interpreter starting with it makes one (the buffering follows
    whether it is a terminal and ``PYTHONUNBUFFERED``; stderr is line-buffered)."""
    tty = os.isatty(fd)
    raw = io.FileIO(fd, mode, closefd=False)
    buffered: Any = raw
    if mode == "r":
        buffered = io.BufferedReader(raw)
    elif not unbuffered:
        buffered = io.BufferedWriter(raw)
    return io.TextIOWrapper(
        buffered,
        encoding="utf-8",
        errors="backslashreplace" if fd == 2 else "strict",
        line_buffering=mode == "w" and (tty or fd == 2) and not unbuffered,
        write_through=unbuffered and mode == "w",
    )


# -- the test side -------------------------------------------------------------------------------------


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
        os.environ[SHARED] = self.start()

    def connect(self) -> socket.socket | None:
        """A connection to the warm interpreter; None where there is none to be had (then the caller
        executes the command as before)."""
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
stop = _WARM.stop


def _split(args: Sequence[str]) -> tuple[str, str, list[str]]:
    if (
        len(args) >= 3
        and args[0] == sys.executable
        and (args[1] == "-c" or args[1:3] == ["-m", "myrm_tui.cli"])
    ):
        return args[1], args[2], list(args[3:])
    raise ValueError(f"not a command the warm interpreter runs: {args[:3]!r}")


class Popen:
    """``subprocess.Popen`` for ``python -m myrm_tui.cli ...`` and ``python -c SCRIPT ...``, forked from
    the warm interpreter (or executed, if it could not start). ``stdin``/``stdout``/``stderr`` take
    ``subprocess.PIPE``, ``DEVNULL``, ``STDOUT`` (stderr) or ``None`` (this process's own)."""

    def __init__(
        self,
        args: Sequence[str],
        *,
        stdin: int | None = None,
        stdout: int | None = None,
        stderr: int | None = None,
        text: bool = False,
        env: Mapping[str, str] | None = None,
        cwd: str | Path | None = None,
    ) -> None:
        self.args = list(args)
        kind, target, rest = _split(self.args)
        self.returncode: int | None = None
        conn = _WARM.connect()
        if conn is None:  # no warm interpreter here: the plain subprocess
            self._proc: subprocess.Popen[Any] | None = subprocess.Popen(
                self.args, stdin=stdin, stdout=stdout, stderr=stderr, text=text, env=env, cwd=cwd
            )
            self.pid, self.stdin, self.stdout, self.stderr = (
                self._proc.pid,
                self._proc.stdin,
                self._proc.stdout,
                self._proc.stderr,
            )
            return
        self._proc = None
        theirs: list[int] = []
        ours: list[IO[Any] | None] = []
        for n, how in enumerate((stdin, stdout, stderr)):
            if how == subprocess.PIPE:
                r, w = os.pipe()
                mine, child = (w, r) if n == 0 else (r, w)
                theirs.append(child)
                f: IO[Any] = os.fdopen(mine, ("w" if n == 0 else "r") + ("" if text else "b"))
                ours.append(f)
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
        request = {
            "kind": kind,
            "target": target,
            "args": rest,
            "env": dict(os.environ if env is None else env),
            "cwd": str(Path(cwd) if cwd is not None else Path.cwd()),
        }
        self._conn = conn
        try:
            socket.send_fds(self._conn, [json.dumps(request).encode() + b"\n"], theirs)
        finally:
            for fd in theirs:
                os.close(fd)
        self._got = b""
        self.pid = int(self._line())

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
        if self._proc is not None:
            self.returncode = self._proc.poll()
        elif self.returncode is None:
            self._conn.setblocking(False)
            try:
                self._read_status()
            except BlockingIOError:
                pass
            finally:
                self._conn.setblocking(True)
        return self.returncode

    def _read_status(self) -> None:
        self.returncode = int(self._line())
        self._conn.close()

    def wait(self, timeout: float | None = None) -> int:
        if self._proc is not None:
            self.returncode = self._proc.wait(timeout)
            return self.returncode
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
        if self._proc is not None:
            return self._proc.communicate(input, timeout)
        if self.stdin is not None:
            with contextlib.suppress(BrokenPipeError):
                if input:
                    self.stdin.write(input)
                self.stdin.close()
        chunks: dict[int, list[Any]] = {1: [], 2: []}
        readers = [
            threading.Thread(target=lambda f=f, n=n: chunks[n].append(f.read()), daemon=True)
            for n, f in ((1, self.stdout), (2, self.stderr))
            if f is not None
        ]
        for r in readers:
            r.start()
        deadline = None if timeout is None else time.monotonic() + timeout
        for r in readers:
            r.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
            if r.is_alive():
                raise subprocess.TimeoutExpired(self.args, timeout or 0)
        self.wait(None if deadline is None else max(0.0, deadline - time.monotonic()))
        out = chunks[1][0] if chunks[1] else None
        err = chunks[2][0] if chunks[2] else None
        for f in (self.stdout, self.stderr):
            if f is not None:
                f.close()
        return out, err

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, sig)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)


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
        raise
    return subprocess.CompletedProcess(proc.args, proc.returncode or 0, out, err)


if __name__ == "__main__":
    _serve(sys.argv[1])
