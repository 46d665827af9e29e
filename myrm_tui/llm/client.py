"""``LLMClient``: async streaming over ``litellm.acompletion(stream=True)`` for any model string.

litellm takes seconds to import, so it is imported once, in a thread, the first time a call needs
it (never on the UI's start-up path); the offline environment is set before. The replay provider is
registered with litellm at that moment; the embedded model needs no registration: it is an
OpenAI-compatible server in a child process, reached like any local endpoint through its ``Adapter``
(``llm/local.py``), so the streaming code has no branch of its own for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
import logging
import sys
import threading
import types
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from myrm_tui import gc_policy
from myrm_tui.context.model_facts import model_kind
from myrm_tui.context.text.call_args import whole_text
from myrm_tui.llm.errors import (
    EmptyReplyError,
    Endpoint,
    IncompleteStreamError,
    LLMError,
    ProviderError,
    base_address,
    classify,
    redacted_traceback,
)
from myrm_tui.llm.events import (
    Finish,
    LLMEvent,
    ReasoningDelta,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    Usage,
)
from myrm_tui.llm.progress import ProgressClock, guarded
from myrm_tui.offline import configure_offline_env

log = logging.getLogger(__name__)

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
        return model_kind(self.model) == "local"


def _import_litellm() -> Any:
    global _litellm
    with _import_lock:
        if _litellm is None:
            _litellm = _load_litellm()
    return _litellm


def _load_litellm() -> Any:
    configure_offline_env()
    mod: Any = importlib.import_module("litellm")
    _share_default_encoding()
    mod.suppress_debug_info = True
    mod.drop_params = True
    mod.telemetry = False
    # litellm tokenized each request's whole prompt on the event loop for a cost figure of its own, never
    # read here, loading cl100k_base (~30 MB) for every model it does not know by its bare name; a
    # stream that reports no usage is counted by ``_estimated_usage`` instead, with myrm's encoding.
    # guard: litellm-counts-no-prompt-with
    mod.disable_token_counter = True
    from myrm_tui.llm import replay

    for name, factory in ((replay.PROVIDER, replay.make_provider),):
        if not any(p.get("provider") == name for p in (mod.custom_provider_map or [])):
            mod.custom_provider_map = [
                *(mod.custom_provider_map or []),
                {"provider": name, "custom_handler": factory()},
            ]
    for lazy in _LAZY_IMPORTS:
        with contextlib.suppress(ImportError):
            importlib.import_module(lazy)
    from myrm_tui.context.tokens import drop_rank_copies

    drop_rank_copies()  # of any encoding litellm's imports loaded
    from myrm_tui.llm import openai_body

    openai_body.install()  # the SDK's walk of every request body, on the UI's loop: skipped where a no-op
    gc_policy.settle()  # litellm's objects live as long as the process: no collection walks them again
    return mod


def _estimated_usage(messages: list[dict[str, Any]], written: str) -> Usage:
    """Our count of a request and its reply, for a server that reports none: what litellm estimated
    before its token counter was turned off, with the encoding myrm counts with."""
    from myrm_tui.context.tokens import MESSAGE_OVERHEAD, REQUEST_OVERHEAD, get_encoding

    enc = get_encoding()

    def count(text: str) -> int:
        return len(enc.encode(text, disallowed_special=()))

    prompt = REQUEST_OVERHEAD
    for m in messages:
        content = m.get("content") or ""
        prompt += MESSAGE_OVERHEAD + count(content if isinstance(content, str) else json.dumps(content))
    return Usage(prompt, count(written))


DEFAULT_ENCODING_MODULE = "litellm.litellm_core_utils.default_encoding"


def _share_default_encoding() -> None:
    """litellm's token counter loads its default encoding, cl100k_base, when its module is imported
    (the first call does): a second tokenizer of ~30 MB beside the o200k_base that myrm counts with (the
    encoding of current OpenAI models). Its module is given myrm's encoding instead."""
    if DEFAULT_ENCODING_MODULE in sys.modules:
        return
    from myrm_tui.context.tokens import get_encoding

    shared = types.ModuleType(DEFAULT_ENCODING_MODULE)
    shared.encoding = get_encoding()  # type: ignore[attr-defined]
    sys.modules[DEFAULT_ENCODING_MODULE] = shared


