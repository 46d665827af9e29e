"""``myrm ask`` and what is piped into it, as a user of Codex's ``exec`` or ``claude -p`` expects:
``cmd | myrm ask "why?"`` sends the message and then standard input in a ``<stdin>`` block (it was read by
nobody), ``myrm ask < q.txt`` sends the file as the message (it was refused), an empty message is refused
before anything is sent (the model was asked nothing and answered with an apology), and a caller that left
stdin open and silent does not hang the turn (a program's default pipe)."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from myrm_tui.agent import stream_json
from myrm_tui.agent.stream_json import prompt_with_stdin
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.helpers import cli_env, emulator_args, last_user_text, run_myrm


def test_piped_input_follows_the_message_in_a_stdin_block(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    emulator.requests.clear()
    emulator.enqueue(Reply(text="It is the missing import."))
    got = run_myrm(
        ["ask", "why does the build fail?", *emulator_args(emulator, workspace)],
        env=cli_env(tmp_path),
        stdin="E: ERR42 in build.c\n",
    )
    assert got.returncode == 0 and "missing import" in got.stdout, got.stderr
    sent = last_user_text(emulator.accepted[-1].body)  # what the provider received, not what we meant
    assert "why does the build fail?\n\n<stdin>\nE: ERR42 in build.c\n</stdin>" in sent


def test_no_message_takes_piped_stdin_as_the_message(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    emulator.requests.clear()
    emulator.enqueue(Reply(text="4"))
    got = run_myrm(["ask", *emulator_args(emulator, workspace)], env=cli_env(tmp_path), stdin="what is 2+2?")
    assert got.returncode == 0 and got.stdout.startswith("4"), got.stderr
    sent = last_user_text(emulator.accepted[-1].body)
    assert "what is 2+2?" in sent and "<stdin>" not in sent


@pytest.mark.parametrize(("args", "stdin"), [([], ""), ([" \n\t"], ""), (["-"], "\n \n"), ([""], " ")])
def test_an_empty_message_is_refused_in_one_line_before_anything_is_sent(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path, args: list[str], stdin: str
) -> None:
    emulator.requests.clear()
    got = run_myrm(["ask", *args, *emulator_args(emulator, workspace)], env=cli_env(tmp_path), stdin=stdin)
    assert got.returncode == 2 and "Traceback" not in got.stderr, got.stderr
    assert got.stderr.strip() == 'myrm: the message is empty: give one (myrm ask "…") or pipe it in'
    assert emulator.requests == []


@pytest.mark.parametrize(("args", "code", "out"), [(["hi"], 0, "ok answer"), ([], 2, "")])
def test_a_closed_stdin_is_no_input_not_a_crash(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path, args: list[str], code: int, out: str
) -> None:
    """A real process started with its standard input closed (``<&-``; some service managers and
    launchers): ``myrm ask "hi"`` crashed with a traceback before sending anything (found in review5; it
    worked before stdin was read after a message); with no message it is the empty message's one line."""
    emulator.default = Reply(text="ok answer")
    argv = [sys.executable, "-m", "myrm_tui.cli", "ask", *args, *emulator_args(emulator, workspace)]
    got = subprocess.run(
        ["sh", "-c", 'exec "$@" <&-', "sh", *argv],
        env=cli_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert "Traceback" not in got.stderr and got.returncode == code, got.stderr
    assert got.stdout.strip() == out


@pytest.fixture
def pipe_stdin(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[int, io.TextIOWrapper]]:
    """Standard input replaced by a real pipe's read end; yields its write end's descriptor."""
    read, write = os.pipe()
    stdin = os.fdopen(read, "r")
    monkeypatch.setattr("sys.stdin", stdin)
    try:
        yield write, stdin
    finally:
        with contextlib.suppress(OSError):
            os.close(write)
        stdin.close()


def test_a_pipe_left_open_and_silent_is_not_waited_on_for_ever(
    pipe_stdin: tuple[int, io.TextIOWrapper],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("MYRM_STDIN_WAIT", "0.05")
    got: list[str] = []
    reader = threading.Thread(target=lambda: got.extend(prompt_with_stdin("hi")), daemon=True)
    reader.start()
    reader.join(timeout=30)  # far over the 0.05 s asked; a read of the open pipe would block for ever
    alive = reader.is_alive()
    os.close(pipe_stdin[0])  # ends a blocked read, so the thread does not outlive the test
    reader.join()
    assert not alive and got == ["hi"]
    assert "nothing came on standard input in 0.05 s" in capsys.readouterr().err


def test_a_pipe_that_brought_its_data_and_ended_is_read_whole(
    pipe_stdin: tuple[int, io.TextIOWrapper], monkeypatch: pytest.MonkeyPatch
) -> None:
    write, _ = pipe_stdin
    monkeypatch.setenv("MYRM_STDIN_WAIT", "0")  # the data is there: no waiting needed
    os.write(write, b"line one\n\xff line two\n")
    os.close(write)
    assert list(prompt_with_stdin("explain")) == ["explain\n\n<stdin>\nline one\n\ufffd line two\n</stdin>"]


def test_a_terminal_is_never_read(monkeypatch: pytest.MonkeyPatch) -> None:
    main, side = os.openpty()
    with os.fdopen(side, "r") as tty:
        monkeypatch.setattr("sys.stdin", tty)
        assert list(prompt_with_stdin("hi")) == ["hi"]  # returned at once: a read here would block
    os.close(main)


@settings(max_examples=60, deadline=None)
@given(prompt=st.text(min_size=1).filter(str.strip), piped=st.text())
def test_the_message_is_the_prompt_then_what_was_piped(prompt: str, piped: str) -> None:
    """Whatever the two texts: the prompt comes first and whole; non-blank piped text follows it, whole,
    in one block; blank piped text adds nothing."""
    saved = stream_json.sys.stdin
    stream_json.sys.stdin = io.StringIO(piped)  # no descriptor: read as text, as run_myrm's
    try:
        (message,) = prompt_with_stdin(prompt)
    finally:
        stream_json.sys.stdin = saved
    if not piped.strip():
        assert message == prompt
    else:
        assert message == f"{prompt}\n\n<stdin>\n{piped.rstrip(chr(10))}\n</stdin>"
