"""What a streaming completion yields, provider-independent."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class TextDelta:
    text: str


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    text: str


@dataclass(frozen=True, slots=True)
class ThinkingDelta:
    """A fragment of an Anthropic thinking block: text, then its signature (which closes the block), or
    a whole ``redacted_thinking`` block (``redacted`` holds its opaque data)."""

    thinking: str = ""
    signature: str = ""
    redacted: str = ""


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    index: int
    id: str | None
    name: str | None
    arguments: str  # a fragment of the JSON arguments text


@dataclass(frozen=True, slots=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0  # read from the provider's prompt cache
    cache_creation_tokens: int = 0  # written to it (Anthropic)

    @property
    def uncached_tokens(self) -> int:
        return max(self.prompt_tokens - self.cached_tokens, 0)


@dataclass(frozen=True, slots=True)
class Finish:
    reason: str  # "stop" | "tool_calls" | "length" | ...


LLMEvent = TextDelta | ReasoningDelta | ThinkingDelta | ToolCallDelta | Usage | Finish
