"""The summarizer in the benchmark: real calls to an OpenAI-compatible endpoint, every one billed.

``BenchSummarizer`` sends each summarize request through litellm (``--summarizer MODEL``, at
``--summarizer-api-base`` if given; the tests use the emulator) and records what it sent. The runner
bills each recorded call like a main request — with the same prefix-cache simulation and the
summarizer model's prices — and adds it to the strategy's cost.

When the summarizer is the main model (its name, less a provider prefix, is the price model) it shares
the conversation's provider cache: ``myrm``'s prepared summary is then the last request as sent plus the
summarize instruction (``context.prepared.prefix_instruction``), billed against the conversation's own
cache. Another model has a cache of its own, and is sent the span as a transcript.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from myrm_tui.context.types import Message


@dataclass(frozen=True)
class SummarizerCall:
    """One request the summarizer was sent: the messages as billed, and its answer."""

    messages: list[Message]
    tools: bool  # sent with the conversation's tool schemas (a prefix-reusing request)
    shares_cache: bool  # billed against the conversation's provider cache
    output: str


def bare_model(model: str) -> str:
    """``openai/claude-sonnet-4-5`` → ``claude-sonnet-4-5`` (the provider prefix routes, it does not name)."""
    return model.split("/", 1)[1] if "/" in model else model


@dataclass
class BenchSummarizer:
    model: str
    api_base: str | None = None
    price_model: str = ""
    calls: list[SummarizerCall] = field(default_factory=list)

    def __post_init__(self) -> None:
        from myrm_tui.llm.client import LLMClient, ModelSpec

        self.client = LLMClient()
        self.spec = ModelSpec(self.model, self.api_base, "bench" if self.api_base else None)

    @property
    def shares_cache(self) -> bool:
        """The summarizer is the main model: it reads the conversation's cached prefix."""
        return bool(self.price_model) and bare_model(self.model) == bare_model(self.price_model)

    @property
    def price_name(self) -> str:
        return bare_model(self.model) if self.api_base else self.model

    async def __call__(self, system: str, user: str) -> str:
        """A plain ``Completer`` (transcript summaries, semantic filters, the ``window`` strategy)."""
        text = await self.client.complete(self.spec, system, user)
        self.calls.append(
            SummarizerCall(
                [Message(role="system", content=system), Message(role="user", content=user)],
                False,
                False,
                text,
            )
        )
        return text

    async def with_prefix(
        self, view: list[Message], instruction: str, tools: list[dict[str, Any]] | None
    ) -> str:
        """The conversation's last request as sent, plus the summarize instruction as a final user message."""
        tail = Message(role="user", content=instruction)
        parts: list[str] = []
        from myrm_tui.llm.events import TextDelta

        async for ev in self.client.stream(
            self.spec, [*(m.to_api() for m in view), tail.to_api()], tools=tools or None, max_tokens=2048
        ):
            if isinstance(ev, TextDelta):
                parts.append(ev.text)
        text = "".join(parts)
        self.calls.append(SummarizerCall([*view, tail], True, True, text))
        return text

    def drain(self) -> list[SummarizerCall]:
        out, self.calls = self.calls, []
        return out
