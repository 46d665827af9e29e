"""What a request cost, from litellm's price table (cache reads and writes priced as the provider does)."""

from __future__ import annotations

from myrm_tui.llm.events import Usage


def estimate_cost(model: str, usage: Usage) -> float:
    from myrm_tui.llm.registry import model_info

    info = model_info(model) or {}
    inp = float(info.get("input_cost_per_token") or 0.0)
    out = float(info.get("output_cost_per_token") or 0.0)
    read = float(info.get("cache_read_input_token_cost") or inp)
    write = float(info.get("cache_creation_input_token_cost") or inp)
    uncached = max(usage.prompt_tokens - usage.cached_tokens - usage.cache_creation_tokens, 0)
    return (
        uncached * inp
        + usage.cached_tokens * read
        + usage.cache_creation_tokens * write
        + usage.completion_tokens * out
    )
