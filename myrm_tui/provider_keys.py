"""Provider keys a model needs from the environment, as litellm's ``validate_environment`` lists them."""

from __future__ import annotations

import logging
import os

from myrm_tui.config import KEY_DEFAULTS, registry_provider
from myrm_tui.context.model_facts import model_kind

log = logging.getLogger(__name__)


def documented_key_set(model: str) -> bool:
    """The key myrm documents for ``model``'s provider is set: then it is there without importing litellm
    (seconds of CPU) to ask. The provider is the model's prefix (``anthropic/…``), else the one litellm's
    registry files give a bare name (``gpt-4o``)."""
    prefix, slash, _ = model.partition("/")
    provider = prefix if slash else registry_provider(model)
    return provider is not None and any(
        os.environ.get(key) for key, _ in KEY_DEFAULTS if key.removesuffix("_API_KEY").lower() == provider
    )


async def missing_keys(model: str) -> list[str]:
    """The environment variables litellm says ``model``'s provider needs and are not set."""
    from myrm_tui.llm.client import litellm_module

    litellm = await litellm_module()
    try:
        found = litellm.validate_environment(model=model)
    except Exception:  # a provider litellm cannot check: the first request tells
        log.debug("litellm cannot check the keys of %s", model, exc_info=True)
        return []
    missing = [k for k in found.get("missing_keys", []) if not os.environ.get(k)]
    # litellm lists each name a provider's key may have (GOOGLE_API_KEY, GEMINI_API_KEY): the one myrm
    # documents is the one to ask for.
    ours = [k for k in missing if k in {var for var, _ in KEY_DEFAULTS}]
    return ours or missing


async def key_problem(
    model: str, source: str, api_base: str | None = None, api_key: str | None = None
) -> str | None:
    """Why ``model`` cannot answer for want of a key in the environment (one line naming ``source``), or
    None. The embedded model needs none; an api base or an api key in the settings skips the check."""
    if model_kind(model) == "local" or api_base or api_key or documented_key_set(model):
        return None
    missing = await missing_keys(model)
    if missing:
        return f"{source}: {model} needs {', '.join(missing)} in the environment (not set)"
    return None
