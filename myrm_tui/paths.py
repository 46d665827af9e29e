"""Where things live: the database (platformdirs), the prompts folder, user config and filter folders."""

from __future__ import annotations

import os
from pathlib import Path

from platformdirs import user_config_dir, user_data_dir

APP = "myrm"


def prompts_dir() -> Path:
    env = os.environ.get("MYRM_PROMPTS_DIR")
    if env:
        return Path(env)
    return Path(__file__).resolve().parent.parent / "prompts"


def default_db_path() -> Path:
    env = os.environ.get("MYRM_DB")
    return Path(env) if env else Path(user_data_dir(APP)) / "myrm.db"


def config_file() -> Path:
    env = os.environ.get("MYRM_CONFIG")
    return Path(env) if env else Path(user_config_dir(APP)) / "config.toml"


def user_filter_dirs(workspace: Path) -> list[Path]:
    return [Path(user_config_dir(APP)) / "filters", workspace / ".myrm" / "filters"]
