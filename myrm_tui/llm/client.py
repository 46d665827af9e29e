"""``LLMClient``: async streaming over ``litellm.acompletion(stream=True)`` for any model string.

litellm takes seconds to import, so it is imported once, in a thread, the first time a call needs
it (never on the UI's start-up path); the offline environment is set before. The embedded model is
registered as litellm's custom provider ``local`` at that moment.
"""

from __future__ import annotations

import asyncio
import importlib
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from myrm_tui.llm.errors import LLMError, ProviderError, classify
from myrm_tui.llm.events import Finish, LLMEvent, ReasoningDelta, TextDelta, ToolCallDelta, Usage
from myrm_tui.llm.progress import ProgressClock, guarded
from myrm_tui.offline import configure_offline_env

_litellm: Any = None
_import_lock = threading.Lock()  # a thread lock: the import runs in a worker thread, any event loop may ask


@dataclass(frozen=True)
class ModelSpec:
    model: str
    api_base: str | None = None
    api_key: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # passed through to litellm

    @property
    def is_local(self) -> bool:
        return self.model.startswith("local/")


def _import_litellm() -> Any:
    global _litellm
    with _import_lock:
        if _litellm is None:
            _litellm = _load_litellm()
    return _litellm


def _load_litellm() -> Any:
    configure_offline_env()
    mod: Any = importlib.import_module("litellm")
    mod.suppress_debug_info = True
    mod.drop_params = True
    mod.telemetry = False
    from myrm_tui.llm import local, replay

    for name, factory in ((local.PROVIDER, local.make_provider), (replay.PROVIDER, replay.make_provider)):
        if not any(p.get("provider") == name for p in (mod.custom_provider_map or [])):
            mod.custom_provider_map = [*(mod.custom_provider_map or []), {"provider": name, "custom_handler": factory()}]
    return mod


async def litellm_module() -> Any:
    if _litellm is None:
        return await asyncio.to_thread(_import_litellm)
    return _litellm


class LLMClient:
    def __init__(self, inactivity_timeout: float = 90.0, total_timeout: float = 600.0, check_interval: float = 10.0) -> None:
        self.inactivity_timeout = inactivity_timeout
        self.total_timeout = total_timeout
        self.check_interval = check_interval

    async def ready(self) -> None:
        await litellm_module()

    async def stream(
        self, spec: ModelSpec, messages: list[dict[str, Any]], *, tools: list[dict[str, Any]] | None = None,
        tool_choice: Any = None, max_tokens: int | None = None, temperature: float | None = None,
        extra: dict[str, Any] | None = None, clock: ProgressClock | None = None,
    ) -> AsyncIterator[LLMEvent]:
        """Stream one completion; every failure surfaces as an ``LLMError`` subclass."""
        litellm = await litellm_module()
        kwargs: dict[str, Any] = {
            "model": spec.model, "messages": messages, "stream": True,
            "stream_options": {"include_usage": True}, "num_retries": 0, **spec.extra, **(extra or {}),
        }
        if spec.api_base:
            kwargs["api_base"] = spec.api_base
        if spec.api_key:
            kwargs["api_key"] = spec.api_key
        if tools:
            kwargs["tools"] = tools
            if tool_choice is not None:
                kwargs["tool_choice"] = tool_choice
        if max_tokens is not None:
            kwargs["max_tokens"] = max_tokens
        if temperature is not None:
            kwargs["temperature"] = temperature
        kwargs.setdefault("timeout", self.total_timeout)
        try:
            response = await litellm.acompletion(**kwargs)
            async for chunk in guarded(_aiter(response), self.inactivity_timeout, self.total_timeout, self.check_interval, clock):
                for event in _events(chunk):
                    yield event
        except LLMError:
            raise
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            raise classify(exc) from exc

    async def complete(
        self, spec: ModelSpec, system: str, user: str, *, max_tokens: int = 2048, clock: ProgressClock | None = None,
    ) -> str:
        """Non-interactive completion (summaries, titles, semantic filters): the streamed text joined."""
        parts: list[str] = []
        async for ev in self.stream(
            spec, [{"role": "system", "content": system}, {"role": "user", "content": user}],
            max_tokens=max_tokens, temperature=0.0, clock=clock,
        ):
            if isinstance(ev, TextDelta):
                parts.append(ev.text)
        return "".join(parts)


async def _aiter(response: Any) -> AsyncIterator[Any]:
    if not hasattr(response, "__aiter__"):
        raise ProviderError("The provider returned a non-streaming response to a streaming request")
    async for chunk in response:
        yield chunk


def _get(obj: Any, name: str, default: Any = None) -> Any:
    if obj is None:
        return default
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


def _events(chunk: Any) -> list[LLMEvent]:
    out: list[LLMEvent] = []
    for choice in _get(chunk, "choices") or []:
        delta = _get(choice, "delta")
        text = _get(delta, "content")
        if text:
            out.append(TextDelta(text))
        reasoning = _get(delta, "reasoning_content")
        if reasoning:
            out.append(ReasoningDelta(reasoning))
        for tc in _get(delta, "tool_calls") or []:
            fn = _get(tc, "function")
            out.append(ToolCallDelta(int(_get(tc, "index", 0) or 0), _get(tc, "id"), _get(fn, "name"), _get(fn, "arguments") or ""))
        finish = _get(choice, "finish_reason")
        if finish:
            out.append(Finish(str(finish)))
    usage = _get(chunk, "usage")
    if usage is not None and (_get(usage, "prompt_tokens") or _get(usage, "completion_tokens")):
        details = _get(usage, "prompt_tokens_details")
        cached = _get(details, "cached_tokens") or _get(usage, "cache_read_input_tokens") or 0
        out.append(
            Usage(
                int(_get(usage, "prompt_tokens") or 0), int(_get(usage, "completion_tokens") or 0),
                int(cached or 0), int(_get(usage, "cache_creation_input_tokens") or 0),
            )
        )
    return out
