"""SIGTERM or SIGHUP to the full-screen app (a closed terminal, ``kill``) exits like ctrl+q: the terminal is
given back, the embedded model's child stops, the exit code is 128 + the signal, and one line says why. A
closed terminal (the pty's master closed under it) ends it the same way, with the embedded model running.
(Every moment and session kind against the provider emulator: ``test_hangup.py``.)"""

from __future__ import annotations

import fcntl
import os
import pty
import select
import signal
import sqlite3
import struct
import sys
import termios
import time
from pathlib import Path

import pytest

import myrm_tui
from myrm_tui.app.perf import ANSI, READY, _descendants
from myrm_tui.llm.local import runtime_available
from tests.helpers import wait_exit

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not runtime_available(), reason="embedded model not installed (make install)"),
]


def _read_until(fd: int, done: object, timeout: float, pid: int) -> str:
    """Drain the terminal (a full pty would block the app) until ``done(text)`` holds."""
    text = ""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        r, _, _ = select.select([fd], [], [], 0.05)
        if r:
            try:
                text += os.read(fd, 65536).decode("utf-8", "replace")
            except OSError:
                break
        if done(text):  # type: ignore[operator]
            return text
    raise AssertionError(f"timed out; last output: {ANSI.sub('', text)[-1500:]!r}")


def _model_child(pid: int) -> int | None:
    for kid in _descendants(pid):
        try:
            if b"myrm_tui.llm.embedded_child" in Path(f"/proc/{kid}/cmdline").read_bytes():
                return kid
        except OSError:
            continue
    return None


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, None])  # None: the terminal closes
def test_a_signal_exits_like_ctrl_q(tmp_path: Path, sig: signal.Signals | None) -> None:
    env = {
        **os.environ,
        "TERM": "xterm-256color",
        "MYRM_DB": str(tmp_path / "t.db"),
        "MYRM_CONFIG": str(tmp_path / "config.toml"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        # The code under test (a mutated copy in `make protections`), not whatever is installed.
        "PYTHONPATH": str(Path(myrm_tui.__file__).resolve().parents[1]),
    }
    pid, fd = pty.fork()
    if pid == 0:
        fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 42, 140, 0, 0))
        os.chdir(tmp_path)
        os.execvpe(sys.executable, [sys.executable, "-m", "myrm_tui"], env)
    child = None
    try:
        _read_until(fd, lambda t: READY.search(ANSI.sub("", t)) is not None, 120, pid)
        os.write(fd, b"h")  # typing starts the embedded model
        deadline = time.monotonic() + 120
        while child is None and time.monotonic() < deadline:
            _read_until(fd, lambda t: True, 1, pid)
            child = _model_child(pid)
        assert child is not None, "the embedded model did not start"
        if sig is None:
            os.close(fd)
            fd = -1
        else:
            os.kill(pid, sig)
        out = ""
        status = None
        deadline = time.monotonic() + 60
        while status is None and time.monotonic() < deadline:
            if fd >= 0:
                try:
                    out += _read_until(fd, lambda t: True, 0.2, pid)
                except AssertionError:
                    pass
            else:
                wait_exit(pid, 60)  # nothing to read: the terminal is gone
            done, st = os.waitpid(pid, os.WNOHANG)
            if done:
                status = st
        assert status is not None, "myrm did not exit"
        assert os.waitstatus_to_exitcode(status) == 128 + int(sig or signal.SIGHUP)
        if sig is not None:
            assert "\x1b[?1049l" in out  # the alternate screen was left: the terminal is usable again
            assert f"myrm: stopped by {sig.name}" in ANSI.sub("", out) and "Traceback" not in out
        wait_exit(child, 20)
        conn = sqlite3.connect(tmp_path / "t.db")
        try:
            assert conn.execute("SELECT * FROM session_leases").fetchall() == []
        finally:
            conn.close()
    finally:
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except (OSError, ChildProcessError):
            pass
        if child is not None:
            try:
                os.kill(child, signal.SIGKILL)
            except OSError:
                pass
        if fd >= 0:
            os.close(fd)
