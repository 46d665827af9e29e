"""From settings to a model: the litellm call target, the context window and the context settings built
for that window."""

from __future__ import annotations

import os

from myrm_tui.config import Settings
from myrm_tui.context.config import DEFAULT_WINDOW, ContextConfig, budget_config, user_values
from myrm_tui.context.model_facts import family, model_kind
from myrm_tui.llm.client import ModelSpec
from myrm_tui.llm.errors import PLACEHOLDER_KEY


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
        key = PLACEHOLDER_KEY
    return ModelSpec(name, settings.api_base, key)


def window_for(settings: Settings) -> int:
    if settings.context_window:
        return settings.context_window
    if model_kind(settings.model) == "local":
        from myrm_tui.llm.local import N_CTX

        return N_CTX
    from myrm_tui.llm.registry import context_window

    return context_window(settings.model, DEFAULT_WINDOW)


def thinking_budget(settings: Settings) -> int:
    """Extended thinking's budget, part of ``max_tokens`` (so of the output the window must leave room
    for); Anthropic only."""
    return settings.thinking_budget_tokens if family(settings.model) == "anthropic" else 0


def context_config(settings: Settings, window: int, summary_role: str = "assistant") -> ContextConfig:
    """The pipeline's settings for ``window``: the one place they are derived from the user's settings
    (the session runs with them, the execution fingerprint hashes them)."""
    # The tool schemas are counted once the session binds its tools (``AgentSession.schema_tokens``).
    return budget_config(
        window,
        reply_tokens(settings),
        summary_role=summary_role,
        **user_values(settings),
    )


def reply_tokens(settings: Settings) -> int:
    """What a request asks the reply may take: the answer's ``max_tokens`` and the thinking budget."""
    return settings.max_output_tokens + thinking_budget(settings)


def model_choices(current: str | None) -> list[str]:
    """The models to pick from (the TUI's /model, an editor's model picker): ``current``, the models of
    providers whose key is in the environment, the embedded one."""
    from myrm_tui.config import KEY_DEFAULTS
    from myrm_tui.context.model_facts import lite_model
    from myrm_tui.llm.local import DEFAULT_LOCAL_MODEL

    out = [current] if current else []
    for key, model in KEY_DEFAULTS:
        if os.environ.get(key):
            out += [model, lite_model(model)]
    out.append(DEFAULT_LOCAL_MODEL)
    return list(dict.fromkeys(out))
