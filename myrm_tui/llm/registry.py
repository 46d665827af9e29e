"""Model facts from litellm's bundled registry (window, prices), read without network access."""

from __future__ import annotations

import json
import logging
from functools import cache
from typing import Any

from myrm_tui.offline import configure_offline_env, litellm_registry_file

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


# Providers whose models litellm looks up by their plain name (``openai/gpt-4o`` is ``gpt-4o``): their
# windows are read from the bundled registry file without importing litellm (seconds, ~150 MB), so the
# ring's first figure does not wait for it. Other providers resolve names their own way (regional
# aliases, base models): litellm answers for them.
PLAIN_PROVIDERS = frozenset({"openai", "anthropic", "gemini", "deepseek"})


@cache
def _bundled_windows() -> dict[str, tuple[str, int]]:
    """``{name: (provider, window)}`` of PLAIN_PROVIDERS' models in litellm's bundled registry file."""
    path = litellm_registry_file()
    try:
        data = json.loads(path.read_text(encoding="utf-8")) if path else {}
    except (OSError, ValueError):
        log.warning("litellm's registry file %s cannot be read", path, exc_info=True)
        return {}
    out: dict[str, tuple[str, int]] = {}
    for name, entry in data.items():
        if not isinstance(entry, dict) or entry.get("litellm_provider") not in PLAIN_PROVIDERS:
            continue
        window = entry.get("max_input_tokens") or entry.get("max_tokens")
        if isinstance(window, int) and window > 0:
            out[name] = (entry["litellm_provider"], window)
    return out


def bundled_provider(model: str) -> str | None:
    """The provider of a plain PLAIN_PROVIDERS model name (``gpt-4o`` -> ``openai``), read from the file."""
    hit = _bundled_windows().get(model)
    return hit[0] if hit is not None else None


def bundled_window(model: str) -> int | None:
    """The window litellm's registry gives ``model`` when it is a PLAIN_PROVIDERS model, read from the
    file; None when litellm must be asked."""
    windows = _bundled_windows()
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
