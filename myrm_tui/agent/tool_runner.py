"""``ToolRunner``: one step's tool calls, run in parallel with the user's hooks around each.

Results are persisted in call order; a call that never returned (the turn was cancelled) gets the
synthetic interrupted error, so the history stays consistent.

One reply is bounded: at most ``MAX_PARALLEL`` calls run at once and at most ``MAX_CALLS`` of them run at
all; every call past that gets an error result the model can read (each tool call keeps its result, so
the next request stays valid). A reply of 10,000 calls started them all at once: 3,339 "Too many open
files" and 222 s."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import replace
from functools import partial
from typing import Any

from myrm_tui.agent.events import AgentEvent, Notice, ToolFinished, ToolOutput, ToolStarted
from myrm_tui.agent.hooks import HookRunner
from myrm_tui.agent.session_deps import StoresMessages
from myrm_tui.agent.tool_set import ToolSet
from myrm_tui.agent.tools import ToolContext, ToolError, ToolResult
from myrm_tui.context.edits import StateEdit
from myrm_tui.context.steps.normalize import INTERRUPTED
from myrm_tui.context.text.call_args import call_args, check
from myrm_tui.context.types import Message, ToolCall

log = logging.getLogger(__name__)

MAX_PARALLEL = 8  # calls of one reply running at once (each may hold a process and its pipes)
MAX_CALLS = 64  # calls of one reply that run at all


def over_limit(asked: int, limit: int) -> str:
    """The result of a call past the per-reply limit: what happened and what to do, for the model."""
    return (
        f"Error: not run. This reply asked for {asked:,} tool calls; at most {limit} run per reply (the "
        f"first {limit} did). Ask for the ones still needed in your next reply, at most {limit} at a time."
    )


class ToolRunner:
    def __init__(
        self,
        tools: ToolSet,
        ctx: ToolContext,
        hooks: HookRunner,
        session: StoresMessages,
        max_parallel: int = MAX_PARALLEL,
        max_calls: int = MAX_CALLS,
    ) -> None:
        self.tools = tools
        self.ctx = ctx
        self.hooks = hooks
        self.session = session
        self.max_parallel = max_parallel
        self.max_calls = max_calls

    async def run(self, asked: tuple[ToolCall, ...]) -> AsyncIterator[AgentEvent]:
        # guard: reply-bounds-at-most-max-calls
        calls, over = asked[: self.max_calls], asked[self.max_calls :]
        refused = ToolResult(over_limit(len(asked), self.max_calls), is_error=True)
        results: dict[str, ToolResult] = {c.id: refused for c in over}  # stored with the others, in order
        if over:
            # One notice, not a card each (10,000 cards); each call still gets its stored result.
            yield Notice(
                f"The model asked for {len(asked):,} tool calls in one reply: the first {len(calls)} run, "
                f"the other {len(over):,} are answered with an error (at most {self.max_calls} a reply).",
                "warning",
            )
        for c in calls:
            yield ToolStarted(c)
        queue: asyncio.Queue[ToolCall | ToolOutput] = asyncio.Queue()
        slots = asyncio.Semaphore(self.max_parallel)

        # only the calls of tools that may ask are waited on: a read or a subagent never delays a question
        order = QuestionOrder(
            [c.id for c in calls if getattr(self.tools.get(c.name), "asks_approval", False)]
        )

        async def one(call: ToolCall) -> None:
            try:
                # guard: reply-bounds-at-most-max-parallel-calls
                async with slots:
                    turn = (partial(order.asking, call.id), partial(order.done, call.id))
                    results[call.id] = await self.execute(call, live_tail(call, queue.put_nowait), turn)
            finally:
                order.done(call.id)  # a call that never asked: the later ones' questions need not wait
            await queue.put(call)

        tasks = [asyncio.ensure_future(one(c)) for c in calls]
        saved: set[str] = set()
        try:
            finished = 0
            while finished < len(calls):
                item = await queue.get()
                if isinstance(item, ToolOutput):
                    if item.call.id not in results:
                        yield item
                    continue
                finished += 1
                yield ToolFinished(item, result_message(item, results[item.id]))
            await asyncio.gather(*tasks)
        except asyncio.CancelledError:
            for t in tasks:
                t.cancel()
            await asyncio.shield(self._persist(asked, results, saved, interrupted=True))
            raise
        await self._persist(asked, results, saved, interrupted=False)
        await self.session.flush_vault()

    async def _persist(
        self, calls: tuple[ToolCall, ...], results: dict[str, ToolResult], saved: set[str], interrupted: bool
    ) -> None:
        """Results in call order; calls that never returned get the synthetic interrupted error. The
        results' state edits (a note, a handover) are applied once the results are stored, in call order."""
        edits: list[StateEdit] = []
        for c in calls:
            if c.id in saved:
                continue
            res = results.get(c.id)
            if res is None:
                res = ToolResult(INTERRUPTED, is_error=True, meta={"interrupted": True})
            await self.session.append(result_message(c, res))
            saved.add(c.id)
            edits.extend(res.edits)
        if edits:
            await self.session.edit(edits)
        if interrupted:
            await self.session.flush_vault()

    async def execute(
        self,
        call: ToolCall,
        on_output: Callable[[str], None] | None = None,
        turn: tuple[Callable[[], AbstractAsyncContextManager[object]], Callable[[], None]] | None = None,
    ) -> ToolResult:
        tool = self.tools.get(call.name)
        if tool is None:
            return ToolResult(
                f"Error: unknown tool {call.name!r}; available: {', '.join(self.tools.tools)}", is_error=True
            )
        parsed = call_args(call)
        recorded = getattr(tool, "outputs", None) is not None  # a recorded tool answers by call id
        # A recorded tool replays what the call got then, whatever its shape; any other tool is given
        # only arguments of the types its schema promises, so a wrong shape is a clear answer, not a crash.
        # guard: a-calls-arguments-are-checked-against
        problems = list(parsed.problems) if recorded else check(parsed, tool.parameters)
        if problems:
            return ToolResult(bad_arguments(call.name, problems), is_error=True)
        args = {**parsed.fields, "__call_id__": call.id} if recorded else dict(parsed.fields)
        payload = {"tool_name": call.name, "tool_input": args}
        pre = await self.hooks.run("pre_tool_use", payload, call.name)
        # guard: pre-tool-use-hook-blocks
        if pre and pre[-1].blocks:
            return ToolResult(
                f"Blocked by a pre_tool_use hook:\n{pre[-1].render()}",
                is_error=True,
                meta={"blocked_by_hook": True},
            )
        try:
            ctx = replace(
                self.ctx,
                call_id=call.id,
                on_output=on_output or self.ctx.on_output,
                asking=turn[0] if turn else self.ctx.asking,
                done_asking=turn[1] if turn else self.ctx.done_asking,
            )
            result = await tool.run(args, ctx)
        except ToolError as exc:
            result = ToolResult(f"Error: {exc}", is_error=True)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a tool bug must not end the session
            log.exception("tool %s failed", call.name)
            result = ToolResult(f"Error: {call.name} failed: {type(exc).__name__}: {exc}", is_error=True)
        post = await self.hooks.run(
            "post_tool_use",
            {**payload, "tool_response": result.content, "is_error": result.is_error},
            call.name,
        )
        shown = [r.render() for r in post if r.worth_showing]
        if shown:
            uris = [r.vault_uri for r in post if r.vault_uri]
            meta = {**result.meta, **({"hook_vault_uri": uris[0]} if uris else {})}
            result = replace(result, content="\n\n".join([result.content, *shown]), meta=meta)
        return result


