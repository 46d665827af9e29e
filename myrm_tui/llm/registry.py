"""Model facts from litellm's bundled registry (window, prices), read without network access."""

from __future__ import annotations

import logging
from functools import cache
from typing import Any

from myrm_tui.llm.bundled import PLAIN_PROVIDERS, bundled_windows
from myrm_tui.offline import configure_offline_env

log = logging.getLogger(__name__)


@cache
def model_info(model: str) -> dict[str, Any] | None:
    configure_offline_env()
    import litellm

    try:
        return dict(litellm.get_model_info(model))
    except Exception:  # litellm raises a bare Exception for unknown models
        log.debug("litellm does not know %s", model, exc_info=True)
        return None


def bundled_window(model: str) -> int | None:
    """The window litellm's registry gives ``model`` when it is a PLAIN_PROVIDERS model, read from the
    file; None when litellm must be asked."""
    windows = bundled_windows()
    prefix, slash, rest = model.partition("/")
    hit = windows.get(model)
    if hit is None and slash and prefix in PLAIN_PROVIDERS:
        hit = windows.get(rest)
        if hit is not None and hit[0] != prefix:
            return None
    return hit[1] if hit is not None else None


def context_window(model: str, default: int) -> int:
    bundled = bundled_window(model)
    if bundled is not None:
        return bundled
    info = model_info(model) or {}
    return int(info.get("max_input_tokens") or info.get("max_tokens") or default)


_capabilities: dict[tuple[str, str], bool] = {}


async def supports(model: str, feature: str) -> bool:
    """litellm's ``supports_<feature>`` (``vision``, ``reasoning``) for ``model``, asked once per model;
    litellm is imported in a thread the first time (never on the event loop). Unknown models: False."""
    known = _capabilities.get((model, feature))
    if known is not None:
        return known
    from myrm_tui.llm.client import litellm_module

    litellm = await litellm_module()
    try:
        answer = bool(getattr(litellm, f"supports_{feature}")(model=model))
    except Exception:  # litellm raises a bare Exception for models it does not know
        log.debug("litellm cannot tell whether %s supports %s", model, feature, exc_info=True)
        answer = False
    _capabilities[(model, feature)] = answer
    return answer
