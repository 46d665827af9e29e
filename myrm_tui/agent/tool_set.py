"""``ToolSet``: the tools bound for a session, their schemas frozen once (a cache-stable prefix).

A loaded skill narrows which tools the model may call without changing the bound schemas: the
narrowing travels in ``tool_choice`` (OpenAI ``allowed_tools``; other providers see all tools)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from myrm_tui.agent.fingerprint import tools_fingerprint
from myrm_tui.agent.tools import Tool, schema


class ToolSet:
    def __init__(self, tools: Sequence[Tool]) -> None:
        self.tools: dict[str, Tool] = {t.name: t for t in tools}
        self.schemas = [schema(t) for t in self.tools.values()]
        self.fingerprint = tools_fingerprint(self.schemas)
        self.allowed: list[str] | None = None

    def add(self, tools: Sequence[Tool]) -> None:
        """Bind ``tools`` too (a late MCP server's, between turns): the schemas change once."""
        if not tools:
            return
        self.tools.update((t.name, t) for t in tools)
        self.schemas = [schema(t) for t in self.tools.values()]
        self.fingerprint = tools_fingerprint(self.schemas)

    def get(self, name: str) -> Tool | None:
        return self.tools.get(name)

    def narrow(self, names: list[str] | None) -> None:
        """Limit which tools the model may call (a loaded skill); the schema list stays as bound."""
        unknown = [n for n in names or [] if n not in self.tools]
        if unknown:
            raise ValueError(f"unknown tools: {', '.join(unknown)}")
        self.allowed = list(names) if names else None

    def tool_choice(self, model: str, api_base: str | None) -> Any:
        if not self.allowed:
            return None
        from myrm_tui.context.steps.cache_optimize import is_native_openai

        if not is_native_openai(model, api_base):
            return None
        return {
            "type": "allowed_tools",
            "mode": "auto",
            "tools": [{"type": "function", "name": n} for n in self.allowed],
        }
