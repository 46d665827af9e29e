"""`myrm sessions` logs a failure it turns into a line to the log file, as the other commands do: the
terminal gets the one line (found: 'myrm sessions --import /missing' printed the log record and its whole
traceback above 'myrm: /missing: ...'; the in-process runner of the other tests swaps the logger, so only a
real process shows it)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import cli_env


@pytest.mark.parametrize("name,body", [("missing.jsonl", None), ("bad.jsonl", "{not json\n")])
def test_an_import_that_fails_is_one_line_and_its_traceback_is_in_the_log(
    tmp_path: Path, name: str, body: str | None
) -> None:
    path = tmp_path / name
    if body is not None:
        path.write_text(body)
    log = tmp_path / "myrm.log"
    done = subprocess.run(
        [sys.executable, "-m", "myrm_tui.cli", "sessions", "--import", str(path)],
        env=cli_env(tmp_path, MYRM_LOG=str(log)),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert done.stderr.startswith(f"myrm: {path}") and done.stderr.count("\n") == 1, done.stderr
    text = log.read_text(encoding="utf-8")
    assert f"import of {path} failed" in text and "Traceback (most recent call last)" in text, text
