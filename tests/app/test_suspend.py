"""Ctrl+Z puts myrm in the background as it does any terminal program (Claude Code and Codex too), and the
shell's ``fg`` brings it back as it was: the whole screen drawn again, the prompt's text kept, a turn that
was running goes on. Before, ctrl+z was the prompt box's undo: it ate what was typed, and myrm stayed.

The real thing: an interactive bash on a pseudo-terminal of its own (job control on) runs ``python -m
myrm_tui`` as a job; the test types into the terminal as a user does and waits on what is drawn. Where no
shell could bring myrm back (started by ``setsid``, a terminal's own command, ``tmux new 'myrm'``) ctrl+z
is refused with a notice instead of freezing it for good; a Pilot test presses it where it cannot
suspend (the headless driver)."""

from __future__ import annotations

import contextlib
import fcntl
import os
import pty
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from textual.widgets import TextArea

import myrm_tui
from myrm_tui.app.perf import ANSI, READY, _descendants
from myrm_tui.app.widgets.prompt_input import PromptInput
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.helpers import SMALL_SCREEN, make_app, started, type_text, wait_until

CTRL_Z, CTRL_Q, ENTER = b"\x1a", b"\x11", b"\r"
PROMPT = "shell-under-test$ "
SHELL = ("bash", "--norc", "--noprofile", "-i")
MYRM = (sys.executable, "-m", "myrm_tui")
STARTS_S = 120.0  # a cold start on a loaded machine; anything after it is drawn within the default wait


class Terminal:
    """``argv`` on a pty of its own (the session leader, the pty its controlling terminal); by default an
    interactive bash (job control on)."""

    def __init__(self, folder: Path, env: dict[str, str], argv: tuple[str, ...] = SHELL) -> None:
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: never returns
            fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
            os.chdir(folder)
            os.execvpe(argv[0], list(argv), env)
        self.raw = ""

    def text(self, since: int = 0) -> str:
        return ANSI.sub("", self.raw[since:])

    def until(self, done: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while not done():
            assert time.monotonic() < deadline, f"no {what} in {timeout:.0f} s: {self.text()[-2000:]!r}"
            r, _, _ = select.select([self.fd], [], [], 0.1)
            if r:
                try:
                    self.raw += os.read(self.fd, 65536).decode("utf-8", "replace")
                except OSError:
                    return

    def type(self, data: bytes) -> None:
        os.write(self.fd, data)

    def myrm(self) -> int | None:
        for pid in (self.pid, *_descendants(self.pid)):
            with contextlib.suppress(OSError):
                if b"myrm_tui" in Path(f"/proc/{pid}/cmdline").read_bytes():
                    return pid
        return None

    def close(self) -> None:
        for pid in (*_descendants(self.pid), self.pid):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self.pid, 0)
        os.close(self.fd)


