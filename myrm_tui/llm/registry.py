"""Model facts from litellm's bundled registry (window, prices), read without network access."""

from __future__ import annotations

from functools import cache
from typing import Any

from myrm_tui.offline import configure_offline_env


@cache
def model_info(model: str) -> dict[str, Any] | None:
    configure_offline_env()
    import litellm

    try:
        return dict(litellm.get_model_info(model))
    except Exception:  # litellm raises a bare Exception for unknown models
        return None


def context_window(model: str, default: int) -> int:
    info = model_info(model) or {}
    return int(info.get("max_input_tokens") or info.get("max_tokens") or default)
