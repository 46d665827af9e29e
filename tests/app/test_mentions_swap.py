"""``@``-attach judges the file it opened, not the one it stat'ed: a file swapped for a FIFO (or a link
out of the workspace) between the check and the read is left as written, and the UI is never held."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from myrm_tui import attachments


def _swap_after_stat(monkeypatch: pytest.MonkeyPatch, target: Path, swap: Callable[[], None]) -> list[Path]:
    """The file passes ``attach``'s stat as a regular file, then is replaced before it is opened; the list
    holds the target once that happened."""
    real = os.stat
    swapped: list[Path] = []

    def stat_then_swap(path: object, *args: object, **kw: object) -> os.stat_result:
        result = real(path, *args, **kw)  # type: ignore[arg-type]
        # attach's own check (Path.resolve stats the path too, before it)
        if not swapped and str(path) == str(target) and sys._getframe(1).f_code.co_name == "attach":
            swapped.append(target)  # first, so that a stat made by the swap itself passes through
            swap()
        return result

    monkeypatch.setattr(attachments.os, "stat", stat_then_swap)
    return swapped


def _attach_in_thread(text: str, root: Path) -> tuple[str, dict[str, str]] | None:
    """``attach`` with a deadline: None if it is still blocked after it (a FIFO open waits for a writer)."""
    out: list[tuple[str, dict[str, str]]] = []
    worker = threading.Thread(target=lambda: out.append(attachments.attach(text, root)), daemon=True)
    worker.start()
    worker.join(30)
    return out[0] if out else None


def test_a_file_swapped_for_a_fifo_after_the_check_is_not_attached_and_does_not_block(
    monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    target = (workspace / "notes.txt").resolve()
    target.write_text("harmless\n")

    def to_fifo() -> None:
        target.unlink()
        os.mkfifo(target)

    swapped = _swap_after_stat(monkeypatch, target, to_fifo)
    result = _attach_in_thread("read @notes.txt and @hello.py", workspace)
    assert swapped == [target]
    if result is None:  # blocked: free the thread (a writer opens the FIFO) before failing
        fd = os.open(target, os.O_WRONLY | os.O_NONBLOCK)
        os.close(fd)
        pytest.fail("attach blocked on a FIFO swapped in after its check")
    text, labels = result
    assert '<file path="notes.txt">' not in text and list(labels) == ["\n[attached hello.py · 2 lines]"]


def test_a_file_swapped_for_a_link_out_of_the_workspace_is_not_attached(
    monkeypatch: pytest.MonkeyPatch, workspace: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("AKIAIOSFODNN7EXAMPLE\n")
    target = (workspace / "notes.txt").resolve()
    target.write_text("harmless\n")

    def to_link() -> None:
        target.unlink()
        target.symlink_to(secret)

    swapped = _swap_after_stat(monkeypatch, target, to_link)
    result = _attach_in_thread("read @notes.txt", workspace)
    assert swapped == [target]
    assert result is not None
    text, labels = result
    assert "AKIA" not in text and labels == {}
