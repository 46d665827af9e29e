"""Facts read off a model string: its family (thinking rules, cache markers) and its kind. This is the one
place that knows what a model string names; the pipeline, the model client, the agent and the UI ask here."""

from __future__ import annotations

from typing import Literal


def family(model: str) -> str:
    m = model.lower()
    if "claude" in m or m.startswith(("anthropic/", "bedrock/anthropic")):
        return "anthropic"
    if any(k in m for k in ("deepseek", "mimo", "kimi", "moonshot")):
        return "deepseek"
    if any(k in m for k in ("qwen", "dashscope", "glm", "zhipu")):
        return "qwen"
    if "gemini" in m or "gemma" in m:
        return "gemini"
    if any(k in m for k in ("gpt", "o1", "o3", "o4", "codex", "grok")) or m.startswith("openai/"):
        return "openai"
    return "other"


# Each provider's lite model: what myrm summarizes with when it may choose (``config.summarizer_model``).
LITE_MODELS = {
    "anthropic": "anthropic/claude-haiku-4-5",
    "openai": "gpt-4o-mini",
    "gemini": "gemini/gemini-2.5-flash-lite",
}


def lite_model(model: str) -> str:
    """The provider's lite model for ``model`` (``model`` itself where none is known)."""
    return LITE_MODELS.get(family(model), model)


def is_thinking_model(model: str) -> bool:
    m = model.lower()
    return family(model) in {"anthropic", "deepseek"} and any(
        k in m for k in ("reasoner", "thinking", "r1", "claude", "kimi-k2", "mimo")
    )


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
