"""The agent as every front-end drives it — the TUI (``app/controller.py``), ``myrm ask`` (plain and
stream-json) and ``myrm acp``: a ``Sessions`` opens a ``ChatSession``, which sends messages and streams the
agent's events (``events.py``), answers approvals through the approver it was given, cancels, compacts and
reads its context figures. The ``Agent`` it builds (and rebuilds when the settings change) is
``chat.agent``, for what a front-end shows beyond the figures (the TUI's health panel).

    sessions = Sessions(store, workspace, approver=ask_user, on_event=show)
    chat = await sessions.start(settings)           # or open(session_id, settings), fork(…)
    async for ev in chat.send("what is in README.md?"):
        show(ev)                                    # TextChunk, ToolStarted, ContextReport, …, TurnDone last
    report = await chat.compact("the parser")       # a ContextReport
    print(chat.figures().used, chat.figures().cost_usd)
    await chat.close()                              # the agent closed, the session's lease released

``approver`` answers "yes", "always" or "no" for a command or an edit the permission rules do not cover;
``on_event`` gets the events that are no turn's own (the background summary's progress, a notice raised
between turns); ``chat.cancel()`` stops the running turn as Esc does (its partial text kept).

Importing this module is light (the TUI opens its session before the first frame); the agent package,
the pipeline and tiktoken load when the first agent is built.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from myrm_tui.agent.events import AgentEvent, AssistantSaved, ContextReport, EventListener, SummaryProgress
from myrm_tui.agent.grants import SessionGrants
from myrm_tui.config import Settings
from myrm_tui.context.vault import VAULT_SCHEME, VaultEntry
from myrm_tui.store.db import SessionRow, Store

if TYPE_CHECKING:
    from myrm_tui.agent.agent import Agent
    from myrm_tui.agent.hot_rebuild import ChatAgentExecutionCache
    from myrm_tui.agent.permissions import UserApprover
    from myrm_tui.agent.tools.base import EditorFiles
    from myrm_tui.agent.tools.jobs import JobManager
    from myrm_tui.agent.undo import UndoOutcome, UndoPlan
    from myrm_tui.context.compaction.record import Compaction
    from myrm_tui.context.report.window_use import WindowUse
    from myrm_tui.llm.client import LLMClient

__all__ = ["ChatSession", "Figures", "Fork", "Sessions", "started_elsewhere"]


def started_elsewhere(sid: str, started_in: str, workspace: Path) -> str | None:
    """The warning for a session resumed in another folder than the one it was started in (every
    front-end says it: ``--session``, ``ask``, an editor's ``session/load``): its history speaks of that
    folder's files, its tools now work on these. None when it is the same folder."""
    # guard: session-resumed-in-another-folder-says-so
    if not started_in or Path(started_in).resolve() == workspace.resolve():
        return None
    return (
        f"warning: session {sid} was started in {started_in}; it continues here, on the files of {workspace}"
    )


@dataclass(frozen=True)
class Figures:
    """What a front-end shows of the context: the window, the tokens in use (the latest request's, tool
    schemas included: the ring's figure) and what this run's requests cost."""

    window: int
    used: int
    cost_usd: float
    compactions: int = 0  # this session's, stored ones included


@dataclass(frozen=True)
class Fork:
    """A fork: its row; compacted, its open session and the compaction's report (a plain copy has none)."""

    row: SessionRow
    chat: ChatSession | None = None
    report: ContextReport | None = None


class Sessions:
    """A front-end's door to the sessions of one store and workspace. ``files`` gives a session's file
    access through an editor; ``keep_warm`` preheats the prompt cache and keeps it alive (the TUI);
    ``extra`` is what besides the settings rebuilds an agent when it changes (the prompt files');
    ``mcp_late``: a turn does not wait for slow MCP servers, which join at a later one (the TUI, an
    editor: turns to come), instead of their full start-up timeout (``myrm ask``)."""

    def __init__(
        self,
        store: Store,
        workspace: Path,
        approver: UserApprover | None = None,
        *,
        llm: LLMClient | None = None,
        files: Callable[[str], EditorFiles | None] | None = None,
        on_event: EventListener | None = None,
        keep_warm: bool = False,
        extra: Callable[[], str] = str,
        mcp_late: bool = False,
    ) -> None:
        self.store = store
        self.workspace = workspace
        self.approver = approver
        self.llm = llm
        self.files = files
        self.on_event = on_event
        self.keep_warm = keep_warm
        self.extra = extra
        self.mcp_late = mcp_late

    async def start(self, settings: Settings, title: str = "New session") -> ChatSession:
        """A new session, open."""
        row = await self.store.create_session(
            title=title, model=settings.model, workspace=str(self.workspace)
        )
        return await self.open(row.id, settings)

    async def open(self, session_id: str, settings: Settings) -> ChatSession:
        """Resume a stored session: its lease is taken (``SessionBusy`` if another myrm writes it); its
        agent is built on first use."""
        await self.store.acquire_lease(session_id)
        return ChatSession(self, session_id, settings)

    async def vault_entry(self, session_id: str, uri: str) -> VaultEntry | None:
        """A ``vault://`` entry as the session ``session_id`` may show it: one of its own, of a session it
        was forked from, or of one started from it (its subagents); None for another session's. A pointer
        is text any tool output can hold, so a card made from one must not open another session's blob
        (the model's ``read`` is held to the same line, ``files.py``)."""
        owner = uri.removeprefix(VAULT_SCHEME).split("/", 1)[0]
        parents = await self.store.forked_at(session_id)  # the sessions it was started from, and when
        # one of its own, of a parent, or of one started from it (a subagent, a fork)
        in_line = owner == session_id or owner in parents or session_id in await self.store.forked_from(owner)
        # guard: a-vault-card-opens-only-its-sessions-line
        if not in_line:
            return None
        entry = await self.store.vault_get(uri)
        # A parent's entry stored after the fork is another branch's (as the model's read, files.py).
        # guard: a-forks-vault-card-stops-at-its-branch-point
        until = parents.get(owner)
        if entry is not None and until is not None and entry.created_at > until:
            return None
        return entry

    def replay(self, agent: Agent) -> ChatSession:
        """A session around an agent built elsewhere that never rebuilds (a replay's recorded tools)."""
        chat = ChatSession(self, agent.session_id, agent.session.settings, fixed=agent)
        chat.adopt(agent)
        return chat

    async def fork(
        self, parent_id: str, settings: Settings, upto_seq: int | None = None, compact: bool = True
    ) -> Fork:
        """Fork ``parent_id`` (up to the stored sequence number ``upto_seq``; all by default).

        ``compact``: as ctrl+f — the row, the message copy, the context state and the fork's first
        compaction commit in one store transaction, so on an exception nothing was created; the fork is
        returned open, its agent built and compacted. Otherwise a plain copy of the history."""
        store = self.store
        if not compact:
            return Fork(await store.fork_session(parent_id, upto_seq))
        agent: Agent | None = None
        try:
            # guard: fork-one-transaction
            async with store.transaction():
                row = await store.fork_session(parent_id, upto_seq, copy_state=True)
                # Built here, not on first use: its start-up preheat would run a second pipeline over the
                # same state while compact_now runs (the old "transaction within a transaction").
                agent = await self._build(row.id, settings)
                report = await agent.compact_now(trigger="fork")
        except BaseException:  # cancelled too: the transaction rolled back
            if agent is not None:
                await agent.close()
            raise
        chat = ChatSession(self, row.id, settings)
        try:
            await store.acquire_lease(row.id)
            chat.adopt(agent)
        except BaseException:
            await agent.close()
            raise
        return Fork(row, chat, report)

    async def _build(
        self,
        session_id: str,
        settings: Settings,
        jobs: JobManager | None = None,
        grants: SessionGrants | None = None,
    ) -> Agent:
        from myrm_tui.agent.factory import build_agent

        files = self.files(session_id) if self.files is not None else None
        return await build_agent(
            self.store,
            session_id,
            settings,
            self.workspace,
            self.llm,
            # guard: api-the-approver-a-front-end-passes
            self.approver,
            jobs=jobs,
            files=files,
            grants=grants,
            mcp_late=self.mcp_late,
        )


class ChatSession:
    """One open session: send, cancel, compact, figures. One turn at a time."""

    def __init__(self, sessions: Sessions, session_id: str, settings: Settings, fixed: Agent | None = None):
        self.sessions = sessions
        self.id = session_id
        self.settings = settings
        self.cost_usd = 0.0  # this run's requests
        self._cache: ChatAgentExecutionCache | None = None
        self._fixed = fixed
        self._turn: asyncio.Task[object] | None = None
        self.grants = SessionGrants()  # the user's "always" answers, for every build of the agent

    @property
    def agent(self) -> Agent | None:
        """The agent built now, if any (the panels read it; it changes on a rebuild)."""
        return self._fixed or (self._cache.agent if self._cache is not None else None)

    @property
    def cache(self) -> ChatAgentExecutionCache:
        """The builds of this session's agent: one at a time, rebuilt when the fingerprint changes."""
        if self._cache is None:
            from myrm_tui.agent.hot_rebuild import ChatAgentExecutionCache

            self._cache = ChatAgentExecutionCache(self._build)
        return self._cache

    def _window(self) -> int:
        from myrm_tui.agent.model_target import window_for

        return window_for(self.settings)

    async def ready(self, settings: Settings | None = None) -> Agent:
        """The agent for ``settings`` (kept from the last call by default): built on first use, rebuilt
        when its execution fingerprint changed (settings, prompts, config; ``hot_rebuild.py``)."""
        if settings is not None:
            self.settings = settings
        if self._fixed is not None:
            return self._fixed
        return await self.cache.get(self.settings, self._window(), self.sessions.extra())

    def adopt(self, agent: Agent) -> None:
        """Hold ``agent``, built for this session's settings elsewhere (a fork's, in its transaction)."""
        if self._fixed is None:
            self.cache.adopt(agent, self.settings, self._window(), self.sessions.extra())
        self._listen(agent)
        if self.sessions.keep_warm:
            agent.warmer.start_keepalive()

    async def send(self, text: str) -> AsyncIterator[AgentEvent]:
        """One turn: the events of ``text`` sent, the last always ``TurnDone`` (after ``TurnFailed`` if it
        failed). Cancelling the task that iterates this (or ``cancel()``) stops it as Esc does."""
        from myrm_tui.llm.pricing import estimate_cost

        self._turn = asyncio.current_task()
        try:
            agent = await self.ready()
            async for ev in agent.turns.run(text):
                if isinstance(ev, AssistantSaved) and ev.usage is not None:
                    self.cost_usd += estimate_cost(agent.session.settings.model, ev.usage)
                yield ev
        finally:
            self._turn = None

    def cancel(self) -> bool:
        """Stop the running turn (its streamed text kept, unfinished tool calls closed); whether one ran."""
        if self._turn is None or self._turn.done():
            return False
        self._turn.cancel()
        return True

    async def compact(self, focus: str = "") -> ContextReport:
        """Compact now (``focus``: what to keep); the context's health after."""
        return await (await self.ready()).compact_now(focus)

    async def preview_compaction(self, focus: str = "") -> tuple[Compaction | None, str]:
        """What ``compact(focus)`` would fold, or None and why nothing would be."""
        return await (await self.ready()).preview_compaction(focus)

    async def undo_plan(self) -> UndoPlan | None:
        """What ``/undo`` would take back: the newest turn's file edits not yet undone (None: none)."""
        files = (await self.ready()).files
        return await files.plan() if files is not None else None

    async def undo(self, plan: UndoPlan, overwrite_changed: bool) -> UndoOutcome:
        """Take back ``plan``'s edits (a file changed since only if ``overwrite_changed``)."""
        files = (await self.ready()).files
        assert files is not None, "undo_plan() found a plan"
        return await files.apply(plan, overwrite_changed)

    def window_use(self) -> WindowUse | None:
        """What fills the window now by category (None before the agent is built)."""
        agent = self.agent
        return agent.window_use() if agent is not None else None

    def figures(self, report: ContextReport | None = None) -> Figures:
        """The context figures now, or as ``report`` (a request's, a compaction's) left them."""
        agent = self.agent
        if agent is None:
            return Figures(0, 0, self.cost_usd)
        s = agent.session
        used = report.tokens + s.schema_tokens() if report is not None else agent.window_use().used
        return Figures(s.window, used, self.cost_usd, s.state.compactions)

    @property
    def notes(self) -> tuple[str, ...]:
        """The notes the agent keeps across compactions (none before it is built)."""
        agent = self.agent
        return tuple(agent.session.state.notes) if agent is not None else ()

    @property
    def extractive_summaries(self) -> bool:
        """Whether compactions summarize without a model call (the settings in force say so)."""
        from myrm_tui.config import extractive_summaries

        return extractive_summaries(self.settings)

    async def close(self, release: bool = True) -> None:
        """Close the agent (its background jobs end) and, unless told not to, release the lease."""
        try:
            if self._fixed is not None:
                await self._fixed.close()
            if self._cache is not None:
                await self._cache.clear()
        finally:
            if release:
                await self.sessions.store.release_lease(self.id)

    async def _build(self, settings: Settings, jobs: JobManager | None) -> Agent:
        from myrm_tui.context.model_facts import model_kind

        # guard: a-session-keeps-its-grants-across-rebuilds
        agent = await self.sessions._build(self.id, settings, jobs, self.grants)
        self._listen(agent)
        if self.sessions.keep_warm:
            # The first message then reads a warm prefix. The embedded model waits for the user to type
            # (Controller.user_typing): its child and litellm hold ~350 MB, for a session maybe only read.
            if model_kind(settings.model) != "local":
                agent.warmer.schedule_preheat()
            agent.warmer.start_keepalive()
        return agent

    def _listen(self, agent: Agent) -> None:
        listener = self.sessions.on_event
        if listener is None:
            return
        agent.session.outbox.listener = listener
        agent.session.preparer.listeners.append(lambda state: listener(SummaryProgress(state)))
