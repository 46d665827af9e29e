"""One builder of the context settings: the execution fingerprint hashes the very ``ContextConfig`` the
session runs with, so a setting that changes the pipeline's thresholds always changes the fingerprint."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

from myrm_tui.agent.factory import build_agent
from myrm_tui.agent.fingerprint import execution_parameters
from myrm_tui.context.config import ContextConfig
from myrm_tui.store.db import Store
from myrm_tui.testing.emulator import ProviderEmulator
from tests.helpers import openai_settings


async def test_the_fingerprint_hashes_the_context_settings_the_session_runs_with(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    settings = openai_settings(
        emulator, max_output_tokens=9_000, full_ratio=0.7, auto_compact=False, cache_ttl_seconds=60.0
    )
    row = await store.create_session(workspace=str(workspace))
    agent = await build_agent(store, row.id, settings, workspace, window=32_000)
    try:
        params = execution_parameters(settings, agent.window)
        ran = {f.name: getattr(agent.config, f.name) for f in fields(ContextConfig)}
        hashed = {f.name: params[f"context.{f.name}"] for f in fields(ContextConfig)}
        assert hashed == ran
        assert ran["reserve_output_tokens"] == 8_000  # 9,000 capped at a quarter of the window
        assert params["input_budget"] == agent.config.input_budget
        assert params["tail_budget"] == agent.config.tail_budget
    finally:
        await agent.close()
