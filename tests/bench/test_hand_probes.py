"""The hand-written dev probes (bench/probes/) hold against the raw corpus, and their checker catches each
rule break."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROBES_DIR = ROOT / "bench" / "probes"
CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"


def _load_check() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_probes_check", PROBES_DIR / "check.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


check_mod = _load_check()


def _corpus(name: str) -> Path:
    path = CORPUS / name
    if not path.exists():
        pytest.skip(f"corpus not available ({path}); ../shared is absent")
    return path


def _all_probes() -> list[dict[str, Any]]:
    return [p for f in check_mod.PAIRS for p in check_mod.load_probes(PROBES_DIR / f)]


@pytest.mark.parametrize(("probe_file", "corpus_file"), sorted(check_mod.PAIRS.items()))
def test_every_fact_is_reachable_in_the_raw_history(probe_file: str, corpus_file: str) -> None:
    assert check_mod.check(PROBES_DIR / probe_file, _corpus(corpus_file)) == []


def test_size_types_and_spread() -> None:
    _corpus("swe-dev.jsonl.gz")
    probes = _all_probes()
    s = check_mod.summary(probes)
    assert len(probes) >= 120
    assert len(s["conversations"]) >= 24
    assert set(s["type"]) == set(check_mod.TYPES)
    # Evidence spread over the session: the pipeline loses early facts most, so they must be well represented.
    assert s["third"]["first"] >= 0.3 * len(probes)
    assert s["third"]["middle"] >= 0.28 * len(probes)
    assert s["third"]["last"] >= 0.15 * len(probes)
    per_corpus = {f: {p["conv_id"] for p in check_mod.load_probes(PROBES_DIR / f)} for f in check_mod.PAIRS}
    assert all(len(ids) >= 10 for ids in per_corpus.values())
    assert all(1 <= len(p["expected_facts"]) <= 4 for p in probes)


# -- the checker itself, on a tiny corpus of our own (always runs) -------------------------------------------

MINI_CONV = {
    "id": "mini/1",
    "messages": [
        {"role": "system", "content": "You fix bugs. Run pytest."},
        {"role": "user", "content": "Fix the crash in parse_header."},
        {
            "role": "assistant",
            "content": "Looking.",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "bash", "arguments": '{"command": "pytest -x"}'},
                }
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "c1",
            "content": "FAILED tests/test_io.py::test_header - KeyError: 'SIMPLE'\n1 failed, 9 passed",
        },
        {"role": "assistant", "content": "I will patch io/header.py."},
        {"role": "tool", "tool_call_id": "c2", "content": "10 passed"},
        {"role": "assistant", "content": "Done."},
    ],
    "meta": {},
}


def _write(tmp_path: Path, probes: list[dict[str, Any]]) -> tuple[Path, Path]:
    corpus = tmp_path / "mini.jsonl"
    corpus.write_text(json.dumps(MINI_CONV) + "\n")
    pf = tmp_path / "probes.jsonl"
    pf.write_text("".join(json.dumps(p) + "\n" for p in probes))
    return pf, corpus


def _probe(facts: list[Any], index: int, **over: Any) -> dict[str, Any]:
    p = {
        "conv_id": "mini/1",
        "probe_id": "p1",
        "type": "recall",
        "question": "What failed?",
        "expected_facts": facts,
        "evidence_msg_index": index,
        "evidence_frac": round(index / 6, 3),
    }
    p.update(over)
    return p


def test_checker_accepts_string_and_alternative_facts(tmp_path: Path) -> None:
    warnings: list[str] = []
    pf, corpus = _write(
        tmp_path,
        [
            _probe(["KeyError: 'SIMPLE'", ["io/header.py", "header.py module"]], 3),
            _probe(["pytest -x"], 2, probe_id="p2", type="artifact"),  # tool-call arguments count as history
        ],
    )
    assert check_mod.check(pf, corpus, warnings) == []
    assert len(warnings) == 1 and "header.py module" in warnings[0]


@pytest.mark.parametrize(
    ("probe", "needle"),
    [
        (_probe(["keyerror: 'SIMPLE'"], 3), "not verbatim"),  # case-sensitive
        (_probe([["nowhere", "nor here"]], 3), "not verbatim"),  # no alternative found
        (_probe(["parse_header"], 1), "first user message"),  # only in the task statement
        (_probe(["Run pytest"], 0), "first user message"),  # only in the system prompt
        (_probe(["1 failed, 9 passed"], 4), "evidence_msg_index 4"),  # wrong index
        (_probe(["1 failed, 9 passed"], 3, evidence_frac=0.4), "evidence_frac"),
        (_probe(["a", "b", "c", "d", "e"], 3), "1-4 facts"),
        (_probe(["1 failed"], 3, type="trivia"), "type"),
        (_probe(["1 failed"], 3, conv_id="mini/2"), "not in"),
        ({"conv_id": "mini/1", "probe_id": "p1"}, "fields"),
    ],
)
def test_checker_reports_each_rule_break(tmp_path: Path, probe: dict[str, Any], needle: str) -> None:
    pf, corpus = _write(tmp_path, [probe])
    problems = check_mod.check(pf, corpus)
    assert any(needle in p for p in problems), problems


def test_checker_rejects_facts_only_after_the_last_assistant_turn(tmp_path: Path) -> None:
    conv = dict(
        MINI_CONV,
        messages=[*MINI_CONV["messages"], {"role": "user", "content": "Thanks, merged as PR 4412."}],
    )
    corpus = tmp_path / "mini.jsonl"
    corpus.write_text(json.dumps(conv) + "\n")
    pf = tmp_path / "probes.jsonl"
    pf.write_text(json.dumps(_probe(["PR 4412"], 7, evidence_frac=1.0)) + "\n")
    assert any("last assistant turn" in p for p in check_mod.check(pf, corpus))


def test_repeated_probe_ids_are_reported(tmp_path: Path) -> None:
    pf, corpus = _write(tmp_path, [_probe(["1 failed, 9 passed"], 3), _probe(["pytest -x"], 2)])
    assert any("repeated" in p for p in check_mod.check(pf, corpus))
