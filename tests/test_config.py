"""Settings validated where they are read: one line per problem (file, key, expected, seen), unknown keys
with the closest key, the documented precedence, model strings as litellm reads them, bad filter files."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from myrm_tui.config import (
    PASS_THROUGH,
    ConfigError,
    Problem,
    config_problems,
    display_path,
    litellm_providers,
    load_config_file,
    model_problem,
    resolve,
)
from myrm_tui.context.filters.rules import RuleEngine


def _file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text)
    return path


def _lines(problems: list[Problem]) -> list[str]:
    return [str(p) for p in problems]


@pytest.mark.parametrize(
    ("toml", "line"),
    [
        (
            'context_window = "abc"',
            "context_window: expected an integer (0 = from the model registry, else 1000 "
            'to 10000000), got "abc"',
        ),
        (
            "context_window = 500",
            "context_window: expected an integer (0 = from the model registry, else 1000 to 10000000), "
            "got 500",
        ),
        ('allowed_commands = "git status"', 'allowed_commands: expected a list of strings, got "git status"'),
        ('allowed_commands = ["git status", 3]', "allowed_commands[1]: expected a string, got 3"),
        ("max_steps = true", "max_steps: expected an integer >= 1 and <= 100000, got true"),
        ("light_ratio = 1.5", "light_ratio: expected a number between 0 and 1, got 1.5"),
        ('approval = "always"', 'approval: expected one of "ask", "auto", got "always"'),
        (
            'prompt_mode = "tiny"',
            'prompt_mode: expected one of "full", "lean", "naked", "search", "chat", got "tiny"',
        ),
        ("keepalive = 3", "keepalive: expected true or false, got 3"),
        ("model = 5", "model: expected a string, got 5"),
        ("hooks = [3]", "hooks[0]: expected a table, got 3"),
        ("bash_timeout = 0", "bash_timeout: expected a number of seconds > 0 and <= 604800 (7 days), got 0"),
    ],
)
def test_a_bad_value_is_one_line_naming_file_key_expected_and_seen(
    tmp_path: Path, toml: str, line: str
) -> None:
    path = _file(tmp_path, toml + "\n")
    with pytest.raises(ConfigError) as err:
        resolve(load_config_file(path), {}, {}, env={})
    assert str(err.value) == f"{display_path(path)}: {line}"
    assert _lines(config_problems(path=path, env={})) == [f"{display_path(path)}: {line}"]


def test_invalid_toml_names_the_line_and_column(tmp_path: Path) -> None:
    path = _file(tmp_path, 'model = "gpt-4o"\nx = = 1\n')
    with pytest.raises(ConfigError, match=r"invalid TOML: .*\(at line 2, column 5\)$"):
        load_config_file(path)
    [problem] = config_problems(path=path, env={})
    assert problem.fatal and str(problem).startswith(f"{display_path(path)}: invalid TOML")


def test_home_is_shown_as_a_tilde(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert display_path(tmp_path / ".config" / "myrm" / "config.toml") == "~/.config/myrm/config.toml"
    assert display_path(Path("/etc/myrm.toml")) == "/etc/myrm.toml"


def test_unknown_keys_warn_with_the_closest_key_and_the_rest_applies(tmp_path: Path) -> None:
    path = _file(tmp_path, "contxt_window = 5000\nmax_steps = 7\nzzz = 1\n")
    s = resolve(load_config_file(path), {}, {}, env={})
    assert s.max_steps == 7 and s.context_window == 0
    assert _lines(config_problems(path=path, env={})) == [
        f'warning: {display_path(path)}: unknown key "contxt_window" (ignored); did you mean context_window?',
        f'warning: {display_path(path)}: unknown key "zzz" (ignored)',
    ]


def test_a_myrm_table_is_read_like_the_top_level(tmp_path: Path) -> None:
    path = _file(tmp_path, '[myrm]\nmodel = "anthropic/claude-sonnet-4-5"\ncontext_window = 64000\n')
    s = resolve(load_config_file(path), {}, {}, env={})
    assert (s.model, s.context_window, s.model_source) == (
        "anthropic/claude-sonnet-4-5",
        64000,
        "config file",
    )


def test_environment_variables_go_through_the_same_validation() -> None:
    env = {
        "MYRM_CONTEXT_WINDOW": "32000",
        "MYRM_KEEPALIVE": "false",
        "MYRM_ALLOWED_COMMANDS": '["pytest", "git status"]',
        "MYRM_SHELL_ENV_KEEP": '["GH_TOKEN", "HF_TOKEN"]',
        "MYRM_UNDO_BACKUPS_MB": "0",
    }
    s = resolve({}, {}, {}, env=env)
    assert (s.context_window, s.keepalive, s.allowed_commands) == (32000, False, ("pytest", "git status"))
    assert (s.shell_env_keep, s.undo_backups_mb) == (("GH_TOKEN", "HF_TOKEN"), 0)
    for name, raw, line in (
        (
            "MYRM_SHELL_ENV_KEEP",
            "GH_TOKEN",
            'shell_env_keep: expected a JSON list (e.g. ["GH_TOKEN"]), got "GH_TOKEN"',
        ),
        (
            "MYRM_SHELL_ENV_KEEP",
            '["GH_TOKEN", "HF_TOKEN=x"]',
            'shell_env_keep[1]: expected an environment variable\'s name like GH_TOKEN (no "=", no space), '
            'got "HF_TOKEN=x"',
        ),
        ("MYRM_UNDO_BACKUPS_MB", "-1", 'undo_backups_mb: expected an integer >= 0 and <= 16777216, got "-1"'),
    ):
        with pytest.raises(ConfigError) as err:
            resolve({}, {}, {}, env={name: raw})
        assert str(err.value) == f"{name}: {line}"
    with pytest.raises(ConfigError) as err:
        resolve({}, {}, {}, env={"MYRM_CONTEXT_WINDOW": "abc"})
    assert (
        str(err.value)
        == "MYRM_CONTEXT_WINDOW: context_window: expected an integer (0 = from the model registry, "
        'else 1000 to 10000000), got "abc"'
    )
    with pytest.raises(
        ConfigError,
        match=r'^MYRM_ALLOWED_COMMANDS: allowed_commands: expected a JSON list .*got "git status"$',
    ):
        resolve({}, {}, {}, env={"MYRM_ALLOWED_COMMANDS": "git status"})
    assert _lines(
        config_problems(
            path=Path("/nonexistent.toml"),
            env={"MYRM_MODLE": "gpt-4o", "MYRM_DB": "/x", "MYRM_HOOK_EVENT": "y"},
        )
    ) == [
        "warning: MYRM_MODLE: unknown environment variable (ignored); did you mean MYRM_MODEL?",
    ]


def test_command_line_values_are_validated_and_name_the_flag() -> None:
    with pytest.raises(ConfigError) as err:
        resolve({}, {}, {"model": "gtp-4o"}, env={})
    assert str(err.value) == '--model: litellm does not know "gtp-4o"; did you mean gpt-4o?'


def test_precedence_is_defaults_file_database_environment_command_line() -> None:
    file = {"model": "anthropic/claude-sonnet-4-5", "context_window": 10_000, "max_steps": 5}
    db = {"model": "gpt-4o", "context_window": 20_000}
    env = {"MYRM_MODEL": "ollama/qwen2.5", "MYRM_CONTEXT_WINDOW": "30000"}
    cli = {"model": "openai/gpt-4o-mini"}
    assert (resolve(file, {}, {}, env={}).model_source, resolve(file, {}, {}, env={}).context_window) == (
        "config file",
        10_000,
    )
    s = resolve(file, db, {}, env={})
    assert (s.model, s.model_source, s.context_window, s.max_steps) == ("gpt-4o", "settings", 20_000, 5)
    s = resolve(file, db, {}, env=env)  # issue 15: MYRM_MODEL lost to the database
    assert (s.model, s.model_source, s.context_window) == ("ollama/qwen2.5", "MYRM_MODEL", 30_000)
    s = resolve(file, db, cli, env=env)
    assert (s.model, s.model_source, s.context_window, s.max_steps) == (
        "openai/gpt-4o-mini",
        "--model",
        30_000,
        5,
    )
    s = resolve({}, {}, {}, env={"OPENAI_API_KEY": "k"})
    assert (s.model, s.model_source) == ("gpt-4o-mini", "$OPENAI_API_KEY")


def test_bad_values_stored_in_the_database_are_skipped_with_a_warning(tmp_path: Path) -> None:
    db = {"context_window": "abc", "model": "foo/bar", "max_steps": 9, "retired_key": 1}
    s = resolve({}, db, {}, env={})
    assert (s.context_window, s.max_steps, s.model_source) == (0, 9, "embedded default (no model configured)")
    lines = _lines(config_problems(db, path=tmp_path / "none.toml", env={}))
    assert all(
        line.startswith("warning: database settings: ") and line.endswith("(ignored)") for line in lines
    )
    assert len(lines) == 2 and "context_window" in lines[0] and 'unknown provider "foo"' in lines[1]


def test_thresholds_must_be_ordered() -> None:
    with pytest.raises(
        ConfigError,
        match=r"^config file: expected light_ratio <= full_ratio <= emergency_ratio, got light_ratio = "
        r"0.8 \(config file\)",
    ):
        resolve({"light_ratio": 0.8}, {}, {}, env={})


def test_every_prompt_mode_of_the_library_is_accepted() -> None:
    from myrm_tui.agent.prompts import MODES

    assert [resolve({"prompt_mode": m}, {}, {}, env={}).prompt_mode for m in MODES] == list(MODES)


# -- model strings ----------------------------------------------------------------------------------------
ACCEPTED = [
    "gpt-4o",
    "o3",
    "claude-sonnet-4-5",
    "anthropic/claude-sonnet-4-5",
    "openai/anything-at-all",
    "openai/qwen2.5",
    "ollama/qwen2.5",
    "ollama_chat/llama3.1",
    "hosted_vllm/my-model",
    "openrouter/anthropic/claude-3.5-sonnet",
    "gemini/gemini-2.5-flash",
    "deepseek/deepseek-chat",
    "bedrock/anthropic.claude-3",
    "azure/my-deployment",
]
REFUSED = ["gtp-4o", "qwen2.5", "foo/bar", "anthropc/claude-sonnet-4-5", "meta-llama/Llama-3-8B", "claude-9"]


def test_model_strings_litellm_accepts_are_accepted_and_typos_are_refused() -> None:
    import litellm

    def litellm_accepts(model: str) -> bool:
        try:
            litellm.get_llm_provider(model)
        except Exception:
            return False
        return True

    for model in ACCEPTED:
        assert model_problem(model) is None, model
        assert litellm_accepts(model), model
    for model in REFUSED:
        assert model_problem(model) is not None, model
        assert not litellm_accepts(model), model  # never refuse what litellm would run
    assert model_problem("local/smollm2-135m") is None and model_problem("replay/some-recording") is None
    assert model_problem("local/other") == 'the embedded model is local/smollm2-135m, got "local/other"'
    assert model_problem("openai/") == 'nothing after openai/ in "openai/": write openai/<model>'
    assert model_problem("gpt 4o") == 'a model string has no spaces, got "gpt 4o"'
    assert (
        model_problem("anthropc/claude-sonnet-4-5")
        == 'unknown provider "anthropc" in "anthropc/claude-sonnet-4-5"; did you mean '
        "anthropic/claude-sonnet-4-5?"
    )
    assert "openai/qwen2.5 with --api-base" in (model_problem("qwen2.5") or "")
    # A bare name on an endpoint litellm knows is routed by the endpoint.
    assert model_problem("llama3-8b-8192", "https://api.groq.com/openai/v1") is None
    assert model_problem("llama3-8b-8192", "http://127.0.0.1:11434/v1") is not None


def test_the_static_provider_list_is_litellms() -> None:
    import json

    import litellm

    registry = Path(litellm.__file__).parent / "llms" / "openai_like" / "providers.json"
    expected = {p.value if hasattr(p, "value") else str(p) for p in litellm.provider_list} | set(
        json.loads(registry.read_text())
    )
    assert litellm_providers() == frozenset(expected | {"local", "replay"})


def test_the_settings_check_does_not_import_litellm(tmp_path: Path) -> None:
    import subprocess
    import sys

    code = (
        "import sys; from myrm_tui.config import config_problems; from pathlib import Path; "
        "p = config_problems(cli={'model': 'gtp-4o'}, path=Path(sys.argv[1]), env={}); "
        "print(len(p), 'litellm' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "none.toml")], capture_output=True, text=True, timeout=60
    )
    assert out.stdout.split() == ["1", "False"], out.stderr


# -- the app's own settings -------------------------------------------------------------------------------
async def test_a_setting_saved_in_the_app_wins_over_the_environment_for_the_run(
    tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from myrm_tui.app.controller import Controller

    monkeypatch.setenv("MYRM_MODEL", "ollama/qwen2.5")
    c = Controller(tmp_path / "c.db", workspace, {})
    await c.open()
    try:
        await c.reload_settings()
        assert c.settings is not None and c.settings.model == "ollama/qwen2.5"
        await c.save_settings({"model": "anthropic/claude-sonnet-4-5"})
        assert c.settings.model == "anthropic/claude-sonnet-4-5"  # /model X takes effect now
        await c.reload_settings()
        assert c.settings.model == "anthropic/claude-sonnet-4-5"  # and stays for this run
    finally:
        await c.close()
    c = Controller(tmp_path / "c.db", workspace, {})
    await c.open()
    try:
        await c.reload_settings()
        assert (
            c.settings is not None and c.settings.model == "ollama/qwen2.5"
        )  # a new run: the environment outranks the database
    finally:
        await c.close()


# -- filter rule files ------------------------------------------------------------------------------------
def test_bad_filter_files_and_rules_are_skipped_with_one_line_each(tmp_path: Path) -> None:
    d = tmp_path / "filters"
    d.mkdir()
    (d / "a_broken.yaml").write_text("rules:\n  - name: x\n    command: [unclosed\n")
    (d / "b_list.yaml").write_text("- just\n- a list\n")
    (d / "c_mixed.yaml").write_text(
        "rules:\n"
        "  - name: good\n    command: '^make'\n    drop: ['^make\\[']\n"
        "  - name: badregex\n    command: '('\n"
        "  - name: badcount\n    command: '^x'\n    max_lines: lots\n"
        "  - name: nocommand\n    drop: ['a']\n"
        "  - just a string\n"
    )
    (d / "d_binary.yml").write_bytes(b"\xff\xfe\x00rules")
    engine = RuleEngine.from_dirs([d])
    assert set(engine.rules) == {"good"}
    assert engine.apply("make all", "make[1]: Entering\nok\nmake[2]: Leaving") is not None
    p = engine.problems
    assert len(p) == 7 and all("\n" not in line and line.endswith("(skipped)") for line in p)
    assert (
        p[0] == f"{d / 'a_broken.yaml'}: not valid YAML at line 4, column 1: expected ',' or ']', but got "
        "'<stream end>' (skipped)"
    )
    assert p[1] == f"{d / 'b_list.yaml'}: expected a mapping with a list under 'rules:' (skipped)"
    assert p[2].startswith(f"{d / 'c_mixed.yaml'}: bad filter rule 'badregex': command: bad regex '('")
    assert (
        p[3] == f"{d / 'c_mixed.yaml'}: bad filter rule 'badcount': max_lines: expected an integer >= 0, "
        "got 'lots' (skipped)"
    )
    assert p[4] == f"{d / 'c_mixed.yaml'}: bad filter rule 'nocommand': missing 'command' (skipped)"
    assert p[5] == f"{d / 'c_mixed.yaml'}: bad filter rule number 5: expected a mapping, got str (skipped)"
    assert p[6].startswith(f"{d / 'd_binary.yml'}: cannot read it ('utf-8' codec can't decode byte 0xff")


def test_a_malformed_workspace_filter_does_not_stop_the_pipeline(workspace: Path) -> None:
    """A trusted folder's rules are read (a broken file skipped); an untrusted folder's are not read."""
    from myrm_tui.context.pipeline import build_pipeline
    from myrm_tui.paths import prompts_dir, user_filter_dirs

    rules = workspace / ".myrm" / "filters"
    rules.mkdir(parents=True)
    (rules / "mine.yaml").write_text("rules: {name: [\n")
    assert rules not in user_filter_dirs(workspace, trusted=False)
    assert rules in user_filter_dirs(workspace, trusted=True)
    build_pipeline(prompts_dir(), user_filter_dirs(workspace, trusted=True))  # a traceback before the fix
    engine = RuleEngine.from_dirs([prompts_dir() / "filters", rules])
    assert (
        "apt" in engine.rules and len(engine.problems) == 1 and str(rules / "mine.yaml") in engine.problems[0]
    )


def test_the_pass_through_settings_are_the_unconstrained_str_and_bool_fields() -> None:
    """``validate_values`` skips pydantic for these keys: exactly the str and bool fields that carry no
    constraint (a field given a constraint later must leave the set, or its constraint would be skipped)."""
    from myrm_tui.config import _annotated, _field_types, setting_keys

    types = _field_types()
    expected = {k for k in setting_keys() if types[k] in (str, bool) and k not in _annotated()}
    assert expected == PASS_THROUGH


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(sorted(PASS_THROUGH)),
    st.one_of(st.text(), st.booleans()),
)
def test_a_pass_through_setting_gets_what_pydantic_would_return(key: str, value: str | bool) -> None:
    """The skipped validation changes nothing: a value of the field's own type comes back as pydantic
    returns it, and any other value still goes through pydantic (and its errors)."""
    from pydantic import ValidationError

    from myrm_tui.config import _adapter, validate_values

    got, problems = validate_values({key: value}, "test")
    try:
        expected = {key: _adapter(key).validate_python(value)}
    except ValidationError:
        assert got == {} and len(problems) == 1 and problems[0].fatal
    else:
        assert got == expected and problems == []


def test_mcp_servers_written_as_codex_writes_them_load_as_the_list(tmp_path: Path) -> None:
    """``[mcp_servers.NAME]`` tables (Codex's config.toml, copied over) were "expected a list of tables"
    and myrm refused to start; they are the same servers as the list form, each named by its table."""
    from myrm_tui.agent.mcp_client import configs_from

    codex = tmp_path / "codex.toml"
    codex.write_text(
        '[mcp_servers.docs]\ncommand = "npx"\nargs = ["-y", "docs-server"]\nenv = { TOKEN = "t" }\n\n'
        '[mcp_servers.remote]\nurl = "http://127.0.0.1:8000/mcp"\n'
    )
    listed = tmp_path / "list.toml"
    listed.write_text(
        'mcp_servers = [{ name = "docs", command = "npx", args = ["-y", "docs-server"], '
        'env = { TOKEN = "t" } }, { name = "remote", url = "http://127.0.0.1:8000/mcp" }]\n'
    )
    assert config_problems(env={}, path=codex) == []
    loaded = resolve(load_config_file(codex), {}, {}, env={})
    assert loaded.mcp_servers == resolve(load_config_file(listed), {}, {}, env={}).mcp_servers
    servers, problems = configs_from(loaded.mcp_servers)
    assert problems == [] and [(c.name, c.command, c.url) for c in servers] == [
        ("docs", "npx", ""),
        ("remote", "", "http://127.0.0.1:8000/mcp"),
    ]
