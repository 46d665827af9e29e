"""A file given to ``--import`` (or found in a folder of transcripts) may be a decompression bomb: a few
kilobytes of gzip that unpack to gigabytes, one line or many. Reading stops at ``MAX_IMPORT_BYTES`` of
text with one line saying so, whatever the file's shape, and memory stays near that bound."""

from __future__ import annotations

import gzip
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from myrm_tui.store import foreign_read
from myrm_tui.store.foreign import ForeignError, read_session
from tests.helpers import cli_env, run_myrm

CAP = 1 << 20  # the bound the test sets: a bomb of 24 MB is then 24 times over it

# A Claude Code line, to make the start of a file look like a transcript.
HEAD = b'{"type": "user", "uuid": "u1", "message": {"role": "user", "content": "hi"}}\n'


def _line(n: int) -> bytes:
    """A transcript line of ``n`` bytes: a user message padded to length."""
    start, end = b'{"type": "user", "uuid": "u", "message": {"role": "user", "content": "', b'"}}\n'
    return start + b"x" * max(0, n - len(start) - len(end)) + end


def _bomb(path: Path, size: int, line: int, gz: bool, head: bool) -> Path:
    """``size`` bytes of text, gzipped or not, written a chunk at a time: transcript lines of ``line``
    bytes, or (0) one line that never ends."""
    chunk = _line(line) * max(1, (1 << 16) // line) if line else b"0" * (1 << 16)
    opener = gzip.open if gz else open
    with opener(path, "wb") as f:  # type: ignore[operator]
        f.write(HEAD if head else b"")
        f.write(b"" if line else b'{"type": "user", "uuid": "u2", "text": "')
        for _ in range(size // len(chunk) + 1):
            f.write(chunk)
    return path


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    line=st.sampled_from([0, 120, 4096, 300_000]),
    gz=st.booleans(),
    head=st.booleans(),
    json_name=st.booleans(),
)
@example(line=0, gz=True, head=True, json_name=False)
def test_a_file_larger_than_the_bound_is_refused_in_one_line_without_reading_it_all(
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    line: int,
    gz: bool,
    head: bool,
    json_name: bool,
) -> None:
    monkeypatch.setattr(foreign_read, "MAX_IMPORT_BYTES", CAP)
    folder = tmp_path_factory.mktemp("bomb")
    name = "s.json" if json_name else "s.jsonl"
    path = _bomb(folder / (name + (".gz" if gz else "")), 24 * CAP, line, gz, head)
    tracemalloc.start()
    try:
        with pytest.raises(ForeignError) as err:
            read_session(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert "larger than 1 MB" in str(err.value) and "\n" not in str(err.value)
    assert peak < 8 * CAP, f"read {peak:,} bytes into memory"


def test_the_command_refuses_a_bomb_in_one_line(tmp_path: Path) -> None:
    """Past the real bound (hundreds of megabytes unpacked from a few hundred kilobytes): exit 2, one line."""
    size = foreign_read.MAX_IMPORT_BYTES + (1 << 20)
    path = _bomb(tmp_path / "evil.jsonl.gz", size, 0, True, True)
    assert path.stat().st_size < size // 100
    proc = run_myrm(["sessions", "--import", str(path)], env=cli_env(tmp_path))
    assert proc.returncode == 2, proc.stderr
    assert "larger than" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
