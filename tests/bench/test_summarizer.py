"""The benchmark's LLM path: every summarizer call billed (in ``cost_usd``), against the emulator."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from myrm_tui.bench.report import _summarizer, table
from myrm_tui.bench.run import run_bench
from myrm_tui.bench.summarizer import BenchSummarizer
from myrm_tui.context.summary import fields as summary_model
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.conftest import CORPUS

PRICE_MODEL = "claude-sonnet-4-5"


def corpus_file(name: str) -> Path:
    """The dev corpus (``../shared/corpus``, or ``MYRM_CORPUS_DIR`` from a worktree elsewhere)."""
    path = Path(os.environ.get("MYRM_CORPUS_DIR") or CORPUS) / name
    if not path.is_file():
        pytest.skip(f"corpus not available ({path})")
    return path


def summaries(emulator: ProviderEmulator) -> list[dict[str, Any]]:
    return [r.body for r in emulator.accepted if r.body.get("max_tokens") != 1]


@pytest.fixture
def summarizing(emulator: ProviderEmulator) -> ProviderEmulator:
    s = summary_model.Summary(
        user_goal="Fix the issue.", current_state="Reading the code.", key_facts=("from the emulator",)
    )
    emulator.default = Reply(text=json.dumps(s.to_json()))
    return emulator


async def _bench(
    emulator: ProviderEmulator, model: str, strategies: list[str], whole: bool = False
) -> dict[str, Any]:
    summ = _summarizer(model, emulator.openai_base, PRICE_MODEL)
    assert isinstance(summ, BenchSummarizer)
    result = await run_bench(
        corpus_file("swe-dev.jsonl.gz"),
        None,
        16_000,
        strategies,
        limit=3,
        price_model=PRICE_MODEL,
        summarizer=summ,
    )
    return result if whole else result["strategies"]


async def test_the_main_model_as_summarizer_reads_the_conversation_cache_and_is_billed(
    summarizing: ProviderEmulator,
) -> None:
    r = (await _bench(summarizing, f"openai/{PRICE_MODEL}", ["myrm"]))["myrm"]
    sent = summaries(summarizing)
    assert r["summarizer_calls"] == len(sent) > 0
    assert r["compactions"] > 0
    assert r["summarizer_cache_hit_ratio"] >= 0.8
    assert r["summarizer_output_tokens"] > 0 and r["summarizer_cost_usd"] > 0
    assert r["cost_usd"] == pytest.approx(r["cost_main_usd"] + r["summarizer_cost_usd"], abs=2e-4)
    # The summaries are the conversation's request plus one instruction, with its tool schemas (a semantic
    # filter's call, billed too, is a plain system + user request).
    prefix = [b for b in sent if "do not call tools" in str(b["messages"][-1]["content"])]
    assert prefix and all(b["messages"][-1]["role"] == "user" and b.get("tools") for b in prefix)
    assert len(prefix) <= r["requests"] // 8
    assert r["summarizer_failures"] == 0


async def test_each_preparation_quotes_both_routes_and_reports_the_cheaper(
    summarizing: ProviderEmulator,
) -> None:
    """The bench prices both ways of writing each prepared summary as the agent does (claude-sonnet-4-5
    reading its cache against claude-haiku-4-5 sent the span) and reports which was the cheaper."""
    from myrm_tui.llm.pricing import summary_routes

    r = (await _bench(summarizing, f"openai/{PRICE_MODEL}", ["myrm"]))["myrm"]
    routes, quotes = r["summary_routes"], r["summary_route_quotes_usd"]
    # one quote per preparation: at most one per summarizer call (a failed or rejected answer still counts)
    assert 1 <= sum(routes.values()) <= r["summarizer_calls"]
    assert set(quotes) == {"prefix", "span"} and all(v > 0 for v in quotes.values())
    # The verdict follows the quotes: at these prices and a warm cache the span is sent to the lite model
    # whenever the folded span is under about a third of the request (as it is at a compaction).
    one = summary_routes(PRICE_MODEL, "anthropic/claude-haiku-4-5", 12_000, 12_000, 4_000)
    assert min(one, key=lambda q: q.usd).route == "span"
    assert routes.get("span", 0) >= routes.get("prefix", 0)


async def test_a_lite_summarizer_is_sent_the_span_and_billed_on_its_own_cache(
    summarizing: ProviderEmulator,
) -> None:
    r = (await _bench(summarizing, "openai/gpt-4o-mini", ["myrm"]))["myrm"]
    sent = summaries(summarizing)
    assert r["summarizer_calls"] == len(sent) > 0
    assert all([m["role"] for m in b["messages"]] == ["system", "user"] for b in sent)
    assert r["summarizer_cache_hit_ratio"] < 0.5  # it cannot read the main model's cache
    assert r["cost_usd"] == pytest.approx(r["cost_main_usd"] + r["summarizer_cost_usd"], abs=2e-4)


async def test_the_window_strategys_summaries_are_billed_too(summarizing: ProviderEmulator) -> None:
    result = await _bench(summarizing, f"openai/{PRICE_MODEL}", ["window", "none"], whole=True)
    r = result["strategies"]["window"]
    assert r["summarizer_calls"] == len(summaries(summarizing)) > 0
    assert r["summarizer_cost_usd"] > 0
    assert r["cost_usd"] > r["cost_main_usd"]
    # The printed table has the summarizer's columns when a strategy called it.
    console = Console(width=400, record=True)
    console.print(table(result))
    text = console.export_text()
    assert "summ. calls" in text and "summ. $" in text


async def test_an_unreachable_summarizer_counts_failures_and_the_run_goes_on(
    emulator: ProviderEmulator,
) -> None:
    emulator.default = Reply(error=(500, {"error": {"message": "down", "type": "server_error"}}))
    r = (await _bench(emulator, f"openai/{PRICE_MODEL}", ["myrm"]))["myrm"]
    assert r["summarizer_failures"] > 0 and r["rejected_requests"] == 0 and r["requests"] > 0
