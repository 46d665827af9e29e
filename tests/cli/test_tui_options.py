"""``myrm [OPTIONS]`` parsed without typer (the full screen's start) reads exactly what typer reads, or
leaves the command line to typer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import typer
from hypothesis import given, settings
from hypothesis import strategies as st

from myrm_tui import cli

FLAGS = [
    "-m",
    "--model",
    "-s",
    "--session",
    "-c",
    "--continue",
    "--db",
    "-w",
    "--workspace",
    "--api-base",
    "--replay",
]
FLAGS += ["--speed", "--version", "--help", "--no-such", "-x", "--", "ask", "sessions"]
VALUES = ["openai/gpt-4o", "a.db", "sub/dir", "0.25", "3", "abc", "", "-", "1e2", "nan", "x=y"]
tokens = st.one_of(
    st.sampled_from(FLAGS),
    st.sampled_from(VALUES),
    st.builds(lambda f, v: f"{f}={v}", st.sampled_from(FLAGS), st.sampled_from(VALUES)),
)


def _typer_reads(argv: list[str]) -> dict[str, Any] | None:
    """What typer parses from ``argv`` for the full screen; None when it would fail, show help or run a
    command instead."""
    command = typer.main.get_command(cli.app)
    try:
        ctx = command.make_context("myrm", list(argv))
    except (Exception, SystemExit):  # a usage error, --help's exit
        return None
    if ctx._protected_args or ctx.args:  # a command follows
        return None
    return dict(ctx.params)


@settings(max_examples=300, deadline=None)
@given(argv=st.lists(tokens, max_size=6))
def test_the_options_read_without_typer_are_typers_or_none(argv: list[str]) -> None:
    mine = cli._tui_options(argv)
    if mine is not None:
        assert mine == _typer_reads(argv), argv


def test_the_usual_starts_are_read_without_typer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ws").mkdir()
    (tmp_path / "a-file").write_text("")
    for argv in (
        [],
        ["-m", "openai/gpt-4o"],
        ["--model=x", "--db", "a.db", "-w", "ws", "--replay", "r.jsonl", "--speed", "2"],
    ):
        mine = cli._tui_options(argv)
        assert mine is not None and mine == _typer_reads(argv), argv
    for argv in (
        ["--version"],
        ["--help"],
        ["ask", "hi"],
        ["--speed", "fast"],
        ["--speed", "2"],  # --speed without --replay: typer's path refuses it in one line
        ["-m"],
        ["-m", "a", "-m", "b"],
        ["-m=x"],
        ["-w", "no-such-folder"],  # typer refuses a workspace that is not a folder, in one line
        ["-w", "a-file"],
    ):
        assert cli._tui_options(argv) is None, argv  # typer's to parse (and to explain)