# Modules litellm and the OpenAI SDK import only inside the first call: imported here, in the import
# thread, they neither stall the event loop on the first message (~0.5 s) nor eat into its idle limit.
_LAZY_IMPORTS = (
    "openai.resources.chat",
    "anyio._backends._asyncio",
    "jiter",
    "litellm._service_logger",
    DEFAULT_ENCODING_MODULE,
    "litellm.litellm_core_utils.token_counter",
    "litellm.litellm_core_utils.get_supported_openai_params",
    "litellm.litellm_core_utils.llm_request_utils",
    "litellm.litellm_core_utils.llm_response_utils.response_metadata",
    "litellm.llms.litellm_proxy",
    "openai.lib._chat_completion_resources",
)


async def litellm_module() -> Any:
    if _litellm is None:
        return await asyncio.to_thread(_import_litellm)
    return _litellm


class Adapter(Protocol):
    """A model reached through another endpoint than its name says (the embedded model: a child process's
    OpenAI-compatible server), whose backend can stop under a call."""

    async def open(
        self, extra: dict[str, Any], messages: list[dict[str, Any]], temperature: float | None
    ) -> tuple[str, str, str, dict[str, Any], list[dict[str, Any]]]: ...

    def stopped_error(self, grace: float = 0.0) -> LLMError | None: ...


def _adapter(spec: ModelSpec) -> Adapter | None:
    if not spec.is_local:
        return None
    from myrm_tui.llm import local  # only for the embedded model: its module is not imported otherwise

    return local.adapter()


