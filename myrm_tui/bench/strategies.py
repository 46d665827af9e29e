"""Context strategies the benchmark compares: ``myrm`` (the pipeline), ``none``, ``truncate``,
``mask``, and outside ones loaded with ``--strategy-plugin NAME=module:callable``.

Plug-in contract: ``callable(messages: list[dict], window_tokens: int) -> list[dict]`` — OpenAI-format
messages in (the whole history so far), the messages to send out. It is called once per recorded
assistant turn with the history up to that turn; it may keep state between calls of one
conversation (the history only grows) but is called afresh for each benchmark run.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, Protocol

from myrm_tui.context.config import ContextConfig
from myrm_tui.context.invariants import group_spans
from myrm_tui.context.pipeline import build_pipeline
from myrm_tui.context.processor import Completer, PipelineContext
from myrm_tui.context.state import ContextState
from myrm_tui.context.tokens import TokenCounter
from myrm_tui.context.types import Message
from myrm_tui.context.vault import ArtifactVault

MASK_PLACEHOLDER = "[output omitted: older tool output]"


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

    def start(self, conv_id: str, window: int) -> None:
        self.budget = ContextConfig(max_context_tokens=window).input_budget

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


class MyrmStrategy:
    """The full pipeline with its defaults, state and vault kept per conversation."""

    name = "myrm"

    def __init__(self, counter: TokenCounter, summarizer: Completer | None = None, model: str = "claude-sonnet-4-5") -> None:
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

    def start(self, conv_id: str, window: int) -> None:
        self.config = ContextConfig(max_context_tokens=window)
        self.state = ContextState()
        self.vault = ArtifactVault(namespace=conv_id.replace("/", "_"))
        self.clock = 1_700_000_000.0
        self.conv_id = conv_id

    async def build(self, history: list[Message], step: int) -> list[Message]:
        self.clock += 20.0  # a replayed turn every 20 s: the provider cache stays warm, as in a live session
        ctx = PipelineContext(
            config=self.config, state=self.state, counter=self.counter, vault=self.vault, raw=history,
            model=self.model, now=self.clock, summarizer=self.summarizer,
        )
        view = await self.pipeline.run(ctx, self.conv_id)
        self.last_metrics = ctx.metrics
        self.breakpoints = ctx.breakpoints
        return view

    def vault_texts(self) -> list[str]:
        return [e.content for e in self.vault.entries()]


class PluginStrategy:
    def __init__(self, name: str, fn: Callable[[list[dict[str, Any]], int], list[dict[str, Any]]]) -> None:
        self.name = name
        self.fn = fn
        self.window = 0

    def start(self, conv_id: str, window: int) -> None:
        self.window = window

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
    fn = getattr(importlib.import_module(module), attr, None)
    if not callable(fn):
        raise ValueError(f"{module}:{attr} is not a callable")
    return PluginStrategy(name, fn)
