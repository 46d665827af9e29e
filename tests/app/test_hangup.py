"""A closed terminal, SIGHUP or SIGTERM at any moment ends myrm within a few seconds, with the session saved
and its lease released (issue 52; ``myrm_tui/app/terminal_guard.py``).

Real ``myrm`` processes on a pseudo-terminal of their own (its controlling terminal: closing the master
hangs it up as a closed terminal window or a killed tmux server does), forked from the warm interpreter
(``tests/warm.py``) so each costs no ``import litellm``. The session is an empty one or one of 3,000
messages; the moment is during start-up (after a drawn number of bytes of output), idle, mid turn (the
provider emulator holds the answer), while the turn's shell command runs, mid compaction (the emulator
holds the summary), with a modal open or right after ctrl+q. After the exit: its code, the bound, no
lease row, no message lost, the command stopped, and the session opens again."""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import select
import shutil
import signal
import sqlite3
import struct
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from myrm_tui.app.perf import ANSI, READY, _descendants
from myrm_tui.app.terminal_guard import EXIT_GRACE_S, STOP_DEADLINE_S
from myrm_tui.cli import _session_problem
from myrm_tui.context.types import Message
from myrm_tui.store.db import Store
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests import warm
from tests.helpers import wait_exit

pytestmark = pytest.mark.slow

# Run in the forked process: the pty's slave, opened by a session leader, becomes its controlling
# terminal (as a terminal emulator sets it up; "eof": it is not, so its hang-up sends no SIGHUP and only
# EOF and EIO tell), then ``python -m myrm_tui`` with the given arguments.
PTY_MAIN = """
import os, runpy, sys
os.setsid()
fd = os.open(sys.argv[2], os.O_RDWR | (os.O_NOCTTY if sys.argv[1] == "eof" else 0))
for n in (0, 1, 2):
    os.dup2(fd, n)
os.close(fd)
sys.argv = ["myrm", *sys.argv[3:]]
runpy.run_module("myrm_tui", run_name="__main__", alter_sys=True)
"""
LONG = 3000  # messages in the long session
TYPED = "hello from the hangup test"
# A stop is bounded by the guard's two deadlines; what the test allows beyond them is the loaded
# machine's slack (the graceful path usually takes about a second).
EXIT_BOUND_S = STOP_DEADLINE_S + EXIT_GRACE_S + 4.0
F1, CTRL_K, ENTER, CTRL_Q = b"\x1bOP", b"\x0b", b"\r", b"\x11"


@dataclass(frozen=True)
class Case:
    session: str  # "empty" | "long"
    # "start" | "idle" | "turn" | "command" (a turn's shell command running) | "compaction" | "modal" |
    # "quit" (right after ctrl+q)
    moment: str
    how: str  # "close" (the pty's master), "eof" (the same, not the controlling terminal), a signal
    after_bytes: int  # "start": the hang-up comes once this much output was drawn


def cases() -> st.SearchStrategy[Case]:
    def moments(session: str) -> st.SearchStrategy[str]:
        extra = ["compaction"] if session == "long" else []
        return st.sampled_from(["start", "idle", "turn", "command", "modal", "quit", *extra])

    return st.sampled_from(["empty", "long"]).flatmap(
        lambda s: st.builds(
            Case,
            session=st.just(s),
            moment=moments(s),
            how=st.sampled_from(["close", "eof", "SIGHUP", "SIGTERM"]),
            after_bytes=st.integers(1, 40_000),
        )
    )


async def _make_session(db: Path, n: int) -> str:
    store = await Store.open(db)
    try:
        row = await store.create_session(title=f"{n} messages", model="openai/gpt-4o-mini")
        async with store.transaction():
            for i in range(n // 2):
                await store.append_message(row.id, Message(role="user", content=f"question {i}"))
                await store.append_message(row.id, Message(role="assistant", content=f"answer {i} " * 3))
        return row.id
    finally:
        await store.close()


@pytest.fixture(scope="module")
def templates(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, str]]:
    """One database per session kind, copied for each example (3,000 messages take a while to write)."""
    out = {}
    for kind, n in (("empty", 0), ("long", LONG)):
        db = tmp_path_factory.mktemp(kind) / "t.db"
        out[kind] = (db, asyncio.run(_make_session(db, n)))
    return out


