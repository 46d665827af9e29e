"""A FIFO named like a transcript (in a folder walked for ``*.jsonl``, or given to ``--import``) is not a
file to read: it is skipped or refused in one line, and nothing waits for a writer that never comes."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from myrm_tui.store.foreign import sessions_in
from tests.helpers import cli_env, run_myrm
from tests.store.test_foreign import claude_transcript


def _with_deadline(fifo: Path, work: Callable[[], Any]) -> Any:
    """``work()`` in a thread; if it is still blocked after 30 s, a writer frees it and the test fails."""
    out: list[Any] = []
    worker = threading.Thread(target=lambda: out.append(work()), daemon=True)
    worker.start()
    worker.join(30)
    if not out:
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        os.close(fd)
        worker.join(5)
        pytest.fail(f"blocked on the FIFO {fifo}")
    return out[0]


def test_a_fifo_in_a_folder_of_transcripts_is_skipped(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    folder.mkdir()
    real = claude_transcript(folder)
    fifo = folder / "evil.jsonl"
    os.mkfifo(fifo)
    assert _with_deadline(fifo, lambda: sessions_in(folder)) == [real]


def test_importing_a_fifo_is_one_line(tmp_path: Path) -> None:
    fifo = tmp_path / "evil.jsonl"
    os.mkfifo(fifo)
    proc = _with_deadline(fifo, lambda: run_myrm(["sessions", "--import", str(fifo)], env=cli_env(tmp_path)))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith(f"myrm: {fifo}: not a Claude Code transcript"), proc.stderr
