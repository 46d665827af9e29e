"""Context strategies the benchmark compares: ``myrm`` (the pipeline), ``none``, ``truncate``,
``mask``, ``window``, and outside ones loaded with ``--strategy-plugin NAME=module:callable``.

Plug-in contract: ``callable(messages: list[dict], window_tokens: int) -> list[dict]`` — OpenAI-format
messages in (the whole history so far), the messages to send out. It is called once per recorded
assistant turn with the history up to that turn; it may keep state between calls of one
conversation (the history only grows). Conversation start: if the callable has a callable attribute
``start``, or else its module defines a function ``start``, ``start(conv_id: str, window_tokens: int)``
is called before each conversation's first request, so state can be reset per conversation.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable
from typing import Any, Protocol

from myrm_tui.bench.summarizer import BenchSummarizer
from myrm_tui.context.compaction.intent import CompressionIntent
from myrm_tui.context.config import DEFAULT_REPLY_TOKENS, ContextConfig, budget_config
from myrm_tui.context.invariants import group_spans
from myrm_tui.context.model_facts import lite_model
from myrm_tui.context.pipeline import build_pipeline
from myrm_tui.context.state import ContextState
from myrm_tui.context.step import Completer, Request
from myrm_tui.context.steps.precompact import landed_tokens, prepare_from
from myrm_tui.context.steps.summarize import SUMMARY_PROMPT, transcript
from myrm_tui.context.summary import prepared
from myrm_tui.context.summary.prepared import PreparedSummary
from myrm_tui.context.tokens import TokenCounter
from myrm_tui.context.types import Message
from myrm_tui.context.vault import ArtifactVault
from myrm_tui.llm.pricing import cheapest, summary_routes
from myrm_tui.paths import prompts_dir

log = logging.getLogger(__name__)

MASK_PLACEHOLDER = "[output omitted: older tool output]"
# The reply's reserve as a live session with default settings keeps it (``max_output_tokens``, no thinking).
REPLY_TOKENS = DEFAULT_REPLY_TOKENS


class Strategy(Protocol):
    name: str

    def start(self, conv_id: str, window: int) -> None: ...

    async def build(self, history: list[Message], step: int) -> list[Message]: ...

    def vault_texts(self) -> list[str]: ...


class NoneStrategy:
    name = "none"

    def start(self, conv_id: str, window: int) -> None:
        pass

    async def build(self, history: list[Message], step: int) -> list[Message]:
        return list(history)

    def vault_texts(self) -> list[str]:
        return []


class TruncateStrategy:
    """Drop the oldest messages (whole tool-call groups) until the history fits; keep system messages."""

    name = "truncate"

    def __init__(self, counter: TokenCounter) -> None:
        self.counter = counter
        self.budget = 0
        self.window = 0

    def start(self, conv_id: str, window: int) -> None:
        self.window = window
        self.budget = budget_config(window, REPLY_TOKENS).input_budget

    def bind_tools(self, tokens: int) -> None:
        """The budget less the tool schemas every request carries (the same budget as myrm's)."""
        self.budget = budget_config(self.window, REPLY_TOKENS, tokens).input_budget

    async def build(self, history: list[Message], step: int) -> list[Message]:
        system = [m for m in history if m.role == "system"]
        rest = [m for m in history if m.role != "system"]
        total = self.counter.messages(history)
        spans = group_spans(rest)
        k = 0
        while total > self.budget and k < len(spans) - 1:
            a, b = spans[k]
            total -= sum(self.counter.message(m) for m in rest[a:b])
            k += 1
        start = spans[k][0] if spans else 0
        return [*system, *rest[start:]]

    def vault_texts(self) -> list[str]:
        return []


class MaskStrategy:
    """Observation masking ("The Complexity Trap", arXiv 2508.21433): tool outputs older than the last
    ``keep_turns`` assistant turns are replaced by a placeholder; everything else is kept."""

    name = "mask"

    def __init__(self, keep_turns: int = 10) -> None:
        self.keep_turns = keep_turns

    def start(self, conv_id: str, window: int) -> None:
        pass

    async def build(self, history: list[Message], step: int) -> list[Message]:
        turn_starts = [i for i, m in enumerate(history) if m.role == "assistant"]
        if len(turn_starts) <= self.keep_turns:
            return list(history)
        cutoff = turn_starts[-self.keep_turns]
        return [
            m.derive("mask", content=MASK_PLACEHOLDER) if m.role == "tool" and i < cutoff else m
            for i, m in enumerate(history)
        ]

    def vault_texts(self) -> list[str]:
        return []


class WindowStrategy:
    """OpenHands' default condenser (``LLMSummarizingCondenser``) on a token trigger: the view only grows
    until a request would exceed the input budget; then the system prompt and the first user message
    stay, and of the events after them only the newer half is kept, cut at the next boundary that leaves
    no tool result without its call (halving again while it still does not fit). With a summarizer the
    forgotten events (and the previous summary) are summarized into one message after the head, as
    OpenHands does; without one (``--summarizer extractive``) they are forgotten.
    What was kept stays as it was until the next condensation, so the prefix cache stays warm."""

    name = "window"

    def __init__(self, counter: TokenCounter, summarizer: Completer | None = None) -> None:
        self.counter = counter
        self.summarizer = summarizer
        self.budget = 0
        self.window = 0
        self.cut = 0  # index in the history of the first event still in view
        self.summary: Message | None = None
        self.condensations = 0
        self.condensed = False  # the last build condensed

    def start(self, conv_id: str, window: int) -> None:
        self.window = window
        self.budget = budget_config(window, REPLY_TOKENS).input_budget
        self.cut = 0
        self.summary = None
        self.condensations = 0

    def bind_tools(self, tokens: int) -> None:
        """The budget less the tool schemas every request carries (the same budget as myrm's)."""
        self.budget = budget_config(self.window, REPLY_TOKENS, tokens).input_budget

    @staticmethod
    def head_length(history: list[Message]) -> int:
        """Messages up to and including the first user message (the system prompt before it)."""
        for i, m in enumerate(history):
            if m.role == "user":
                return i + 1
        return sum(1 for m in history if m.role == "system")

    async def build(self, history: list[Message], step: int) -> list[Message]:
        head = history[: self.head_length(history)]
        start = max(self.cut, len(head))
        events = history[start:]
        extra = [self.summary] if self.summary else []
        tokens = self.counter.messages([*head, *extra, *events])
        forgotten: list[Message] = []
        while tokens > self.budget:
            bounds = [a for a, _ in group_spans(events)]
            naive_end = len(events) - len(events) // 2
            end = next((b for b in bounds if b >= naive_end), bounds[-1] if bounds else 0)
            if end == 0:
                break  # one tool round alone is over the budget: nothing can go without breaking a pair
            forgotten += events[:end]
            events = events[end:]
            start += end
            tokens = self.counter.messages([*head, *extra, *events])
        self.condensed = bool(forgotten)
        if forgotten:
            self.cut = start
            self.condensations += 1
            if self.summarizer is not None:
                self.summary = await self._summarize([*extra, *forgotten])
        return [*head, *([self.summary] if self.summary else []), *events]

    async def _summarize(self, forgotten: list[Message]) -> Message:
        events = "\n".join(
            f"<event role={m.role}>{m.text}{''.join(c.arguments for c in m.tool_calls)}</event>"
            for m in forgotten
        )
        text = await self.summarizer(  # type: ignore[misc]
            "You summarize the forgotten part of an agent's history: the user's goals, progress, "
            "the state of "
            "files and tests, and everything still needed to continue.",
            events,
        )
        return Message(
            role="user",
            content=f"Summary of earlier events:\n{text}",
            id=f"window-summary-{self.condensations}",
            synthetic=True,
            meta={"kind": "summary"},
        )

    def vault_texts(self) -> list[str]:
        return []


class MyrmStrategy:
    """The full pipeline with its defaults, state and vault kept per conversation."""

    name = "myrm"

    def __init__(
        self, counter: TokenCounter, summarizer: Completer | None = None, model: str = "claude-sonnet-4-5"
    ) -> None:
        self.pipeline = build_pipeline()
        self.counter = counter
        self.summarizer = summarizer
        self.model = model
        self.config = ContextConfig()
        self.state = ContextState()
        self.vault = ArtifactVault()
        self.clock = 0.0
        self.conv_id = ""
        self.last_metrics: Any = None
        # The view's cache marks (``prompt_cache_optimize``): the bench bills them as Anthropic does.
        self.breakpoints: list[int] = []
        self.prepared: PreparedSummary | None = None
        self.attempted: tuple[int, frozenset[str]] = (0, frozenset())  # (epoch, ids asked for in it)
        self.summarizer_failures = 0
        # Each preparation's two routes, priced as the agent prices them (``SummaryPreparer.choose_route``):
        # (the route the agent would take, {route: usd}). The runner drains it per conversation.
        self.routes: list[tuple[str, dict[str, float]]] = []

    def start(self, conv_id: str, window: int) -> None:
        self.config = budget_config(window, REPLY_TOKENS)
        self.state = ContextState()
        self.vault = ArtifactVault(namespace=conv_id.replace("/", "_"))
        self.clock = 1_700_000_000.0
        self.conv_id = conv_id
        self.prepared = None
        self.attempted = (0, frozenset())

    def bind_tools(self, tokens: int) -> None:
        """The tool schemas the conversation sends with every request: budgeted, as the live agent does."""
        # guard: one-budget-the-benchs-myrm-strategy
        self.config = budget_config(self.config.max_context_tokens, REPLY_TOKENS, tokens)

    async def build(self, history: list[Message], step: int) -> list[Message]:
        self.clock += 20.0  # a replayed turn every 20 s: the provider cache stays warm, as in a live session
        request = Request(
            state=self.state,
            counter=self.counter,
            vault=self.vault,
            raw=history,
            model=self.model,
            now=self.clock,
            summarizer=self.summarizer,
            prepared_summary=self._prepared(),
            summary_in_background=self.background is not None,
            reads_later=True,  # the runner calls ``settle`` once the request is sent, as the agent does
        )
        run = await self.pipeline.run(request, self.config, self.conv_id)
        self.last_metrics = run.metrics
        self.breakpoints = run.breakpoints
        return run.messages

    def settle(self) -> None:
        """The reads the last request left for while the model answers (``Pipeline.settle``)."""
        self.pipeline.settle()

    @property
    def background(self) -> BenchSummarizer | None:
        """The LLM path as the agent runs it: summaries prepared between requests, never inline."""
        return self.summarizer if isinstance(self.summarizer, BenchSummarizer) else None

    def _prepared(self) -> PreparedSummary | None:
        p = self.prepared
        return p if p is not None and p.epoch == self.state.compactions else None

    async def after_sent(self, view: list[Message], tools: list[dict[str, Any]]) -> None:
        """After a request was sent: prepare the next compaction's summary when one is due (the bench takes
        it as ready by the next request, as a replayed turn is 20 s)."""
        aux = self.background
        if aux is None:
            return
        ready, epoch = self._prepared(), self.state.compactions
        if self.attempted[0] != epoch:
            self.attempted = (epoch, frozenset())
        covered = (ready.covers if ready else frozenset()) | self.attempted[1]
        plan = prepared.due(
            view,
            self.counter.messages(view),
            self.config,
            self.counter,
            covered,
            prepare_from(self.config, self.state.round_growth, landed_tokens(self.state)),
        )
        if plan is None:
            return
        span, new = plan
        self.attempted = (epoch, self.attempted[1] | frozenset(prepared.base_id(m) for m in span))
        prompt = (prompts_dir() / SUMMARY_PROMPT).read_text(encoding="utf-8")
        self._quote(view, new, prompt)
        try:
            if aux.shares_cache:
                last = next((i for i, m in enumerate(view) if m is span[-1]), len(view) - 1)
                text = await aux.with_prefix(
                    view, prepared.prefix_instruction(prompt, len(view) - last - 1), tools
                )
            else:
                text = await aux(
                    prompt,
                    f"Previous summary (merge into it):\nnone\n\nMessages to summarize:\n{transcript(new)}",
                )
        except Exception:  # an unreachable summarizer: the extractive summary stands in, as in the agent
            log.warning("bench summarizer failed", exc_info=True)
            self.summarizer_failures += 1
            return
        intent = CompressionIntent.build(view, "")
        data = prepared.accept(text, new, intent, self.config)
        if data is None:
            self.summarizer_failures += 1
            return
        part = PreparedSummary(
            data, frozenset(prepared.base_id(m) for m in span), "llm", self.state.compactions
        )
        self.prepared = prepared.merged(ready, part)

    def _quote(self, view: list[Message], new: list[Message], prompt: str) -> None:
        """Both routes of this preparation at the price model's and its lite model's prices; a replayed
        turn is 20 s apart, so the request just sent is in the cache."""
        sent, instruction = self.counter.messages(view), self.counter.text(prompt)
        quotes = summary_routes(
            self.model,
            lite_model(self.model),
            sent + instruction,
            sent,
            self.counter.messages(new) + instruction,
        )
        chosen = cheapest(quotes)
        if chosen is not None:
            self.routes.append((chosen.route, {q.route: q.usd for q in quotes}))

    def vault_texts(self) -> list[str]:
        return [e.content for e in self.vault.entries()]


class PluginStrategy:
    def __init__(
        self,
        name: str,
        fn: Callable[[list[dict[str, Any]], int], list[dict[str, Any]]],
        on_start: Callable[[str, int], object] | None = None,
    ) -> None:
        self.name = name
        self.fn = fn
        self.on_start = on_start
        self.window = 0

    def start(self, conv_id: str, window: int) -> None:
        self.window = window
        if self.on_start is not None:
            self.on_start(conv_id, window)

    async def build(self, history: list[Message], step: int) -> list[Message]:
        out = self.fn([m.to_api() for m in history], self.window)
        return [Message.from_api(d) for d in out]

    def vault_texts(self) -> list[str]:
        return []


def load_plugin(spec: str) -> PluginStrategy:
    """``NAME=module:callable`` → a strategy; errors say exactly what is wrong with the spec."""
    name, eq, target = spec.partition("=")
    module, colon, attr = target.partition(":")
    if not (name and eq and module and colon and attr):
        raise ValueError(f"--strategy-plugin wants NAME=module:callable, got {spec!r}")
    try:
        mod = importlib.import_module(module)
    except ImportError as exc:
        raise ValueError(f"--strategy-plugin {spec!r}: cannot import {module} ({exc})") from None
    fn = getattr(mod, attr, None)
    if not callable(fn):
        raise ValueError(f"{module}:{attr} is not a callable")
    on_start = getattr(fn, "start", None)
    if not callable(on_start):
        on_start = getattr(mod, "start", None)
    return PluginStrategy(name, fn, on_start if callable(on_start) else None)
