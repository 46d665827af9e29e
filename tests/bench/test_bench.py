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


def _claude_line(uuid: str, parent: str | None, kind: str, content: object) -> str:
    return json.dumps(
        {
            "parentUuid": parent,
            "isSidechain": False,
            "type": kind,
            "uuid": uuid,
            "sessionId": "s-img",
            "cwd": "/w",
            "timestamp": "2025-10-24T20:50:22.798Z",
            "message": {"role": kind, "content": content},
        }
    )


async def test_a_tool_result_image_is_sent_where_the_provider_takes_it(tmp_path: Path) -> None:
    """A Claude Code `Read` of a screenshot comes over as a tool result holding an image; OpenAI-style APIs
    take images only in user messages. The bench sends each request as the live client renders it, so no
    strategy's request is refused for it (every one was, `invalid_value`, before)."""
    png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png}}
    call = {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "/w/shot.png"}}
    result_block = {"type": "tool_result", "tool_use_id": "toolu_1", "content": [image]}
    lines = [
        _claude_line("u1", None, "user", "What does the screenshot show?"),
        _claude_line("a1", "u1", "assistant", [call]),
        _claude_line("u2", "a1", "user", [result_block]),
        _claude_line("a2", "u2", "assistant", [{"type": "text", "text": "A login form with a red border."}]),
        _claude_line("u3", "a2", "user", "Make the border green."),
        _claude_line("a3", "u3", "assistant", [{"type": "text", "text": "Done: the border is green now."}]),
    ]
    path = tmp_path / "s-img.jsonl"
    path.write_text("\n".join(lines) + "\n")
    (conv,) = load_conversations(path)
    assert any(m.role == "tool" and isinstance(m.content, list) for m in conv.messages)  # the image came over
    result = await run_bench(path, None, 100_000, ["none", "truncate", "myrm"])
    for name, r in result["strategies"].items():
        assert r["requests"] == 3, name
        assert r["rejected_requests"] == 0, (name, r["rejections"])
