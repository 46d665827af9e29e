"""From settings to a model: the litellm call target and the context window."""

from __future__ import annotations

import os

from myrm_tui.config import Settings
from myrm_tui.context.config import DEFAULT_WINDOW
from myrm_tui.context.model_facts import model_kind
from myrm_tui.llm.client import ModelSpec


def model_spec(settings: Settings, model: str | None = None) -> ModelSpec:
    """The litellm call target. An OpenAI-compatible local endpoint (Ollama, llama.cpp, vLLM) gets a
    placeholder key when none is set: the OpenAI client refuses to send without one, the servers ignore it."""
    key = settings.api_key
    name = model or settings.model
    if (
        settings.api_base
        and not key
        and name.startswith(("openai/", "hosted_vllm/"))
        and not os.environ.get("OPENAI_API_KEY")
    ):
        key = "sk-no-key-needed"
    return ModelSpec(name, settings.api_base, key)


def window_for(settings: Settings) -> int:
    if settings.context_window:
        return settings.context_window
    if model_kind(settings.model) == "local":
        from myrm_tui.llm.local import N_CTX

        return N_CTX
    from myrm_tui.llm.registry import context_window

    return context_window(settings.model, DEFAULT_WINDOW)
