"""The plain providers' models in litellm's bundled registry file (their provider and window), read
without importing litellm or anything of myrm's that does: the error messages (``llm/errors.py``) ask it
which variable a refused key was read from."""

from __future__ import annotations

import json
import logging
from functools import cache

from myrm_tui.offline import litellm_registry_file

log = logging.getLogger(__name__)


# Providers whose models litellm looks up by their plain name (``openai/gpt-4o`` is ``gpt-4o``): their
# windows are read from the bundled registry file without importing litellm (seconds, ~150 MB), so the
# ring's first figure does not wait for it. Other providers resolve names their own way (regional
# aliases, base models): litellm answers for them.
PLAIN_PROVIDERS = frozenset({"openai", "anthropic", "gemini", "deepseek"})


@cache
def bundled_windows() -> dict[str, tuple[str, int]]:
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
    hit = bundled_windows().get(model)
    return hit[0] if hit is not None else None
