"""The execution fingerprint: a hash over every parameter that shapes a run.

``ChatAgentExecutionCache`` compares it before each message; a different value means the agent must be
rebuilt. It covers the settings, every derived ``ContextConfig`` threshold, the window, whether a key
is set, the prompt and config files (``extra``) and the schemas of the tools the builder binds.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from myrm_tui.agent.model_target import context_config
from myrm_tui.config import Settings


def tools_fingerprint(schemas: Sequence[dict[str, Any]]) -> str:
    """A short hash of the bound tool schemas (the cache-break detector sees a tool-set change by it)."""
    return hashlib.blake2b(json.dumps(list(schemas), sort_keys=True).encode(), digest_size=8).hexdigest()


def builtin_tool_schemas() -> list[dict[str, Any]]:
    """Schemas of the tools every session binds (``default_tools()`` and ``subagent``). MCP tools are
    known only once their servers answer; their configuration (``mcp_servers``) is in the settings."""
    from myrm_tui.agent.tools import default_tools, schema
    from myrm_tui.agent.tools.subagent import SubagentTool

    return [schema(t) for t in [*default_tools(), SubagentTool()]]


def execution_parameters(
    settings: Settings,
    window: int,
    extra: str = "",
    tool_schemas: Sequence[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Every parameter that shapes a run: settings, each derived threshold, key presence, files, tools."""
    config = context_config(settings, window)
    derived = {f"context.{k}": getattr(config, k) for k in config.__dataclass_fields__}
    derived.update(
        input_budget=config.input_budget,
        compress_threshold=config.compress_threshold,
        compress_force_threshold=config.compress_force_threshold,
        summarize_trigger_threshold=config.summarize_trigger_threshold,
        tail_budget=config.tail_budget,
        target_tokens=config.target_tokens,
    )
    schemas = builtin_tool_schemas() if tool_schemas is None else tool_schemas
    return {
        **settings.to_dict(),
        **derived,
        "window": window,
        "api_key_set": bool(settings.api_key),
        "files": extra,
        "tools": tools_fingerprint(schemas),
    }


def compute_execution_fingerprint(
    settings: Settings,
    window: int,
    extra: str = "",
    tool_schemas: Sequence[dict[str, Any]] | None = None,
) -> str:
    """A hash over ``execution_parameters``; a different value means the agent must be rebuilt."""
    params = execution_parameters(settings, window, extra, tool_schemas)
    return hashlib.blake2b(
        json.dumps(params, sort_keys=True, default=str).encode(), digest_size=10
    ).hexdigest()
