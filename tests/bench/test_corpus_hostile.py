"""A recording given to ``myrm --replay`` or ``myrm bench --corpus`` comes from elsewhere: whatever its
lines hold (JSON nested past Python's recursion limit, an object that never closes, a decompression
bomb), each command says what is wrong in one line and exits 2, and the reader raises only its own
error, reading no more than ``MAX_IMPORT_BYTES`` of text."""

from __future__ import annotations

import gzip
import json
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from myrm_tui.bench.corpus import CorpusError, load_conversations
from myrm_tui.cli import _replay_problem
from myrm_tui.store import foreign_read
from tests.bench.test_corpus import GOOD, _one_clear_line
from tests.helpers import cli_env, run_myrm


def _nested(depth: int, kind: str) -> str:
    """A corpus line whose "messages" (or an item of them) is nested ``depth`` deep."""
    inner = "[" * depth + "]" * depth if kind == "array" else '{"a":' * depth + "1" + "}" * depth
    if kind == "in-a-message":
        inner = '[{"role": "user", "content": "x", "meta": ' + '{"a":' * depth + "1" + "}" * depth + "}]"
    return json.dumps({"id": "deep", "messages": []})[:-3] + inner + "}"


def _write(path: Path, lines: list[str]) -> Path:
    data = ("\n".join(lines) + "\n").encode()
    path.write_bytes(gzip.compress(data) if path.suffix == ".gz" else data)
    return path


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    depth=st.sampled_from([2_000, 50_000, 200_000]),
    kind=st.sampled_from(["array", "object", "in-a-message"]),
    before=st.integers(0, 2),
    gz=st.booleans(),
)
@example(depth=100_000, kind="array", before=0, gz=False)
def test_json_nested_past_the_recursion_limit_is_one_error_line(
    tmp_path_factory: pytest.TempPathFactory, depth: int, kind: str, before: int, gz: bool
) -> None:
    path = _write(
        tmp_path_factory.mktemp("deep") / ("c.jsonl" + (".gz" if gz else "")),
        [GOOD] * before + [_nested(depth, kind)],
    )
    with pytest.raises(CorpusError) as err:
        load_conversations(path)
    assert f"{path}:{before + 1}:" in str(err.value) and "\n" not in str(err.value)
    for target in (f"{path}#deep", str(path) if before == 0 else f"{path}#nope"):
        problem = _replay_problem(target)
        assert problem is not None and "\n" not in problem, problem


def test_both_commands_refuse_a_nested_line_in_one_line(tmp_path: Path) -> None:
    path = _write(tmp_path / "deep.jsonl", [_nested(100_000, "array")])
    _one_clear_line(run_myrm(["bench", "--corpus", str(path), "--strategies", "none"]), f"{path}:1:")
    _one_clear_line(run_myrm(["--replay", str(path)]), "--replay", str(path))


@pytest.mark.parametrize("gz", [True, False])
def test_a_recording_past_the_bound_is_refused_without_reading_it_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gz: bool
) -> None:
    """One line that never ends, 24 times the bound: refused, with memory near the bound."""
    cap = 1 << 20
    monkeypatch.setattr(foreign_read, "MAX_IMPORT_BYTES", cap)
    path = tmp_path / ("bomb.jsonl" + (".gz" if gz else ""))
    with (gzip.open if gz else open)(path, "wb") as f:  # type: ignore[operator]
        f.write(b'{"id": "bomb", "messages": [], "pad": "')
        for _ in range(24 * 16):
            f.write(b"0" * (1 << 16))
    tracemalloc.start()
    try:
        with pytest.raises(CorpusError, match="larger than 1 MB"):
            load_conversations(path)
        problem = _replay_problem(str(path))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert problem is not None and "larger than 1 MB" in problem
    assert peak < 8 * cap, f"read {peak:,} bytes into memory"


@pytest.mark.parametrize(
    "content", [b"not a gzip stream", gzip.compress(b"[" * 100_000 + b"\n")], ids=["not-gzip", "nested"]
)
def test_a_recording_replay_cannot_read_is_logged_with_its_traceback(tmp_path: Path, content: bytes) -> None:
    """The one line on stderr says what is wrong; the log keeps why (the reader's traceback), as for every
    failure myrm turns into a message."""
    path = tmp_path / "rec.jsonl.gz"
    path.write_bytes(content)
    log = tmp_path / "myrm.log"
    done = run_myrm(["--replay", str(path)], env=cli_env(tmp_path, MYRM_LOG=str(log)))
    _one_clear_line(done, "--replay", str(path))
    text = log.read_text(encoding="utf-8") if log.exists() else ""
    assert "--replay" in text and "Traceback (most recent call last)" in text, text


def test_the_benchs_error_line_is_inert(tmp_path: Path) -> None:
    """A recording's name comes from wherever it was downloaded: an escape sequence in it (a window title,
    OSC 52) reaches the terminal in ``myrm bench``'s one line shown, never obeyed, as in every ``myrm:``
    line."""
    path = tmp_path / "rec\x1b]0;owned\x07\u202e.jsonl.gz"
    path.write_bytes(b"not a gzip stream")
    done = run_myrm(["bench", "--corpus", str(path), "--strategies", "none"])
    _one_clear_line(done, "myrm bench:", "␛]0;owned␇")
    assert "\x1b" not in done.stderr and "\u202e" not in done.stderr, repr(done.stderr)


def test_a_recording_the_bench_cannot_read_is_logged_with_its_traceback(tmp_path: Path) -> None:
    """``myrm bench``'s one line says what is wrong; the log keeps the reader's traceback, as for every
    failure myrm turns into a message (warnings only: the pipeline's records stay out of timed runs)."""
    path = tmp_path / "rec.jsonl.gz"
    path.write_bytes(b"not a gzip stream")
    log = tmp_path / "myrm.log"
    done = run_myrm(
        ["bench", "--corpus", str(path), "--strategies", "none"], env=cli_env(tmp_path, MYRM_LOG=str(log))
    )
    _one_clear_line(done, "myrm bench:", str(path))
    text = log.read_text(encoding="utf-8") if log.exists() else ""
    assert "bench:" in text and "Traceback (most recent call last)" in text, text
    assert " INFO " not in text
