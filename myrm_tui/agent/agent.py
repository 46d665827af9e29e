"""``Agent``: one build of a session's agent — the units ``factory.build_agent`` wires, reached directly:

- ``session.AgentSession``: history, context state, vault, the pipeline run (``prepare``);
- ``turn.TurnRunner``: one turn (pipeline → model → tools → … until a final answer);
- ``tool_runner.ToolRunner``: tool calls with the user's hooks around each, over a ``tool_set.ToolSet``;
- ``cache_warmer.CacheWarmer``: preheat and keep-alive of the provider's prompt cache;
- ``subagents.Subagents``: delegated tasks in child sessions (reached through ``ToolContext.subagent``);
- ``fingerprint``: the execution fingerprint that decides a rebuild.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from myrm_tui.agent.cache_warmer import CacheWarmer
from myrm_tui.agent.events import ContextReport
from myrm_tui.agent.session import AgentSession
from myrm_tui.agent.tool_runner import ToolRunner
from myrm_tui.agent.tools.jobs import JobManager
from myrm_tui.agent.turn import TurnRunner
from myrm_tui.agent.undo import FileHistory
from myrm_tui.context.compaction.record import Compaction, Trigger
from myrm_tui.context.edits import Pin, Unpin
from myrm_tui.context.report.window_use import WindowUse
from myrm_tui.context.vault import readable

__all__ = ["Agent"]


class Agent:
    """One build of a session's agent: its units, wired by ``factory.assemble``, and what needs more than
    one of them (load, compaction, pins, close). Front-ends hold a ``api.ChatSession``, which builds it and
    rebuilds it when its settings change. Not thread-safe; one turn at a time."""

    def __init__(
        self,
        session: AgentSession,
        tools: ToolRunner,
        warmer: CacheWarmer,
        turns: TurnRunner,
        mcp_connections: Sequence[Any] = (),
        files: FileHistory | None = None,
    ) -> None:
        self.session = session
        self.tool_runner = tools
        self.warmer = warmer
        self.turns = turns
        self.mcp_connections = list(mcp_connections)  # owned: closed with the agent
        self.files = files  # the file tools' backups: /undo

    @property
    def session_id(self) -> str:
        return self.session.session_id

    @property
    def jobs(self) -> JobManager | None:
        """The session's background jobs (a rebuild hands them to the next build)."""
        return self.tool_runner.ctx.jobs

    async def load(self) -> None:
        """Load the session; a new session gets its system prompt, environment message and session_start
        hooks."""
        if await self.session.load():
            await self.session.add_hook_context(await self.tool_runner.hooks.run("session_start", {}))

    async def compact_now(self, focus: str = "", trigger: Trigger = "manual") -> ContextReport:
        """Force a compaction (the ring's button, ``/compact``, a fork); returns the new context health.

        A compaction that leaves the view over this model's input budget (a fork onto a smaller window)
        is redone with that budget as a hard limit, which drops the oldest rounds if it has to. The new
        prefix is preheated at once, so the next message reads it from the cache — only when it fits:
        a preheat is a request too."""
        s = self.session
        view, run = await s.prepare(force=True, focus=focus, trigger=trigger)
        if run.tokens > s.config.input_budget:
            view, run = await s.prepare(
                force=True, focus=focus, hard_limit=s.config.input_budget, trigger=trigger
            )
        report = s.report(run)
        await s.add_metrics({**run.metrics.as_dict(), "kind": "manual_compaction"})
        s.last_report = report
        s.last_view = view
        if run.tokens <= s.config.input_budget:
            self.warmer.schedule_preheat(view, run.breakpoints)
        return report

    async def preview_compaction(self, focus: str = "") -> tuple[Compaction | None, str]:
        """What ``compact_now(focus)`` would do, computed on a copy (nothing stored, no LLM call): the
        record, or None and the reason there is nothing to compact."""
        s = self.session
        if len(s.history) <= 2:
            return None, "the session has no conversation yet"
        run = await s.dry_run(force=True, focus=focus)
        record = run.metrics.compaction
        if record is None:
            return None, "; ".join(run.metrics.events[-1:]) or "the pipeline did not compact"
        if not record.changed or not record.left:
            kept = s.config.tail_budget
            return None, (
                f"everything in the view ({record.tokens_before:,} tokens) is the protected start or the "
                f"recent turns kept verbatim (up to {kept:,} tokens); nothing older to fold"
            )
        return record, ""

    def window_use(self) -> WindowUse:
        """What fills the window now by category, as the ring shows it: the latest request's (its report's
        breakdown), or before any request of this run the stored view the next one starts from."""
        s = self.session
        if s.last_report is not None and s.last_report.use is not None:
            return s.last_report.use
        return s.window_use([*s.state.base, *s.history[s.state.base_upto :]])

    async def pin(self, uri: str, line_range: str, gist: str) -> int:
        """Bring back an item that left the view, into the next requests until unpinned; its tokens."""
        entry = await self.session.vault.get(uri)
        if entry is None:
            raise KeyError(f"{uri} is not in this session's vault")
        lines = readable(entry).splitlines()
        a, _, b = line_range.partition(":")
        text = "\n".join(lines[max(int(a or 1), 1) - 1 : int(b) if b else len(lines)])
        await self.session.edit([Pin(uri, line_range, gist, text)])
        return self.session.counter.text(text)

    async def unpin(self, uri: str, line_range: str) -> bool:
        if not self.is_pinned(uri, line_range):
            return False
        await self.session.edit([Unpin(uri, line_range)])
        return True

    def is_pinned(self, uri: str, line_range: str) -> bool:
        return any((p["uri"], p["line_range"]) == (uri, line_range) for p in self.session.state.pinned)

    async def close(self, keep_jobs: bool = False) -> None:
        """End what this agent runs: background jobs (unless ``keep_jobs``: a rebuild took them over),
        MCP connections, keep-alive and preheats."""
        if self.jobs is not None and not keep_jobs:
            await self.jobs.close()
        for conn in self.mcp_connections:
            await conn.close()
        if self.turns.late is not None:  # the MCP servers that joined late, and those still starting
            await self.turns.late.close()
        await self.warmer.close()
