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
def litellm_root() -> Path | None:
    """litellm's package folder, found without running it (its import takes seconds)."""
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def litellm_tokenizers_dir() -> Path | None:
    root = litellm_root()
    path = root / "litellm_core_utils" / "tokenizers" if root else None
    return path if path is not None and path.is_dir() else None


def litellm_registry_file() -> Path | None:
    """litellm's bundled model registry (windows, prices): the one it reads offline."""
    root = litellm_root()
    return root / "model_prices_and_context_window_backup.json" if root else None


def configure_offline_env() -> None:
    """Idempotent; never overrides a value the user set."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("LITELLM_TELEMETRY", "False")
    tok = litellm_tokenizers_dir()
    if tok is not None:
        os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(tok))
