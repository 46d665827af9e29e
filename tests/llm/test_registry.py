"""Model windows read from litellm's registry file agree with litellm's own answer."""

from __future__ import annotations

import json

from myrm_tui.llm.registry import PLAIN_PROVIDERS, bundled_window, model_info
from myrm_tui.offline import litellm_registry_file


def _litellm_window(model: str) -> int | None:
    info = model_info(model) or {}
    return info.get("max_input_tokens") or info.get("max_tokens")


def test_every_window_read_from_the_file_is_litellms() -> None:
    """Every model of the plain providers in the registry, by its name and with its provider's prefix."""
    path = litellm_registry_file()
    assert path is not None
    registry = json.loads(path.read_text(encoding="utf-8"))
    names = [
        n for n, e in registry.items() if isinstance(e, dict) and e.get("litellm_provider") in PLAIN_PROVIDERS
    ]
    assert len(names) > 100
    checked = 0
    for name in names:
        provider = registry[name]["litellm_provider"]
        for model in {name, f"{provider}/{name.removeprefix(provider + '/')}"}:
            got = bundled_window(model)
            if got is not None:
                assert got == _litellm_window(model), model
                checked += 1
    assert checked >= len(names)


def test_a_model_of_another_provider_or_unknown_is_left_to_litellm() -> None:
    assert bundled_window("openai/gpt-4o") == 128_000
    assert bundled_window("anthropic/gpt-4o") is None  # a name of another provider's
    assert bundled_window("bedrock/us.anthropic.claude-3-5-sonnet-20241022-v2:0") is None
    assert bundled_window("ollama/qwen2.5") is None
    assert bundled_window("openai/no-such-model") is None
