"""Model-family facts the pipeline needs (thinking rules, cache markers), read off the model string."""

from __future__ import annotations


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


def is_thinking_model(model: str) -> bool:
    m = model.lower()
    return family(model) in {"anthropic", "deepseek"} and any(
        k in m for k in ("reasoner", "thinking", "r1", "claude", "kimi-k2", "mimo")
    )
