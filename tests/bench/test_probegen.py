"""The tool-fact probe generator (myrm_tui/bench/probegen.py): facts a tool returned first that the agent
later used, in the hand probes' format, checked by bench/probes/check.py; the committed files are its
output."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from myrm_tui.bench import probegen

ROOT = Path(__file__).resolve().parents[2]
PROBES = ROOT / "bench" / "probes"
CORPUS = ROOT.parent / "shared" / "corpus"


def _check_module() -> Any:
    spec = importlib.util.spec_from_file_location("bench_probes_check_gen", PROBES / "check.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def _call(name: str, args: dict[str, Any], cid: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
        ],
    }


def _tool(cid: str, value: Any) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": cid, "content": json.dumps(value)}


def support_chat() -> list[dict[str, Any]]:
    """A tau-like chat: the reservation id, fare, flight and status come from tools and are used later."""
    return [
        {"role": "system", "content": "You are an airline agent. Follow the policy."},
        {"role": "user", "content": "Please cancel my trip. My user id is mia_li_3668."},
        _call("get_user_details", {"user_id": "mia_li_3668"}, "c1"),
        _tool("c1", {"name": "Mia", "reservations": ["ZFA04Y"], "payment_id": "credit_card_7407366"}),
        _call("get_reservation_details", {"reservation_id": "ZFA04Y"}, "c2"),
        _tool("c2", {"reservation_id": "ZFA04Y", "status": "confirmed", "price": 1234.5, "flight": "HAT229"}),
        {"role": "assistant", "content": "Reservation ZFA04Y on HAT229 ($1234.5) is confirmed. Cancel it?"},
        {"role": "user", "content": "yes"},
        _call("cancel_reservation", {"reservation_id": "ZFA04Y"}, "c3"),
        _tool("c3", {"reservation_id": "ZFA04Y", "status": "refunded"}),
        {"role": "assistant", "content": "Done: the reservation is refunded."},
        {"role": "user", "content": "thanks"},
        {"role": "assistant", "content": "Goodbye."},
    ]


def test_facts_a_tool_returned_and_the_agent_used() -> None:
    facts = {(f.kind, f.fact, f.index, f.used_at) for f in probegen.tool_facts(support_chat())}
    assert facts == {
        ("id", "ZFA04Y", 3, 4),  # used as a later call's argument
        ("id", "HAT229", 5, 6),
        ("number", "1234.5", 5, 6),
        ("value", "confirmed", 5, 6),
        ("value", "refunded", 9, 10),
    }
    # Not facts: the user's own id (the user said it first), a payment id nobody used, JSON keys, short names.


def test_probe_lines_pass_the_hand_probe_checker(tmp_path: Path) -> None:
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(json.dumps({"id": "conv/1", "messages": support_chat()}) + "\n", encoding="utf-8")
    rows = probegen.generate(corpus)
    assert [r["expected_facts"] for r in rows] == [
        ["ZFA04Y"],
        ["1234.5"],
        ["HAT229"],
        ["confirmed"],
        ["refunded"],
    ]
    assert {r["type"] for r in rows} == {"artifact", "recall"}
    out = tmp_path / "p.jsonl"
    probegen.write(out, rows)
    assert _check_module().check(out, corpus) == []
    # A short conversation is never compacted: no probes.
    assert probegen.probes("short", support_chat()[:8]) == []


def test_at_most_per_conv_probes_spread_over_kinds() -> None:
    rows = probegen.probes("conv/1", support_chat(), per_conv=3)
    kinds = [r["question"].split()[1] for r in rows]
    assert len(rows) == 3 and len(set(kinds)) == 3


def test_half_is_a_stable_split() -> None:
    ids = [f"family/conv{i}" for i in range(200)]
    halves = [probegen.half(i) for i in ids]
    assert halves == [probegen.half(i) for i in ids]
    assert 60 < halves.count("tune") < 140


@pytest.mark.parametrize("name", ["swe", "tau"])
def test_committed_probe_files_are_the_generators_output(name: str) -> None:
    corpus = CORPUS / f"{name}-dev.jsonl.gz"
    if not corpus.exists():
        pytest.skip("../shared/corpus is absent")
    rows = probegen.generate(corpus)
    committed = [json.loads(x) for x in (PROBES / f"{name}-dev-toolfacts.jsonl").read_text().splitlines()]
    assert rows == committed
    for h in ("tune", "judge"):
        part = [json.loads(x) for x in (PROBES / f"{name}-dev-toolfacts-{h}.jsonl").read_text().splitlines()]
        assert part == [r for r in rows if probegen.half(r["conv_id"]) == h]
    assert _check_module().check(PROBES / f"{name}-dev-toolfacts.jsonl", corpus) == []


def coding_chat() -> list[dict[str, Any]]:
    """A coding session: the agent finds the bug, tries a fix that fails, then writes the one that works; a
    later output shows the code it wrote."""
    return [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "The compiler call crashes in lookups.py."},
        _call("bash", {"command": "grep -n as_sql lookups.py"}, "c1"),
        _tool("c1", "12: sql = self.lhs.as_sql(compiler)"),
        {
            "role": "assistant",
            "content": "The bug is in `process_lhs_sql`, because it drops the connection. "
            "I ran the plain call first and it failed with `TypeError_missing_connection`.",
        },
        {"role": "user", "content": "go on"},
        _call(
            "bash", {"command": "sed -i 's/as_sql(compiler)/as_sql(compiler, connection)/' lookups.py"}, "c2"
        ),
        _tool("c2", "done"),
        {"role": "assistant", "content": "Now the test.", "tool_calls": []},
        _call("bash", {"command": "git diff"}, "c3"),
        _tool("c3", "+ sql = self.lhs.as_sql(compiler, connection)"),
        {
            "role": "assistant",
            "content": "process_lhs_sql now passes it; TypeError_missing_connection is gone.",
        },
        {"role": "user", "content": "thanks"},
        {"role": "assistant", "content": "Goodbye."},
    ]


def test_facts_the_agent_stated_first_and_came_back_to() -> None:
    facts = {(f.kind, f.fact, f.index, f.used_at) for f in probegen.assistant_facts(coding_chat())}
    assert facts == {
        ("finding", "process_lhs_sql", 4, 11),  # concluded ("the bug is ... because"), named again later
        ("attempt", "TypeError_missing_connection", 4, 11),  # the failed attempt, named again later
        ("decision", "as_sql(compiler, connection)", 6, 10),  # the sed replacement, shown by the diff
    }
    # Not facts: what a tool said first (as_sql), the task's words, code nobody came back to.


def test_assistant_probe_lines_pass_the_checker_and_spread_over_kinds(tmp_path: Path) -> None:
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(json.dumps({"id": "conv/2", "messages": coding_chat()}) + "\n", encoding="utf-8")
    rows = probegen.generate(corpus, source="assistant")
    assert sorted(r["question"].split()[1] for r in rows) == ["attempt", "decision", "finding"]
    assert {r["probe_id"] for r in rows} == {"a1", "a2", "a3"}
    out = tmp_path / "p.jsonl"
    probegen.write(out, rows)
    assert _check_module().check(out, corpus) == []
    assert len(probegen.probes("conv/2", coding_chat(), per_conv=2, source="assistant")) == 2


@pytest.mark.parametrize("name", ["swe", "tau"])
def test_committed_assistant_probe_files_are_the_generators_output(name: str) -> None:
    corpus = CORPUS / f"{name}-dev.jsonl.gz"
    if not corpus.exists():
        pytest.skip("../shared/corpus is absent")
    rows = probegen.generate(corpus, source="assistant")
    assert rows == [json.loads(x) for x in (PROBES / f"{name}-dev-agentfacts.jsonl").read_text().splitlines()]
    for h in ("tune", "judge"):
        part = [json.loads(x) for x in (PROBES / f"{name}-dev-agentfacts-{h}.jsonl").read_text().splitlines()]
        assert part == [r for r in rows if probegen.half(r["conv_id"]) == h]
    assert _check_module().check(PROBES / f"{name}-dev-agentfacts.jsonl", corpus) == []
