"""One budget: the bench's myrm strategy and the live agent derive the input budget with the same function
(``context.config.budget_config``), from the same reply reserve and the tool schemas a session binds."""

from __future__ import annotations

from pathlib import Path

import pytest

from myrm_tui.agent.fingerprint import builtin_tool_schemas
from myrm_tui.bench.strategies import MyrmStrategy, TruncateStrategy, WindowStrategy
from myrm_tui.store.db import Store
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.helpers import COUNTER, collect, make_agent, openai_settings


@pytest.mark.parametrize("window", [4_000, 16_000, 128_000])
async def test_the_bench_budgets_a_request_as_the_live_agent_does(
    emulator: ProviderEmulator, store: Store, workspace: Path, window: int
) -> None:
    agent = await make_agent(store, workspace, openai_settings(emulator), window=window)
    emulator.enqueue(Reply(text="ok"))
    await collect(agent, "hello")  # the first request binds the schemas into the budget
    live = agent.session.config
    bench = MyrmStrategy(COUNTER)
    bench.start("c", window)
    bench.bind_tools(COUNTER.schemas(builtin_tool_schemas()))
    assert (bench.config.output_reserve, bench.config.overhead_tokens) == (
        live.output_reserve,
        agent.session.schema_tokens(),
    )
    assert bench.config.input_budget == live.input_budget
    # The baselines are held to the same budget.
    for base in (TruncateStrategy(COUNTER), WindowStrategy(COUNTER)):
        base.start("c", window)
        base.bind_tools(agent.session.schema_tokens())
        assert base.budget == live.input_budget
