"""Leaving in bounded time when the terminal goes away (SIGHUP, EOF or EIO on the tty) or on SIGTERM.

Why this exists: Textual's driver writes through a thread with a bounded queue (30 writes) that only that
thread drains. Once the terminal is gone its write fails with EIO and the thread dies; the next frames fill
the queue and the event loop blocks in ``Queue.put`` for ever (Textual issue #6692) — and an asyncio
signal handler, which runs on that loop, never runs: myrm held its session's lease until ``kill -9``.

So, from :func:`install` (``myrm`` with no command, before the app runs):

- The terminal is watched (POLLHUP on its descriptors, a write that fails with EIO). When it is gone, the
  standard streams are pointed at ``/dev/null``: every later write (a frame, the terminal-restoring
  sequences, the exit line, the resume hint) returns at once, and the writer thread never dies.
- SIGTERM and SIGHUP are caught by a plain handler that only writes a byte to a pipe (it runs even while
  the loop is blocked); a watcher thread turns the first stop into the app's own exit (``on_stop``, as
  ctrl+q: the session saved, the lease released, children stopped); a second signal exits at once.
- From the first stop the process ends within a deadline, whatever blocks: once the app reports the
  session saved (:meth:`TerminalGuard.saved`), the rest of the exit gets ``EXIT_GRACE_S``; without that
  report within ``STOP_DEADLINE_S``, the watcher releases the leases itself and exits. Children need
  nothing more then: tool processes are killed by the reaper when myrm's pipe to it closes, and the
  embedded model's server watches its parent (``agent/proc.py``, ``llm/embedded_child.py``).
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import errno
import logging
import os
import re
import select
import signal
import sqlite3
import termios
import threading
import time
from collections.abc import Callable
from typing import IO, Any

from textual.drivers import linux_driver
from textual.drivers.linux_driver import LinuxDriver

log = logging.getLogger(__name__)

STOP_DEADLINE_S = 8.0  # from the first stop until the session is saved, else the watcher exits itself
EXIT_GRACE_S = 3.0  # from the save until the process is gone (terminal, embedded model, interpreter)
SIGNALS = (signal.SIGTERM, signal.SIGHUP)
# A write to a terminal that is gone: a hung-up tty answers EIO; a closed one EBADF, ENXIO or ENODEV.
GONE_ERRNOS = frozenset({errno.EIO, errno.EPIPE, errno.EBADF, errno.ENXIO, errno.ENODEV})
_SAVED, _LOST = 0xFE, 0xFD  # the pipe's other bytes are signal numbers
# What Textual's stop_application_mode writes, for an exit that cannot wait for the driver.
_RESTORE = (
    "\x1b[<u\x1b[?1049l\x1b[?25h\x1b[?1004l\x1b[?2004l\x1b[?1000l\x1b[?1003l\x1b[?1015l\x1b[?1006l\x1b[?7h"
)

OnStop = Callable[[int, str], None]  # the exit code, the one line that says why
Leases = Callable[[], tuple[str, dict[str, str]]]  # the database's path, session id -> this process's token


class TerminalGuard:
    """The process's one watcher of its terminal and of stop signals (see the module's docstring)."""

    def __init__(self) -> None:
        self._r, self._w = os.pipe()
        os.set_blocking(self._w, False)  # the signal handler must never wait
        self._lock = threading.Lock()
        self._ttys: list[int] = []  # standard descriptors on the terminal, watched for a hang-up
        self._terminal_attrs: list[Any] | None = None
        self.terminal_gone = False
        self.stopping = False
        self.code = 0
        self.reason = ""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._on_stop: OnStop | None = None
        self._leases: Leases | None = None
        self._thread = threading.Thread(target=self._watch, name="myrm-stop-watch", daemon=True)

    # -- what the app and its driver call ----------------------------------------------------------
    def attach(self, on_stop: OnStop, leases: Leases) -> None:
        """The running app (on its loop): how to exit gracefully, and which leases it holds. A stop that
        came before is handed over now."""
        with self._lock:
            self._loop, self._on_stop, self._leases = asyncio.get_running_loop(), on_stop, leases
            stopping, code, reason = self.stopping, self.code, self.reason
        if stopping:
            self._loop.call_soon(on_stop, code, reason)

    def saved(self) -> None:
        """The session is saved and its lease released: what remains of the exit gets ``EXIT_GRACE_S``."""
        with self._lock:
            self._on_stop = None  # the loop is about to close
        self._post(_SAVED)

    def watch_terminal(self, attrs: list[Any] | None) -> None:
        """The driver takes the terminal: watch its descriptors for a hang-up (``attrs``: its modes
        before, restored by an exit that cannot wait for the driver)."""
        with self._lock:
            if self._ttys or self.terminal_gone:
                return  # a resume after ctrl+z: the same terminal (a hung-up one no longer says it is one)
            self._ttys = [fd for fd in (0, 1, 2) if _isatty(fd)]
            self._terminal_attrs = attrs
        self._post(0)  # wakes the watcher up to register them

    def terminal_lost(self, why: str) -> None:
        """The terminal is gone (any thread): the standard streams go to ``/dev/null`` now, so no write
        to it fails or blocks, and myrm stops as on SIGHUP."""
        with self._lock:
            if self.terminal_gone:
                return
            self.terminal_gone = True
            ttys = list(self._ttys)
            null = os.open(os.devnull, os.O_RDWR)
            try:
                for fd in ttys:
                    # guard: hangup-a-terminal-that-is-gone-gets-no
                    os.dup2(null, fd)
            finally:
                os.close(null)
        log.warning("the terminal is gone (%s): stopping", why)
        self._post(_LOST)

    # -- signals, the watcher ----------------------------------------------------------------------
    def install(self) -> None:
        for sig in SIGNALS:
            signal.signal(sig, self._on_signal)
        self._thread.start()

    def _on_signal(self, signum: int, frame: object) -> None:
        self._post(signum)  # nothing else here: it may run in the middle of anything the main thread does

    def _post(self, byte: int) -> None:
        with contextlib.suppress(BlockingIOError, OSError):
            os.write(self._w, bytes([byte]))

    def _watch(self) -> None:
        poller = select.poll()
        poller.register(self._r, select.POLLIN)
        watched: set[int] = set()
        deadline: float | None = None
        saved = False
        while True:
            wait = None if deadline is None else max(0.0, deadline - time.monotonic()) * 1000
            events = poller.poll(wait)
            if deadline is not None and time.monotonic() >= deadline:
                # guard: hangup-a-stop-that-the-app-does-not
                self._exit_now(saved, "saved; the exit did not finish" if saved else "not saved in time")
            for fd, _ in events:
                if fd != self._r:  # POLLHUP or POLLERR on the terminal (registered for nothing else)
                    self.terminal_lost("hang-up")
                    continue
                for byte in os.read(self._r, 256):
                    if byte == _SAVED:
                        saved = True
                        if self.stopping:
                            deadline = time.monotonic() + EXIT_GRACE_S
                    elif byte == _LOST or byte in SIGNALS:
                        if self.stopping and byte != _LOST and not self._echo_of_hangup(byte):
                            # guard: hangup-a-second-signal-exits-at-once
                            self._exit_now(saved, f"a second signal ({signal.Signals(byte).name})")
                        if not self.stopping:
                            self._begin_stop(byte)
                            deadline = time.monotonic() + (EXIT_GRACE_S if saved else STOP_DEADLINE_S)
            with self._lock:
                ttys = set() if self.terminal_gone else set(self._ttys)
            for fd in watched - ttys:  # /dev/null now
                poller.unregister(fd)
            for fd in ttys - watched:
                poller.register(fd, 0)  # POLLHUP, POLLERR and POLLNVAL are always reported
            watched = ttys

    def _echo_of_hangup(self, byte: int) -> bool:
        """A closed terminal may send SIGHUP more than once (the kernel, then the shell), before or after
        its hang-up is seen here: not a second signal from the user."""
        return byte == signal.SIGHUP and (self.terminal_gone or self.code == 128 + signal.SIGHUP)

    def _begin_stop(self, byte: int) -> None:
        if byte == _LOST:
            code, reason = 128 + signal.SIGHUP, "the terminal closed"
        else:
            code, reason = 128 + byte, f"stopped by {signal.Signals(byte).name}"
        with self._lock:
            self.stopping, self.code, self.reason = True, code, reason
            loop, on_stop = self._loop, self._on_stop
        log.warning("myrm: %s; saving the session and exiting", reason)
        if loop is not None and on_stop is not None:
            with contextlib.suppress(RuntimeError):  # the loop has closed: the exit is under way
                loop.call_soon_threadsafe(on_stop, code, reason)

    def _exit_now(self, saved: bool, why: str) -> None:
        """End the process here: the leases released first (unless the app did), the terminal given back
        if it is still there."""
        log.error("myrm: exiting without waiting for the app (%s; %s)", why, self.reason)
        if not saved:
            self._release_leases()
        if not self.terminal_gone:
            done = threading.Thread(target=self._restore_terminal, daemon=True)
            done.start()
            done.join(0.5)  # a terminal that is not read must not hold the exit
        os._exit(self.code or 1)

    def _release_leases(self) -> None:
        leases = self._leases
        if leases is None:
            return
        try:
            path, held = leases()
            release_leases(path, held)
        except Exception:
            log.exception("the session's lease could not be released at exit (a dead pid's is taken over)")

    def _restore_terminal(self) -> None:
        with contextlib.suppress(OSError, termios.error):
            os.write(2, (_RESTORE + f"\r\nmyrm: {self.reason}\r\n").encode())
            if self._terminal_attrs is not None:
                termios.tcsetattr(0, termios.TCSANOW, self._terminal_attrs)


def _isatty(fd: int) -> bool:
    try:
        return os.isatty(fd)
    except OSError:
        return False


def shell_can_resume() -> bool:
    """Whether a job-control shell started myrm, so that a stop (ctrl+z) can end with ``fg``: the first
    ancestor outside myrm's process group is in its session (an interactive shell runs each job in a group
    of its own). Started by ``tmux new 'myrm'``, a terminal's own command or ``setsid``, nothing would
    ever continue it. True where it cannot be told (no ``/proc``)."""
    group, session = os.getpgrp(), os.getsid(0)
    pid = os.getpid()
    try:
        while True:
            with open(f"/proc/{pid}/stat", "rb") as f:
                pid = int(f.read().rsplit(b")", 1)[1].split()[1])  # the parent, after the command's name
            if pid <= 1:
                return False
            if os.getpgid(pid) != group:
                return os.getsid(pid) == session
    except (OSError, ValueError, IndexError):
        return True


def release_leases(path: str, held: dict[str, str]) -> None:
    """What ``LeaseTable.release_lease`` does, on a connection of its own: for an exit that cannot wait
    for the app's loop (the store's connection lives on it)."""
    if not held or path == ":memory:":
        return
    conn = sqlite3.connect(path, timeout=1.0, isolation_level=None)
    try:
        for sid, token in held.items():
            conn.execute("DELETE FROM session_leases WHERE session_id = ? AND token = ?", (sid, token))
    finally:
        conn.close()


class _Output:
    """The driver's output file: a write that finds the terminal gone sends the streams to ``/dev/null``
    and is repeated there, so Textual's writer thread lives on and keeps draining its queue."""

    def __init__(self, file: IO[str], guard: TerminalGuard) -> None:
        self._file = file
        self._guard = guard

    def _safely(self, op: Callable[[], object]) -> None:
        try:
            op()
        except OSError as exc:
            if exc.errno not in GONE_ERRNOS:
                raise
            self._guard.terminal_lost(f"{errno.errorcode.get(exc.errno or 0, exc.errno)} writing to it")
            with contextlib.suppress(OSError):
                op()  # to /dev/null now: what the buffer held is dropped, not kept for the next write

    def write(self, text: str) -> None:
        self._safely(lambda: self._file.write(text))

    def flush(self) -> None:
        self._safely(self._file.flush)

    def fileno(self) -> int:
        return self._file.fileno()

    def isatty(self) -> bool:
        return self._file.isatty()