def _state(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


def _env(tmp_path: Path, emulator: ProviderEmulator) -> dict[str, str]:
    return {
        **os.environ,
        "TERM": "xterm-256color",
        "PS1": PROMPT,
        "MYRM_DB": str(tmp_path / "t.db"),
        "MYRM_CONFIG": str(tmp_path / "config.toml"),
        "MYRM_LOG": str(tmp_path / "myrm.log"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "MYRM_MODEL": "openai/gpt-4o-mini",
        "MYRM_API_BASE": emulator.openai_base,
        "OPENAI_API_KEY": "sk-test",
        # The code under test (a mutated copy in `make protections`), not whatever is installed.
        "PYTHONPATH": str(Path(myrm_tui.__file__).resolve().parents[1]),
    }


@pytest.fixture
def shell(tmp_path: Path, emulator: ProviderEmulator) -> Iterator[Terminal]:
    sh = Terminal(tmp_path, _env(tmp_path, emulator))
    try:
        sh.until(lambda: PROMPT in sh.text(), "the shell's prompt")
        yield sh
    finally:
        sh.close()


@pytest.mark.slow
def test_ctrl_z_stops_myrm_and_fg_brings_it_back_as_it_was(
    shell: Terminal, emulator: ProviderEmulator
) -> None:
    answer = threading.Event()
    emulator.default = Reply(text="the answer after fg", gate=answer)
    shell.type(" ".join(MYRM).encode() + ENTER)
    shell.until(lambda: READY.search(shell.text()) is not None, "myrm ready", STARTS_S)
    pid = shell.myrm()
    assert pid is not None
    shell.type(b"first question" + ENTER)
    shell.until(lambda: any("first question" in str(r.body) for r in emulator.requests), "the turn's request")
    shell.type(b"kept draft")
    shell.until(lambda: "kept draft" in shell.text(), "the draft drawn")

    mark = len(shell.raw)
    shell.type(CTRL_Z)
    shell.until(lambda: "Stopped" in shell.text(mark) and PROMPT in shell.text(mark), "the job stopped")
    assert "\x1b[?1049l" in shell.raw[mark:]  # the alternate screen was left: the shell's screen is back
    assert _state(pid) == "T"
    shell.type(b"echo the shell works" + ENTER)
    shell.until(lambda: re.search(r"[\r\n]the shell works\r\n", shell.text(mark)) is not None, "its output")

    back = len(shell.raw)
    shell.type(b"fg" + ENTER)
    # Every line drawn again, the unchanged ones too: the footer, the draft in the box.
    shell.until(
        lambda: all(w in shell.text(back) for w in ("Quit", "Sessions", "kept draft")), "the screen redrawn"
    )
    assert _state(pid) != "T"
    answer.set()  # the turn that ran when myrm stopped goes on
    shell.until(lambda: "the answer after fg" in shell.text(back), "the turn's answer")
    shell.type(ENTER)  # the draft, kept, is sent
    shell.until(lambda: any("kept draft" in str(r.body) for r in emulator.requests), "the draft sent")
    shell.until(lambda: READY.search(shell.text(len(shell.raw) - 2000)) is not None, "ready again")
    shell.type(CTRL_Q)
    shell.until(lambda: "resume with: myrm --session" in shell.text(back), "myrm's exit")
    assert "Traceback" not in shell.text()


@pytest.mark.slow
def test_ctrl_z_with_no_shell_to_come_back_to_is_refused_with_a_notice(
    tmp_path: Path, emulator: ProviderEmulator
) -> None:
    """myrm as the terminal's own command (here: the pty's session leader, as ``tmux new 'myrm'`` starts
    it): stopped, nothing would ever continue it; it says so and goes on."""
    term = Terminal(tmp_path, _env(tmp_path, emulator), MYRM)
    try:
        term.until(lambda: READY.search(term.text()) is not None, "myrm ready", STARTS_S)
        term.type(b"my draft")
        term.until(lambda: "my draft" in term.text(), "the draft drawn")
        mark = len(term.raw)
        term.type(CTRL_Z)
        term.until(lambda: "no shell started myrm" in term.text(mark), "the notice")
        assert _state(term.pid) != "T"
        term.type(b" goes on")
        term.until(lambda: "my draft goes on" in term.text(mark), "the keys after it")
    finally:
        term.close()


def _can_resume(**popen: object) -> str:
    """``shell_can_resume()`` in a child process started with ``popen`` (a new session, a group)."""
    code = "from myrm_tui.app.terminal_guard import shell_can_resume; print(shell_can_resume())"
    return subprocess.run(  # type: ignore[call-overload,no-any-return]
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60, **popen
    ).stdout.strip()


def test_only_a_job_started_by_a_shell_in_its_session_counts_as_resumable() -> None:
    """A job of its own group whose parent is in its session (what ``bash -i`` starts) can be brought back;
    a process that leads a session of its own (``setsid``, ``tmux new 'myrm'``) cannot."""
    assert _can_resume(process_group=0) == "True"
    assert _can_resume(start_new_session=True) == "False"


async def test_ctrl_z_where_myrm_cannot_be_suspended_says_so_and_keeps_the_text(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    """ctrl+z is no longer the box's undo (it ate the draft and myrm stayed): where the terminal cannot be
    given back it says so; undo is ctrl+_ (as in Claude Code)."""
    app = make_app(emulator, tmp_path, workspace, preheat=False)
    async with started(app, size=SMALL_SCREEN) as pilot:
        box = app.query_one(PromptInput)
        await type_text(pilot, "my draft")
        await wait_until(pilot, lambda: box.text == "my draft")
        await pilot.press("ctrl+z")
        await wait_until(pilot, lambda: any("cannot suspend" in str(n.message) for n in app._notifications))
        assert box.text == "my draft"
        await pilot.press("ctrl+underscore")
        await wait_until(pilot, lambda: box.text != "my draft")
        assert isinstance(box, TextArea) and "my draft".startswith(box.text)
