"""``myrm doctor``'s check of the embedded model: one real completion through the app's path (``LLMClient``),
timed. Apart from ``local.py`` so that the model client imports the embedded model and not the reverse."""

from __future__ import annotations

import time
from typing import Any

from myrm_tui.llm.client import LLMClient, ModelSpec
from myrm_tui.llm.errors import LLMError
from myrm_tui.llm.events import TextDelta, Usage
from myrm_tui.llm.local import DEFAULT_LOCAL_MODEL, EmbeddedServer, server


class SelfTest:
    """What ``myrm doctor`` measured of the embedded model: one real completion through the app's path."""

    def __init__(self) -> None:
        self.load_seconds = 0.0
        self.first_token_seconds = 0.0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.decode_seconds = 0.0
        self.text = ""
        self.error = ""

    @property
    def ok(self) -> bool:
        return not self.error and bool(self.text.strip())

    @property
    def prefill_tps(self) -> float:
        return self.prompt_tokens / self.first_token_seconds if self.first_token_seconds else 0.0

    @property
    def decode_tps(self) -> float:
        return (
            (self.completion_tokens - 1) / self.decode_seconds
            if self.decode_seconds and self.completion_tokens > 1
            else 0.0
        )

    def line(self) -> str:
        if not self.ok:
            return f"FAILED: {self.error or 'empty reply'}"
        return (
            f"ok — loaded in {self.load_seconds:.1f} s; first reply: {self.prompt_tokens} prompt tokens, "
            f"first token {self.first_token_seconds:.2f} s ({self.prefill_tps:.0f} tok/s prefill), "
            f"{self.decode_tps:.0f} tok/s decode"
        )


async def self_test(
    messages: list[dict[str, Any]], max_tokens: int = 24, srv: EmbeddedServer | None = None
) -> SelfTest:
    """Start the child (timing the load), then stream one reply to ``messages`` — the agent's real first
    request — through ``LLMClient``, timing the first token (prefill) and the rest (decode)."""
    result = SelfTest()
    srv = srv or server()
    try:
        await srv.ensure()
        result.load_seconds = srv.load_seconds
        client = LLMClient(inactivity_timeout=60, total_timeout=120)
        await client.ready()  # litellm's import is not the model's time
        t0 = time.perf_counter()
        first = last = 0.0
        async for ev in client.stream(
            ModelSpec(DEFAULT_LOCAL_MODEL), messages, max_tokens=max_tokens, temperature=0.0
        ):
            if isinstance(ev, TextDelta) and ev.text:
                last = time.perf_counter()
                first = first or last
                result.text += ev.text
            elif isinstance(ev, Usage):
                result.prompt_tokens, result.completion_tokens = ev.prompt_tokens, ev.completion_tokens
        if first:
            result.first_token_seconds = first - t0
            result.decode_seconds = last - first
    except LLMError as exc:
        result.error = str(exc)
    return result
