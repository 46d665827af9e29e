"""The LLM summary, prepared in the background so that a turn never waits on the summarizer.

From one predicted round before the full level (``precompact.prepare_from``: late enough that a session
that ends first rarely pays for one, early enough that it is ready by the compaction), after each
answered request, ``SummaryPreparer.after_request`` asks the summarizer — by the cheaper route, see
``choose_route`` — in its own task, outside the turn, for the span the next compaction will fold
(``context.prepared.foldable``) that earlier preparations do not cover yet. Its answers, audited, are
merged into one ``PreparedSummary`` that the next request hands to the pipeline; a compaction folds it
in at once (the extractive summary covers what it does not). A summary still being written when the
compaction comes is not lost: when it lands it upgrades the kept summary record, which the next
compaction's block carries.

Prefix reuse: when the summarizer is the main model, its request is the conversation's last request as
sent (same system prompt, messages, tool schemas, cache key and marks) plus the summarize instruction
as a final user message, so the provider reads its input from the prompt cache. A different (lite)
model cannot read the main model's cache: it is sent the folded span once, as a transcript.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from myrm_tui.config import summarizer_model
from myrm_tui.context.compaction.intent import CompressionIntent
from myrm_tui.context.edits import UpgradeSummary
from myrm_tui.context.steps.precompact import landed_tokens, prepare_from
from myrm_tui.context.steps.summarize import SUMMARY_PROMPT, transcript
from myrm_tui.context.summary import prepared
from myrm_tui.context.summary.fields import Summary
from myrm_tui.context.summary.prepared import PreparedSummary
from myrm_tui.context.types import Message
from myrm_tui.llm.events import TextDelta, Usage
from myrm_tui.llm.pricing import RouteQuote, cheapest, estimate_cost, summary_routes

if TYPE_CHECKING:
    from myrm_tui.agent.session_deps import SummarySession

log = logging.getLogger(__name__)

MAX_SUMMARY_TOKENS = 2048


@dataclass
class SummarizerBill:
    """Every summarizer call of a session, billed at the summarizer model's prices."""

    calls: int = 0
    input_tokens: int = 0
    cached_input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    failures: int = 0

    def add(self, model: str, usage: Usage | None) -> dict[str, Any]:
        """Count one call; returns its own figures (the metrics row the session stores)."""
        self.calls += 1
        row: dict[str, Any] = {"kind": "summarizer", "model": model, "summarizer_calls": 1}
        if usage is None:
            return row
        cost = estimate_cost(model, usage)
        self.input_tokens += usage.prompt_tokens
        self.cached_input_tokens += usage.cached_tokens
        self.output_tokens += usage.completion_tokens
        self.cost_usd += cost
        return row | {
            "summarizer_input_tokens": usage.prompt_tokens,
            "summarizer_cached_input_tokens": usage.cached_tokens,
            "summarizer_output_tokens": usage.completion_tokens,
            "summarizer_cost_usd": cost,
        }

    def as_dict(self) -> dict[str, Any]:
        return {
            "summarizer_calls": self.calls,
            "summarizer_input_tokens": self.input_tokens,
            "summarizer_cached_input_tokens": self.cached_input_tokens,
            "summarizer_output_tokens": self.output_tokens,
            "summarizer_cost_usd": round(self.cost_usd, 6),
            "summarizer_failures": self.failures,
        }


@dataclass
class Sent:
    """The last request as it went to the provider: what a prefix-reusing summary request repeats."""

    view: list[Message]
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None
    tool_choice: Any
    extra: dict[str, Any] = field(default_factory=dict)


