"""The warm interpreter's processes are processes of their own (``tests/warm.py``)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests import warm

PROBE = """
import json, os, sys
from myrm_tui.store import leases
print(json.dumps({
    "pid": os.getpid(), "ppid": os.getppid(), "cwd": os.getcwd(), "argv": sys.argv,
    "env": os.environ.get("PROBE"), "mine": leases._MY_START == leases._proc_start(os.getpid()),
    "stdin": sys.stdin.read(),
}))
print("to stderr", file=sys.stderr)
sys.exit(3)
"""


def test_a_forked_process_has_its_own_pid_streams_folder_environment_and_exit_code(tmp_path: Path) -> None:
    import json

    proc = warm.run(
        [sys.executable, "-c", PROBE, "a", "b"],
        input="from stdin",
        capture_output=True,
        text=True,
        env={**os.environ, "PROBE": "set"},
        cwd=tmp_path,
        timeout=60,
    )
    assert proc.returncode == 3 and proc.stderr == "to stderr\n"
    seen = json.loads(proc.stdout)
    assert seen["pid"] != os.getpid() and seen["cwd"] == str(tmp_path) and seen["argv"] == ["-c", "a", "b"]
    assert seen["env"] == "set" and seen["stdin"] == "from stdin"
    # myrm's modules are imported in the process itself: what they read of it (the lease's start time
    # of this process) is of this process, not of the warm interpreter it was forked from.
    assert seen["mine"] is True


def test_the_cli_runs_as_python_m_runs_it_and_a_kill_is_its_exit_status(tmp_path: Path) -> None:
    version = warm.run([sys.executable, "-m", "myrm_tui.cli", "--version"], capture_output=True, text=True)
    assert version.returncode == 0 and version.stdout.startswith("myrm ") and version.stderr == ""
    sleeper = warm.Popen(
        [sys.executable, "-c", "import time; print('up', flush=True); time.sleep(60)"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert sleeper.stdout is not None and sleeper.stdout.readline() == "up\n"
    assert sleeper.poll() is None
    sleeper.send_signal(signal.SIGKILL)
    assert sleeper.wait(30) == -signal.SIGKILL
    sleeper.stdout.close()
    with pytest.raises(subprocess.TimeoutExpired):
        warm.run([sys.executable, "-c", "import time; time.sleep(60)"], timeout=0.5)


def test_only_the_cli_and_scripts_are_forked() -> None:
    with pytest.raises(ValueError, match="not a command"):
        warm.Popen([sys.executable, "-m", "myrm_tui"])  # the full-screen app starts in a terminal of its own


def test_an_exit_seen_by_poll_leaves_the_pid_taken_until_it_is_read_and_a_bad_request_harms_nobody() -> None:
    quick = warm.Popen(
        [sys.executable, "-c", "import sys; sys.stdout.write(sys.stdin.read())"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    out, _ = quick.communicate(b"a\r\nb\rc")
    assert out == b"a\r\nb\rc" and quick.returncode == 0  # no newline translation, as an interpreter's stdin
    done = warm.Popen([sys.executable, "-c", "print('bye')"], stdout=subprocess.DEVNULL)
    # Exited but not yet read: a zombie of the warm interpreter, so a late signal reaches nobody else.
    deadline = time.monotonic() + 30
    while Path(f"/proc/{done.pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
        assert time.monotonic() < deadline, "the process did not end"
        time.sleep(0.01)
    os.kill(done.pid, signal.SIGTERM)
    while done.poll() is None:  # the warm interpreter sends the exit as it hears of it
        assert time.monotonic() < deadline, "the exit was not reported"
        time.sleep(0.01)
    assert done.returncode == 0  # the late signal changed nothing
    done.kill()  # after its exit is read: nothing to signal, as with subprocess.Popen
    # A connection that says nothing, and one that is cut: the shared warm interpreter goes on serving.
    for _ in range(2):
        conn = warm._WARM.connect()
        assert conn is not None
        conn.close()
    again = warm.run(
        [sys.executable, "-c", "print('still here')"], capture_output=True, text=True, timeout=60
    )
    assert again.stdout == "still here\n"


def test_the_off_switch_executes_every_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(warm.OFF, "0")
    proc = warm.Popen([sys.executable, "-c", "print('executed')"], stdout=subprocess.PIPE, text=True)
    assert isinstance(proc, subprocess.Popen)  # a plain process, not forked from a warm interpreter
    out, _ = proc.communicate(timeout=60)
    assert out == "executed\n" and proc.returncode == 0
