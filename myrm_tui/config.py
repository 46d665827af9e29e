"""Typed settings and how they are resolved: defaults < config file (TOML) < database < environment < CLI.

The model: an explicit ``--model`` wins, then the settings stored in the database, then the config
file, then ``MYRM_MODEL``, then a provider key found in the environment; with none of these the
embedded model runs (and the UI says so).
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from myrm_tui.llm.local import DEFAULT_LOCAL_MODEL

# Provider key in the environment -> the model used when nothing else is configured.
KEY_DEFAULTS: tuple[tuple[str, str], ...] = (
    ("ANTHROPIC_API_KEY", "anthropic/claude-sonnet-4-5"),
    ("OPENAI_API_KEY", "gpt-4o-mini"),
    ("GEMINI_API_KEY", "gemini/gemini-2.5-flash"),
    ("DEEPSEEK_API_KEY", "deepseek/deepseek-chat"),
)
LITE_MODELS = {
    "anthropic": "anthropic/claude-haiku-4-5",
    "openai": "gpt-4o-mini",
    "gemini": "gemini/gemini-2.5-flash-lite",
}


@dataclass(frozen=True)
class Settings:
    model: str = ""
    api_base: str | None = None
    api_key: str | None = None
    summarizer_model: str = ""  # "" = the provider's lite model (else the main model); "extractive" = no LLM
    prompt_mode: str = "full"
    context_window: int = 0  # 0 = from litellm's registry
    max_output_tokens: int = 4096
    max_steps: int = 40
    approval: str = "ask"  # "ask" | "auto"
    allowed_commands: tuple[str, ...] = ()
    bash_timeout: float = 120.0
    max_user_tokens: int = 120_000  # gateway hygiene
    keepalive: bool = True
    preheat: bool = True  # warm the provider cache after start-up and compaction
    max_subagent_result_tokens: int = 2_000
    mcp_servers: tuple[dict[str, Any], ...] = ()  # [{name, command, args, env} | {name, url}]
    mcp_max_output_chars: int = 20_000  # L1: an MCP result over this goes to the vault with a pointer
    hooks: tuple[dict[str, Any], ...] = ()  # [{event, command, matcher, timeout}], see agent/hooks.py
    hook_max_output_tokens: int = 2_500  # L6: hook output over this goes to the vault with a preview
    job_output_chars: int = 30_000  # L7: new background-job output over this goes to the vault
    keepalive_idle_seconds: float = 240.0
    light_ratio: float = 0.50
    full_ratio: float = 0.70
    emergency_ratio: float = 0.90
    fork_suggest_ratio: float = 0.75
    summarizer_inactivity_seconds: float = 90.0
    summarizer_total_seconds: float = 600.0
    model_source: str = field(default="default", compare=False)

    @property
    def is_local_default(self) -> bool:
        return self.model == DEFAULT_LOCAL_MODEL

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("api_key", None)  # keys are never written to the database
        d.pop("model_source", None)
        return d

    def merged(self, values: dict[str, Any], source: str = "") -> Settings:
        known = {f.name for f in fields(self)}
        clean: dict[str, Any] = {}
        for k, v in values.items():
            if k not in known or v is None or k == "model_source":
                continue
            clean[k] = tuple(v) if k in ("allowed_commands", "mcp_servers", "hooks") else v
        out = replace(self, **clean)
        if source and clean.get("model"):
            out = replace(out, model_source=source)
        return out


def load_config_file(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    with path.open("rb") as f:
        data = tomllib.load(f)
    return dict(data.get("myrm", data))


def resolve(file_values: dict[str, Any], db_values: dict[str, Any], cli: dict[str, Any], env: dict[str, str] | None = None) -> Settings:
    env = dict(os.environ) if env is None else env
    s = Settings().merged(file_values, "config file").merged(db_values, "settings")
    if env.get("MYRM_MODEL") and not db_values.get("model"):
        s = s.merged({"model": env["MYRM_MODEL"]}, "MYRM_MODEL")
    if env.get("MYRM_API_BASE") and not s.api_base:
        s = s.merged({"api_base": env["MYRM_API_BASE"]})
    s = s.merged(cli, "--model")
    if not s.model:
        for key, model in KEY_DEFAULTS:
            if env.get(key):
                return s.merged({"model": model}, f"${key}")
        s = replace(s, model=DEFAULT_LOCAL_MODEL, model_source="embedded default (no model configured)")
    return s


def summarizer_model(s: Settings) -> str:
    if s.summarizer_model:
        return s.summarizer_model
    from myrm_tui.context.models import family

    return LITE_MODELS.get(family(s.model), s.model) if not s.api_base else s.model
