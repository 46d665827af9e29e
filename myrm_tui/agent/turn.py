"""``TurnRunner``: one turn — user message → pipeline → model → tools → … until a final answer.

Cancelling a turn (Esc) leaves a consistent history: a half-streamed answer is kept as text (its
unfinished tool calls dropped), and a tool call that never returned gets a synthetic error result.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from myrm_tui.agent.cache_warmer import CacheWarmer
from myrm_tui.agent.events import (
    AgentEvent,
    AssistantSaved,
    CompactionMade,
    CompactionStarted,
    ContextReport,
    Notice,
    Outbox,
    ReasoningChunk,
    StreamCut,
    SummaryProgress,
    TextChunk,
    ToolFinished,
    ToolStarted,
    TurnDone,
    TurnFailed,
    UserSaved,
)
from myrm_tui.agent.grants import SessionGrants
from myrm_tui.agent.hooks import HookRunner
from myrm_tui.agent.images import with_images
from myrm_tui.agent.permissions import Assessment
from myrm_tui.agent.repeat_guard import REPEAT_TOOL, UNATTENDED, Repeat, RepeatGuard
from myrm_tui.agent.session_deps import StoresMessages
from myrm_tui.agent.summary_prep import Sent, SummaryPreparer
from myrm_tui.agent.tool_runner import ToolRunner, result_message
from myrm_tui.agent.tools import ToolResult
from myrm_tui.context.compaction.record import Compaction
from myrm_tui.context.pipeline import PipelineRun
from myrm_tui.context.steps.cache_optimize import prompt_cache_key_var
from myrm_tui.context.steps.media import view_has_images
from myrm_tui.context.steps.normalize import TOOL_NAME, valid_tool_name
from myrm_tui.context.summary.prepared import STEP_RATIO
from myrm_tui.context.text.call_args import call_args
from myrm_tui.context.types import Message, ToolCall, synthetic_user
from myrm_tui.llm.errors import ContextOverflowError, IncompleteStreamError, LLMError
from myrm_tui.llm.events import Finish, ReasoningDelta, TextDelta, ThinkingDelta, ToolCallDelta, Usage
from myrm_tui.llm.pricing import estimate_cost

if TYPE_CHECKING:
    from pathlib import Path

    from myrm_tui.agent.hooks import HookResult
    from myrm_tui.agent.mcp_client import LateServers
    from myrm_tui.agent.summarizer import AuxSummarizer
    from myrm_tui.config import Settings
    from myrm_tui.context.compaction.record import Trigger
    from myrm_tui.context.config import ContextConfig
    from myrm_tui.context.tokens import TokenCounter
    from myrm_tui.llm.client import LLMClient, ModelSpec

log = logging.getLogger(__name__)

INTERRUPTED_SUFFIX = "\n\n[interrupted by the user]"
CUT_SUFFIX = "\n\n[reply cut off: the stream ended early; retried]"
CUT_CONTINUE = (
    "Your previous reply was cut off by the connection (kept above). Continue from where it "
    "stopped; do not repeat it."
)
# The result of each call of a reply that was stopped as a loop (the next request needs one per call).
_NOT_REPEATED = ToolResult(
    "Error: not run. You asked for the same call with the same arguments several times in a row and it "
    "kept returning the same result, so the turn was stopped as a loop (by the user, or, with no one to "
    "ask, by myrm). Do not repeat it: try something else or ask the user.",
    is_error=True,
)
# With no one to ask (myrm ask): the model is told once a turn, and the call is not run; a legitimate wait
# (polling a server until it answers) can change how it checks, a loop ends at the next repeat.
_REPEAT_WARNED = (
    "Error: not run. This is the same call with the same arguments {limit} times in a row, and each returned "
    "the same result: it looks like a loop. Try something else (waiting for something: wait longer between "
    "checks, or check another way). Asked for again, the turn stops."
)
# The result of a call cut off by the reply's output limit.
_CUT_CALL = (
    "Error: not run. Your reply reached its output limit ({limit:,} tokens) while you were writing this "
    "call, so its arguments are cut off. Send it again with less in one call (a long file: write it in "
    "parts, one edit after another)."
)
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
    thinking: list[dict[str, str]] = field(default_factory=list)  # Anthropic blocks, signed ones closed

    def add_thinking(self, ev: ThinkingDelta) -> None:
        """Fragments of one thinking block arrive as text deltas, then its signature, which ends it."""
        if ev.redacted:
            self.thinking.append({"type": "redacted_thinking", "data": ev.redacted})
            return
        last = self.thinking[-1] if self.thinking else None
        if last is None or last["type"] != "thinking" or last["signature"]:
            last = {"type": "thinking", "thinking": "", "signature": ""}
            self.thinking.append(last)
        last["thinking"] += ev.thinking
        last["signature"] += ev.signature

    def thinking_blocks(self) -> tuple[dict[str, str], ...]:
        """The complete blocks: an unsigned one (cut stream) would be refused if sent back."""
        return tuple(b for b in self.thinking if b["type"] == "redacted_thinking" or b["signature"])

    def tool_calls(self) -> tuple[ToolCall, ...]:
        out = []
        for i in sorted(self.calls):
            c = self.calls[i]
            out.append(
                ToolCall(c.get("id") or f"call_{i}", c.get("name", ""), c.get("arguments", "") or "{}")
            )
        return tuple(out)


def checked_calls(calls: tuple[ToolCall, ...]) -> tuple[tuple[ToolCall, ...], dict[ToolCall, str]]:
    """A reply's tool calls made safe to store and send again, before anything runs.

    An empty call (no name, no arguments: a stray fragment) is dropped; a name a provider would reject
    (``functions.bash``, ``../../bin/sh``, none with arguments) is stored under a valid stand-in, and the
    call is returned in the second value with the name it came with (it gets an error result naming it);
    a repeated or empty id gets a unique one, so each call gets its own result."""
    out: list[ToolCall] = []
    invalid: dict[ToolCall, str] = {}
    seen: set[str] = set()
    for k, c in enumerate(calls):
        # A call with arguments and no name was dropped too: a reply of only such calls ended the turn
        # with no answer, no error and exit code 0.
        # guard: a-call-without-a-name-is-answered
        if not c.name and c.arguments.strip() in ("", "{}"):
            continue
        cid = c.id or f"call_{k}"
        # guard: duplicate-tool-call-ids-made-unique
        if cid in seen:
            n = 1
            while f"{cid}_dup{n}" in seen:
                n += 1
            cid = f"{cid}_dup{n}"
        seen.add(cid)
        name = c.name
        # guard: tool-names-checked-before-anything
        if not TOOL_NAME.match(name):
            name = valid_tool_name(name)
        call = ToolCall(cid, name, c.arguments)
        if name != c.name:
            invalid[call] = c.name
        out.append(call)
    return tuple(out), invalid


def cut_call(calls: tuple[ToolCall, ...], finish: str) -> ToolCall | None:
    """The call a reply stopped by its output limit (finish reason "length") was writing when it stopped:
    its last one, unless its arguments already form a whole JSON object. Run, it would get a fragment
    (a file's content cut mid-line, a command cut mid-word) or a misleading "not valid JSON"."""
    # guard: a-call-cut-by-the-output-limit-is-not-run
    if finish != "length" or not calls:
        return None
    last = calls[-1]
    args = call_args(last)
    return last if not args.ok or not last.arguments.strip() else None


def _news(records: list[Compaction | None]) -> list[CompactionMade]:
    """A row for each compaction that made the context smaller (a no-op compaction is not news)."""
    return [CompactionMade(r) for r in records if r is not None and r.changed]


class TurnSession(StoresMessages, Protocol):
    """What a turn uses of its session: the request it builds (view, tools, reasoning), the history it
    appends to, the turn count and last report it updates, the summary preparer it starts."""

    turn: int
    last_report: ContextReport | None

    @property
    def session_id(self) -> str: ...

    @property
    def settings(self) -> Settings: ...

    @property
    def spec(self) -> ModelSpec: ...

    @property
    def llm(self) -> LLMClient: ...

    @property
    def workspace(self) -> Path: ...

    @property
    def window(self) -> int: ...

    @property
    def config(self) -> ContextConfig: ...

    @property
    def counter(self) -> TokenCounter: ...

    @property
    def outbox(self) -> Outbox: ...

    @property
    def preparer(self) -> SummaryPreparer: ...

    def summarizer(self) -> AuxSummarizer | None: ...

    def schema_tokens(self) -> int: ...

    def report(self, run: PipelineRun, usage: Usage | None = None) -> ContextReport: ...

    def stored_view_tokens(self) -> int: ...

    def config_now(self) -> ContextConfig: ...

    def request(self, view: list[Message], breakpoints: list[int] | None) -> dict[str, Any]: ...

    async def sees_images(self) -> bool: ...

    async def reasoning_options(self) -> tuple[dict[str, Any], int]: ...

    async def prepare(
        self,
        force: bool = False,
        focus: str = "",
        hard_limit: int | None = None,
        trigger: Trigger | None = None,
        background: bool = False,
    ) -> tuple[list[Message], PipelineRun]: ...

    async def settle_reads(self) -> None: ...

    async def add_hook_context(self, results: list[HookResult]) -> None: ...

    async def add_metrics(self, data: dict[str, Any]) -> None: ...


class TurnRunner:
    def __init__(
        self,
        session: TurnSession,
        tools: ToolRunner,
        warmer: CacheWarmer,
        hooks: HookRunner,
        hook_problems: list[str],
        grants: SessionGrants | None = None,
    ) -> None:
        self.session = session
        self.settings = session.settings
        self.tools = tools
        self.warmer = warmer
        self.hooks = hooks
        self.hook_problems = hook_problems  # shown once, at the first turn
        self.late: LateServers | None = None  # MCP servers still starting when the agent was built
        self._sent: Sent | None = None  # the last request as sent (a prepared summary repeats it)
        self._settling: asyncio.Task[None] | None = None  # ``settle_reads`` of the last request (kept alive)
        self.repeats = RepeatGuard(self.settings.repeat_limit, grants or SessionGrants())
        self._max_tokens = self.settings.max_output_tokens  # the last request's max_tokens

    async def _join_late_servers(self) -> None:
        """Bind the tools of the MCP servers up since the last turn, before this turn's first request (the
        first turn waits a little for them: ``LateServers.take``), with their lines."""
        if self.late is None or not self.late.pending:
            return
        bound = self.tools.tools
        names = list(bound.tools)
        tools, lines = await self.late.take(names, sum(1 for n in names if n.startswith("mcp__")))
        bound.add(tools)
        self.hook_problems.extend(lines)

    async def run(self, text: str) -> AsyncIterator[AgentEvent]:
        """Events of one turn; the last is always ``TurnDone`` (after a ``TurnFailed`` if it failed). News
        posted meanwhile (``Outbox``) is this turn's to yield."""
        # guard: api-news-posted-during-a-turn
        self.session.outbox.turn(True)
        try:
            async for ev in self._run(text):
                yield ev
        finally:
            self.session.outbox.turn(False)

    async def _run(self, text: str) -> AsyncIterator[AgentEvent]:
        session = self.session
        tokens = session.counter.text(text)
        # guard: gateway-hygiene-oversized-message
        if tokens > self.settings.max_user_tokens:
            yield TurnFailed(
                f"Message refused before sending: {tokens:,} tokens is over the "
                f"{self.settings.max_user_tokens:,}-token "
                "limit for one message. Nothing was sent or saved; attach the content as a file "
                "and point the agent at it.",
                "too_large",
            )
            yield TurnDone(0)
            return
        await self._join_late_servers()
        for problem in self.hook_problems:
            yield Notice(problem, "warning")
        self.hook_problems = []
        hooked = await self.hooks.run("user_prompt_submit", {"prompt": text})
        if hooked and hooked[-1].blocks:
            await session.flush_vault()
            yield TurnFailed(
                "A user_prompt_submit hook blocked this message "
                f"({hooked[-1].spec.command}):\n{hooked[-1].output}",
                "hook_blocked",
            )
            yield TurnDone(0)
            return
        session.turn += 1
        # Images the message names are read off the event loop (a slow disk must not freeze the UI).
        content = await asyncio.to_thread(with_images, text, session.workspace)
        user = await session.append(Message(role="user", content=content))
        yield UserSaved(user)
        await session.add_hook_context(hooked)
        aux = session.summarizer()
        if aux is not None:  # the aux ratio shield, foreseen: summaries run in the background, said here once
            aux.choose(int(session.config.view_window * STEP_RATIO))
        token = prompt_cache_key_var.set(prompt_cache_key_var.get() or session.session_id)
        self.warmer.pause()
        try:
            async for ev in self._steps():
                yield ev
        finally:
            prompt_cache_key_var.reset(token)
            self.warmer.resume()

    async def _steps(self) -> AsyncIterator[AgentEvent]:
        session = self.session
        overflow_retried = cut_retried = False  # one retry per request, not per turn
        step = 0
        self.repeats.reset()
        while step < self.settings.max_steps:
            budget = session.config_now().input_budget
            if step == 0 and (stored := session.stored_view_tokens()) > budget:
                yield CompactionStarted(stored, budget)  # the UI says so while it runs
            view, run = await session.prepare(force=False, background=True)
            records = [run.metrics.compaction]
            # guard: l5-preflight-guard
            if run.tokens > session.config.input_budget:
                # The preflight guard: never pay for a request the provider will refuse.
                view, run = await session.prepare(force=True, background=True)
                records.append(run.metrics.compaction)  # the first one's row stays too
                if run.tokens > session.config.input_budget:
                    for made in _news(records):
                        yield made
                    yield TurnFailed(self._refusal(view, run.tokens, run.metrics.failures), "preflight")
                    yield TurnDone(step)
                    return
            yield session.report(run)
            for news in session.outbox.take():
                yield news
            for made in _news(records):
                yield made
            partial = _Partial()
            try:
                async for ev in self._stream(view, run, partial):
                    yield ev
            except ContextOverflowError as exc:
                if overflow_retried:
                    yield TurnFailed(str(exc), "context_overflow")
                    yield TurnDone(step)
                    return
                overflow_retried = True
                yield Notice(
                    "The provider reported a context overflow; compacting and retrying once.", "warning"
                )
                # guard: l4-recovery-before-the-retry
                await self._recover_overflow(exc, run.tokens)
                continue
            except LLMError as exc:
                # guard: cut-stream-retried-once
                if isinstance(exc, IncompleteStreamError) and not cut_retried:
                    cut_retried = True
                    yield StreamCut("".join(partial.text))
                    yield Notice(f"{exc}. Retrying once.", "warning")
                    # guard: cut-streams-partial-kept-marked
                    await self._keep_cut_partial(partial)
                    continue
                await self._save_partial(partial, note="\n\n[reply cut off: the model call failed]")
                yield TurnFailed(str(exc), type(exc).__name__)
                yield TurnDone(step)
                return
            except asyncio.CancelledError:
                await asyncio.shield(self._save_partial(partial, note=INTERRUPTED_SUFFIX))
                raise
            calls, invalid = checked_calls(partial.tool_calls())
            cut = cut_call(calls, partial.finish)
            assistant = await session.append(
                Message(
                    role="assistant",
                    content="".join(partial.text) or None,
                    tool_calls=calls,
                    reasoning="".join(partial.reasoning) or None,
                    thinking_blocks=partial.thinking_blocks(),
                )
            )
            await self._record_metrics(run, partial.usage)
            session.last_report = session.report(run, partial.usage)
            yield AssistantSaved(assistant, partial.usage)
            yield session.last_report
            if self._sent is not None and session.preparer.after_request(
                self._sent, run.tokens, partial.usage
            ):
                yield SummaryProgress("preparing", session.preparer.reuses_prefix)
            step += 1
            # guard: one-overflow-retry-per-request-not-per
            overflow_retried = cut_retried = False  # the next request of this turn gets its own retry
            # guard: a-reply-cut-by-the-output-limit-says-so
            if partial.finish == "length":
                yield Notice(self._length_line(cut), "warning")
            if not calls:
                await asyncio.sleep(0)  # a background summary just started picks its model first
                for news in session.outbox.take():
                    yield news
                yield TurnDone(step)
                return
            # guard: a-repeated-call-is-asked-about-before-it-runs
            go = await self._go_on(again) if (again := self.repeats.repeated(calls)) else "yes"
            if again and go != "yes":
                # guard: with-no-one-to-ask-a-loop-is-told-once
                if go == UNATTENDED and not self.repeats.warned:
                    self.repeats.warned = True
                    told = ToolResult(_REPEAT_WARNED.format(limit=self.repeats.limit), is_error=True)
                    async for ev in self._answer(calls, told):
                        yield ev
                    yield Notice(self._told_line(again[0].call), "warning")
                    continue
                async for ev in self._answer(calls, _NOT_REPEATED):
                    yield ev
                yield Notice(self._loop_line(again[0].call), "warning")
                yield TurnDone(step, looped=True)
                return
            results: dict[str, str | None] = {}
            if cut is not None:  # answered here: its arguments are a fragment, whatever the schema says
                result = result_message(
                    cut, ToolResult(_CUT_CALL.format(limit=self._max_tokens), is_error=True)
                )
                yield ToolStarted(cut)
                yield ToolFinished(cut, await session.append(result))
                results[cut.id] = result.text
            for call, bad in invalid.items():  # answered here: no tool can be looked up by such a name
                # guard: a-cut-call-is-answered-once
                if call == cut:  # answered as cut above: a second result for one id
                    continue
                result = result_message(
                    call,
                    ToolResult(
                        f"Error: invalid tool name {bad!r} (a tool name matches ^[a-zA-Z0-9_-]{{1,64}}$); "
                        f"call one of the tools you were given by its exact name.",
                        is_error=True,
                    ),
                )
                yield ToolStarted(call)
                yield ToolFinished(call, await session.append(result))
                results[call.id] = result.text
            runnable = tuple(c for c in calls if c not in invalid and c != cut)
            if runnable:
                async for ev in self.tools.run(runnable):
                    if isinstance(ev, ToolFinished):
                        # a job that still runs reads the same until it writes or ends: a wait, no loop
                        running = ev.message.meta.get("status") == "running"
                        results[ev.call.id] = None if running else ev.message.text
                    yield ev
            for call in calls:  # in call order, not the order parallel calls finished in
                self.repeats.ran(call, results.get(call.id, ""))
        yield Notice(
            f"Stopped after {self.settings.max_steps} steps (the step limit); send a message to continue.",
            "warning",
        )
        yield TurnDone(step)

    async def _answer(self, calls: tuple[ToolCall, ...], result: ToolResult) -> AsyncIterator[AgentEvent]:
        """Each of ``calls`` answered with ``result``, none run: each keeps a result, so the next request
        stays valid."""
        for call in calls:
            yield ToolStarted(call)
            yield ToolFinished(call, await self.session.append(result_message(call, result)))

    async def _go_on(self, repeats: tuple[Repeat, ...]) -> str:
        """Whether the user lets the calls the model keeps repeating run (the approval path; one question
        for all of them): "yes", "no" (a question that failed too), or ``UNATTENDED`` with no one to ask
        (``myrm ask``)."""
        approver = self.tools.ctx.approver
        if approver is None:
            return UNATTENDED
        shown = "\n".join(f"{r.call.name} {r.call.arguments[:500]}" for r in repeats)
        try:
            answer = await approver(REPEAT_TOOL, shown, Assessment(shown, (), tuple(map(self._why, repeats))))
        except Exception:
            log.exception("asking about a repeated call failed: the turn stops")
            return "no"
        if answer in ("yes", "always"):
            self.repeats.answered(answer, repeats)
            return "yes"
        return UNATTENDED if answer == UNATTENDED else "no"

    def _why(self, repeat: Repeat) -> str:
        """Why ``repeat`` looks like a loop, true of a run that has partly not run yet."""
        ran = repeat.count - repeat.in_reply
        where = f"{repeat.count} times in a row"
        if repeat.in_reply > 1:
            where += f", {repeat.in_reply} of them in this one reply (none of those has run yet)"
        if ran > 1:
            where += ", and the ones that ran all returned the same result"
        elif ran == 1:
            where += ", one of them already ran"
        return f"the model asked for this same call {where}: it may be stuck in a loop"

    def _length_line(self, cut: ToolCall | None) -> str:
        what = f"while writing a {cut.name} call, which was not run" if cut else "and is cut off"
        return (
            f"The reply reached the output limit ({self._max_tokens:,} tokens, max_output_tokens) {what}. "
            "Raise max_output_tokens, or ask for the work in smaller pieces."
        )

    def _loop_line(self, call: ToolCall) -> str:
        again = " again after it was told" if self.repeats.warned else ""
        return (
            f"Stopped: the model asked for the same call {self.repeats.limit} times in a row{again} "
            f"({call.name} {call.arguments[:120]}) and it kept returning the same result: a loop. Send a "
            "message to go on (repeat_limit = 0 switches this check off)."
        )

    def _told_line(self, call: ToolCall) -> str:
        return (
            f"The model asked for the same call {self.repeats.limit} times in a row ({call.name} "
            f"{call.arguments[:120]}) with the same result each time; it was not run, the model was told, "
            "and the turn stops if it asks again."
        )

    def _refusal(self, view: list[Message], tokens: int, failures: list[str]) -> str:
        """One line: what is too big and what to do (the fit step cut everything else it could), or
        the internal failure that stopped the pipeline from making the request fit."""
        session = self.session
        if failures:
            return (
                f"Refused before sending: the context pipeline failed inside myrm ({failures[0]}; the log "
                f"has the traceback), so the request could not be made to fit: it needs {tokens:,} tokens "
                f"and the model accepts {session.config.input_budget:,}. This is a bug in myrm, not your "
                "message."
            )
        count = session.counter.messages
        system = count([m for m in view if m.role == "system"])
        newest = next((m for m in reversed(view) if m.role == "user" and not m.synthetic), None)
        message = count([newest]) if newest is not None else 0
        if system + session.schema_tokens() + message <= session.config.input_budget:
            # Those fit: what does not is this turn's own work (a call's huge arguments, its outputs).
            rest = [m for m in view if m.role != "system" and m is not newest]
            big = max(rest, key=lambda m: count([m]), default=None)
            what = f"one {big.role} message of this turn ({count([big]):,} tokens)" if big else "this turn"
            return (
                f"Refused before sending: {what} could not be cut to fit: the request needs {tokens:,} "
                f"tokens and the model accepts {session.config.input_budget:,}. Send a message to go on "
                "(older rounds are then compacted), or use a model with a larger window."
            )
        return (
            f"Refused before sending: the system prompt ({system:,} tokens), the tool schemas "
            f"({session.schema_tokens():,}) and your newest message ({message:,}) leave no room: the request "
            f"needs {tokens:,} tokens and the model accepts {session.config.input_budget:,}. Shorten the "
            "message (or attach it as a file), or use a model with a larger window."
        )

    async def _stream(
        self, view: list[Message], run: PipelineRun, partial: _Partial
    ) -> AsyncIterator[AgentEvent]:
        session = self.session
        if view_has_images(view):
            await session.sees_images()
        req = session.request(view, run.breakpoints)
        messages = req.pop("messages")
        tools = req.pop("tools", None)
        choice = self.tools.tools.tool_choice(self.settings.model, self.settings.api_base)
        reasoning, max_tokens = await session.reasoning_options()
        self._max_tokens = max_tokens
        self._sent = Sent(view, messages, tools, choice, dict(req))
        settling: asyncio.Task[None] | None = None
        async for ev in session.llm.stream(
            session.spec,
            messages,
            tools=tools,
            tool_choice=choice,
            max_tokens=max_tokens,
            extra={**req, **reasoning},
        ):
            if settling is None:
                # The model has begun to answer: the request is sent, and what the pipeline left to read of
                # its new messages is read now, while the rest streams in, not on the next request's path.
                # guard: a-turn-reads-the-requests-messages-while
                # guard: the-turns-settle-task-reads-what-was-left
                settling = self._settling = asyncio.create_task(session.settle_reads())
            if isinstance(ev, TextDelta):
                partial.text.append(ev.text)
                yield TextChunk(ev.text)
            elif isinstance(ev, ReasoningDelta):
                partial.reasoning.append(ev.text)
                yield ReasoningChunk(ev.text)
            elif isinstance(ev, ThinkingDelta):
                partial.add_thinking(ev)
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
            await self.session.append(
                Message(role="assistant", content=text + note, meta={"interrupted": True})
            )

    async def _keep_cut_partial(self, partial: _Partial) -> None:
        """A cut stream's text stays in the history, marked, with a note asking the retry to go on from it."""
        if "".join(partial.text).strip():
            await self._save_partial(partial, note=CUT_SUFFIX)
            await self.session.append(synthetic_user(CUT_CONTINUE, "stream_cut", "stream_cut"))

    async def _recover_overflow(self, exc: ContextOverflowError, sent: int) -> None:
        """Stream recovery: our count said the request fits, the provider's said no.

        Our budget is rescaled by the provider's own numbers (cut by a quarter when its message has
        none), and a compaction must end under it: stage 1 shrinks tool outputs, stage 2 drops the
        oldest rounds (``PriorityCompressor``). It commits like any compaction; the caller retries once."""
        session = self.session
        tools = session.schema_tokens()
        sizes = exc.sizes()
        if sizes is not None:
            limit, counted = sizes
            hard = int(limit * (sent + tools) / max(counted, 1) * OVERFLOW_MARGIN) - tools
        else:
            hard = int(sent * 0.75)
        _, run = await session.prepare(
            hard_limit=max(min(hard, session.config.input_budget), 1), background=True
        )
        await session.add_metrics({**run.metrics.as_dict(), "kind": "overflow_recovery", "hard_limit": hard})

    async def _record_metrics(self, run: PipelineRun, usage: Usage | None) -> None:
        data = run.metrics.as_dict()
        if usage is not None:
            data.update(
                prompt_tokens=usage.prompt_tokens,
                completion_tokens=usage.completion_tokens,
                cached_tokens=usage.cached_tokens,
                cache_creation_tokens=usage.cache_creation_tokens,
                cost_usd=estimate_cost(self.settings.model, usage),
            )
        data["model"] = self.settings.model
        data["window"] = self.session.window
        await self.session.add_metrics(data)