class SummaryPreparer:
    def __init__(self, session: SummarySession) -> None:
        self.session = session
        self.bill = SummarizerBill()
        self.ready: PreparedSummary | None = None
        self.task: asyncio.Task[None] | None = None
        self.pending: frozenset[str] = frozenset()  # ids asked for by the running task
        self.attempted: tuple[int, frozenset[str]] = (0, frozenset())  # (epoch, ids asked for in it)
        self.route: RouteQuote | None = None  # how the running (or last) summary is written
        self.quotes: list[RouteQuote] = []  # both routes, priced, when myrm chose between them
        self._prompt_tokens: int | None = None
        self.listeners: list[Callable[[str], None]] = []  # told "preparing" / "ready" / "failed" / "upgraded"
        self.last_event = ""

    # -- what the pipeline gets --------------------------------------------------------------------
    @property
    def enabled(self) -> bool:
        return not self.session.extractive_summaries

    @property
    def model(self) -> str:
        return self.route.model if self.route is not None else summarizer_model(self.session.settings)

    @property
    def reuses_prefix(self) -> bool:
        """The summarizer is the main model: its request can read the conversation's cached prefix."""
        if self.route is not None:
            return self.route.route == "prefix"
        return self.model == self.session.settings.model

    def choose_route(self, new: list[Message], tokens: int, usage: Usage | None) -> RouteQuote:
        """The cheaper way to write this summary, from litellm's prices and the cache as the last answer
        reported it: the main model reading its cached request, or the lite model sent the span once.
        A summarizer the user configured has one way, and so has a provider without a lite model or a
        custom endpoint (which may not serve one: ``summarizer_model`` is then the main model)."""
        s = self.session
        main, fixed = s.settings.model, summarizer_model(s.settings)
        if s.settings.summarizer_model or fixed == main:
            self.quotes = []
            return RouteQuote("prefix" if fixed == main else "span", fixed, 0.0)
        if self._prompt_tokens is None:
            self._prompt_tokens = s.counter.text(
                (s.prompts.root / SUMMARY_PROMPT).read_text(encoding="utf-8")
            )
        sent = usage.prompt_tokens if usage is not None and usage.prompt_tokens else tokens
        cached = usage.prompt_tokens if usage is not None else 0  # just answered: that request is cached now
        self.quotes = summary_routes(
            main,
            fixed,
            prefix_tokens=sent + self._prompt_tokens,
            cached_tokens=cached,
            span_tokens=s.counter.messages(new) + self._prompt_tokens,
        )
        # guard: the-background-summary-takes-the-cheaper
        return cheapest(self.quotes) or RouteQuote("span", fixed, 0.0)

    @property
    def busy(self) -> bool:
        return self.task is not None and not self.task.done()

    def current(self) -> PreparedSummary | None:
        """The prepared summary for the compaction to come (``None`` after the one it was made for)."""
        r = self.ready
        return r if r is not None and r.epoch == self.session.state.compactions else None

    # -- preparing -----------------------------------------------------------------------------------
    def after_request(self, sent: Sent, tokens: int, usage: Usage | None = None) -> bool:
        """Called at a step boundary once a request was answered; starts a preparation when one is due.
        Returns whether it started one."""
        s = self.session
        if not self.enabled or self.busy:
            return False
        ready, epoch = self.current(), s.state.compactions
        if self.attempted[0] != epoch:
            self.attempted = (epoch, frozenset())
        # What was asked for already, answered or not, is not asked again in this epoch.
        covered = (ready.covers if ready else frozenset()) | self.attempted[1]
        start = prepare_from(s.config, s.state.round_growth, landed_tokens(s.state))
        plan = prepared.due(sent.view, tokens, s.config, s.counter, covered, start)
        if plan is None:
            return False
        span, new = plan
        self.route = self.choose_route(new, tokens, usage)
        self.pending = frozenset(prepared.base_id(m) for m in span)
        self.attempted = (epoch, self.attempted[1] | self.pending)
        self.task = asyncio.get_running_loop().create_task(self._prepare(sent, span, new, epoch))
        self._tell("preparing")
        return True

    async def wait(self) -> None:
        """Until the running preparation ends (tests, and an orderly exit)."""
        if self.task is not None:
            await asyncio.shield(self.task)

    async def _prepare(self, sent: Sent, span: list[Message], new: list[Message], epoch: int) -> None:
        s = self.session
        try:
            data = await self._ask(sent, span, new)
        except Exception as exc:  # the extractive summary stands in; the failure is shown, never raised
            log.warning("background summary failed", exc_info=True)
            self.bill.failures += 1
            s.breaker.record_failure()
            self._tell(f"failed: {type(exc).__name__}")
            return
        finally:
            self.pending = frozenset()
        if data is None:
            self.bill.failures += 1
            self._tell("failed: not a valid summary")
            return
        s.breaker.record_success()
        part = PreparedSummary(data, frozenset(prepared.base_id(m) for m in span), "llm", epoch)
        if epoch != s.state.compactions:
            # The compaction it was meant for came first (and used the extractive summary): upgrade the
            # kept record, which the next compaction's block carries (the block sent now stays cached).
            async with s.pipeline.lock_for(s.session_id):  # not in the middle of a pipeline run
                await s.edit([UpgradeSummary(data)])
            self._tell("upgraded")
            return
        self.ready = prepared.merged(self.current(), part)
        self._tell("ready")

    async def _ask(self, sent: Sent, span: list[Message], new: list[Message]) -> Summary | None:
        s = self.session
        if not s.breaker.allow():
            raise RuntimeError("summarizer circuit breaker is open")
        prompt = (s.prompts.root / SUMMARY_PROMPT).read_text(encoding="utf-8")
        if self.reuses_prefix:
            last = next((i for i, m in enumerate(sent.view) if m is span[-1]), len(sent.view) - 1)
            kept_last = len(sent.view) - last - 1
            messages = [
                *sent.messages,
                {"role": "user", "content": prepared.prefix_instruction(prompt, kept_last)},
            ]
            spec, tools, choice, extra = s.spec, sent.tools, sent.tool_choice, sent.extra
        else:
            previous = self.current()
            body = (
                "Previous summary (merge into it):\n"
                f"{json.dumps(previous.summary.to_json(), ensure_ascii=False) if previous else 'none'}\n\n"
                f"Messages to summarize:\n{transcript(new)}"
            )
            aux = s.summarizer()
            assert aux is not None  # enabled
            spec, window = aux.choose(s.counter.text(prompt) + s.counter.text(body))
            messages = [
                {"role": "system", "content": prompt},
                {"role": "user", "content": aux.fit(body, prompt, window)},
            ]
            tools, choice, extra = None, None, {}
        parts: list[str] = []
        usage: Usage | None = None
        try:
            async for ev in s.llm.stream(
                spec, messages, tools=tools, tool_choice=choice, max_tokens=MAX_SUMMARY_TOKENS, extra=extra
            ):
                if isinstance(ev, TextDelta):
                    parts.append(ev.text)
                elif isinstance(ev, Usage):
                    usage = ev
        finally:
            row = self.bill.add(spec.model, usage)
            await asyncio.shield(s.add_metrics(row))  # kept across restarts: the panel sums these rows
        return prepared.accept("".join(parts), new, CompressionIntent.build(s.history, ""), s.config)

    def _tell(self, event: str) -> None:
        self.last_event = event
        for fn in self.listeners:
            fn(event)

    def status(self) -> dict[str, Any]:
        """For the health panel: the bill, and whether the summarizer can read the main model's cache."""
        return {
            **self.bill.as_dict(),
            "summarizer_model": self.model if self.enabled else "extractive",
            "summarizer_reuses_cache": self.enabled and self.reuses_prefix,
            "summary_route_quotes": {q.model: round(q.usd, 6) for q in self.quotes},
            "summary_preparing": self.busy,
            "summary_last_event": self.last_event,
        }