class QuestionOrder:
    """The approval questions of one reply in its calls' order: a call asks once every earlier call has
    asked or finished. Only the questions wait: a call that asks nothing runs at once, and an approved
    call runs while the later ones are asked about."""

    def __init__(self, call_ids: list[str]) -> None:
        self._ids = call_ids
        self._past = {i: asyncio.Event() for i in call_ids}

    def done(self, call_id: str) -> None:
        """``call_id`` asks nothing more (it was answered, it will not ask, or it finished)."""
        if call_id in self._past:
            self._past[call_id].set()

    @asynccontextmanager
    async def asking(self, call_id: str) -> AsyncIterator[None]:
        # guard: a-replys-questions-come-in-call-order
        for earlier in self._ids[: self._ids.index(call_id)] if call_id in self._past else ():
            await self._past[earlier].wait()
        try:
            yield
        finally:
            self.done(call_id)


def bad_arguments(name: str, problems: list[str]) -> str:
    """The answer to a call whose arguments are not what the tool's schema asks for."""
    return (
        f"Error: the arguments of {name} are not what its schema asks for: {'; '.join(problems[:5])}. "
        "Send the arguments as one JSON object with the types the schema gives."
    )


LIVE_INTERVAL = 0.15  # seconds between two live-output events of one call


def live_tail(call: ToolCall, post: Callable[[ToolOutput], None]) -> Callable[[str], None]:
    """A tool's output callback that posts at most one ``ToolOutput`` per ``LIVE_INTERVAL``; the newest
    tail is posted when the interval ends, so the last lines before a quiet spell are shown."""
    loop = asyncio.get_running_loop()
    last = [0.0]
    pending: list[str] = []
    timer: list[asyncio.TimerHandle] = []

    def flush() -> None:
        timer.clear()
        if pending:
            last[0] = loop.time()
            post(ToolOutput(call, pending.pop()))
            pending.clear()

    def on_output(text: str) -> None:
        pending.append(text)
        wait = last[0] + LIVE_INTERVAL - loop.time()
        if wait <= 0:
            flush()
        elif not timer:
            timer.append(loop.call_later(wait, flush))

    return on_output


def result_message(call: ToolCall, res: ToolResult) -> Message:
    meta = {k: v for k, v in res.meta.items() if isinstance(v, str | int | float | bool)}
    if res.is_error:
        meta["is_error"] = True
    content: str | list[dict[str, Any]] = (
        [{"type": "text", "text": res.content}, *res.images] if res.images else res.content
    )
    return Message(role="tool", content=content, tool_call_id=call.id, name=call.name, meta=meta)