class Myrm:
    """One ``myrm --session ID`` on a pseudo-terminal of its own; the test holds the master."""

    def __init__(self, folder: Path, db: Path, sid: str, emulator: ProviderEmulator, how: str) -> None:
        self.master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        env = {
            **os.environ,
            "TERM": "xterm-256color",
            "MYRM_DB": str(db),
            "MYRM_CONFIG": str(folder / "config.toml"),
            "MYRM_LOG": str(folder / "myrm.log"),
            "XDG_CONFIG_HOME": str(folder / "config"),
            "MYRM_MODEL": "openai/gpt-4o-mini",
            "MYRM_API_BASE": emulator.openai_base,
            "OPENAI_API_KEY": "sk-test",
            "MYRM_APPROVAL": "auto",  # the shell command runs without a dialog
        }
        self.proc = warm.Popen(
            [sys.executable, "-c", PTY_MAIN, how, os.ttyname(slave), "--session", sid],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd=folder,
        )
        self._slave: int | None = slave  # held until the process has opened its own (a pty without
        # any slave open answers EIO)
        self.screen = ""  # the output so far, escape codes removed
        self.drawn = 0  # bytes of output
        self.raw = b""
        self.log = folder / "myrm.log"

    def pump(self, timeout: float) -> bool:
        """Read what the app drew within ``timeout`` (a pty nobody reads would block its writes)."""
        r, _, _ = select.select([self.master], [], [], timeout)
        if not r:
            return False
        try:
            chunk = os.read(self.master, 65536)
        except OSError:  # EIO: the process has closed its side
            return False
        if self._slave is not None:
            os.close(self._slave)
            self._slave = None
        self.drawn += len(chunk)
        self.raw += chunk
        self.screen = (self.screen + ANSI.sub("", chunk.decode("utf-8", "replace")))[-50_000:]
        return True

    def until(self, done: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while not done():
            assert self.proc.poll() is None, f"myrm exited ({self.proc.returncode}) waiting for {what}"
            assert time.monotonic() < deadline, f"no {what} in {timeout:.0f} s: {self.screen[-1500:]!r}"
            self.pump(0.1)

    def type(self, data: bytes) -> None:
        os.write(self.master, data)

    def hang_up(self, how: str) -> None:
        if how in ("close", "eof"):
            os.close(self.master)
            self.master = -1
        else:
            os.kill(self.proc.pid, getattr(signal, how))

    def exit_code(self, timeout: float) -> tuple[int, float]:
        """Wait for the exit, reading the terminal meanwhile if it is still open (as a terminal does)."""
        start = time.monotonic()
        while self.proc.poll() is None:
            assert time.monotonic() - start < timeout, f"myrm still runs {timeout:.0f} s after the stop"
            if self.master >= 0:
                self.pump(0.05)
            else:
                self.proc.wait(timeout)  # raises TimeoutExpired past the bound
        assert self.proc.returncode is not None
        return self.proc.returncode, time.monotonic() - start

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        for fd in (self.master, self._slave):
            if fd is not None and fd >= 0:
                os.close(fd)
        self.master, self._slave = -1, None


@pytest.fixture
def gate(emulator: ProviderEmulator) -> Iterator[threading.Event]:
    """Every real request (a turn, a summary) waits at the emulator until the test ends."""
    held = threading.Event()
    emulator.default = Reply(text="the answer", gate=held)
    yield held
    held.set()


def _saved(db: Path, sid: str) -> tuple[int, list[str]]:
    async def read() -> list[Message]:
        store = await Store.open(db)
        try:
            return await store.load_messages(sid)
        finally:
            await store.close()

    messages = asyncio.run(read())
    return len(messages), [m.text for m in messages if m.role == "user"][-3:]


MARK = "hangup-test-command"


def _commands(myrm: int) -> list[int]:
    """The running shell command (its ``bash -c``, found by its text) and its children."""
    for pid in _descendants(myrm):
        try:
            if MARK.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                return [pid, *_descendants(pid)]
        except OSError:
            continue
    return []


def _leases(db: Path) -> list[tuple[str, int]]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute("SELECT session_id, pid FROM session_leases").fetchall()
    finally:
        conn.close()


def compaction_facts(db: Path, sid: str) -> tuple[int, int, int, int]:
    """What a compaction writes, as stored: the state's compaction count, the committed and the pending
    compaction checkpoints, the compaction metric rows. A whole compaction moves the three counts by one
    together; a pending checkpoint is one the next open (``Store.recover``) rolls back."""
    conn = sqlite3.connect(db)
    try:
        row = conn.execute("SELECT state FROM context_state WHERE session_id = ?", (sid,)).fetchone()
        statuses = [s for (s,) in conn.execute("SELECT status FROM checkpoints WHERE session_id = ?", (sid,))]
        metrics = [d for (d,) in conn.execute("SELECT data FROM metrics WHERE session_id = ?", (sid,))]
    finally:
        conn.close()
    made = json.loads(row[0]).get("compactions", 0) if row else 0
    recorded = sum(1 for d in metrics if json.loads(d).get("kind") == "compaction")
    return made, statuses.count("committed"), statuses.count("pending"), recorded


def assert_old_or_whole(before: tuple[int, int, int, int], after: tuple[int, int, int, int]) -> None:
    """The stored session holds the state from before a compaction, or the whole new one, never half:
    the state's count, the committed checkpoints and the metric rows moved together (a turn may have
    compacted too), and no compaction is left pending."""
    assert after[2] == 0, f"a compaction left pending: {before} -> {after}"
    moved = {after[0] - before[0], after[1] - before[1], after[3] - before[3]}
    assert len(moved) == 1 and min(moved) >= 0, f"half a compaction stored: {before} -> {after}"


def run_case(
    case: Case, folder: Path, templates: dict[str, tuple[Path, str]], emu: ProviderEmulator, reopen: bool
) -> None:
    template, sid = templates[case.session]
    db = folder / "t.db"
    shutil.copy(template, db)
    before, _ = _saved(db, sid)
    compacted = compaction_facts(db, sid)
    myrm = Myrm(folder, db, sid, emu, case.how)
    typed = False
    commands: list[int] = []
    try:
        if case.moment == "start":
            myrm.until(lambda: myrm.drawn >= case.after_bytes or bool(READY.search(myrm.screen)), "output")
        else:
            myrm.until(lambda: bool(READY.search(myrm.screen)), "ready")
        asked = len(emu.requests)
        if case.moment in ("turn", "command"):
            if case.moment == "command":
                emu.enqueue(Reply(tool_calls=[("bash", {"command": f"sleep 300; echo {MARK}"})]))
            myrm.type(TYPED.encode())
            myrm.until(lambda: TYPED in myrm.screen, "the typed message")
            myrm.type(ENTER)
            typed = True
            myrm.until(lambda: any(TYPED in str(r.body) for r in emu.requests[asked:]), "the turn's request")
            if case.moment == "command":
                myrm.until(lambda: bool(_commands(myrm.proc.pid)), "the running command")
                commands = _commands(myrm.proc.pid)
        elif case.moment == "compaction":
            myrm.type(CTRL_K)
            myrm.until(lambda: "Compact now?" in myrm.screen, "the compaction preview")
            myrm.type(ENTER)
            myrm.until(
                lambda: any(r.body.get("max_tokens") != 1 for r in emu.requests[asked:]),
                "the summary request",
            )
        elif case.moment == "modal":
            myrm.type(F1)
            myrm.until(lambda: "myrm — keys" in myrm.screen, "the help screen")
        elif case.moment == "quit":
            myrm.type(CTRL_Q)
        myrm.hang_up(case.how)
        code, took = myrm.exit_code(EXIT_BOUND_S)
    finally:
        myrm.close()
    log = myrm.log.read_text() if myrm.log.exists() else ""
    expected = 128 + (signal.SIGTERM if case.how == "SIGTERM" else signal.SIGHUP)
    # ctrl+q may have ended the process before the stop came
    assert code == expected or (case.moment == "quit" and code == 0), f"{case}: exit {code}; log:\n{log}"
    assert "not saved in time" not in log, f"{case}: the app did not save the session by itself:\n{log}"
    assert "Traceback" not in log, f"{case}: {log}"  # e.g. a write to the closed terminal that raised
    assert "Traceback" not in myrm.screen, f"{case}: {myrm.screen[-3000:]}"  # a terminal still there
    assert took < EXIT_BOUND_S
    assert _leases(db) == [], f"{case}: the lease outlived the process"
    after, users = _saved(db, sid)
    assert after >= before, f"{case}: {before - after} messages lost"
    if typed:
        assert TYPED in users, f"{case}: the message sent before the stop was not saved"
    for pid in commands:  # the command and what it started: stopped with myrm
        wait_exit(pid, 10)
    # What `myrm --session ID` checks before it opens: the session is there and nobody holds it.
    assert asyncio.run(_session_problem(db, sid, folder)) is None
    assert_old_or_whole(compacted, compaction_facts(db, sid))  # after that open's recovery, if any
    if reopen:  # and it does open, with what was sent before the stop
        again = Myrm(folder, db, sid, emu, "close")
        try:
            again.until(lambda: bool(READY.search(again.screen)), "ready after reopening")
            if typed:
                again.until(lambda: TYPED in again.screen, "the message sent before the stop")
            again.type(CTRL_Q)
            code = again.exit_code(EXIT_BOUND_S)[0]
            reopened_log = again.log.read_text() if again.log.exists() else ""
            shown = f"{again.screen[-3000:]}\n{reopened_log[-5000:]}"
            assert code == 0, f"{case}: reopened, exit {code}:\n{shown}"
            # an error while quitting no longer shows in the exit code: it is logged with its traceback
            assert "Traceback" not in reopened_log, f"{case}: reopened, ctrl+q:\n{shown}"
        finally:
            again.close()


EXPLICIT = Case("long", "command", "close", 1)
# Round 22 left it to the draw: SIGHUP while a ctrl+k compaction's summary is being written.
MID_COMPACTION = Case("long", "compaction", "SIGHUP", 1)
# Each example is a real process: a failure is reported as found, not shrunk (minutes of processes).
NO_SHRINK = [Phase.explicit, Phase.generate]


@settings(
    max_examples=2, deadline=None, suppress_health_check=list(HealthCheck), database=None, phases=NO_SHRINK
)
@given(case=cases())
# The terminal closing under a session with a conversation (the resume hint is printed after it is gone),
# then `myrm --session ID` in a new terminal.
@example(case=EXPLICIT)
@example(case=MID_COMPACTION)
def test_a_stop_at_any_moment_exits_in_bounded_time_with_the_session_saved(
    case: Case,
    tmp_path_factory: pytest.TempPathFactory,
    templates: dict[str, tuple[Path, str]],
    emulator: ProviderEmulator,
    gate: threading.Event,
) -> None:
    run_case(
        case, tmp_path_factory.mktemp("run"), templates, emulator, reopen=case in (EXPLICIT, MID_COMPACTION)
    )


@pytest.mark.long
@pytest.mark.timeout(1800)
@settings(
    max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), database=None, phases=NO_SHRINK
)
@given(case=cases())
def test_long_a_stop_at_any_moment_exits_in_bounded_time_with_the_session_saved(
    case: Case,
    tmp_path_factory: pytest.TempPathFactory,
    templates: dict[str, tuple[Path, str]],
    emulator: ProviderEmulator,
    gate: threading.Event,
) -> None:
    run_case(case, tmp_path_factory.mktemp("run"), templates, emulator, reopen=True)


