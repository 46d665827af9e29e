"""One builder of the context settings: the execution fingerprint hashes the very ``ContextConfig`` the
session runs with, so a setting that changes the pipeline's thresholds always changes the fingerprint."""

from __future__ import annotations

import inspect
import json
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

from myrm_tui.agent.factory import build_agent
from myrm_tui.agent.fingerprint import execution_parameters
from myrm_tui.agent.model_target import context_config
from myrm_tui.config import Settings
from myrm_tui.context.config import (
    DEFAULT_REPLY_TOKENS,
    ContextConfig,
    UserContextSettings,
    budget_config,
)
from myrm_tui.store.db import Store
from myrm_tui.testing.emulator import ProviderEmulator
from tests.helpers import openai_settings


async def test_the_fingerprint_hashes_the_context_settings_the_session_runs_with(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    settings = openai_settings(
        emulator, max_output_tokens=9_000, full_ratio=0.7, auto_compact=False, cache_ttl_seconds=60.0
    )
    row = await store.create_session(workspace=str(workspace))
    agent = await build_agent(store, row.id, settings, workspace, window=32_000)
    try:
        params = execution_parameters(settings, agent.session.window)
        ran = {f.name: getattr(agent.session.config, f.name) for f in fields(ContextConfig)}
        hashed = {f.name: params[f"context.{f.name}"] for f in fields(ContextConfig)}
        assert hashed == ran
        assert ran["reserve_output_tokens"] == 8_000  # 9,000 capped at a quarter of the window
        assert params["input_budget"] == agent.session.config.input_budget
        assert params["tail_budget"] == agent.session.config.tail_budget
    finally:
        await agent.close()


def _declaring(cls: type, name: str) -> type:
    """The class whose body declares field ``name`` (the first in ``cls``'s MRO to annotate it)."""
    return next(k for k in cls.__mro__ if name in inspect.get_annotations(k))


def test_no_setting_is_declared_in_both_settings_and_the_context_config() -> None:
    own = {cls: set(inspect.get_annotations(cls)) for cls in (Settings, ContextConfig)}
    assert not own[Settings] & own[ContextConfig]
    shared = {f.name for f in fields(Settings)} & {f.name for f in fields(ContextConfig)}
    # the pipeline's user settings: one declaration, one default, that both inherit
    assert shared == {f.name for f in fields(UserContextSettings)}
    for name in shared:
        assert _declaring(Settings, name) is _declaring(ContextConfig, name) is UserContextSettings, name


# Every figure a ContextConfig gives (its fields and its derived thresholds), over windows from 4K to 1M,
# for the live agent's builder and the bench's: recorded from the code before the five settings shared
# by ``Settings`` and ``ContextConfig`` got one declaration, so moving them changed no number. Re-record
# (``python -m tests.agent.test_context_settings_builder``) only for a change meant to move thresholds.
THRESHOLDS = Path(__file__).with_name("context_thresholds.json")
WINDOWS: tuple[int, ...] = (4_000, 4_096, 6_000, 8_000, 8_192, 12_000, 16_000, 16_384, 24_000, 32_000)
WINDOWS += (32_768, 48_000, 64_000, 100_000, 128_000, 131_072, 200_000, 256_000, 400_000, 500_000)
WINDOWS += (1_000_000, 1_048_576)
SCHEMA_TOKENS = (0, 3_000)
VARIANTS: dict[str, dict[str, Any]] = {
    "defaults": {},
    "custom": {
        "light_ratio": 0.3,
        "full_ratio": 0.6,
        "emergency_ratio": 0.8,
        "auto_compact": False,
        "cache_ttl_seconds": 60.0,
        "max_output_tokens": 9_000,
    },
    "thinking": {"model": "anthropic/claude-sonnet-4-5", "thinking_budget_tokens": 2_048},
}


def _figures(config: ContextConfig) -> dict[str, Any]:
    names = [f.name for f in fields(ContextConfig)]
    names += [n for n in dir(ContextConfig) if isinstance(getattr(ContextConfig, n), property)]
    return {n: sorted(v) if isinstance(v := getattr(config, n), frozenset) else v for n in sorted(names)}


def _all_figures() -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for window in WINDOWS:
        for schema in SCHEMA_TOKENS:
            for name, values in VARIANTS.items():
                live = context_config(Settings(**values), window)
                # as the session does once its tools are bound (AgentSession.config_now)
                out[f"live {name} {window} {schema}"] = _figures(replace(live, overhead_tokens=schema))
            bench = budget_config(window, DEFAULT_REPLY_TOKENS, schema)
            out[f"bench {window} {schema}"] = _figures(bench)
    return out


def test_the_context_figures_are_those_recorded_over_windows_4k_to_1m() -> None:
    recorded = json.loads(THRESHOLDS.read_text())
    now = _all_figures()
    assert now.keys() == recorded["cases"].keys()
    for case, figures in now.items():
        # a figure added since is not a change of the recorded ones; a removed or renamed one is
        was = dict(zip(recorded["names"], recorded["cases"][case], strict=True))
        assert {n: figures.get(n, "(gone)") for n in was} == was, case


def _record() -> None:
    """One line per case: the figures in the order of ``names``."""
    cases = _all_figures()
    names = sorted(next(iter(cases.values())))
    lines = [f"  {json.dumps(c)}: {json.dumps([f[n] for n in names])}" for c, f in sorted(cases.items())]
    body = ",\n".join(lines)
    THRESHOLDS.write_text(f'{{"names": {json.dumps(names)},\n"cases": {{\n{body}\n}}}}\n')


if __name__ == "__main__":
    _record()
