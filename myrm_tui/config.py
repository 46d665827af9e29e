"""Typed settings, validated where they are read, and how they are resolved.

Order (later wins): defaults < config file (TOML) < settings stored in the database (``/model``, F2)
< environment (``MYRM_<KEY>``) < command line. With no model from any of these, a provider key found
in the environment picks that provider's default model; with none, the embedded model runs.

Every layer goes through one pydantic ``TypeAdapter`` of ``Settings``: a bad value is a ``Problem``
naming where it came from, the key, what was expected and what was seen. Bad values in the config
file, the environment or on the command line are fatal (``ConfigError``, exit code 2 in the CLI);
bad values stored in the database are skipped with a warning (the app wrote them, the user cannot
easily edit them). Unknown keys are warnings with the closest valid key.
"""

from __future__ import annotations

import difflib
import functools
import json
import math
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, get_args, get_origin
from urllib.parse import urlsplit

from myrm_tui.context.config import DEFAULT_REPLY_TOKENS, UserContextSettings
from myrm_tui.llm.local import DEFAULT_LOCAL_MODEL
from myrm_tui.offline import litellm_registry_file, litellm_root

if TYPE_CHECKING:
    from pydantic import TypeAdapter

# Provider key in the environment -> the model used when nothing else is configured.
KEY_DEFAULTS: tuple[tuple[str, str], ...] = (
    ("ANTHROPIC_API_KEY", "anthropic/claude-sonnet-4-5"),
    ("OPENAI_API_KEY", "gpt-4o-mini"),
    ("GEMINI_API_KEY", "gemini/gemini-2.5-flash"),
    ("DEEPSEEK_API_KEY", "deepseek/deepseek-chat"),
)
MIN_WINDOW = 1_000  # ContextConfig refuses smaller windows
# Sane upper bounds: the largest windows on offer hold about 10M tokens; beyond these a value is a typo
# (an extra zero) that would make myrm plan for a window no model has, or wait for days.
MAX_WINDOW = 10_000_000
MAX_TOKENS = 10_000_000
MAX_STEPS = 100_000
MAX_SECONDS = 7 * 24 * 3600.0
# MYRM_* variables that are not settings: paths, and what hooks are given. Never "did you mean"-ed.
OTHER_ENV = frozenset(
    {"MYRM_DB", "MYRM_CONFIG", "MYRM_PROMPTS_DIR", "MYRM_HOOK_EVENT", "MYRM_SESSION_ID", "MYRM_TOOL_NAME"}
)
CLI_FLAGS = {"model": "--model", "api_base": "--api-base", "approval": "--yes", "trust_workspace": "--trust"}


@dataclass(frozen=True)
class Expect:
    """What a field holds, in the words of an error message (``expected <text>``)."""

    text: str


MIN_THINKING_BUDGET = 1_024  # Anthropic refuses a smaller thinking budget


def _check_thinking_budget(v: int) -> int:
    if v < 0 or 0 < v < MIN_THINKING_BUDGET:
        raise ValueError("budget too small")
    if v > MAX_TOKENS:
        raise ValueError("budget too large")
    return v


def _check_window(v: int) -> int:
    if v and v < MIN_WINDOW:
        raise ValueError("window too small")
    if v > MAX_WINDOW:
        raise ValueError("window too large")
    return v