class GuardedDriver(LinuxDriver):
    """Textual's Linux driver, told by the guard where the terminal is and whether it is still there."""

    def __init__(self, app: Any, **kwargs: Any) -> None:
        super().__init__(app, **kwargs)
        guard = current()
        assert guard is not None, "GuardedDriver without an installed TerminalGuard"
        self._guard = guard
        self._file = _Output(self._file, guard)  # type: ignore[arg-type, assignment]  # WriterThread's

    def start_application_mode(self) -> None:
        try:
            attrs: list[Any] | None = termios.tcgetattr(self.fileno)
        except termios.error:
            attrs = None
        self._guard.watch_terminal(attrs)
        super().start_application_mode()

    def _sigcont_application(self, *args: Any) -> None:
        # A hang-up sends SIGCONT with its SIGHUP, and Textual's handler restarts the application mode
        # on every SIGCONT: a second writer and input thread on the dead terminal, the first writer's
        # queue left to fill. Only a resume after ctrl+z (which set this flag) restarts it.
        # guard: hangup-a-sigcont-sent-with-a-hang-ups
        if self._must_signal_resume and not self._guard.terminal_gone:
            super()._sigcont_application(*args)

    def run_input_thread(self) -> None:
        # Textual decodes the terminal's bytes with a strict UTF-8 decoder: one byte that is not UTF-8 (a
        # binary paste, Alt on a terminal that sends 8-bit meta, a Latin-1 terminal) raised in the input
        # thread and the app ended with a traceback. The driver module looks its decoder factory up by
        # name as the thread starts; such a byte now arrives as U+FFFD and the keys after it as typed.
        # guard: a-byte-that-is-not-utf8-on-the-terminal
        linux_driver.getincrementaldecoder = _replacing_decoder  # type: ignore[assignment]
        super().run_input_thread()


