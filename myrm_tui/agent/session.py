"""``AgentSession``: one session's conversation as the agent sees it — the stored history, the context
state and vault, and the pipeline that turns them into the next request's view.

Every message is appended to the store the moment it exists, so a crash loses nothing committed.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

from myrm_tui.agent.events import ContextReport, Notice, Outbox
from myrm_tui.agent.hooks import HookResult
from myrm_tui.agent.model_target import context_config, model_spec, thinking_budget, window_for
from myrm_tui.agent.prompts import PromptLibrary, mode_for
from myrm_tui.agent.summarizer import AuxSummarizer, CircuitBreaker
from myrm_tui.agent.summary_prep import SummaryPreparer
from myrm_tui.agent.tool_set import ToolSet
from myrm_tui.agent.tools import ToolError
from myrm_tui.config import Settings, extractive_summaries, summarizer_model
from myrm_tui.context.compaction.record import Trigger
from myrm_tui.context.config import ContextConfig
from myrm_tui.context.edits import StateEdit
from myrm_tui.context.model_facts import family, model_kind, supports_tools
from myrm_tui.context.pipeline import Pipeline, PipelineRun, Transaction
from myrm_tui.context.report.window_use import WindowUse, window_use
from myrm_tui.context.state import ContextState
from myrm_tui.context.step import Request
from myrm_tui.context.steps.cache_optimize import render
from myrm_tui.context.steps.reread import FileIntegrityGuard
from myrm_tui.context.tokens import TokenCounter
from myrm_tui.context.types import Message, synthetic_user
from myrm_tui.context.vault import ArtifactVault
from myrm_tui.llm.client import LLMClient, ModelSpec
from myrm_tui.llm.events import Usage
from myrm_tui.store.db import Store
from myrm_tui.store.transcript import token_counts

log = logging.getLogger(__name__)

# A file larger than this is not read again after a compaction: the re-read's budget
# (``reread_max_tokens``, 50,000) holds about 200 KB of code.
REREAD_MAX_BYTES = 1_000_000


class AgentSession:
    """History, context state, vault and the pipeline run over them. One turn at a time."""

    def __init__(
        self,
        store: Store,
        session_id: str,
        settings: Settings,
        llm: LLMClient,
        pipeline: Pipeline,
        prompts: PromptLibrary,
        workspace: Path,
        tools: ToolSet,
        clock: Callable[[], float],
        window: int,
        summary_role: str = "assistant",
    ) -> None:
        self.store = store
        self.session_id = session_id
        self.settings = settings
        self.llm = llm
        self.pipeline = pipeline
        self.prompts = prompts
        self.workspace = workspace
        self.tools = tools
        self.clock = clock
        self.counter = TokenCounter()
        self.history: list[Message] = []
        self.state = ContextState()
        self.vault = ArtifactVault(namespace=session_id, loader=store.vault_get)
        self.window = window
        self.config = context_config(settings, window, summary_role)
        self.integrity = FileIntegrityGuard()
        self.turn = 0
        self.last_report: ContextReport | None = None
        self.last_view: list[Message] | None = None  # the latest request's messages (``/context``)
        self.breaker = CircuitBreaker()
        self.aux: AuxSummarizer | None = None
        self._resumed = False
        self._overhead: tuple[str, int] = ("", 0)  # (tools fingerprint, tokens of their schemas)
        self._vision: bool | None = None  # the model takes images; None: not asked yet
        self.outbox = Outbox()  # news for the user off the turn's path: the running turn or the listener
        self.preparer = SummaryPreparer(self)  # the LLM summary, written in the background

    # -- what the model is sent ---------------------------------------------------------------------
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
        return mode_for(self.settings.prompt_mode, self.settings.model, self.settings.api_base)

    def request(self, view: list[Message], breakpoints: list[int] | None) -> dict[str, Any]:
        """The provider request for ``view``: messages, tool schemas (when the model gets tools), cache
        marks; images only for a model that takes them (``sees_images`` asked before)."""
        return render(
            view,
            self.settings.model,
            breakpoints,
            self.tools.schemas if self.sends_tools else None,
            self.settings.api_base,
            self.session_id,
            images=self._vision is not False,
        )

    async def sees_images(self) -> bool:
        """Whether the model takes image parts (litellm's ``supports_vision``); the embedded and replayed
        models do not, and are not asked about (no litellm import for them)."""
        if self._vision is None:
            if model_kind(self.settings.model) in ("local", "replay"):
                self._vision = False
            else:
                from myrm_tui.llm.registry import supports

                self._vision = await supports(self.settings.model, "vision")
        return self._vision

    async def reasoning_options(self) -> tuple[dict[str, Any], int]:
        """Request fields that turn the model's reasoning on (Anthropic extended thinking, OpenAI /
        DeepSeek reasoning effort) and the ``max_tokens`` to send with them."""
        s = self.settings
        fam = family(s.model)
        if budget := thinking_budget(s):
            # The budget is part of max_tokens, which must exceed it: the answer keeps its own share.
            return {"thinking": {"type": "enabled", "budget_tokens": budget}}, s.max_output_tokens + budget
        if fam in ("openai", "deepseek") and s.reasoning_effort:
            from myrm_tui.llm.registry import supports

            if await supports(s.model, "reasoning"):
                return {"reasoning_effort": s.reasoning_effort}, s.max_output_tokens
        return {}, s.max_output_tokens

    def schema_tokens(self) -> int:
        """Tokens of the tool schemas sent with every request (counted once per tool set; none for a model
        that gets no tools)."""
        if not self.sends_tools:
            return 0
        key = self.tools.fingerprint
        if self._overhead[0] != key:
            self._overhead = (key, self.counter.schemas(self.tools.schemas))
        return self._overhead[1]

    def window_use(self, view: Sequence[Message]) -> WindowUse:
        """``view`` by category with the tool schemas and the levels: the one figure of "context now"."""
        return window_use(view, self.counter, self.schema_tokens(), self.config)

    def config_now(self) -> ContextConfig:
        """The config with the tool schemas bound now counted out of the budget (they change with the
        mode and the tools)."""
        overhead = self.schema_tokens()
        if overhead != self.config.overhead_tokens:
            self.config = replace(self.config, overhead_tokens=overhead)
        return self.config

    def stored_view_tokens(self) -> int:
        """Our count of the view as stored (the compacted base and the messages after it), before the
        pipeline's per-request trims."""
        s = self.state
        return self.counter.messages(s.base) + self.counter.messages(self.history[s.base_upto :])

    def report(self, run: PipelineRun, usage: Usage | None = None) -> ContextReport:
        """Context health of the request ``run`` prepared, its breakdown made from that very view."""
        return ContextReport(run.tokens, self.window, run.metrics, usage, self.window_use(run.messages))

    # -- the stored conversation --------------------------------------------------------------------
    async def load(self) -> bool:
        """Load history and state; a new session gets its system prompt and environment message.
        Returns whether the session is new."""
        self.history = await self.store.load_messages(self.session_id)
        counts = await token_counts(self.store, self.session_id)
        for m in self.history:
            self.counter.remember(m, counts.get(m.id, 0))
        saved = await self.store.load_state(self.session_id)
        if saved:
            loaded = ContextState.from_json(saved)
            for f in fields(loaded):  # in place: the tool context and the subagents hold this object
                setattr(self.state, f.name, getattr(loaded, f.name))
        new = not self.history
        if new:
            await self.append(Message(role="system", content=self.system_prompt))
            # guard: the-embedded-model-stores-no-environment
            if self.sends_tools:
                # The environment (workspace, date) is for a model that uses tools; the embedded one is
                # never sent it (``llm/local.py``), so it is not stored to be counted in the ring either.
                await self.append(self.prompts.environment_message(self.workspace, self.clock()))
        else:
            self._resumed = True
        self.turn = sum(1 for m in self.history if m.role == "user" and not m.synthetic)
        return new

    async def append(self, msg: Message) -> Message:
        """Store ``msg`` with the vault entries written since the last store, in one transaction (a
        ``vault://`` pointer in it always resolves); on a failed write both stay in memory for the next."""
        entries = self.vault.drain()
        try:
            # guard: vault-entries-in-the-messages
            stored = await self.store.append_message(
                self.session_id, msg, self.counter.message(msg), vault=entries
            )
        except BaseException:
            self.vault.pending[:0] = entries
            raise
        self.history.append(stored)
        return stored

    async def edit(self, edits: Sequence[StateEdit]) -> None:
        """Apply edits asked from outside the pipeline (a note, a pin, a handover) through its
        ``Transaction``, the state's only writer, and store the state."""
        Transaction(self.state, self.config).apply(edits)
        await self.store.save_state(self.session_id, self.state.to_json())

    async def add_hook_context(self, results: list[HookResult]) -> None:
        """Hook output for the model, as one marked context message (never taken for the user's words)."""
        body = "\n".join(r.render() for r in results if r.worth_showing)
        if body:
            await self.append(synthetic_user(body, "hook", "hook"))
        if any(r.vault_uri for r in results):
            await self.flush_vault()

    async def flush_vault(self) -> None:
        entries = self.vault.drain()
        if entries:
            try:
                await self.store.vault_put(self.session_id, entries)
            except BaseException:
                self.vault.pending[:0] = entries  # written by the next flush or message
                raise

    def notice(self, text: str) -> None:
        """A warning for the user (a summarizer's): in the running turn's stream, else to the listener."""
        self.outbox.post(Notice(text, "warning"))

    async def add_metrics(self, data: dict[str, Any]) -> None:
        await self.store.add_metrics(self.session_id, self.turn, data)

    # -- the pipeline -------------------------------------------------------------------------------
    @property
    def extractive_summaries(self) -> bool:
        return extractive_summaries(self.settings)

    def summarizer(self) -> AuxSummarizer | None:
        if self.extractive_summaries:
            return None
        if self.aux is None:
            aux_model = summarizer_model(self.settings)
            aux_window = (
                self.window
                if aux_model == self.settings.model
                else window_for(replace(self.settings, model=aux_model, context_window=0))
            )
            self.aux = AuxSummarizer(
                self.llm,
                model_spec(self.settings, aux_model),
                self.spec,
                aux_window,
                self.window,
                self.breaker,
                self.settings.summarizer_inactivity_seconds,
                self.settings.summarizer_total_seconds,
                self.counter,
                on_notice=self.notice,
            )
        return self.aux

    async def settle_reads(self) -> None:
        """What the last request left to read of its new messages (``Pipeline.settle``), read while the model
        answers, a request's at a time with the stream let through between; the next request reads what is
        left. A failure is logged: that request reads them itself."""
        try:
            async with self.pipeline.lock_for(self.session_id):
                while self.pipeline.settle(1):
                    await asyncio.sleep(0)
        except Exception:
            log.exception("reading the last request's messages after sending it failed")

    async def prepare(
        self,
        force: bool = False,
        focus: str = "",
        hard_limit: int | None = None,
        trigger: Trigger | None = None,
        background: bool = False,
    ) -> tuple[list[Message], PipelineRun]:
        """Run the pipeline over the history; persist vault writes, state and compaction atomically.

        A compaction's record gets its own metrics row (kind ``compaction``), ``trigger`` naming why it
        ran when the pipeline cannot know (a fork). ``background``: a turn's request — a compaction never
        calls the summarizer; it takes the summary prepared in the background, or the extractive one at
        once."""
        request = Request(
            state=self.state,
            counter=self.counter,
            vault=self.vault,
            raw=self.history,
            model=self.settings.model,
            now=self.clock(),
            summarizer=self.summarizer(),
            read_file=self._read_for_reread,
            force_compaction=force,
            hard_limit=hard_limit,
            focus_hint=focus,
            resume=self._resumed,
            integrity=self.integrity,
            tools_fingerprint=self.tools.fingerprint,
            system_override=self.system_prompt,
            prepared_summary=self.preparer.current(),  # /compact takes it too: no call when it is ready
            summary_in_background=background and self.preparer.enabled,
            reads_later=True,  # ``settle_reads``, while the model answers
        )
        run = await self.pipeline.run(request, self.config_now(), self.session_id)
        self._resumed = False
        run.metrics.breaker = self.breaker.as_dict()
        if self.aux is not None and self.aux.warnings:
            run.metrics.events.extend(self.aux.warnings)
            self.aux.warnings.clear()
        backup = run.plan.backup
        checkpoint = (
            await self.store.begin_compaction(self.session_id, backup) if run.compacting and backup else None
        )
        await self.flush_vault()
        if checkpoint is not None:
            await self.store.commit_compaction(self.session_id, checkpoint, self.state.to_json())
        else:
            await self.store.save_state(self.session_id, self.state.to_json())
        self.last_view = run.messages
        if run.metrics.compaction is not None:
            if trigger is not None:
                run.metrics.compaction = replace(run.metrics.compaction, trigger=trigger)
            await self.add_metrics({"kind": "compaction", "compaction": run.metrics.compaction.to_dict()})
        return run.messages, run

    async def dry_run(self, force: bool = False, focus: str = "") -> PipelineRun:
        """The pipeline over a copy of the state: what the next request (or a compaction) would be, with
        nothing stored and no LLM summary (a preview must be quick and free)."""
        state = ContextState.from_json(self.state.to_json())
        request = Request(
            state=state,
            counter=self.counter,
            vault=ArtifactVault(namespace=self.session_id),
            raw=self.history,
            model=self.settings.model,
            now=self.clock(),
            force_compaction=force,
            focus_hint=focus,
            tools_fingerprint=self.tools.fingerprint,
            system_override=self.system_prompt,
        )
        return await self.pipeline.run(request, self.config, f"{self.session_id}:dry-run")

    def _read_for_reread(self, path: str) -> str | None:
        """A file the agent wrote, read again after a compaction: only a regular file inside the workspace
        and of at most ``REREAD_MAX_BYTES`` (a command's output redirected to it may be gigabytes, and
        this runs on the event loop), None otherwise."""
        from myrm_tui.agent.tools.base import read_regular, resolve_in_workspace

        try:
            full = resolve_in_workspace(self.workspace, path)
            # guard: reread-reads-a-bounded-regular-file
            return read_regular(full, path, REREAD_MAX_BYTES).decode("utf-8", errors="replace")
        except (ToolError, OSError):
            return None