@functools.cache
def _annotated() -> dict[str, Any]:
    """The pydantic constraints of the fields, built on first validation (pydantic costs ~80 ms to import)."""
    from pydantic import AfterValidator, BeforeValidator, Field

    def no_bool(v: Any) -> Any:  # lax mode takes true for 1; a TOML boolean for a number is a mistake
        if isinstance(v, bool):
            raise ValueError("a boolean")
        return v

    def finite(v: float) -> float:
        if not math.isfinite(v):
            raise ValueError("not finite")
        return v

    def count(minimum: int, maximum: int = MAX_TOKENS) -> Any:
        return Annotated[
            int,
            BeforeValidator(no_bool),
            Field(ge=minimum, le=maximum),
            Expect(f"an integer >= {minimum} and <= {maximum}"),
        ]

    def seconds() -> Any:
        return Annotated[
            float,
            BeforeValidator(no_bool),
            AfterValidator(finite),
            Field(gt=0, le=MAX_SECONDS),
            Expect(f"a number of seconds > 0 and <= {MAX_SECONDS:.0f} (7 days)"),
        ]

    def prompt_mode(v: str) -> str:
        from myrm_tui.agent.prompts import MODES  # imported only when a mode is set

        if v not in MODES:
            raise ValueError("expected one of " + ", ".join(json.dumps(m) for m in MODES))
        return v

    def endpoint(v: str | None) -> str | None:
        # "localhost:11434/v1" (the scheme left out) reached the provider as a path and failed there with
        # "OpenAIException - /11434/v1/chat/completions", after a session was made
        if v:
            parts = urlsplit(v)
            # guard: an-endpoint-that-is-not-an-http-url
            if parts.scheme not in ("http", "https") or not parts.netloc:
                raise ValueError("not an http(s) URL")
        return v

    def named_tables(v: Any) -> Any:
        # Codex's config.toml names each server by its table: [mcp_servers.docs] command = "…"
        if isinstance(v, Mapping) and v and all(isinstance(t, Mapping) for t in v.values()):
            return [{"name": name, **table} for name, table in v.items()]
        return v

    def env_name(v: str) -> str:
        # a name no variable can have ("GH_TOKEN=x", "GH TOKEN", "") keeps nothing: a typo, said at once
        if not v or re.search(r"[=\s\x00]", v):
            raise ValueError('expected an environment variable\'s name like GH_TOKEN (no "=", no space)')
        return v

    def ratio() -> Any:
        return Annotated[
            float, BeforeValidator(no_bool), Field(gt=0, lt=1), Expect("a number between 0 and 1")
        ]

    return {
        "prompt_mode": Annotated[str, AfterValidator(prompt_mode)],
        "api_base": Annotated[
            str | None,
            AfterValidator(endpoint),
            Expect("an http:// or https:// URL (e.g. http://localhost:11434/v1)"),
        ],
        "context_window": Annotated[
            int,
            BeforeValidator(no_bool),
            Field(ge=0),
            AfterValidator(_check_window),
            Expect(f"an integer (0 = from the model registry, else {MIN_WINDOW} to {MAX_WINDOW})"),
        ],
        "max_output_tokens": count(1),
        "max_steps": count(1, MAX_STEPS),
        "repeat_limit": count(0, MAX_STEPS),
        "max_user_tokens": count(1),
        "max_subagent_result_tokens": count(1),
        "mcp_max_output_chars": count(1),
        "hook_max_output_tokens": count(1),
        "job_output_chars": count(1),
        "bash_timeout": seconds(),
        # a shell command's resource limits (agent/limits.py); 0 = none of that kind
        "limit_processes": count(0, 4_194_304),  # the kernel's largest pid_max
        "limit_memory_mb": count(0, 1 << 24),  # 16 TiB
        "limit_file_size_mb": count(0, 1 << 24),
        "undo_backups_mb": count(0, 1 << 24),
        "keepalive_idle_seconds": seconds(),
        "summarizer_inactivity_seconds": seconds(),
        "summarizer_total_seconds": seconds(),
        "light_ratio": ratio(),
        "full_ratio": ratio(),
        "emergency_ratio": ratio(),
        "fork_suggest_ratio": ratio(),
        "cache_ttl_seconds": seconds(),
        "thinking_budget_tokens": Annotated[
            int,
            BeforeValidator(no_bool),
            AfterValidator(_check_thinking_budget),
            Expect(f"an integer (0 = off, else {MIN_THINKING_BUDGET} to {MAX_TOKENS})"),
        ],
        "shell_env_keep": tuple[Annotated[str, AfterValidator(env_name)], ...],
        "mcp_servers": Annotated[
            tuple[dict[str, Any], ...],
            BeforeValidator(named_tables),
            Expect("a list of tables, or one table a server ([mcp_servers.NAME], as Codex writes them)"),
        ],
    }


DEFAULT_FILE_SIZE_MB = 8192  # a shell command's largest file (``limit_file_size_mb``): a model's weights fit


def processes_for(cpus: int | None) -> int:
    """The default bound of a shell command's processes and threads together (``limit_processes``): 256 a
    CPU, at least 4,096. A fixed 1,024 would stop a parallel build on a big machine (a JVM runs ~20
    threads, Maven ``-T 1C`` forks one or more a core) while a fork bomb is still stopped far below what
    the kernel allows a user."""
    return max(4096, 256 * (cpus or 1))


