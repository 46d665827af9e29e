"""The public sessions of other agents in bench/foreign/ (see its README for sources and licences) import
without loss: every call the agent made, with its own recorded result; its thinking; its compactions."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from myrm_tui.context.invariants import check_tool_pairing
from myrm_tui.store.foreign import NO_RESULT, read_session, sessions_in

FOREIGN = Path(__file__).resolve().parents[2] / "bench" / "foreign"
FILES = sessions_in(FOREIGN)


def _raw(path: Path) -> list[dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def _blocks(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [
        b
        for e in events
        if isinstance(e.get("message"), dict) and isinstance(e["message"].get("content"), list)
        for b in e["message"]["content"]
        if isinstance(b, dict) and b.get("type") == kind
    ]


def test_the_recorded_corpus_is_there() -> None:
    agents = {read_session(p).agent for p in FILES}
    assert len(FILES) >= 15 and agents == {"claude-code", "codex"}


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(FOREIGN)))
def test_a_recorded_session_imports_without_loss(path: Path) -> None:
    fs = read_session(path)
    check_tool_pairing(fs.messages)
    events = _raw(path)
    calls = [c for m in fs.messages for c in m.tool_calls]
    results = [m for m in fs.messages if m.role == "tool"]
    stand_ins = [m.tool_call_id for m in results if m.text == NO_RESULT]
    # A recording that ends while a call runs (agentcmd's sessions stop at a pending call) has no result for
    # it: that call, and only such a call, gets the stand-in, and the import counts it.
    unanswered = {b["id"] for b in _blocks(events, "tool_use")} - {
        b.get("tool_use_id") for b in _blocks(events, "tool_result")
    }
    assert set(stand_ins) <= unanswered and len(stand_ins) == len(set(stand_ins))
    assert ("calls without a result" in fs.dropped) == bool(stand_ins)  # counted once per batch of calls
    # Codex's own instructions (its context and developer messages) are left out, as the module says
    left_out = {"Codex context messages", "developer messages", "calls without a result"}
    assert set(fs.dropped) <= left_out, fs.dropped
    if fs.agent == "claude-code":
        main = [e for e in events if not e.get("isSidechain")] or events
        assert {c.id for c in calls} == {b["id"] for b in _blocks(main, "tool_use")}
        thinking = [b for b in _blocks(main, "thinking") if b.get("thinking")]
        assert sum(bool(m.reasoning) for m in fs.messages) >= min(len(thinking), 1)
        compactions = sum(bool(e.get("isCompactSummary")) for e in main)
        assert sum(m.meta.get("imported_summary") == "claude-code" for m in fs.messages) == compactions
    else:
        items = [e["payload"] for e in events if e.get("type") == "response_item"]
        # a web search ran on OpenAI's side: its call comes over with a result saying none was recorded
        kinds = ("function_call", "custom_tool_call", "web_search_call")
        assert len(calls) == sum(p.get("type") in kinds for p in items)
        outputs = ("function_call_output", "custom_tool_call_output", "web_search_call")
        assert len(results) == sum(p.get("type") in outputs for p in items)
        searches = [c for c in calls if c.name == "web_search"]
        queries = [p["action"]["query"] for p in items if p.get("type") == "web_search_call"]
        assert [json.loads(c.arguments)["query"] for c in searches] == queries
