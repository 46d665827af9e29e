"""Building a ready agent for a session: settings resolved, prompts and pipeline loaded."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from myrm_tui.agent.loop import Agent
from myrm_tui.agent.prompts import PromptLibrary
from myrm_tui.config import Settings, load_config_file, resolve
from myrm_tui.context.pipeline import build_pipeline
from myrm_tui.llm.client import LLMClient
from myrm_tui.paths import config_file, prompts_dir, user_filter_dirs
from myrm_tui.store.db import Store


async def resolve_settings(store: Store, cli: dict[str, Any]) -> Settings:
    return resolve(load_config_file(config_file()), await store.all_settings(), cli)


async def build_agent(
    store: Store, session_id: str, settings: Settings, workspace: Path, llm: LLMClient | None = None,
    approver: Any = None, window: int | None = None,
) -> Agent:
    prompts = prompts_dir()
    agent = Agent(
        store, session_id, settings, llm or LLMClient(inactivity_timeout=settings.summarizer_inactivity_seconds,
                                                     total_timeout=settings.summarizer_total_seconds),
        build_pipeline(prompts, user_filter_dirs(workspace)), PromptLibrary(prompts), workspace, approver=approver, window=window,
    )
    await agent.load()
    if settings.mcp_servers:
        from myrm_tui.agent.mcp_client import McpServerConfig, OversizedResultHandler, connect_all

        configs = [McpServerConfig.from_dict(d) for d in settings.mcp_servers]
        agent.mcp_connections, tools, errors = await connect_all(configs, OversizedResultHandler(settings.mcp_max_output_chars))
        agent.add_tools(tools)  # bound once, before the first request: the tool prefix stays cache-stable
        if errors:
            await store.add_metrics(session_id, agent.turn, {"kind": "mcp_error", "events": errors})
    return agent
