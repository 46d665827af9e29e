"""What the command line prints from outside is inert and never a traceback: `myrm ask`'s answer and tool
lines, the `myrm sessions` table (a title is a model's, an imported file's or a typed one), an export to
a terminal; and text that is not UTF-8 anywhere (a reply's JSON ``"\\ud800"``, an argument that is not
UTF-8) is carried as U+FFFD to the store, the provider and the screen instead of ending the command."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from myrm_tui.context.text.call_args import whole_text
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.app.test_inert_text import DANGEROUS, attacking
from tests.helpers import cli_env, emulator_args, run_myrm

# What a user can type that Python hands over as a lone surrogate: a byte that is not UTF-8.
NOT_UTF8 = os.fsdecode(b"caf\xe9 \xff")


def _user_texts(body: dict[str, object]) -> list[str]:
    return [str(m["content"]) for m in body["messages"] if isinstance(m, dict) and m.get("role") == "user"]  # type: ignore[attr-defined]


@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(reply=attacking, prompt=attacking)
@example(reply="lone \ud800 surrogate \u202eevil\u202c \x1b]52;c;cHduZWQ=\x07", prompt=NOT_UTF8)
@example(reply="ok", prompt="-0")
def test_ask_prints_any_reply_inert_and_sends_any_prompt(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path, reply: str, prompt: str
) -> None:
    """Whatever the model answers and whatever the prompt holds: exit 0, the answer on stdout with
    nothing a terminal obeys, the prompt at the provider with U+FFFD for what UTF-8 cannot hold, and the
    session listed (its title the prompt's) with nothing a terminal obeys either."""
    assume(prompt != "-")  # the documented "read the prompt from standard input"
    emulator.requests.clear()
    emulator.enqueue(Reply(text=reply))
    env = cli_env(tmp_path)
    # After "--", as a shell user passes a prompt that starts with "-" (else it is read as an option).
    proc = run_myrm(["ask", *emulator_args(emulator, workspace), "--", prompt], env=env)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert not DANGEROUS & set(proc.stdout + proc.stderr)
    assert len(emulator.requests) == 1
    assert _user_texts(emulator.requests[0].body)[-1] == whole_text(prompt)
    listing = run_myrm(["sessions"], env=env)
    assert listing.returncode == 0 and "Traceback" not in listing.stderr, listing.stderr
    assert not DANGEROUS & set(listing.stdout)


def test_the_sessions_table_and_an_export_to_a_terminal_show_escape_codes_inert(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    """A title that retitles the window and a reply that writes the clipboard: the table shows both
    inert; `--export` to a terminal too, while a file gets the history as it is."""
    emulator.enqueue(Reply(text="the answer \x1b]52;c;cHduZWQ=\x07"))
    env = cli_env(tmp_path)
    proc = run_myrm(["ask", "hi \x1b]0;PWNED\x07", *emulator_args(emulator, workspace)], env=env)
    assert proc.returncode == 0, proc.stderr
    listing = run_myrm(["sessions"], env=env)
    assert "\x1b" not in listing.stdout and "␛]0;PWNED␇" in listing.stdout
    sid = listing.stdout.split()[0]
    to_file = run_myrm(["sessions", "--export", sid], env=env)
    assert "the answer \x1b]52;c;cHduZWQ=\x07" in to_file.stdout  # a file is faithful
    # The same export with a terminal as its standard output: a real process on a pseudo-terminal.
    master, slave = pty.openpty()
    try:
        child = subprocess.Popen(
            [sys.executable, "-m", "myrm_tui.cli", "sessions", "--export", sid],
            stdout=slave,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        shown = b""
        while child.poll() is None or select.select([master], [], [], 0)[0]:
            if select.select([master], [], [], 0.1)[0]:  # read as a terminal does: the child never blocks
                shown += os.read(master, 65536)
        assert child.returncode == 0
        text = shown.decode("utf-8")
        assert "the answer ␛]52;c;cHduZWQ=␇" in text and "\x1b" not in text
    finally:
        os.close(master)
        os.close(slave)


def test_a_session_id_that_is_not_utf8_is_one_line(tmp_path: Path) -> None:
    """`myrm sessions --export $'\\xff'`: no such session, said in one line with exit 2 (it was a
    traceback from the database's encoder)."""
    proc = run_myrm(["sessions", "--export", NOT_UTF8], env=cli_env(tmp_path))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.startswith("myrm: no session ") and proc.stderr.count("\n") == 1


def _file_name(text: str) -> str:
    """``text`` as a file name can hold it: no ``/`` nor NUL, and bytes the file system takes."""
    name = text.replace("/", "_").replace("\0", "_")[:100] or "x"
    return os.fsdecode(os.fsencode(name.encode("utf-8", "replace").decode("utf-8")))


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=attacking)
@example(name="x\x1b]0;PWNED\x07[b]\u202eevil")
def test_doctor_names_a_repositorys_files_inert(
    emulator: ProviderEmulator,
    tmp_path_factory: pytest.TempPathFactory,
    absent_gguf: dict[str, str],
    name: str,
) -> None:
    """`myrm doctor` names the filter files an untrusted folder holds: a cloned repository chose their
    names, escape sequences and bidi overrides included. Nothing a terminal obeys is printed."""
    tmp = tmp_path_factory.mktemp("doctor")
    folder = tmp / "repo" / ".myrm" / "filters"
    folder.mkdir(parents=True)
    (folder / (_file_name(name) + ".yaml")).write_text("rules: []\n")
    workspace = tmp / "repo"
    proc = run_myrm(["doctor", *emulator_args(emulator, workspace)], env=cli_env(tmp, **absent_gguf))
    assert "Traceback" not in proc.stderr, proc.stderr
    assert "not trusted" in proc.stdout or "trust" in proc.stdout, proc.stdout
    assert not DANGEROUS & set(proc.stdout + proc.stderr)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ids=st.lists(attacking, min_size=1, max_size=3))
@example(ids=["x\x1b]0;PWNED\x07", "\u202eevil"])
def test_the_command_lines_error_lines_quote_a_files_ids_inert(
    tmp_path_factory: pytest.TempPathFactory, ids: list[str]
) -> None:
    """`myrm --replay FILE#ID` names the nearest ids of the recording when the one asked for is not
    there: a recording from elsewhere chose them. Every error line the command prints is inert."""
    tmp = tmp_path_factory.mktemp("replay")
    path = tmp / "rec.jsonl"
    path.write_text(
        "".join(json.dumps({"id": i, "messages": [{"role": "user", "content": "hi"}]}) + "\n" for i in ids)
    )
    proc = run_myrm(["--replay", f"{path}#{ids[0][:3]}-missing"], env=cli_env(tmp))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert "no conversation" in proc.stderr
    assert not DANGEROUS & set(proc.stderr)