def _replacing_decoder(encoding: str) -> Callable[[], PasteGuard]:
    """``codecs.getincrementaldecoder`` whose decoders replace what is not ``encoding`` instead of raising,
    and keep every ESC but the end marker out of a bracketed paste (``PasteGuard``)."""
    factory = codecs.getincrementaldecoder(encoding)
    return lambda: PasteGuard(factory(errors="replace"))


PASTE_START, PASTE_END = "\x1b[200~", "\x1b[201~"
SHOWN_ESC = "\u241b"  # ␛, the symbol for escape
# What copied terminal output holds: colours and cursor moves (CSI), titles and hyperlinks (OSC, ended by BEL
# or ESC \). Bounded, so a lone ESC followed by text is decided within a few thousand characters.
_SEQUENCE = re.compile(r"\x1b(?:\[[0-?]{0,64}[ -/]{0,8}[@-~]|\][^\x00-\x1f]{0,4096}(?:\x07|\x1b\\))")
# A read that ends inside what may still become one of them (or the paste's end marker): held.
_UNFINISHED = re.compile(r"\x1b(?:\[[0-?]{0,64}[ -/]{0,8}|\][^\x00-\x1f]{0,4096}\x1b?)?\Z")


class PasteGuard:
    """The terminal's text as decoded, where a bracketed paste holds no ESC but its end marker: a complete
    CSI or OSC sequence inside it (copied coloured output, a log with escape codes, a hyperlink; xterm and
    tmux pass them on) is dropped, its text kept, and any other ESC is shown as ``SHOWN_ESC``. Textual's
    parser took such an ESC for the start of a key sequence and turned the pasted text after it into key
    presses: ctrl+g, F-keys, Enter. Markers and sequences may be cut anywhere between two reads."""

    def __init__(self, decoder: codecs.IncrementalDecoder) -> None:
        self._decoder = decoder
        self._in_paste = False
        self._tail = ""  # outside a paste: the last characters passed on, where a start marker may begin
        self._held = ""  # inside a paste: what the read ended in that may begin a sequence or the end marker

    def decode(self, data: bytes, final: bool = False) -> str:
        text = self._held + self._decoder.decode(data, final)
        self._held = ""
        out: list[str] = []
        pos, n = 0, len(text)
        while pos < n:
            if not self._in_paste:
                window = self._tail + text[pos:]
                at = window.find(PASTE_START)
                if at < 0:
                    out.append(text[pos:])
                    self._tail = window[-(len(PASTE_START) - 1) :]
                    break
                after = pos + at + len(PASTE_START) - len(self._tail)  # just after the marker, in text
                out.append(text[pos:after])
                pos, self._tail, self._in_paste = after, "", True
                continue
            esc = text.find("\x1b", pos)
            if esc < 0:
                out.append(text[pos:])
                break
            out.append(text[pos:esc])
            if text.startswith(PASTE_END, esc):
                out.append(PASTE_END)
                pos, self._in_paste = esc + len(PASTE_END), False
                continue
            # guard: a-complete-escape-sequence-in-a-paste-is-dropped
            if sequence := _SEQUENCE.match(text, esc):
                pos = sequence.end()
                continue
            # guard: a-sequence-in-a-paste-cut-by-a-read-waits
            if not final and _UNFINISHED.match(text, esc):
                self._held = text[esc:]  # decided with the next read
                break
            # guard: an-esc-inside-a-paste-is-shown-not-a-key
            out.append(SHOWN_ESC)
            pos = esc + 1
        return "".join(out)


_GUARD: TerminalGuard | None = None


def install() -> TerminalGuard:
    """Watch the terminal and the stop signals for the rest of the process (once; main thread only)."""
    global _GUARD
    if _GUARD is None:
        _GUARD = TerminalGuard()
        _GUARD.install()
    return _GUARD


def current() -> TerminalGuard | None:
    return _GUARD