def half_the_memory_mb() -> int:
    """Half this machine's memory in MiB, at least 1 GiB: the default bound of a shell command's process
    (``limit_memory_mb``). A fixed 4 GiB would stop real work on a big machine (a large link, a test
    that loads a model, a JVM given a large heap); half still leaves the machine the other half."""
    try:
        total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError):  # a system that does not say
        return 4096
    return max(1024, total // 2 // (1 << 20))


@dataclass(frozen=True)
class Settings(UserContextSettings):
    """Every setting; the context pipeline's (the level ratios, ``auto_compact``, ``cache_ttl_seconds``)
    are inherited from ``UserContextSettings``, declared once on the pipeline's side."""

    model: str = ""
    api_base: str | None = None
    api_key: str | None = None
    summarizer_model: str = ""  # "" = the provider's lite model (else the main model); "extractive" = no LLM
    prompt_mode: str = "full"  # one of agent/prompts.py:MODES
    context_window: int = 0  # 0 = from litellm's registry
    max_output_tokens: int = DEFAULT_REPLY_TOKENS
    max_steps: int = 40
    # the same tool call (same arguments, same result) this many times in a row asks the user before it runs
    # again; with no one to ask (``myrm ask``) the model is told once, then the turn stops. 0 = off
    # (agent/repeat_guard.py)
    repeat_limit: int = 3
    approval: Literal["ask", "auto"] = "ask"
    allowed_commands: tuple[str, ...] = ()
    # the OS sandbox of shell commands (agent/sandbox.py): "read-only-auto" confines the commands that run
    # unasked because they only read; "workspace-write" also approved ones (writes in the workspace only)
    sandbox: Literal["read-only-auto", "workspace-write", "off"] = "read-only-auto"
    # environment variables with a secret-looking name (agent/proc.py: SECRET_WORDS) an approved shell
    # command still gets (``GH_TOKEN`` for ``gh``); every other one is dropped from the agent's commands
    shell_env_keep: tuple[str, ...] = ()
    bash_timeout: float = 120.0
    # each shell command's resource limits (agent/limits.py), 0 = none: its processes and threads together,
    # a process's private memory (RLIMIT_DATA), one file's size (RLIMIT_FSIZE)
    limit_processes: int = field(default_factory=lambda: processes_for(os.cpu_count()))
    limit_memory_mb: int = field(default_factory=half_the_memory_mb)
    limit_file_size_mb: int = DEFAULT_FILE_SIZE_MB
    # honour every workspace's own configuration (.myrm/filters) without asking (CI, scripts); otherwise only
    # folders the user trusted (trust.py)
    trust_workspace: bool = False
    max_user_tokens: int = 120_000  # gateway hygiene
    keepalive: bool = True
    preheat: bool = True  # warm the provider cache after start-up and compaction
    max_subagent_result_tokens: int = 2_000
    # /undo's backups of a session, in total (MB): past it the oldest turns' are dropped; 0 = no cap
    undo_backups_mb: int = 200
    mcp_servers: tuple[dict[str, Any], ...] = ()  # [{name, command, args, env} | {name, url}]
    mcp_max_output_chars: int = 20_000  # MCP spill: an MCP result over this is vaulted, with a pointer
    hooks: tuple[dict[str, Any], ...] = ()  # [{event, command, matcher, timeout}], see agent/hooks.py
    hook_max_output_tokens: int = 2_500  # hook-output spill: hook output over this is vaulted, with a preview
    job_output_chars: int = 30_000  # background-output spill: new job output over this goes to the vault
    keepalive_idle_seconds: float = 240.0
    fork_suggest_ratio: float = 0.75
    summarizer_inactivity_seconds: float = 90.0
    summarizer_total_seconds: float = 600.0
    # Extended thinking for Anthropic models (0 = off; the budget is added to max_output_tokens) and the
    # reasoning effort for OpenAI / DeepSeek models that take one ("" = the provider's default).
    thinking_budget_tokens: int = 0
    reasoning_effort: Literal["", "minimal", "low", "medium", "high"] = ""
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
        """These (already validated) values over this; ``source`` labels a model they set."""
        known = setting_keys()
        clean = {k: v for k, v in values.items() if k in known and v is not None}
        out = replace(self, **clean)
        if source and clean.get("model"):
            out = replace(out, model_source=source)
        return out


# -- problems ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Problem:
    """One configuration problem; ``str()`` is the line the user sees."""

    source: str  # "~/.config/myrm/config.toml", "MYRM_CONTEXT_WINDOW", "--model", "database settings"
    text: str
    fatal: bool = True

    def __str__(self) -> str:
        return f"{self.source}: {self.text}" if self.fatal else f"warning: {self.source}: {self.text}"


class ConfigError(ValueError):
    """Settings that cannot be used; ``str()`` is one line per problem."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


class FileValues(dict[str, Any]):
    """The config file's values, remembering which file they came from (for the messages)."""

    def __init__(self, values: Mapping[str, Any], source: str) -> None:
        super().__init__(values)
        self.source = source


def setting_keys() -> frozenset[str]:
    return frozenset(f.name for f in fields(Settings) if f.name != "model_source")


def display_path(path: Path) -> str:
    """``~/…`` for paths under the home folder, as users write them."""
    home = str(Path.home())
    text = str(path)
    return (
        "~" + text[len(home) :]
        if home not in ("", "/") and (text == home or text.startswith(home + os.sep))
        else text
    )


def load_config_file(path: Path) -> FileValues:
    """The file's settings (a ``[myrm]`` table or the top level), unvalidated; ``ConfigError`` when it
    cannot be read or is not TOML (the message has the line and column)."""
    source = display_path(path)
    try:
        with path.open("rb") as f:
            data = tomllib.load(f)
    # guard: a-config-file-this-user-may-not-read-is-one-line
    except (FileNotFoundError, NotADirectoryError):  # none; a folder it may not enter is the line below
        return FileValues({}, source)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError([Problem(source, f"invalid TOML: {exc}")]) from None
    # guard: config-nesting-too-deep-is-one-problem
    except RecursionError:  # tomllib recurses once a nesting level: thousands of [ or { exhaust the stack
        raise ConfigError([Problem(source, "invalid TOML: arrays or tables nested too deep")]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(
            [Problem(source, f"cannot read it: {exc.strerror if isinstance(exc, OSError) else exc}")]
        ) from None
    table = data.get("myrm", data)
    if not isinstance(table, dict):
        raise ConfigError([Problem(source, f"myrm: expected a table, got {_shown(table)}")])
    return FileValues(table, source)


def _shown(value: Any) -> str:
    text = json.dumps(value, default=str, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "…"


# Settings pydantic passes through unchanged when given a value of exactly their type: the str and bool
# fields with no constraint in ``_annotated``. They skip the validator: pydantic's first one costs 0.1 s
# of CPU to build, on the start-up path of every ``myrm -m MODEL`` (tests keep this set equal to what the
# types say, and the result equal to pydantic's).
PASS_THROUGH = frozenset(
    {"auto_compact", "keepalive", "model", "preheat", "summarizer_model", "trust_workspace"}
)


@functools.cache
def _adapter(key: str) -> TypeAdapter[Any]:
    """The typed input of one setting: its field's type with the constraints of ``_annotated``, validated
    by pydantic. One adapter a key, built when that key is first given: the whole ``Settings`` as one
    ``TypedDict`` cost 0.1 s of CPU to build, on the start-up path of every ``myrm -m MODEL``.
    ``Settings`` stays a plain dataclass: ``replace`` is cheap and ``Settings(...)`` in code is not
    re-validated."""
    from pydantic import TypeAdapter

    return TypeAdapter(_annotated().get(key, _field_types()[key]))


@functools.cache
def _field_types() -> dict[str, Any]:
    from typing import get_type_hints

    return get_type_hints(Settings)


def _expected(key: str) -> str:
    meta = _annotated().get(key)
    for m in getattr(meta, "__metadata__", ()):
        if isinstance(m, Expect):
            return m.text
    return _describe(_field_types()[key])


def _describe(tp: Any) -> str:
    origin, args = get_origin(tp), get_args(tp)
    if origin is Literal:
        return "one of " + ", ".join(json.dumps(a) for a in args)
    if origin is tuple:
        return "a list of strings" if args[0] is str else "a list of tables"
    if origin is dict or tp is dict:
        return "a table"
    if type(None) in args:
        return _describe(next(a for a in args if a is not type(None)))
    return {
        int: "an integer",
        float: "a number",
        bool: "true or false",
        str: "a string",
        dict: "a table",
    }.get(tp, str(tp))


def validate_values(
    values: Mapping[str, Any], source: str, *, fatal: bool = True
) -> tuple[dict[str, Any], list[Problem]]:
    """Known keys of one layer checked and converted; unknown keys are warnings (with the closest key);
    a bad value is a problem (``fatal`` or not) and is left out of the result."""
    known = setting_keys()
    problems: list[Problem] = []
    given: dict[str, Any] = {}
    for key, value in values.items():
        if key in known:
            if value is not None:
                given[key] = value
            continue
        close = difflib.get_close_matches(key, sorted(known), n=1)
        hint = f"; did you mean {close[0]}?" if close else ""
        # guard: config-unknown-keys-warned
        problems.append(Problem(source, f"unknown key {json.dumps(key)} (ignored){hint}", fatal=False))
    if not given:
        return {}, problems
    from pydantic import ValidationError

    checked: dict[str, Any] = {}
    for key, value in given.items():
        if key in PASS_THROUGH and type(value) is _field_types()[key]:
            checked[key] = value  # what pydantic would return, without building its validator
            continue
        try:
            # guard: config-types-validated
            checked[key] = _adapter(key).validate_python(value)
        except ValidationError as exc:
            for err in exc.errors():
                inner = err["loc"]
                where = key + "".join(f"[{p}]" for p in inner)
                expected = _expected(key) if not inner else _describe(get_args(_field_types()[key])[0])
                said = str(err.get("ctx", {}).get("error", ""))
                if err["type"] == "value_error" and said.startswith("expected "):
                    expected = said.removeprefix("expected ")
                problems.append(
                    Problem(source, f"{where}: expected {expected}, got {_shown(err['input'])}", fatal)
                )
    return checked, problems


JSON_LIST_EXAMPLE = {"": '["pytest", "git status"]', "shell_env_keep": '["GH_TOKEN"]'}


def env_values(env: Mapping[str, str]) -> tuple[dict[str, Any], list[Problem]]:
    """``MYRM_<KEY>`` for every setting, validated like the file; list settings are JSON
    (``MYRM_ALLOWED_COMMANDS='["pytest", "git status"]'``). A near-miss name is a warning."""
    keys = setting_keys()
    names = {f"MYRM_{k.upper()}": k for k in keys}
    out: dict[str, Any] = {}
    problems: list[Problem] = []
    for name, raw in env.items():
        if not name.startswith("MYRM_") or name in OTHER_ENV or not raw:
            continue
        key = names.get(name)
        if key is None:
            close = difflib.get_close_matches(name, sorted([*names, *OTHER_ENV]), n=1, cutoff=0.8)
            if close:
                problems.append(
                    Problem(
                        name, f"unknown environment variable (ignored); did you mean {close[0]}?", fatal=False
                    )
                )
            continue
        value: Any = raw
        if get_origin(_field_types()[key]) is tuple:
            try:
                value = json.loads(raw)
            except (ValueError, RecursionError):  # RecursionError: arrays nested thousands deep
                example = JSON_LIST_EXAMPLE.get(key, JSON_LIST_EXAMPLE[""])
                problems.append(
                    Problem(
                        name,
                        f"{key}: expected a JSON list (e.g. {example}), got {_shown(raw)}",
                    )
                )
                continue
        checked, found = validate_values({key: value}, name)
        out.update(checked)
        problems.extend(found)
    return out, problems


def _cli_values(cli: Mapping[str, Any]) -> tuple[dict[str, Any], list[Problem]]:
    out: dict[str, Any] = {}
    problems: list[Problem] = []
    for key, value in cli.items():
        checked, found = validate_values({key: value}, CLI_FLAGS.get(key, "command line"))
        out.update(checked)
        problems.extend(found)
    return out, problems


def _order_problem(s: Settings, sources: Mapping[str, str]) -> Problem | None:
    if s.light_ratio <= s.full_ratio <= s.emergency_ratio:
        return None
    got = ", ".join(
        f"{k} = {getattr(s, k)} ({sources.get(k, 'default')})"
        for k in ("light_ratio", "full_ratio", "emergency_ratio")
    )
    where = next(
        (sources[k] for k in ("light_ratio", "full_ratio", "emergency_ratio") if k in sources), "settings"
    )
    return Problem(where, f"expected light_ratio <= full_ratio <= emergency_ratio, got {got}")


def _resolve(
    file_values: Mapping[str, Any],
    db_values: Mapping[str, Any],
    cli: Mapping[str, Any],
    env: Mapping[str, str],
) -> tuple[Settings, list[Problem]]:
    file_source = getattr(file_values, "source", "config file")
    problems: list[Problem] = []
    file_ok, found = validate_values(file_values, file_source)
    problems += found
    db_ok, found = validate_values(
        {k: v for k, v in db_values.items() if k in setting_keys()}, "database settings", fatal=False
    )
    problems += [replace(p, text=p.text + " (ignored)") for p in found]
    env_ok, found = env_values(env)
    problems += found
    cli_ok, found = _cli_values(cli)
    problems += found
    # (values, where a problem is reported, the model's source label, fatal)
    layers = (
        (file_ok, file_source, "config file", True),
        (db_ok, "database settings", "settings", False),
        (env_ok, "environment", "MYRM_MODEL", True),
        (cli_ok, "command line", "--model", True),
    )
    api_base = next((v["api_base"] for v, *_ in reversed(layers) if v.get("api_base")), None)
    for values, where, label, fatal in layers:
        # guard: config-model-strings-checked
        problem = model_problem(values.get("model", ""), api_base)
        if problem:  # the model of every layer, checked with the api base that will be used
            if label == "--model":
                problems.append(Problem("--model", problem))
            else:
                source = "MYRM_MODEL" if label == "MYRM_MODEL" else where
                problems.append(Problem(source, f"model: {problem}" + ("" if fatal else " (ignored)"), fatal))
            values.pop("model")
    s = Settings()
    sources: dict[str, str] = {}
    for values, where, label, _ in layers:
        s = s.merged(values, label)
        sources.update(dict.fromkeys(values, where))
    order = _order_problem(s, sources)
    if order is not None:
        problems.append(order)
    if not s.model:
        for key, model in KEY_DEFAULTS:
            if env.get(key):
                return s.merged({"model": model}, f"${key}"), problems
        s = replace(s, model=DEFAULT_LOCAL_MODEL, model_source="embedded default (no model configured)")
    return s, problems


def resolve(
    file_values: Mapping[str, Any],
    db_values: Mapping[str, Any],
    cli: Mapping[str, Any],
    env: Mapping[str, str] | None = None,
) -> Settings:
    """The settings these layers give; ``ConfigError`` when one of them has a bad value (warnings, and bad
    values stored in the database, are left to ``config_problems``)."""
    s, problems = _resolve(file_values, db_values, cli, dict(os.environ) if env is None else env)
    fatal = [p for p in problems if p.fatal]
    if fatal:
        raise ConfigError(fatal)
    return s


def config_problems(
    db_values: Mapping[str, Any] | None = None,
    cli: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
    path: Path | None = None,
) -> list[Problem]:
    """Every problem of the configuration (file, database settings when given, environment, command
    line): fatal ones first, then warnings. What ``myrm`` checks before start-up and ``myrm doctor`` shows."""
    from myrm_tui.paths import config_file

    try:
        file_values = load_config_file(path or config_file())
    except ConfigError as exc:
        file_values, problems = FileValues({}, ""), list(exc.problems)
    else:
        problems = []
    problems += _resolve(file_values, db_values or {}, cli or {}, dict(os.environ) if env is None else env)[1]
    return sorted(problems, key=lambda p: not p.fatal)


# -- model strings ---------------------------------------------------------------------------------------
@functools.cache
def litellm_providers() -> frozenset[str]:
    """litellm's provider names (``litellm.provider_list`` plus its JSON-configured OpenAI-compatible
    providers), read from its files; empty when they cannot be read (then nothing is refused)."""
    root = litellm_root()
    if root is None:
        return frozenset()
    out: set[str] = set()
    try:
        source = (root / "types" / "utils.py").read_text(encoding="utf-8")
        body = re.search(r"^class LlmProviders\(str, Enum\):\n(.*?)(?=^\S)", source, re.M | re.S)
        if body:
            out.update(re.findall(r'^\s+[A-Z0-9_]+\s*=\s*"([^"]+)"', body.group(1), re.M))
        registry = root / "llms" / "openai_like" / "providers.json"
        if registry.is_file():
            out.update(json.loads(registry.read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return frozenset()
    return frozenset(out | {"local", "replay"}) if out else frozenset()


@functools.cache
def _litellm_registry() -> dict[str, str]:
    """Model name -> its provider, from litellm's bundled registry (the one used offline)."""
    path = litellm_registry_file()
    try:
        data = json.loads(path.read_text(encoding="utf-8")) if path else {}
    except (OSError, ValueError):
        return {}
    return {k: str(v.get("litellm_provider", "")) for k, v in data.items() if k != "sample_spec"}


def _litellm_models() -> frozenset[str]:
    return frozenset(_litellm_registry())


def registry_provider(model: str) -> str | None:
    """The provider litellm's registry gives a model name (``gpt-4o`` -> ``openai``), read from its files."""
    return _litellm_registry().get(model) or None


@functools.cache
def _compatible_endpoints() -> tuple[str, ...]:
    """API bases litellm recognises without a provider prefix (``openai_compatible_endpoints``)."""
    root = litellm_root()
    try:
        source = (root / "constants.py").read_text(encoding="utf-8") if root else ""
    except OSError:
        return ()
    block = re.search(r"^openai_compatible_endpoints: List = \[(.*?)^\]", source, re.M | re.S)
    return tuple(re.findall(r'"([^"]+)"', block.group(1))) if block else ()


def model_problem(model: str, api_base: str | None = None) -> str | None:
    """Why litellm would refuse this model string, or None. Checked statically against litellm's files
    (never imported here: it takes seconds and the TUI must open fast); when they cannot be read, None."""
    if not model:
        return None
    if model != model.strip() or any(c.isspace() for c in model):
        return f"a model string has no spaces, got {_shown(model)}"
    prefix, slash, rest = model.partition("/")
    if slash and not rest:
        return f"nothing after {prefix}/ in {_shown(model)}: write {prefix}/<model>"
    if prefix == "local" and slash and model != DEFAULT_LOCAL_MODEL:
        return f"the embedded model is {DEFAULT_LOCAL_MODEL}, got {_shown(model)}"
    providers = litellm_providers()
    if not providers or (slash and prefix in providers):
        return None
    models = _litellm_models()
    if not models or model in models:
        return None
    if slash:
        close = difflib.get_close_matches(prefix, sorted(providers), n=1, cutoff=0.7)
        if close:
            return (
                f"unknown provider {json.dumps(prefix)} in {_shown(model)}; did you mean {close[0]}/{rest}?"
            )
        return (
            f"unknown provider {json.dumps(prefix)} in {_shown(model)} "
            "(see https://docs.litellm.ai/docs/providers); "
            f"an OpenAI-compatible server is openai/{rest} with --api-base"
        )
    if api_base and any(e in api_base for e in _compatible_endpoints()):
        return None
    bare = sorted(m for m in models if "/" not in m)
    same = [m for m in bare if m.lower() == model.lower()]  # GPT-4o: litellm's names are case-sensitive
    close = same or difflib.get_close_matches(model, bare, n=1, cutoff=0.8)
    if close:
        return f"litellm does not know {_shown(model)}; did you mean {close[0]}?"
    # A family's word (sonnet, opus, haiku: Claude Code's aliases): its plainest names, the newest first
    family = [m for m in bare if model.lower() in re.split(r"[-.]", m) and not re.search(r"[.:@]", m)]
    if family:
        named = sorted(family, key=lambda m: (len(m), [-ord(c) for c in m]))[:3]
        listed = ", ".join(named[:-1]) + " or " + named[-1] if len(named) > 1 else named[0]
        return f"litellm does not know {_shown(model)}; did you mean {listed}?"
    return (
        f"litellm does not know {_shown(model)}: name the provider, e.g. ollama/{model}, "
        f"or openai/{model} with --api-base for an OpenAI-compatible server"
    )


def summarizer_model(s: Settings) -> str:
    if s.summarizer_model:
        return s.summarizer_model
    from myrm_tui.context.model_facts import lite_model

    # guard: lite-model-by-default
    return lite_model(s.model) if not s.api_base else s.model


def extractive_summaries(s: Settings) -> bool:
    """Deterministic summaries, no LLM: asked for, or the embedded 135M model (it writes worse ones)."""
    from myrm_tui.context.model_facts import model_kind

    return s.summarizer_model == "extractive" or (model_kind(s.model) == "local" and not s.summarizer_model)
