"""A settings file is checked, never a crash: whatever types its values have (hook and MCP-server tables
included) and however deep it nests, it gives problems (one line each, a bad value fatal) or settings whose
hooks and MCP servers load, each bad entry skipped with a line."""

from __future__ import annotations

import json
import math
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from myrm_tui.agent.hooks import HookRunner
from myrm_tui.agent.mcp_client import configs_from
from myrm_tui.config import ConfigError, config_problems, load_config_file, resolve, setting_keys
from myrm_tui.context.tokens import TokenCounter


def toml(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf") if math.isinf(v) else repr(v)
    if isinstance(v, int | str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(toml(x) for x in v) + "]"
    return "{" + ", ".join(f"{json.dumps(k)} = {toml(x)}" for k, x in v.items()) + "}"


_SCALAR = st.one_of(st.booleans(), st.integers(), st.floats(), st.text(max_size=6))
_VALUE = st.recursive(
    _SCALAR,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
_ENTRY = st.dictionaries(
    st.sampled_from(["event", "command", "matcher", "timeout", "name", "url", "args", "env", "x"]),
    st.one_of(_VALUE, st.sampled_from(["pre_tool_use", "post_tool_use", "true", "(a|aa)+", "srv"])),
    max_size=6,
)
_LINES = st.lists(
    st.one_of(
        st.tuples(st.sampled_from(sorted(setting_keys())), _VALUE).map(lambda kv: f"{kv[0]} = {toml(kv[1])}"),
        st.tuples(st.sampled_from(["hooks", "mcp_servers"]), st.lists(_ENTRY, max_size=3)).map(
            lambda kv: f"{kv[0]} = {toml(kv[1])}"
        ),
        st.integers(1, 3_000).map(lambda n: "allowed_commands = " + "[" * n + "]" * n),
        st.integers(1, 3_000).map(lambda n: "hooks = " + "{a = " * n + "1" + "}" * n),
    ),
    max_size=5,
)


# make test runs the named files and a fixed 60 generated ones; the long twin 200 new ones.
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines=_LINES)
@example(lines=["allowed_commands = " + "[" * 2_000 + "]" * 2_000])
@example(lines=['hooks = [{event = "pre_tool_use", command = "x", timeout = [1]}]'])
@example(lines=['mcp_servers = [{name = "s", command = "x", env = 5}]', 'mcp_servers = [{name = "s"}]'])
def test_any_settings_file_is_problems_or_settings_that_load(lines: list[str]) -> None:
    problems_or_settings_that_load(lines)


@pytest.mark.long
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines=_LINES)
def test_long_any_settings_file_is_problems_or_settings_that_load(lines: list[str]) -> None:
    """The same property over 200 settings files (``make test-long``)."""
    problems_or_settings_that_load(lines)


def problems_or_settings_that_load(lines: list[str]) -> None:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "config.toml"
        # a key given twice is a TOML error: the file tells that too
        path.write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogatepass")
        problems = config_problems(env={}, path=path)
        assert all("\n" not in str(p) for p in problems)
        try:
            s = resolve(load_config_file(path), {}, {}, env={})
        except ConfigError:
            assert any(p.fatal for p in problems)
            return
    assert not any(p.fatal for p in problems)
    hooks, hook_problems = HookRunner.from_settings(
        s.hooks, workspace=Path("/"), vault=None, counter=TokenCounter(), session_id="s"
    )
    servers, server_problems = configs_from(s.mcp_servers)
    assert len(hooks.specs) + len(hook_problems) == len(s.hooks)
    assert len(servers) + len(server_problems) == len(s.mcp_servers)
    assert all("\n" not in p for p in [*hook_problems, *server_problems])