class LLMClient:
    def __init__(
        self, inactivity_timeout: float = 90.0, total_timeout: float = 600.0, check_interval: float = 10.0
    ) -> None:
        self.inactivity_timeout = inactivity_timeout
        self.total_timeout = total_timeout
        self.check_interval = check_interval

    async def ready(self) -> None:
        await litellm_module()

    async def stream(
        self,
        spec: ModelSpec,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        tool_choice: Any = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        extra: dict[str, Any] | None = None,
        clock: ProgressClock | None = None,
        _restarted: bool = False,
    ) -> AsyncIterator[LLMEvent]:
        """Stream one completion; every failure surfaces as an ``LLMError`` subclass."""
        # guard: a-request-holding-a-lone-surrogate-is-sent
        messages = _whole(messages)
        args = (spec, messages)
        options: dict[str, Any] = {
            "tools": tools,
            "tool_choice": tool_choice,
            "max_tokens": max_tokens,
            "temperature": temperature,
            "extra": extra,
            "clock": clock,
        }
        yielded = False
        embedded = _adapter(spec)
        if embedded is not None:
            # The model loads in the child while litellm imports here: the two slow starts overlap.
            (model, base, key, call_extra, messages), litellm = await asyncio.gather(
                embedded.open(spec.extra, messages, temperature), litellm_module()
            )
            spec = ModelSpec(model, base, key, call_extra)
            tools, temperature = None, None
        else:
            litellm = await litellm_module()
        kwargs: dict[str, Any] = {
            "model": spec.model,
            "messages": messages,
            "stream": True,
            "stream_options": {"include_usage": True},
            "num_retries": 0,
            **spec.extra,
            **(extra or {}),
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
        _to_body(kwargs)
        seen = _Seen()
        usage_seen, written = False, []
        endpoint = Endpoint(spec.model, spec.api_base, spec.api_key)
        try:
            # The request itself runs under the watchdog: the inactivity limit covers connecting and
            # the wait for the first byte, not only the gaps between tokens.
            async for chunk in guarded(
                _opened(litellm, kwargs, seen),
                self.inactivity_timeout,
                self.total_timeout,
                self.check_interval,
                clock,
                where=base_address(endpoint) or "the server",
            ):
                for event in _events(chunk):
                    seen.note(event)
                    yielded = True
                    usage_seen = usage_seen or isinstance(event, Usage)
                    if isinstance(event, (TextDelta, ReasoningDelta)):
                        written.append(event.text)
                    elif isinstance(event, ToolCallDelta):
                        written.append(event.arguments)
                    yield event
            # litellm ends a stream whose connection dropped with a made-up finish_reason "stop", so a
            # finish proves nothing: a child that is gone now was gone before the reply was complete.
            if embedded is not None and (stopped := embedded.stopped_error()) is not None:
                raise stopped
            seen.check()
            # guard: a-stream-without-usage-is-counted-by-us
            if not usage_seen:  # a server that streams no usage (the embedded model's)
                yield _estimated_usage(messages, "".join(written))
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.debug("stream failed", exc_info=True)
            # A dead child explains any transport error better than the transport does.
            stopped = await asyncio.to_thread(embedded.stopped_error, 2.0) if embedded is not None else None
            if stopped is not None and not yielded and not _restarted:
                # It died before this request reached it (while idle, between turns): nothing of the
                # reply was lost, so the new child answers it instead and the user sees no error.
                async for event in self.stream(*args, **options, _restarted=True):
                    yield event
                return
            if stopped is not None:
                raise stopped from exc
            if isinstance(exc, LLMError):
                raise
            error = classify(exc, endpoint)
            # The traceback as text, redacted: providers echo the key they refused into their errors.
            log.warning("model call failed: %s\n%s", error, redacted_traceback(exc, endpoint))
            raise error from exc

    async def complete(
        self,
        spec: ModelSpec,
        system: str,
        user: str,
        *,
        max_tokens: int = 2048,
        clock: ProgressClock | None = None,
    ) -> str:
        """Non-interactive completion (summaries, titles, semantic filters): the streamed text joined."""
        parts: list[str] = []
        async for ev in self.stream(
            spec,
            [{"role": "system", "content": system}, {"role": "user", "content": user}],
            max_tokens=max_tokens,
            temperature=0.0,
            clock=clock,
        ):
            if isinstance(ev, TextDelta):
                parts.append(ev.text)
        return "".join(parts)


def _whole(value: Any) -> Any:
    """``value`` (a request's JSON) with each lone surrogate replaced: JSON allows ``"\\ud800"`` (in a
    model's reply, an MCP result) and Python decodes an argument or a file name that is not UTF-8 with
    ``surrogateescape``, but the request's UTF-8 body cannot hold one, and the call failed as if the
    provider had. Unchanged parts are returned as they are (no copy of a long history per call)."""
    if isinstance(value, str):
        return value if value.isascii() else whole_text(value)  # isascii: a flag, not a scan
    if isinstance(value, list):
        items = [_whole(v) for v in value]
        return value if all(a is b for a, b in zip(items, value, strict=True)) else items
    if isinstance(value, dict):
        pairs = {k: _whole(v) for k, v in value.items()}
        return value if all(pairs[k] is v for k, v in value.items()) else pairs
    return value


# Request fields litellm drops when given as arguments (its signature does not take them, with
# ``drop_params`` on or off) but which the provider reads from the body: sent through ``extra_body``,
# which the OpenAI SDK merges into the JSON body as it is.
BODY_PARAMS = ("prompt_cache_key",)


def _to_body(kwargs: dict[str, Any]) -> None:
    moved = {k: kwargs.pop(k) for k in BODY_PARAMS if k in kwargs}
    if moved:
        kwargs["extra_body"] = {**(kwargs.get("extra_body") or {}), **moved}


async def _opened(litellm: Any, kwargs: dict[str, Any], seen: _Seen) -> AsyncIterator[Any]:
    """The call and its chunks as one source, so the watchdog times the wait for the answer too;
    the HTTP stream is closed however the iteration ends (done, cut, timed out, cancelled)."""
    response = await litellm.acompletion(**kwargs)
    seen.response = response
    try:
        if not hasattr(response, "__aiter__"):
            raise ProviderError("The provider returned a non-streaming response to a streaming request")
        async for chunk in response:
            yield chunk
    finally:
        aclose = getattr(response, "aclose", None)
        if aclose is not None:
            try:
                await aclose()
            except Exception:  # closing a broken stream must not hide why it broke
                log.debug("closing a broken stream failed", exc_info=True)


@dataclass
class _Seen:
    """What a stream delivered, to tell a complete reply from a cut, empty or bogus one."""

    response: Any = None
    chars: int = 0  # of text
    reasoning: int = 0  # chars of reasoning (thinking is no answer)
    tool_calls: int = 0
    finish: str | None = None

    def note(self, event: LLMEvent) -> None:
        if isinstance(event, TextDelta):
            self.chars += len(event.text)
        elif isinstance(event, ReasoningDelta):
            self.reasoning += len(event.text)
        elif isinstance(event, ToolCallDelta):
            self.tool_calls += 1
        elif isinstance(event, Finish):
            self.finish = event.reason

    def provider_finish(self) -> str | None:
        """The finish reason the provider sent. litellm ends every stream with one, inventing
        ``stop`` when the provider sent none (a dropped connection, a ``[DONE]``-only or non-SSE
        body), so its own record of what was received is asked first."""
        if not hasattr(self.response, "received_finish_reason"):  # not litellm's wrapper: trust the chunks
            return self.finish
        # guard: cut-stream-litellms-made-up-finish
        received = self.response.received_finish_reason or getattr(
            self.response, "intermittent_finish_reason", None
        )
        return str(received) if received else None

    def check(self) -> None:
        finish = self.provider_finish()
        if finish is None and (self.chars or self.tool_calls or self.reasoning):
            raise IncompleteStreamError(
                f"The reply was cut off: the stream ended without a finish reason after {self.chars:,} chars"
                f"{f' and {self.tool_calls} tool-call fragment(s)' if self.tool_calls else ''} "
                "(the connection dropped or the server stopped mid-answer)"
            )
        if finish is None:
            raise IncompleteStreamError(
                "The provider's stream ended without a reply and without a finish reason "
                "(an empty or [DONE]-only stream, or a body that is not server-sent "
                f"events{self._content_type()})"
            )
        # guard: empty-reply-is-an-error
        if not (self.chars or self.tool_calls):
            thought = f", only {self.reasoning:,} chars of reasoning" if self.reasoning else ""
            raise EmptyReplyError(
                f"The model sent an empty reply (finish reason {finish!r}, no text and no tool call{thought})"
            )

    def _content_type(self) -> str:
        headers = getattr(self.response, "_response_headers", None) or {}
        kind = headers.get("content-type") if hasattr(headers, "get") else None
        return f"; Content-Type: {kind}" if kind else ""


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
        for block in _get(delta, "thinking_blocks") or []:
            if _get(block, "type") == "redacted_thinking":
                out.append(ThinkingDelta(redacted=str(_get(block, "data") or "")))
            elif _get(block, "thinking") or _get(block, "signature"):
                thought, signature = _get(block, "thinking") or "", _get(block, "signature") or ""
                out.append(ThinkingDelta(str(thought), str(signature)))
        for tc in _get(delta, "tool_calls") or []:
            fn = _get(tc, "function")
            out.append(
                ToolCallDelta(
                    int(_get(tc, "index", 0) or 0),
                    _get(tc, "id"),
                    _get(fn, "name"),
                    _get(fn, "arguments") or "",
                )
            )
        finish = _get(choice, "finish_reason")
        if finish:
            out.append(Finish(str(finish)))
    usage = _get(chunk, "usage")
    if usage is not None and (_get(usage, "prompt_tokens") or _get(usage, "completion_tokens")):
        details = _get(usage, "prompt_tokens_details")
        cached = _get(details, "cached_tokens") or _get(usage, "cache_read_input_tokens") or 0
        out.append(
            Usage(
                int(_get(usage, "prompt_tokens") or 0),
                int(_get(usage, "completion_tokens") or 0),
                int(cached or 0),
                int(_get(usage, "cache_creation_input_tokens") or 0),
            )
        )
    return out
