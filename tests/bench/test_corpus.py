"""``myrm bench`` on bad input: one line naming the file and the line, exit code 2, no traceback."""

from __future__ import annotations

import gzip
import json
import subprocess
from pathlib import Path

import pytest

from myrm_tui.bench.corpus import CorpusError, load_conversations, load_probes
from tests.conftest import FIXTURES
from tests.helpers import run_myrm

ROOT = Path(__file__).resolve().parents[2]
GOOD = json.dumps(
    {"id": "a", "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}
)


def _bench(corpus: Path, probes: Path | None = None) -> subprocess.CompletedProcess[str]:
    args = ["bench", "--corpus", str(corpus), "--strategies", "none"]
    if probes:
        args += ["--probes", str(probes)]
    return run_myrm(args, cwd=ROOT)


def _one_clear_line(proc: subprocess.CompletedProcess[str], *parts: str) -> None:
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    lines = [x for x in proc.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    for p in parts:
        assert p in lines[0], (p, lines[0])


def test_garbage_gz(tmp_path: Path) -> None:
    bad = tmp_path / "garbage.gz"
    bad.write_bytes(b"this is not gzip at all\n" * 10)
    _one_clear_line(_bench(bad), f"{bad}:1:", "not a readable gzip file")


def test_truncated_gz(tmp_path: Path) -> None:
    bad = tmp_path / "cut.jsonl.gz"
    bad.write_bytes(gzip.compress((GOOD + "\n").encode() * 200)[:-40])
    with pytest.raises(CorpusError, match=r"cut\.jsonl\.gz:\d+: not a readable gzip file"):
        load_conversations(bad)


@pytest.mark.parametrize(
    ("second_line", "message"),
    [
        ("{not json", "not JSON"),
        (json.dumps({"id": "b", "turns": []}), "conversation 'b' has no \"messages\""),
        (json.dumps({"id": "b", "messages": "hello"}), 'has a str as "messages"'),
        (json.dumps({"id": "b", "messages": [{"content": "no role"}]}), "message 0 has role None"),
        (json.dumps([1, 2, 3]), "expected a JSON object, got list"),
    ],
)
def test_wrongly_shaped_corpus_lines(tmp_path: Path, second_line: str, message: str) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(GOOD + "\n\n" + second_line + "\n")
    # Line 3: the blank line counts, as in an editor.
    _one_clear_line(_bench(bad), f"{bad}:3:", message)


def test_a_gzipped_corpus_reports_the_decompressed_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl.gz"
    bad.write_bytes(gzip.compress(f"{GOOD}\n{GOOD}\n{{oops\n".encode()))
    _one_clear_line(_bench(bad), f"{bad}:3:", "not JSON")


@pytest.mark.parametrize(
    ("probe", "message"),
    [
        ({"conv_id": "a", "probe_id": "p", "expected_facts": "hello"}, '"expected_facts" must be a list'),
        (
            {"conv_id": "a", "probe_id": "p", "expected_facts": [["hello", 3]]},
            '"expected_facts" must be a list',
        ),
        ({"conv_id": "a", "probe_id": "p", "expected_facts": [[]]}, '"expected_facts" must be a list'),
        ({"probe_id": "p", "expected_facts": ["x"]}, 'probe needs a string "conv_id"'),
        (
            {"conv_id": "a", "probe_id": "p", "expected_facts": ["x"], "evidence_msg_index": "9"},
            '"evidence_msg_index" must be an integer',
        ),
    ],
)
def test_wrongly_shaped_probe_files(tmp_path: Path, probe: dict[str, object], message: str) -> None:
    probes = tmp_path / "probes.jsonl"
    probes.write_text(
        json.dumps({"conv_id": "a", "probe_id": "ok", "expected_facts": ["hello", ["hi", "hey"]]})
        + "\n"
        + json.dumps(probe)
        + "\n"
    )
    _one_clear_line(_bench(FIXTURES / "mini.jsonl", probes), f"{probes}:2:", message)


def test_a_probe_file_that_is_not_json(tmp_path: Path) -> None:
    probes = tmp_path / "probes.jsonl.gz"
    probes.write_bytes(b"\x1f\x8b garbage")
    with pytest.raises(CorpusError, match=r"probes\.jsonl\.gz:1: not a readable gzip file"):
        load_probes(probes)


def test_missing_files_and_bad_plugins_are_one_line(tmp_path: Path) -> None:
    _one_clear_line(_bench(tmp_path / "nope.jsonl"), "corpus not found", "nope.jsonl")
    _one_clear_line(_bench(FIXTURES / "mini.jsonl", tmp_path / "nope-probes.jsonl"), "probe file not found")
    proc = run_myrm(
        [
            "bench",
            "--corpus",
            str(FIXTURES / "mini.jsonl"),
            "--strategies",
            "none",
            "--strategy-plugin",
            "x=no_such_module_here:fn",
        ],
        cwd=ROOT,
    )
    _one_clear_line(proc, "cannot import no_such_module_here")