# The wedge of issue 52 itself, without the app: the event loop blocked for ever in ``Queue.put`` of a
# Textual writer thread that is not running (as one that died on EIO), holding a session's lease.
WEDGED = """
import asyncio, sys
from textual.drivers._writer_thread import WriterThread
from myrm_tui.app import terminal_guard
from myrm_tui.logs import setup_logging
from myrm_tui.store.db import Store
setup_logging()
terminal_guard.STOP_DEADLINE_S = float(sys.argv[3])
guard = terminal_guard.install()
begin = guard._begin_stop
def announced(byte):  # the test's cue for a second signal (two at once may arrive as one)
    begin(byte)
    print("stopping", flush=True)
guard._begin_stop = announced
async def main():
    store = await Store.open(sys.argv[1])
    await store.acquire_lease(sys.argv[2])
    guard.attach(lambda code, reason: None, lambda: (store.path, dict(store._leases)))
    print("wedged", flush=True)
    writer = WriterThread(sys.stderr)
    while True:
        writer.write("a frame")  # the 31st blocks
asyncio.run(main())
"""


def _wedged(tmp_path: Path, deadline: float) -> tuple[warm.Process, Path]:
    db = tmp_path / "t.db"
    sid = asyncio.run(_make_session(db, 2))
    proc = warm.Popen(
        [sys.executable, "-c", WEDGED, str(db), sid, str(deadline)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "MYRM_LOG": str(tmp_path / "myrm.log")},
        cwd=tmp_path,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline() == b"wedged\n"
    assert _leases(db) != []
    return proc, db


def test_a_loop_blocked_for_ever_still_exits_at_the_deadline_with_the_lease_released(tmp_path: Path) -> None:
    proc, db = _wedged(tmp_path, 1.0)
    try:
        start = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10 + EXIT_BOUND_S) == 128 + signal.SIGTERM
        assert time.monotonic() - start >= 1.0  # the loop had its chance first
        assert _leases(db) == []
        assert "not saved in time" in (tmp_path / "myrm.log").read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)


