"""The benchmark on a small corpus with known answers, and the CLI writing the documented JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from myrm_tui.agent.fingerprint import builtin_tool_schemas
from myrm_tui.bench.corpus import load_conversations
from myrm_tui.bench.run import run_bench
from myrm_tui.bench.strategies import load_plugin
from tests.conftest import FIXTURES
from tests.helpers import COUNTER, run_myrm

MINI = FIXTURES / "mini.jsonl"
PROBES = FIXTURES / "mini-probes.jsonl"
KEYS = {
    "conversations",
    "requests",
    "rejected_requests",
    "input_tokens",
    "cached_input_tokens",
    "cache_hit_ratio",
    "cost_usd",
    "peak_request_tokens",
    "pipeline_ms_p50",
    "pipeline_ms_p99",
    "probe_facts_total",
    "probe_facts_kept",
    "probe_retention",
    "probe_recoverable",
    "compaction_triggers",
    "planned_compaction_share",
    "emergency_rounds_over_room",
    "summary_share_max",
}


async def test_counts_cache_and_cost_by_hand() -> None:
    result = await run_bench(MINI, PROBES, 100_000, ["none"])
    r = result["strategies"]["none"]
    assert r["conversations"] == 2 and r["requests"] == 4 and r["rejected_requests"] == 0
    a, b = load_conversations(MINI)
    tools_tokens = COUNTER.schemas(a.tools)  # as the live agent counts its bound schemas

    def tokens(msgs: list) -> int:  # a request's input: tool definitions plus every message
        return sum(COUNTER.message(m) for m in msgs)

    req = [
        tokens(a.messages[:2]) + tools_tokens,
        tokens(a.messages[:4]) + tools_tokens,
        tokens(b.messages[:2]),
        tokens(b.messages[:4]),
    ]
    assert r["input_tokens"] == sum(req)
    # Each conversation's second request shares its first request's messages as a prefix (≥1024 tokens).
    cached = tools_tokens + tokens(a.messages[:2]) + tokens(b.messages[:2])
    assert r["cached_input_tokens"] == cached
    from myrm_tui.bench.runner import Prices

    p = Prices.for_model("claude-sonnet-4-5")
    assert r["cost_usd"] == pytest.approx(
        cached * p.cache_read + (sum(req) - cached) * p.cache_write, abs=1e-4
    )
    assert p.cache_read == pytest.approx(p.input * 0.1) and p.cache_write == pytest.approx(p.input * 1.25)


async def test_probe_scoring() -> None:
    r = (await run_bench(MINI, PROBES, 100_000, ["none"]))["strategies"]["none"]
    assert (r["probe_facts_total"], r["probe_facts_kept"]) == (3, 2)
    assert r["probe_retention"] == pytest.approx(2 / 3, abs=1e-4)


async def test_a_broken_strategy_is_caught_and_windows_are_enforced() -> None:
    result = await run_bench(
        MINI,
        None,
        100_000,
        ["myrm"],
        plugins=["broken=tests.fixtures.plugins:drop_calls", "all=tests.fixtures.plugins:keep_all"],
    )
    assert result["strategies"]["broken"]["rejected_requests"] == 1  # the tool result without its call
    assert result["strategies"]["all"]["rejected_requests"] == 0
    assert result["strategies"]["myrm"]["rejected_requests"] == 0
    tiny = await run_bench(MINI, None, 1_000, ["none"])
    assert tiny["strategies"]["none"]["rejected_requests"] == 4  # every request is over a 1,000-token window


def test_plugin_spec_errors_are_clear() -> None:
    with pytest.raises(ValueError, match="NAME=module:callable"):
        load_plugin("nonsense")
    with pytest.raises(ValueError, match="not a callable"):
        load_plugin("x=tests.fixtures.plugins:nothing_here")


def test_cli_writes_json_with_the_documented_keys(tmp_path: Path) -> None:
    out, svg, md = tmp_path / "r.json", tmp_path / "r.svg", tmp_path / "r.md"
    proc = run_myrm(
        [
            "bench",
            "--corpus",
            str(MINI),
            "--probes",
            str(PROBES),
            "--window",
            "50000",
            "--strategies",
            "myrm,none,truncate,mask",
            "--json",
            str(out),
            "--plot",
            str(svg),
            "--markdown",
            str(md),
        ],
        cwd=Path(__file__).resolve().parents[2],
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(out.read_text())
    assert set(data) >= {"corpus", "window", "price_model", "strategies"}
    assert set(data["strategies"]) == {"myrm", "none", "truncate", "mask"}
    for r in data["strategies"].values():
        assert set(r) >= KEYS
    assert svg.read_text().startswith("<svg") and "| myrm |" in md.read_text()
    assert "myrm" in proc.stdout and "cache hit" in proc.stdout
    # Which schemas the budget assumed (by default the tools a live session binds), said and stored.
    mine = COUNTER.schemas(builtin_tool_schemas())
    assert data["budget"] == {"schemas": "myrm", "schema_tokens": mine, "reply_reserve": 4096}
    assert f"tool schemas (myrm: {mine:,} tokens)" in proc.stdout
    assert f"tool schemas (myrm: {mine:,} tokens)" in md.read_text()
