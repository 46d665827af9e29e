"""The agent loop: user message → pipeline → model → tools → … until a final answer.

Every message is appended to the store the moment it exists, so a crash loses nothing committed.
Cancelling a turn (Esc) leaves a consistent history: a half-streamed answer is kept as text (its
unfinished tool calls dropped), and a tool call that never returned gets a synthetic error result.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from myrm_tui.agent.events import (
    AgentEvent,
    AssistantSaved,
    ContextReport,
    Notice,
    ReasoningChunk,
    TextChunk,
    ToolFinished,
    ToolStarted,
    TurnDone,
    TurnFailed,
    UserSaved,
)
from myrm_tui.agent.hooks import TOOL_EVENTS, HookResult, HookRunner
from myrm_tui.agent.permissions import Assessment, CommandRules
from myrm_tui.agent.prompts import PromptLibrary
from myrm_tui.agent.summarizer import AuxSummarizer, CircuitBreaker
from myrm_tui.agent.tools import Tool, ToolContext, ToolError, ToolResult, default_tools, schema
from myrm_tui.agent.tools.jobs import JobManager
from myrm_tui.config import Settings, summarizer_model
from myrm_tui.context.cache_optimize import prompt_cache_key_var, render
from myrm_tui.context.config import DEFAULT_WINDOW, ContextConfig
from myrm_tui.context.normalize import INTERRUPTED
from myrm_tui.context.processor import Pipeline, PipelineContext
from myrm_tui.context.reread import FileIntegrityGuard
from myrm_tui.context.state import ContextState
from myrm_tui.context.tokens import TokenCounter
from myrm_tui.context.types import Message, ToolCall, synthetic_user
from myrm_tui.context.vault import ArtifactVault
from myrm_tui.llm.client import LLMClient, ModelSpec
from myrm_tui.llm.errors import ContextOverflowError, IncompleteStreamError, LLMError
from myrm_tui.llm.events import Finish, ReasoningDelta, TextDelta, ToolCallDelta, Usage
from myrm_tui.llm.kinds import model_kind, supports_tools
from myrm_tui.paths import jobs_dir
from myrm_tui.store.db import Store

INTERRUPTED_SUFFIX = "\n\n[interrupted by the user]"
CUT_SUFFIX = "\n\n[reply cut off: the stream ended early; retried]"
CUT_CONTINUE = "Your previous reply was cut off by the connection (kept above). Continue from where it stopped; do not repeat it."
# After a context overflow, aim this far under the provider's limit: its count and ours differ by
# more than the ratio the two counts give for one request (tool schemas, message framing).
OVERFLOW_MARGIN = 0.85


@dataclass
class _Partial:
    text: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    calls: dict[int, dict[str, str]] = field(default_factory=dict)
    usage: Usage | None = None
    finish: str = ""

    def tool_calls(self) -> tuple[ToolCall, ...]:
        out = []
        for i in sorted(self.calls):
            c = self.calls[i]
            out.append(ToolCall(c.get("id") or f"call_{i}", c.get("name", ""), c.get("arguments", "") or "{}"))
        return tuple(out)


def model_spec(settings: Settings, model: str | None = None) -> ModelSpec:
    """The litellm call target. An OpenAI-compatible local endpoint (Ollama, llama.cpp, vLLM) gets a
    placeholder key when none is set: the OpenAI client refuses to send without one, the servers ignore it."""
    key = settings.api_key
    name = model or settings.model
    if settings.api_base and not key and name.startswith(("openai/", "hosted_vllm/")) and not os.environ.get("OPENAI_API_KEY"):
        key = "sk-no-key-needed"
    return ModelSpec(name, settings.api_base, key)


def window_for(settings: Settings) -> int:
    if settings.context_window:
        return settings.context_window
    if model_kind(settings.model) == "local":
        from myrm_tui.llm.local import N_CTX

        return N_CTX
    from myrm_tui.llm.registry import context_window

    return context_window(settings.model, DEFAULT_WINDOW)


class Agent:
    """One session's agent. Not thread-safe; one turn at a time (the per-chat lock guards compaction)."""

    def __init__(
        self, store: Store, session_id: str, settings: Settings, llm: LLMClient, pipeline: Pipeline,
        prompts: PromptLibrary, workspace: Path, approver: Any = None, tools: list[Tool] | None = None,
        clock: Callable[[], float] = time.time, window: int | None = None,
    ) -> None:
        self.store = store
        self.session_id = session_id
        self.settings = settings
        self.llm = llm
        self.pipeline = pipeline
        self.prompts = prompts
        self.workspace = workspace
        self.clock = clock
        self.tools = {t.name: t for t in (tools if tools is not None else default_tools())}
        self.depth = 0  # 0 = a user's session; children (subagents) do not spawn further children
        if tools is None:
            from myrm_tui.agent.tools.subagent import SubagentTool

            self.tools["subagent"] = SubagentTool(self._spawn_child)
        self.use_tools(list(self.tools.values()))  # schemas bound once: cache-stable
        self.counter = TokenCounter()
        self.history: list[Message] = []
        self.state = ContextState()
        self.vault = ArtifactVault(namespace=session_id, loader=store.vault_get)
        self.window = window or window_for(settings)
        self.config = ContextConfig(
            max_context_tokens=self.window, light_ratio=settings.light_ratio, full_ratio=settings.full_ratio,
            emergency_ratio=settings.emergency_ratio, reserve_output_tokens=min(settings.max_output_tokens, self.window // 4),
        )
        self.fingerprint = compute_execution_fingerprint(settings, self.window)
        self.integrity = FileIntegrityGuard()
        self.tool_ctx = ToolContext(
            workspace=workspace, vault=self.vault, state=self.state, integrity=self.integrity,
            approver=self._serialized(approver) if approver else None, auto_approve=settings.approval == "auto",
            allowed_commands=CommandRules(settings.allowed_commands), bash_timeout=settings.bash_timeout,
            jobs=JobManager(jobs_dir(store.path, session_id)), job_output_chars=settings.job_output_chars,
        )
        self.hooks, self.hook_problems = HookRunner.from_settings(
            # A replay re-serves recorded tool outputs: the user's hooks would run against nothing real.
            () if model_kind(settings.model) == "replay" else settings.hooks, workspace=workspace, vault=self.vault, counter=self.counter, session_id=session_id,
            max_tokens=settings.hook_max_output_tokens,
        )
        self.turn = 0
        self.last_report: ContextReport | None = None
        self._approval_lock = asyncio.Lock()
        self._resumed = False
        self._background: set[asyncio.Task[None]] = set()
        self.breaker = CircuitBreaker()
        self.aux: AuxSummarizer | None = None
        self.keepalive: Any = None  # CacheKeepAliveManager, once started
        self.mcp_connections: list[Any] = []
        self.allowed_tools: list[str] | None = None
        self.preheats = 0

    # -- set-up -----------------------------------------------------------------------------------
    def narrow_tools(self, names: list[str] | None) -> None:
        """Limit which tools the model may call (a loaded skill) without changing the bound schemas.

        The schema list stays frozen, so the cached prefix survives; the narrowing travels in
        ``tool_choice`` (OpenAI ``allowed_tools``; other providers ignore it and see all tools)."""
        unknown = [n for n in names or [] if n not in self.tools]
        if unknown:
            raise ValueError(f"unknown tools: {', '.join(unknown)}")
        self.allowed_tools = list(names) if names else None

    def tool_choice(self) -> Any:
        if not self.allowed_tools:
            return None
        from myrm_tui.context.cache_optimize import is_native_openai

        if not is_native_openai(self.settings.model, self.settings.api_base):
            return None
        return {"type": "allowed_tools", "mode": "auto", "tools": [{"type": "function", "name": n} for n in self.allowed_tools]}

    def add_tools(self, tools: list[Any]) -> None:
        self.use_tools([*self.tools.values(), *tools])

    def use_tools(self, tools: list[Any]) -> None:
        """Replace the bound tool set (replay); done before the first request, so the prefix stays stable."""
        self.tools = {t.name: t for t in tools}
        self.tool_schemas = [schema(t) for t in self.tools.values()]
        self.tools_fingerprint = hashlib.blake2b(json.dumps(self.tool_schemas, sort_keys=True).encode(), digest_size=8).hexdigest()

    @property
    def spec(self) -> ModelSpec:
        return model_spec(self.settings)

    @property
    def system_prompt(self) -> str | None:
        """The system prompt in force (None in replay, where the recording's own is kept)."""
        if model_kind(self.settings.model) == "replay":
            return None
        return self.prompts.system_prompt(self.prompt_mode, self.settings.model)

    @property
    def sends_tools(self) -> bool:
        return supports_tools(self.settings.model, self.settings.api_base)

    @property
    def prompt_mode(self) -> str:
        """The settings' mode; a model that gets no tools gets ``chat`` instead of the default ``full``
        (rules about tools it cannot call would only lengthen its prefill)."""
        mode = self.settings.prompt_mode
        return "chat" if mode == "full" and not self.sends_tools else mode

    async def load(self) -> None:
        """Load the session; a new session gets its system prompt and environment message."""
        self.history = await self.store.load_messages(self.session_id)
        saved = await self.store.load_state(self.session_id)
        if saved:
            self.state = ContextState.from_json(saved)
            self.tool_ctx.state = self.state
        if not self.history:
            await self._append(Message(role="system", content=self.system_prompt))
            await self._append(self.prompts.environment_message(self.workspace, self.clock()))
            await self._hook_context(await self.hooks.run("session_start", {}))
        else:
            self._resumed = True
        self.turn = sum(1 for m in self.history if m.role == "user" and not m.synthetic)

    def _serialized(self, approver: Any) -> Any:
        async def ask(tool: str, command: str, assessment: Assessment) -> str:
            async with self._approval_lock:  # parallel calls never stack two prompts
                return str(await approver(tool, command, assessment))

        return ask

    async def _append(self, msg: Message) -> Message:
        stored = await self.store.append_message(self.session_id, msg, self.counter.message(msg))
        self.history.append(stored)
        return stored

    async def _hook_context(self, results: list[HookResult]) -> None:
        """Hook output for the model, as one marked context message (never taken for the user's words)."""
        body = "\n".join(r.render() for r in results if r.worth_showing)
        if body:
            await self._append(synthetic_user(body, "hook", "hook"))
        if any(r.vault_uri for r in results):
            await self.flush_vault()

    # -- the pipeline -----------------------------------------------------------------------------
    @property
    def extractive_summaries(self) -> bool:
        """Deterministic summaries, no LLM: asked for, or the embedded 135M model (it writes worse ones)."""
        s = self.settings
        return s.summarizer_model == "extractive" or (model_kind(s.model) == "local" and not s.summarizer_model)

    def _summarizer(self) -> AuxSummarizer | None:
        if self.extractive_summaries:
            return None
        if self.aux is None:
            aux_model = summarizer_model(self.settings)
            aux_window = self.window if aux_model == self.settings.model else window_for(replace(self.settings, model=aux_model, context_window=0))
            self.aux = AuxSummarizer(
                self.llm, model_spec(self.settings, aux_model), self.spec, aux_window, self.window, self.breaker,
                self.settings.summarizer_inactivity_seconds, self.settings.summarizer_total_seconds, self.counter,
            )
        return self.aux

    async def prepare(self, force: bool = False, focus: str = "", hard_limit: int | None = None) -> tuple[list[Message], PipelineContext]:
        """Run the pipeline over the history; persist vault writes, state and compaction atomically."""
        ctx = PipelineContext(
            config=self.config, state=self.state, counter=self.counter, vault=self.vault, raw=self.history,
            model=self.settings.model, now=self.clock(), summarizer=self._summarizer(), read_file=self._read_for_reread,
            force_compaction=force, hard_limit=hard_limit, focus_hint=focus, resume=self._resumed, integrity=self.integrity,
            tools_fingerprint=self.tools_fingerprint, system_override=self.system_prompt,
        )
        view = await self.pipeline.run(ctx, self.session_id)
        self._resumed = False
        ctx.metrics.breaker = self.breaker.as_dict()
        if self.aux is not None and self.aux.warnings:
            ctx.metrics.events.extend(self.aux.warnings)
            self.aux.warnings.clear()
        checkpoint = await self.store.begin_compaction(self.session_id, ctx.backup) if ctx.compacting and ctx.backup else None
        await self.flush_vault()
        if checkpoint is not None:
            await self.store.commit_compaction(self.session_id, checkpoint, self.state.to_json())
        else:
            await self.store.save_state(self.session_id, self.state.to_json())
        return view, ctx

    def _read_for_reread(self, path: str) -> str | None:
        from myrm_tui.agent.tools.base import resolve_in_workspace

        try:
            full = resolve_in_workspace(self.workspace, path)
            return full.read_text(encoding="utf-8", errors="replace") if full.is_file() else None
        except (ToolError, OSError):
            return None

    async def flush_vault(self) -> None:
        entries = self.vault.drain()
        if entries:
            await self.store.vault_put(self.session_id, entries)

    async def compact_now(self, focus: str = "") -> ContextReport:
        """Force a compaction (the ring's button, ``/compact``); returns the new context health.

        The new prefix is preheated at once, so the next message reads it from the cache."""
        view, ctx = await self.prepare(force=True, focus=focus)
        report = ContextReport(ctx.tokens(view), self.window, ctx.metrics.as_dict())
        await self.store.add_metrics(self.session_id, self.turn, {**ctx.metrics.as_dict(), "kind": "manual_compaction"})
        self.last_report = report
        self.schedule_preheat(view, ctx.breakpoints)
        return report

    # -- prompt-cache preheat and keep-alive -------------------------------------------------------
    @property
    def caches_prompts(self) -> bool:
        from myrm_tui.agent.keepalive import provider_caches

        return provider_caches(self.settings.model)

    def schedule_preheat(self, view: list[Message] | None = None, breakpoints: list[int] | None = None) -> asyncio.Task[None] | None:
        """Fire-and-forget: send the current prefix with a 1-token reply so the provider caches it.
        The embedded model is preheated too: it starts the child while the user types, and llama.cpp
        keeps the last prompt's KV, so the first reply prefills only the new message."""
        local = model_kind(self.settings.model) == "local"
        if not ((self.caches_prompts or local) and self.settings.preheat):
            return None
        task = asyncio.ensure_future(self.preheat(view, breakpoints))
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        return task

    async def preheat(self, view: list[Message] | None = None, breakpoints: list[int] | None = None) -> None:
        if view is None:
            view, ctx = await self.prepare()
            breakpoints = ctx.breakpoints
        req = render(view, self.settings.model, breakpoints, self.tool_schemas if self.sends_tools else None,
                     self.settings.api_base, self.session_id)
        messages = req.pop("messages")
        tools = req.pop("tools", None)
        usage: Usage | None = None
        try:
            async for ev in self.llm.stream(self.spec, messages, tools=tools, max_tokens=1, extra=req):
                if isinstance(ev, Usage):
                    usage = ev
        except LLMError as exc:
            await self.store.add_metrics(self.session_id, self.turn, {"kind": "preheat", "error": str(exc)[:200]})
            return
        data: dict[str, Any] = {"kind": "preheat"}
        if usage is not None:
            data.update(prompt_tokens=usage.prompt_tokens, cached_tokens=usage.cached_tokens,
                        cache_creation_tokens=usage.cache_creation_tokens, cost_usd=estimate_cost(self.settings.model, usage))
        await self.store.add_metrics(self.session_id, self.turn, data)
        self.preheats += 1

    def start_keepalive(self, **timing: Any) -> None:
        from myrm_tui.agent.keepalive import CacheKeepAliveManager

        if not (self.settings.keepalive and self.caches_prompts) or self.keepalive is not None:
            return
        idle = self.settings.keepalive_idle_seconds
        self.keepalive = CacheKeepAliveManager(self.preheat, idle_after=idle, interval=idle, **timing)
        self.keepalive.start()

    async def _spawn_child(self, task: str) -> ToolResult:
        """Run ``task`` in a child session with the same settings and pipeline; distill its result."""
        from myrm_tui.agent.distill import AgentHandoverState, auto_vault_or_truncate

        row = await self.store.create_session(title=f"[subagent] {task[:50]}", model=self.settings.model,
                                              workspace=str(self.workspace), parent_id=self.session_id)
        child_tools = [t for name, t in self.tools.items() if name != "subagent"]
        # A child runs the parent's tool hooks; its task is not a user prompt, nor a new user session.
        tool_hooks = tuple(h for h in self.settings.hooks if h.get("event") in TOOL_EVENTS)
        child = Agent(self.store, row.id, replace(self.settings, keepalive=False, preheat=False, hooks=tool_hooks), self.llm, self.pipeline,
                      self.prompts, self.workspace, approver=self.tool_ctx.approver, tools=child_tools, clock=self.clock, window=self.window)
        child.depth = self.depth + 1
        child.config = replace(child.config, summary_role="user")
        child.tool_ctx.auto_approve = self.tool_ctx.auto_approve
        child.tool_ctx.allowed_commands = self.tool_ctx.allowed_commands  # "always" in a child holds for the parent
        await child.load()
        final = ""
        failures: list[str] = []
        try:
            async for ev in child.run_turn(task):  # inherits prompt_cache_key through the ContextVar
                if isinstance(ev, AssistantSaved) and ev.message.text.strip():
                    final = ev.message.text
                elif isinstance(ev, TurnFailed):
                    failures.append(ev.error)
        finally:
            await child.close()  # its background jobs end with it
        await child.flush_vault()
        handover = AgentHandoverState.extract(task, child.history)
        self.state.handovers.append(handover.as_dict())
        body = final or ("; ".join(failures) or "(the subagent returned no answer)")
        shown, uri = auto_vault_or_truncate(body, self.vault, self.settings.max_subagent_result_tokens, self.counter, child_session=row.id)
        await self.flush_vault()
        await self.store.add_metrics(self.session_id, self.turn, {"kind": "handover", "child": row.id, "vault_uri": uri, **handover.as_dict()})
        self.tool_ctx.extra_vault_namespaces.add(row.id)
        text = f"{shown}\n\n{handover.render()}"
        return ToolResult(text, is_error=bool(failures) and not final, meta={"child_session": row.id, **({"vault_uri": uri} if uri else {})})

    async def close(self) -> None:
        if self.tool_ctx.jobs is not None:
            await self.tool_ctx.jobs.close()
        for conn in self.mcp_connections:
            await conn.close()
        if self.keepalive is not None:
            await self.keepalive.stop()
        for t in list(self._background):
            t.cancel()
        await asyncio.gather(*self._background, return_exceptions=True)

    # -- one turn ---------------------------------------------------------------------------------
    async def run_turn(self, text: str) -> AsyncIterator[AgentEvent]:
        """Events of one turn; the last is always ``TurnDone`` (after a ``TurnFailed`` if it failed)."""
        tokens = self.counter.text(text)
        if tokens > self.settings.max_user_tokens:
            yield TurnFailed(
                f"Message refused before sending: {tokens:,} tokens is over the {self.settings.max_user_tokens:,}-token "
                "limit for one message. Nothing was sent or saved; attach the content as a file and point the agent at it.",
                "too_large",
            )
            yield TurnDone(0)
            return
        for problem in self.hook_problems:
            yield Notice(problem, "warning")
        self.hook_problems = []
        hooked = await self.hooks.run("user_prompt_submit", {"prompt": text})
        if hooked and hooked[-1].blocks:
            await self.flush_vault()
            yield TurnFailed(f"A user_prompt_submit hook blocked this message ({hooked[-1].spec.command}):\n{hooked[-1].output}", "hook_blocked")
            yield TurnDone(0)
            return
        self.turn += 1
        user = await self._append(Message(role="user", content=text))
        yield UserSaved(user)
        await self._hook_context(hooked)
        token = prompt_cache_key_var.set(prompt_cache_key_var.get() or self.session_id)
        if self.keepalive is not None:
            self.keepalive.pause()
        try:
            async for ev in self._steps():
                yield ev
        finally:
            prompt_cache_key_var.reset(token)
            if self.keepalive is not None:
                self.keepalive.resume()

    async def _steps(self) -> AsyncIterator[AgentEvent]:
        overflow_retried = cut_retried = False  # one retry per request, not per turn
        step = 0
        while step < self.settings.max_steps:
            view, ctx = await self.prepare(force=False)
            if ctx.tokens(view) > self.config.input_budget:
                # L5 preflight guard: never pay for a request the provider will refuse.
                view, ctx = await self.prepare(force=True)
                if ctx.tokens(view) > self.config.input_budget:
                    yield TurnFailed(
                        f"Refused before sending: the request needs {ctx.tokens(view):,} tokens even after compaction; "
                        f"the model accepts {self.config.input_budget:,}. Fork the session or use a model with a larger window.",
                        "preflight",
                    )
                    yield TurnDone(step)
                    return
            report = ContextReport(ctx.tokens(view), self.window, ctx.metrics.as_dict())
            yield report
            if ctx.metrics.compacted and ctx.metrics.tokens_out < ctx.metrics.tokens_in:  # a no-op compaction is not news
                yield Notice(f"Context compacted ({ctx.metrics.compaction_reason}): {ctx.metrics.tokens_in:,} → {ctx.metrics.tokens_out:,} tokens")
            partial = _Partial()
            try:
                async for ev in self._stream(view, ctx, partial):
                    yield ev
            except ContextOverflowError as exc:
                if overflow_retried:
                    yield TurnFailed(str(exc), "context_overflow")
                    yield TurnDone(step)
                    return
                overflow_retried = True
                yield Notice("The provider reported a context overflow; compacting and retrying once.", "warning")
                await self._recover_overflow(exc, ctx.tokens(view))
                continue
            except LLMError as exc:
                if isinstance(exc, IncompleteStreamError) and not cut_retried:
                    cut_retried = True
                    yield Notice(f"{exc}. Retrying once.", "warning")
                    await self._keep_cut_partial(partial)
                    continue
                await self._save_partial(partial, note="\n\n[reply cut off: the model call failed]")
                yield TurnFailed(str(exc), type(exc).__name__)
                yield TurnDone(step)
                return
            except asyncio.CancelledError:
                await asyncio.shield(self._save_partial(partial, note=INTERRUPTED_SUFFIX))
                raise
            calls = tuple(c for c in partial.tool_calls() if c.name)
            assistant = await self._append(
                Message(role="assistant", content="".join(partial.text) or None, tool_calls=calls,
                        reasoning="".join(partial.reasoning) or None)
            )
            await self._record_metrics(ctx, partial.usage)
            self.last_report = ContextReport(ctx.tokens(view), self.window, ctx.metrics.as_dict(), partial.usage)
            yield AssistantSaved(assistant, partial.usage)
            yield self.last_report
            step += 1
            overflow_retried = cut_retried = False  # the next request of this turn gets its own retry
            if not calls:
                yield TurnDone(step)
                return
            async for ev in self._run_tools(calls):
                yield ev
        yield Notice(f"Stopped after {self.settings.max_steps} steps (the step limit); send a message to continue.", "warning")
        yield TurnDone(step)

    async def _stream(self, view: list[Message], ctx: PipelineContext, partial: _Partial) -> AsyncIterator[AgentEvent]:
        req = render(view, self.settings.model, ctx.breakpoints, self.tool_schemas if self.sends_tools else None,
                     self.settings.api_base, self.session_id)
        messages = req.pop("messages")
        tools = req.pop("tools", None)
        async for ev in self.llm.stream(self.spec, messages, tools=tools, tool_choice=self.tool_choice(),
                                        max_tokens=self.settings.max_output_tokens, extra=req):
            if isinstance(ev, TextDelta):
                partial.text.append(ev.text)
                yield TextChunk(ev.text)
            elif isinstance(ev, ReasoningDelta):
                partial.reasoning.append(ev.text)
                yield ReasoningChunk(ev.text)
            elif isinstance(ev, ToolCallDelta):
                slot = partial.calls.setdefault(ev.index, {"id": "", "name": "", "arguments": ""})
                if ev.id:
                    slot["id"] = ev.id
                if ev.name:
                    slot["name"] += ev.name
                slot["arguments"] += ev.arguments
            elif isinstance(ev, Usage):
                partial.usage = ev
            elif isinstance(ev, Finish):
                partial.finish = ev.reason

    async def _save_partial(self, partial: _Partial, note: str) -> None:
        """Keep what streamed before an interruption, as plain text (unfinished tool calls dropped)."""
        text = "".join(partial.text)
        if text.strip():
            await self._append(Message(role="assistant", content=text + note, meta={"interrupted": True}))

    async def _keep_cut_partial(self, partial: _Partial) -> None:
        """A cut stream's text stays in the history, marked, with a note asking the retry to go on from it."""
        if "".join(partial.text).strip():
            await self._save_partial(partial, note=CUT_SUFFIX)
            await self._append(synthetic_user(CUT_CONTINUE, "stream_cut", "stream_cut"))

    async def _recover_overflow(self, exc: ContextOverflowError, sent: int) -> None:
        """L4 stream recovery: our count said the request fits, the provider's said no.

        Our budget is rescaled by the provider's own numbers (cut by a quarter when its message has
        none), and a compaction must end under it: stage 1 shrinks tool outputs, stage 2 drops the
        oldest rounds (``PriorityCompressor``). It commits like any compaction; the caller retries once."""
        tools = self.counter.text(json.dumps(self.tool_schemas)) if self.tool_schemas else 0
        sizes = exc.sizes()
        if sizes is not None:
            limit, counted = sizes
            hard = int(limit * (sent + tools) / max(counted, 1) * OVERFLOW_MARGIN) - tools
        else:
            hard = int(sent * 0.75)
        _, ctx = await self.prepare(hard_limit=max(min(hard, self.config.input_budget), 1))
        await self.store.add_metrics(self.session_id, self.turn, {**ctx.metrics.as_dict(), "kind": "overflow_recovery", "hard_limit": hard})

    async def _run_tools(self, calls: tuple[ToolCall, ...]) -> AsyncIterator[AgentEvent]:
        for c in calls:
            yield ToolStarted(c)
        results: dict[str, ToolResult] = {}
        queue: asyncio.Queue[ToolCall] = asyncio.Queue()

        async def one(call: ToolCall) -> None:
            results[call.id] = await self._execute(call)
            await queue.put(call)

        tasks = [asyncio.ensure_future(one(c)) for c in calls]
        saved: set[str] = set()
        try:
            for _ in calls:
                done_call = await queue.get()
                yield ToolFinished(done_call, self._result_message(done_call, results[done_call.id]))
            await asyncio.gather(*tasks)
        except asyncio.CancelledError:
            for t in tasks:
                t.cancel()
            await asyncio.shield(self._persist_results(calls, results, saved, interrupted=True))
            raise
        await self._persist_results(calls, results, saved, interrupted=False)
        await self.flush_vault()

    async def _persist_results(self, calls: tuple[ToolCall, ...], results: dict[str, ToolResult], saved: set[str], interrupted: bool) -> None:
        """Results in call order; calls that never returned get the synthetic interrupted error."""
        for c in calls:
            if c.id in saved:
                continue
            res = results.get(c.id)
            if res is None:
                res = ToolResult(INTERRUPTED, is_error=True, meta={"interrupted": True})
            await self._append(self._result_message(c, res))
            saved.add(c.id)
        if interrupted:
            await self.flush_vault()

    @staticmethod
    def _result_message(call: ToolCall, res: ToolResult) -> Message:
        meta = {k: v for k, v in res.meta.items() if isinstance(v, str | int | float | bool)}
        if res.is_error:
            meta["is_error"] = True
        return Message(role="tool", content=res.content, tool_call_id=call.id, name=call.name, meta=meta)

    async def _execute(self, call: ToolCall) -> ToolResult:
        tool = self.tools.get(call.name)
        if tool is None:
            return ToolResult(f"Error: unknown tool {call.name!r}; available: {', '.join(self.tools)}", is_error=True)
        try:
            args = call.parsed_arguments()
        except ValueError as exc:
            return ToolResult(f"Error: {exc}. Send the arguments as one JSON object.", is_error=True)
        if getattr(tool, "outputs", None) is not None:  # a recorded tool answers by call id
            args = {**args, "__call_id__": call.id}
        payload = {"tool_name": call.name, "tool_input": args}
        pre = await self.hooks.run("pre_tool_use", payload, call.name)
        if pre and pre[-1].blocks:
            return ToolResult(f"Blocked by a pre_tool_use hook:\n{pre[-1].render()}", is_error=True, meta={"blocked_by_hook": True})
        try:
            result = await tool.run(args, self.tool_ctx)
        except ToolError as exc:
            result = ToolResult(f"Error: {exc}", is_error=True)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a tool bug must not end the session
            result = ToolResult(f"Error: {call.name} failed: {type(exc).__name__}: {exc}", is_error=True)
        post = await self.hooks.run("post_tool_use", {**payload, "tool_response": result.content, "is_error": result.is_error}, call.name)
        shown = [r.render() for r in post if r.worth_showing]
        if shown:
            uris = [r.vault_uri for r in post if r.vault_uri]
            meta = {**result.meta, **({"hook_vault_uri": uris[0]} if uris else {})}
            result = ToolResult("\n\n".join([result.content, *shown]), result.is_error, meta)
        return result

    async def _record_metrics(self, ctx: PipelineContext, usage: Usage | None) -> None:
        data = ctx.metrics.as_dict()
        if usage is not None:
            data.update(
                prompt_tokens=usage.prompt_tokens, completion_tokens=usage.completion_tokens,
                cached_tokens=usage.cached_tokens, cache_creation_tokens=usage.cache_creation_tokens,
                cost_usd=estimate_cost(self.settings.model, usage),
            )
        data["model"] = self.settings.model
        data["window"] = self.window
        await self.store.add_metrics(self.session_id, self.turn, data)

    # -- settings hot-swap --------------------------------------------------------------------------
    def with_settings(self, settings: Settings) -> Agent:
        """A rebuilt agent for new settings, sharing store, history and context state."""
        agent = Agent(self.store, self.session_id, settings, self.llm, self.pipeline, self.prompts, self.workspace,
                      approver=None, tools=list(self.tools.values()), clock=self.clock)
        agent.tool_ctx = replace(self.tool_ctx, auto_approve=settings.approval == "auto",
                                 allowed_commands=self.tool_ctx.allowed_commands.with_configured(settings.allowed_commands))
        agent.history, agent.state, agent.vault, agent.turn = self.history, self.state, self.vault, self.turn
        agent.tool_ctx.state, agent.tool_ctx.vault = self.state, self.vault
        return agent


def execution_parameters(settings: Settings, window: int, extra: str = "") -> dict[str, Any]:
    """Every parameter that shapes a run: settings, each derived threshold, key presence, files."""
    config = ContextConfig(
        max_context_tokens=window, light_ratio=settings.light_ratio, full_ratio=settings.full_ratio,
        emergency_ratio=settings.emergency_ratio,
    )
    derived = {f"context.{k}": getattr(config, k) for k in config.__dataclass_fields__}
    derived.update(
        input_budget=config.input_budget, compress_threshold=config.compress_threshold,
        compress_force_threshold=config.compress_force_threshold, summarize_trigger_threshold=config.summarize_trigger_threshold,
        tail_budget=config.tail_budget, target_tokens=config.target_tokens,
    )
    return {**settings.to_dict(), **derived, "window": window, "api_key_set": bool(settings.api_key), "files": extra}


def compute_execution_fingerprint(settings: Settings, window: int, extra: str = "") -> str:
    """A hash over ``execution_parameters``; a different value means the agent must be rebuilt."""
    params = execution_parameters(settings, window, extra)
    return hashlib.blake2b(json.dumps(params, sort_keys=True, default=str).encode(), digest_size=10).hexdigest()


def estimate_cost(model: str, usage: Usage) -> float:
    from myrm_tui.llm.registry import model_info

    info = model_info(model) or {}
    inp = float(info.get("input_cost_per_token") or 0.0)
    out = float(info.get("output_cost_per_token") or 0.0)
    read = float(info.get("cache_read_input_token_cost") or inp)
    write = float(info.get("cache_creation_input_token_cost") or inp)
    uncached = max(usage.prompt_tokens - usage.cached_tokens - usage.cache_creation_tokens, 0)
    return uncached * inp + usage.cached_tokens * read + usage.cache_creation_tokens * write + usage.completion_tokens * out


def dumps_event(ev: AgentEvent) -> str:
    return json.dumps({"type": type(ev).__name__, **{k: str(v) for k, v in ev.__dict__.items()}})
