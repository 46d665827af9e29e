"""Offline environment for litellm and tiktoken, set before either is imported.

litellm otherwise fetches its model-cost map from the network on import, and tiktoken downloads its
BPE files on first use. litellm ships both (cost map and cl100k/o200k files), so we point at those.
"""

from __future__ import annotations

import importlib.util
import os
from functools import cache
from pathlib import Path


@cache
def litellm_tokenizers_dir() -> Path | None:
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "litellm_core_utils" / "tokenizers"
    return path if path.is_dir() else None


def configure_offline_env() -> None:
    """Idempotent; never overrides a value the user set."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("LITELLM_TELEMETRY", "False")
    tok = litellm_tokenizers_dir()
    if tok is not None:
        os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(tok))