def test_a_second_signal_exits_at_once(tmp_path: Path) -> None:
    proc, db = _wedged(tmp_path, 600.0)
    try:
        proc.send_signal(signal.SIGTERM)
        assert proc.stdout is not None and proc.stdout.readline() == b"stopping\n"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 128 + signal.SIGTERM  # long before the deadline of 600 s
        assert _leases(db) == []
        assert "a second signal (SIGTERM)" in (tmp_path / "myrm.log").read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)


def test_a_repeated_sighup_is_not_a_second_signal(tmp_path: Path) -> None:
    """A closing terminal sends SIGHUP more than once (the kernel, the shell): the second must not cut
    the save short; the stop runs to its deadline as after one."""
    proc, db = _wedged(tmp_path, 1.0)
    try:
        proc.send_signal(signal.SIGHUP)
        assert proc.stdout is not None and proc.stdout.readline() == b"stopping\n"
        proc.send_signal(signal.SIGHUP)
        assert proc.wait(10 + EXIT_BOUND_S) == 128 + signal.SIGHUP
        log = (tmp_path / "myrm.log").read_text()
        assert "not saved in time" in log and "a second signal" not in log
        assert _leases(db) == []
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)


def test_a_sigcont_that_no_stop_came_before_leaves_the_terminal_mode_alone(
    tmp_path: Path, templates: dict[str, tuple[Path, str]], emulator: ProviderEmulator
) -> None:
    """A hang-up sends SIGCONT with its SIGHUP. Textual restarted the application mode on every SIGCONT:
    a second writer and input thread on the dead terminal, the first writer's queue left to fill."""
    template, sid = templates["empty"]
    shutil.copy(template, tmp_path / "t.db")
    myrm = Myrm(tmp_path, tmp_path / "t.db", sid, emulator, "close")
    try:
        myrm.until(lambda: bool(READY.search(myrm.screen)), "ready")
        assert myrm.raw.count(b"\x1b[?1049h") == 1  # the alternate screen, entered once
        os.kill(myrm.proc.pid, signal.SIGCONT)
        myrm.type(b"qzq")  # its echo comes after the SIGCONT's handler has run (both on the main thread)
        myrm.until(lambda: "qzq" in myrm.screen, "the typed keys")
        myrm.type(CTRL_Q)
        code, _ = myrm.exit_code(EXIT_BOUND_S)
        assert code == 0
        assert myrm.raw.count(b"\x1b[?1049h") == 1, "the application mode was started again"
    finally:
        myrm.close()
