"""Every global option in every position and spelling, repeated, after ``--``, or unknown: honoured, or
refused in one line with exit 2 before anything runs — never silently ignored, never click's usage block.
``tests/cli/test_global_options.py`` checks each option's effect before and after each subcommand; this
checks, over generated command lines, what it does not: an option given twice with different values on
the same side (click kept the last one silently: ``myrm --db a.db --db b.db sessions`` listed b.db's),
``=``-forms, short forms, unknown options and commands, and a missing value."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from hypothesis import example, given, settings
from hypothesis import strategies as st

from tests.helpers import cli_env, run_myrm

# (long flag, short flag or None, two distinct values) of the options that take a value.
VALUED = [
    ("--model", "-m", ("openai/a-model", "openai/b-model")),
    ("--db", None, ("one.db", "two.db")),
    ("--session", "-s", ("aaaa", "bbbb")),
    ("--workspace", "-w", (".", "..")),
    ("--api-base", None, ("http://127.0.0.1:9/a", "http://127.0.0.1:9/b")),
]
SUBCOMMANDS = ["ask", "sessions", "doctor", "acp", "bench", None]  # None: the full screen


def spelled(flag: str, short: str | None, value: str, how: int) -> list[str]:
    """``flag value``, ``flag=value`` or the short form."""
    if how == 1:
        return [f"{flag}={value}"]
    if how == 2 and short:
        return [short, value]
    return [flag, value]


def one_line_exit_2(args: list[str], tmp: Path) -> str:
    proc = run_myrm(args, env=cli_env(tmp, "never.db"), cwd=tmp)  # a relative --db would be made here
    assert proc.returncode == 2, (args, proc.returncode, proc.stdout, proc.stderr)
    assert proc.stdout == "" and proc.stderr.count("\n") == 1, (args, proc.stderr)
    assert proc.stderr.startswith("myrm: ") and "Traceback" not in proc.stderr, proc.stderr
    assert list(tmp.iterdir()) == []  # refused before anything opened (a database, a workspace's files)
    return proc.stderr


@settings(max_examples=40, deadline=None)
@given(
    option=st.sampled_from(VALUED),
    sub=st.sampled_from(SUBCOMMANDS),
    first=st.sampled_from(["before", "after"]),
    how=st.tuples(st.integers(0, 2), st.integers(0, 2)),
)
@example(option=VALUED[1], sub="sessions", first="before", how=(0, 0))
@example(option=VALUED[0], sub=None, first="before", how=(1, 2))
def test_an_option_repeated_with_another_value_is_refused_in_one_line(
    option: tuple[str, str | None, tuple[str, str]], sub: str | None, first: str, how: tuple[int, int]
) -> None:
    """The same option twice on the same side of the subcommand, with two values, in any spelling."""
    flag, short, (a, b) = option
    twice = spelled(flag, short, a, how[0]) + spelled(flag, short, b, how[1])
    head = [] if sub is None else [sub]
    args = [*twice, *head] if first == "before" or sub is None else [*head, *twice]
    with tempfile.TemporaryDirectory() as name:
        line = one_line_exit_2(args, Path(name))
    # Either this refusal, or (after a subcommand that takes no such option) that it does not apply.
    assert f"{flag} given 2 times with different values: {a} and {b}" in line or "does not apply" in line, (
        line
    )


@settings(max_examples=30, deadline=None)
@given(
    sub=st.sampled_from(SUBCOMMANDS),
    unknown=st.sampled_from(["--bogus", "--mdoel=x", "-Z", "--db-path", "---", "--model-x"]),
    where=st.sampled_from(["before", "after"]),
)
@example(sub="sessions", unknown="--bogus", where="after")
def test_an_unknown_option_is_one_line_wherever_it_stands(sub: str | None, unknown: str, where: str) -> None:
    """An option nobody takes: one line naming it, exit 2 (it was click's four-line usage block)."""
    head = [] if sub is None else [sub]
    args = [unknown, *head] if where == "before" or sub is None else [*head, unknown]
    with tempfile.TemporaryDirectory() as name:
        line = one_line_exit_2(args, Path(name))
    assert unknown.split("=")[0] in line or "No such option" in line, line


def test_a_missing_value_an_extra_argument_and_an_unknown_command_are_one_line(tmp_path: Path) -> None:
    assert "--db" in one_line_exit_2(["sessions", "--db"], tmp_path)
    assert "--db x" in one_line_exit_2(["sessions", "--", "--db", "x"], tmp_path)
    assert "'sesions'" in one_line_exit_2(["sesions"], tmp_path)


def test_the_same_value_twice_is_not_refused(tmp_path: Path, absent_gguf: dict[str, str]) -> None:
    """Repeating an option with the value it already has changes nothing: it runs, to the end of doctor's
    report (exit 1 for its one problem, the absent GGUF; a refusal is exit 2 before anything runs)."""
    args = ["-m", "openai/x", "--model=openai/x", "doctor", "--quiet", "--no-network"]  # no real provider
    proc = run_myrm(args, env=cli_env(tmp_path, **absent_gguf))
    assert proc.returncode == 1 and "given" not in proc.stderr, proc.stderr
    assert proc.stdout.startswith("myrm doctor: problems: the embedded model cannot generate:"), proc.stdout
    assert proc.stdout.count("problems") == 1 and "," not in proc.stdout, proc.stdout


@settings(max_examples=12, deadline=None)
@given(
    sub=st.sampled_from(SUBCOMMANDS),
    folder=st.sampled_from(["no/such/folder", sys.executable]),  # missing; a file
    where=st.sampled_from(["before", "after"]),
)
@example(sub="ask", folder="no/such/folder", where="before")
def test_a_workspace_that_is_not_a_folder_is_refused_in_one_line(
    sub: str | None, folder: str, where: str
) -> None:
    """``myrm -w /mistyped ask hi`` ran the turn in a folder that does not exist (every tool call failed)."""
    head = [] if sub is None else [sub]
    args = ["-w", folder, *head] if where == "before" or sub is None else [*head, "-w", folder]
    with tempfile.TemporaryDirectory() as name:
        line = one_line_exit_2([*args, *(["hi"] if sub == "ask" else [])], Path(name))
    assert (
        "--workspace" in line and ("does not exist" in line or "is a file" in line)
    ) or "does not apply" in line, line
