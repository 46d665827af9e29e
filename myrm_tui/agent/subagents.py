"""``Subagents``: a delegated task run in a child session with the same settings and pipeline; the
parent gets its distilled result (``distill.py``), long outputs in the vault behind a pointer."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from myrm_tui.agent.events import AssistantSaved, TurnFailed
from myrm_tui.agent.hooks import TOOL_EVENTS
from myrm_tui.agent.session import AgentSession
from myrm_tui.agent.tools import ToolResult
from myrm_tui.config import Settings
from myrm_tui.context.edits import AddHandover

if TYPE_CHECKING:
    from myrm_tui.agent.agent import Agent

# (child session id, child settings) -> the child's agent, loaded. The builder gives it the parent's
# tools (no ``subagent``: children do not spawn further children), approver and command rules.
ChildBuilder = Callable[[str, Settings], Awaitable["Agent"]]


class Subagents:
    def __init__(self, session: AgentSession, build_child: ChildBuilder, vault_namespaces: set[str]) -> None:
        self.session = session
        self.build_child = build_child
        self.vault_namespaces = vault_namespaces  # the parent's tools read the child's vault entries

    async def spawn(self, task: str) -> ToolResult:
        """Run ``task`` in a child session; distill its result."""
        from myrm_tui.agent.distill import AgentHandoverState, auto_vault_or_truncate

        parent = self.session
        settings = parent.settings
        row = await parent.store.create_session(
            title=f"[subagent] {task[:50]}",
            model=settings.model,
            workspace=str(parent.workspace),
            parent_id=parent.session_id,
        )
        # A child runs the parent's tool hooks; its task is not a user prompt, nor a new user session.
        tool_hooks = tuple(h for h in settings.hooks if h.get("event") in TOOL_EVENTS)
        child = await self.build_child(
            row.id, replace(settings, keepalive=False, preheat=False, hooks=tool_hooks)
        )
        final = ""
        failures: list[str] = []
        try:
            async for ev in child.turns.run(task):  # inherits prompt_cache_key through the ContextVar
                if isinstance(ev, AssistantSaved) and ev.message.text.strip():
                    final = ev.message.text
                elif isinstance(ev, TurnFailed):
                    failures.append(ev.error)
        finally:
            await child.close()  # its background jobs end with it
        await child.session.flush_vault()
        handover = AgentHandoverState.extract(task, child.session.history)
        body = final or ("; ".join(failures) or "(the subagent returned no answer)")
        shown, uri = auto_vault_or_truncate(
            body, parent.vault, settings.max_subagent_result_tokens, parent.counter, child_session=row.id
        )
        await parent.flush_vault()
        await parent.add_metrics(
            {"kind": "handover", "child": row.id, "vault_uri": uri, **handover.as_dict()}
        )
        self.vault_namespaces.add(row.id)
        text = f"{shown}\n\n{handover.render()}"
        return ToolResult(
            text,
            is_error=bool(failures) and not final,
            meta={"child_session": row.id, **({"vault_uri": uri} if uri else {})},
            edits=(AddHandover(handover.as_dict()),),  # the session applies it with the stored result
        )
