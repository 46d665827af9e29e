"""Building a ready agent for a session: settings resolved, prompts and pipeline loaded, and the
agent's units (session, tools and hooks, cache warmer, subagents, turn) wired here, nowhere else."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, cast

from myrm_tui.agent.agent import Agent
from myrm_tui.agent.cache_warmer import CacheWarmer
from myrm_tui.agent.grants import SessionGrants
from myrm_tui.agent.hooks import HookRunner
from myrm_tui.agent.limits import Limits
from myrm_tui.agent.model_target import window_for
from myrm_tui.agent.permissions import Assessment, CommandRules, UserApprover
from myrm_tui.agent.prompts import PromptLibrary
from myrm_tui.agent.repeat_guard import REPEAT_TOOL
from myrm_tui.agent.session import AgentSession
from myrm_tui.agent.subagents import Subagents
from myrm_tui.agent.tool_runner import ToolRunner
from myrm_tui.agent.tool_set import ToolSet
from myrm_tui.agent.tools import Tool, ToolContext, ToolError, default_tools
from myrm_tui.agent.tools.base import Approval, Approver, EditorFiles
from myrm_tui.agent.tools.jobs import JobManager
from myrm_tui.agent.tools.subagent import SubagentTool
from myrm_tui.agent.turn import TurnRunner
from myrm_tui.agent.undo import FileHistory
from myrm_tui.config import Settings, load_config_file, resolve
from myrm_tui.context.model_facts import model_kind
from myrm_tui.context.pipeline import Pipeline, build_pipeline
from myrm_tui.llm.client import LLMClient
from myrm_tui.paths import config_file, jobs_dir, prompts_dir, user_filter_dirs
from myrm_tui.store.db import Store
from myrm_tui.store.history import UNAVAILABLE, Hit
from myrm_tui.trust import is_trusted, skipped_notice, workspace_config


async def resolve_settings(store: Store, cli: dict[str, Any]) -> Settings:
    return resolve(load_config_file(config_file()), await store.all_settings(), cli)


async def build_agent(
    store: Store,
    session_id: str,
    settings: Settings,
    workspace: Path,
    llm: LLMClient | None = None,
    approver: UserApprover | None = None,
    window: int | None = None,
    tools: Sequence[Tool] | None = None,
    jobs: JobManager | None = None,
    files: EditorFiles | None = None,
    grants: SessionGrants | None = None,
    mcp_late: bool = False,
) -> Agent:
    """The session's agent, loaded. ``tools`` replaces the default set (replay's recorded tools: no
    ``subagent``, no MCP servers); ``jobs`` are the background jobs of a previous build of this session's
    agent, ``grants`` what the user allowed for the session in answers to earlier builds. ``mcp_late``:
    the build does not wait for the MCP servers, which join at the first turn they are up by (a front-end
    with turns to come: ``mcp_client.LateServers``); without it the build waits for them up to their
    start-up timeout (``myrm ask``)."""
    prompts = prompts_dir()
    trusted = is_trusted(workspace, settings.trust_workspace)
    skipped = [] if trusted else workspace_config(workspace)
    connections: list[Any] = []
    errors: list[Any] = []
    late: Any = None
    if tools is None:
        bound: list[Tool] = default_tools()
        if settings.mcp_servers:
            from myrm_tui.agent.mcp_client import (
                STARTUP_TIMEOUT,
                OversizedResultHandler,
                configs_from,
                connect_some,
            )

            configs, skipped_servers = configs_from(settings.mcp_servers)
            connections, mcp_tools, errors, late = await connect_some(
                configs,
                OversizedResultHandler(settings.mcp_max_output_chars),
                # guard: mcp-a-slow-server-does-not-hold-the-first-prompt
                0.0 if mcp_late else STARTUP_TIMEOUT,
            )
            errors = [*skipped_servers, *errors]
            bound += mcp_tools  # bound once, before the first request: the tool prefix stays cache-stable
    else:
        bound = list(tools)
    agent = await assemble(
        store,
        session_id,
        settings,
        workspace,
        llm
        or LLMClient(
            inactivity_timeout=settings.summarizer_inactivity_seconds,
            total_timeout=settings.summarizer_total_seconds,
        ),
        build_pipeline(prompts, user_filter_dirs(workspace, trusted=trusted)),
        PromptLibrary(prompts),
        bound,
        approver=approver,
        window=window,
        subagents=tools is None,
        mcp_connections=connections,
        jobs=jobs,
        files=files,
        grants=grants,
    )
    agent.turns.late = late
    if errors:
        await store.add_metrics(session_id, agent.session.turn, {"kind": "mcp_error", "events": errors})
        agent.turns.hook_problems.extend(errors)  # shown once, at the first turn (ask: a line on stderr)
    if skipped:
        agent.turns.hook_problems.append(skipped_notice(workspace, skipped))
    return agent


async def assemble(
    store: Store,
    session_id: str,
    settings: Settings,
    workspace: Path,
    llm: LLMClient,
    pipeline: Pipeline,
    prompts: PromptLibrary,
    tools: list[Tool],
    *,
    approver: UserApprover | None,
    window: int | None = None,
    subagents: bool = True,
    clock: Callable[[], float] = time.time,
    summary_role: str = "assistant",
    auto_approve: bool | None = None,
    allowed_commands: CommandRules | None = None,
    mcp_connections: Sequence[Any] = (),
    jobs: JobManager | None = None,
    files: EditorFiles | None = None,
    grants: SessionGrants | None = None,
    kept_files: FileHistory | None = None,
) -> Agent:
    """Wire one agent's units and load its session. A child (subagent) gets the parent's tools, approver,
    approval mode, command rules and grants (an "always" in a child holds for the parent), and no
    ``subagent`` tool."""
    grants = grants if grants is not None else SessionGrants()
    ask = serialized(approver, grants) if approver else None
    rules = (
        allowed_commands
        if allowed_commands is not None
        # guard: an-always-outlives-the-agent-rebuilt-after-a-settings-change
        else CommandRules(settings.allowed_commands, grants.commands, grants.writes)
    )
    auto = settings.approval == "auto" if auto_approve is None else auto_approve
    tool_set = ToolSet([*tools, SubagentTool()] if subagents else tools)
    session = AgentSession(
        store,
        session_id,
        settings,
        llm,
        pipeline,
        prompts,
        workspace,
        tool_set,
        clock,
        window or window_for(settings),
        summary_role,
    )
    # Vault entries the tools may read besides the session's own: its ancestors' (a fork's pointers
    # into its parent's outputs stay valid, also after a restart) and its subagents' (added as they run).
    # A parent's entries only up to when this session's line left it (``Store.forked_at``).
    forked_at = await store.forked_at(session_id)
    namespaces: set[str] = set(forked_at)
    # A subagent's edits are kept as the parent's (its turn): the user's /undo sees them.
    files_kept = kept_files or FileHistory(store, session, workspace, settings.undo_backups_mb * 1_000_000)

    async def build_child(child_id: str, child_settings: Settings) -> Agent:
        return await assemble(
            store,
            child_id,
            child_settings,
            workspace,
            llm,
            pipeline,
            prompts,
            [t for t in tool_set.tools.values() if t.name != SubagentTool.name],  # a late server's too
            approver=ask,
            window=session.window,
            subagents=False,
            clock=clock,
            summary_role="user",
            auto_approve=auto,
            allowed_commands=rules,
            files=files,
            grants=grants,
            kept_files=files_kept,
        )

    spawner = Subagents(session, build_child, namespaces) if subagents else None

    async def search_history(query: str, limit: int) -> list[Hit]:
        if not store.history_indexed:
            raise ToolError(UNAVAILABLE)
        return await store.search_history(session_id, query, limit, sorted(namespaces))

    ctx = ToolContext(
        workspace=workspace,
        vault=session.vault,
        notes=lambda: tuple(session.state.notes),
        integrity=session.integrity,
        approver=ask,
        auto_approve=auto,
        allowed_commands=rules,
        # guard: sandbox-the-setting-reaches-the-shell
        sandbox=settings.sandbox,
        env_keep=frozenset(settings.shell_env_keep),
        bash_timeout=settings.bash_timeout,
        # guard: limits-the-settings-reach-the-shell
        limits=Limits.of(settings.limit_processes, settings.limit_memory_mb, settings.limit_file_size_mb),
        extra_vault_namespaces=namespaces,
        vault_until=forked_at,
        jobs=jobs if jobs is not None else JobManager(jobs_dir(store.path, session_id)),
        job_output_chars=settings.job_output_chars,
        subagent=spawner.spawn if spawner else None,
        files=files,
        history=search_history,
        keep_file=files_kept.keep,
    )
    hooks, hook_problems = HookRunner.from_settings(
        # A replay re-serves recorded tool outputs: the user's hooks would run against nothing real.
        () if model_kind(settings.model) == "replay" else settings.hooks,
        workspace=workspace,
        vault=session.vault,
        counter=session.counter,
        session_id=session_id,
        max_tokens=settings.hook_max_output_tokens,
    )
    runner = ToolRunner(tool_set, ctx, hooks, session)
    warmer = CacheWarmer(session)
    turns = TurnRunner(session, runner, warmer, hooks, hook_problems, grants)
    agent = Agent(session, runner, warmer, turns, mcp_connections, files_kept)
    await agent.load()
    return agent


def serialized(approver: UserApprover, grants: SessionGrants | None = None) -> Approver:
    """The approver behind a lock (parallel tool calls never stack two prompts); its answer as an
    ``Approval``. A repeated call's question that waited while another agent's (a parallel subagent's)
    got "always" is not asked: the grant is the session's."""
    lock = asyncio.Lock()

    async def ask(tool: str, command: str, assessment: Assessment) -> Approval:
        async with lock:
            # guard: an-always-for-repeats-answers-the-questions-still-waiting
            if tool == REPEAT_TOOL and grants is not None and grants.repeats:
                return "yes"
            answer = str(await approver(tool, command, assessment))
        return cast(Approval, answer) if answer in ("always", "yes", "unattended") else "no"

    return ask
