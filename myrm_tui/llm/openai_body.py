"""The OpenAI SDK's per-request walk of a chat body, skipped where it cannot change anything.

litellm sends OpenAI-path requests (OpenAI, Ollama, vLLM, llama.cpp, the embedded model) through the SDK,
whose ``create`` first runs ``async_maybe_transform`` over the whole body: every message and content part
is checked against the params' TypedDicts, in Python, on the event loop the TUI draws with. That is ~47 ms
for a 300-message request (143 KB) and grows with the request: a long session's UI stalls on every call.

The transform renames keys marked ``PropertyInfo(alias=…)``, formats dates and files, dumps model objects
and drops unset (``omit``) arguments. The chat-completion params carry no ``PropertyInfo`` at all (guarded
by a test that walks their annotations), so for a body of plain JSON values the result is the body minus
its unset arguments. That is what :func:`install` returns for those params; any other body, or any other
params, goes through the SDK's own transform.
"""

from __future__ import annotations

import json
import logging
from typing import Any

log = logging.getLogger(__name__)


def chat_params() -> tuple[Any, ...]:
    """The params types ``chat.completions.create`` transforms its body against."""
    from openai.types.chat import completion_create_params as p

    return (p.CompletionCreateParams, p.CompletionCreateParamsStreaming, p.CompletionCreateParamsNonStreaming)


def plain_body(data: Any) -> dict[str, Any] | None:
    """``data`` without its unset arguments if every value is plain JSON (so the transform would return
    just that), else None."""
    from openai._utils import is_given

    if not isinstance(data, dict):
        return None
    body = {k: v for k, v in data.items() if is_given(v)}
    try:
        # guard: a-chat-body-that-is-not-plain-json-goes
        json.dumps(body)  # in C, ~1 ms for 143 KB: fails on a model object, a file, a nested unset value
    except (TypeError, ValueError):
        return None
    return body


def install() -> None:
    """Route the chat-completions body transform through :func:`plain_body` (idempotent)."""
    try:
        from openai.resources.chat.completions import completions
    except ImportError:  # another SDK layout: its own transform stays
        log.warning("openai's chat completions module moved; its body transform is kept", exc_info=True)
        return
    sdk = completions.async_maybe_transform
    if getattr(sdk, "myrm_fast_path", False):
        return
    params = chat_params()

    async def transform(data: Any, expected_type: Any) -> Any:
        if expected_type in params:
            body = plain_body(data)
            if body is not None:
                return body
        return await sdk(data, expected_type)

    transform.myrm_fast_path = True  # type: ignore[attr-defined]
    completions.async_maybe_transform = transform
