"""The one place that knows what kind of model a model string names."""

from __future__ import annotations

from typing import Literal

ModelKind = Literal["local", "replay", "endpoint", "cloud"]

LOCAL_PREFIX = "local/"  # the embedded model, served by a child process (llm/local.py)
REPLAY_PREFIX = "replay/"  # recorded turns played back (llm/replay.py)
ENDPOINT_PREFIXES = ("ollama/", "ollama_chat/", "hosted_vllm/", "lm_studio/", "llamafile/")


def model_kind(model: str, api_base: str | None = None) -> ModelKind:
    """``local``: the embedded model; ``replay``: a recording; ``endpoint``: a server the user runs
    (Ollama, llama.cpp, vLLM, any OpenAI-compatible ``--api-base``); ``cloud``: a hosted provider."""
    if model.startswith(LOCAL_PREFIX):
        return "local"
    if model.startswith(REPLAY_PREFIX):
        return "replay"
    if model.startswith(ENDPOINT_PREFIXES) or api_base:
        return "endpoint"
    return "cloud"


def supports_tools(model: str, api_base: str | None = None) -> bool:
    """Whether tool schemas are sent. The embedded 135M model cannot call tools (it answers a tool schema
    with prose or broken JSON), so it gets none: a smaller prompt and a faster first token."""
    return model_kind(model, api_base) != "local"
