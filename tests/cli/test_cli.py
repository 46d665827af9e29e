"""The command line: ask (one turn to stdout), sessions, doctor — as scripts use them: in this process
through ``main`` (``run_myrm``), and one ``ask`` in a real subprocess."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
from pathlib import Path

import pytest

from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests import warm
from tests.helpers import run_myrm

ROOT = Path(__file__).resolve().parents[2]


def _env(tmp: Path, env_extra: dict[str, str] | None) -> dict[str, str]:
    return {
        **os.environ,
        "MYRM_DB": str(tmp / "cli.db"),
        "MYRM_CONFIG": str(tmp / "none.toml"),
        **(env_extra or {}),
    }


def _myrm(
    args: list[str], tmp: Path, stdin: str | None = None, env_extra: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return run_myrm(args, env=_env(tmp, env_extra), cwd=ROOT, stdin=stdin)


def _myrm_process(
    args: list[str], tmp: Path, env_extra: dict[str, str] | None = None, executed: bool = False
) -> subprocess.CompletedProcess[str]:
    """A process of its own: for tests that run inside an event loop (``main`` runs its own with
    ``asyncio.run``), forked from the warm interpreter (``tests/warm.py``); ``executed``: the real
    executable, started by ``python`` (one ask here)."""
    run = subprocess.run if executed else warm.run
    return run(
        [sys.executable, "-m", "myrm_tui.cli", *args],
        capture_output=True,
        text=True,
        env=_env(tmp, env_extra),
        cwd=ROOT,
        timeout=120,
    )


def test_ask_streams_the_answer_and_persists(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    emulator.enqueue(
        Reply(tool_calls=[("bash", {"command": "echo from-tool"})]), Reply(text="The tool said from-tool.")
    )
    base = [
        "--model",
        "openai/gpt-4o-mini",
        "--api-base",
        emulator.openai_base,
        "--workspace",
        str(workspace),
    ]
    env_key = {"OPENAI_API_KEY": "sk-test"}
    os.environ.update(env_key)
    try:
        proc = _myrm_process(["ask", "run the tool", *base, "--yes"], tmp_path, executed=True)
    finally:
        os.environ.pop("OPENAI_API_KEY")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "The tool said from-tool."
    assert "[tool] bash" in proc.stderr and "[session " in proc.stderr
    listing = _myrm(["sessions"], tmp_path)
    # the user's message, the call, its result, the answer: the system prompt and environment not counted
    assert "run the tool" in listing.stdout and " 4 msgs " in listing.stdout


def test_ask_declines_commands_without_yes_and_reads_stdin(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    emulator.enqueue(
        Reply(tool_calls=[("bash", {"command": "rm -rf build"})]), Reply(text="I was not allowed.")
    )
    os.environ["OPENAI_API_KEY"] = "sk-test"
    try:
        proc = _myrm(
            [
                "ask",
                "-",
                "--model",
                "openai/gpt-4o-mini",
                "--api-base",
                emulator.openai_base,
                "--workspace",
                str(workspace),
                "--json",
            ],
            tmp_path,
            stdin="clean up",
        )
    finally:
        os.environ.pop("OPENAI_API_KEY")
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    assert events[0]["type"] == "init" and events[1] == {"type": "user", "version": 1, "text": "clean up"}
    assert any(e["type"] == "tool_result" and "declined" in e["output"] for e in events)


def test_ask_reports_provider_failure_with_exit_code(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    emulator.enqueue(
        Reply(
            error=(401, {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}})
        )
    )
    proc = _myrm(
        [
            "ask",
            "hi",
            "--model",
            "openai/gpt-4o-mini",
            "--api-base",
            emulator.openai_base,
            "--workspace",
            str(workspace),
        ],
        tmp_path,
    )
    assert proc.returncode == 1 and "refused the API key" in proc.stderr
    assert proc.stdout == ""  # no answer: not even a blank line for a script to read


def test_doctor_reports_model_and_offline_setup(tmp_path: Path) -> None:
    proc = _myrm(["doctor"], tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "local/smollm2-135m" in proc.stdout and "embedded default" in proc.stdout
    assert "TIKTOKEN_CACHE_DIR=" in proc.stdout and "tokenizer: ok" in proc.stdout


# -- bad input: one line on stderr, exit code 2, no traceback, before the full screen opens ------------------
def _one_line_exit_2(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr + proc.stdout
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    return lines[0]


def test_missing_replay_file_is_one_line_not_the_app(tmp_path: Path) -> None:
    line = _one_line_exit_2(_myrm(["--replay", "/nonexistent.jsonl#x"], tmp_path))
    assert line == "myrm: --replay: /nonexistent.jsonl: no such file"


def test_unknown_conversation_id_lists_the_nearest(tmp_path: Path) -> None:
    rec = tmp_path / "rec.jsonl"
    convs = [
        {
            "id": f"team/task-{n}",
            "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}],
        }
        for n in (101, 102, 250)
    ]
    rec.write_text("".join(json.dumps(c) + "\n" for c in convs))
    line = _one_line_exit_2(_myrm(["--replay", f"{rec}#team/task-10"], tmp_path))
    assert line.startswith(f"myrm: --replay: no conversation 'team/task-10' in {rec} (3 there; nearest: ")
    assert set(line.split("nearest: ")[1].rstrip(")").split(", ")) == {
        "team/task-101",
        "team/task-102",
        "team/task-250",
    }
    rec.write_text("not json\n")
    assert _one_line_exit_2(_myrm(["--replay", str(rec)], tmp_path)).startswith(
        f"myrm: --replay: {rec}: conversation 1: not a JSON line"
    )


def test_missing_session_is_one_line_before_the_app(tmp_path: Path) -> None:
    line = _one_line_exit_2(_myrm(["--session", "nope"], tmp_path))
    assert line.startswith("myrm: --session: no session 'nope' in ") and "myrm sessions" in line
    assert _one_line_exit_2(_myrm(["ask", "hi", "--session", "nope"], tmp_path)) == "myrm: no session 'nope'"


def test_bad_model_strings_are_refused_before_anything_runs(tmp_path: Path) -> None:
    line = _one_line_exit_2(_myrm(["ask", "hi", "--model", "foo/bar"], tmp_path))
    assert (
        line.startswith('myrm: --model: unknown provider "foo" in "foo/bar"')
        and "openai/bar with --api-base" in line
    )
    assert (
        _one_line_exit_2(_myrm(["--model", "gtp-4o"], tmp_path))
        == 'myrm: --model: litellm does not know "gtp-4o"; did you mean gpt-4o?'
    )
    line = _one_line_exit_2(
        _myrm(["ask", "hi"], tmp_path, env_extra={"MYRM_MODEL": "anthropc/claude-sonnet-4-5"})
    )
    assert (
        line == 'myrm: MYRM_MODEL: model: unknown provider "anthropc" in "anthropc/claude-sonnet-4-5"; '
        "did you mean anthropic/claude-sonnet-4-5?"
    )


@pytest.mark.parametrize(
    ("typed", "meant"),
    [("sonnet", "claude-sonnet-4-"), ("Opus", "claude-opus-4-"), ("GPT-4o", "gpt-4o"), ("gpt5", "gpt-5")],
)
def test_a_family_word_or_a_name_in_capitals_suggests_models_litellm_knows(
    tmp_path: Path, typed: str, meant: str
) -> None:
    """``--model sonnet`` (Claude Code's alias) or ``GPT-4o`` was told to "name the provider, e.g.
    ollama/sonnet"; now the names it may mean, each one a model string myrm takes."""
    from myrm_tui.config import model_problem

    line = _one_line_exit_2(_myrm(["ask", "hi", "--model", typed], tmp_path))
    head = f'myrm: --model: litellm does not know "{typed}"; did you mean '
    assert line.startswith(head + meant) and line.endswith("?"), line
    named = line[len(head) : -1].replace(" or ", ", ").split(", ")
    assert 1 <= len(named) <= 3 and all(model_problem(m) is None for m in named), named


@pytest.mark.parametrize("base", ["localhost:11434/v1", "notaurl", "ftp://host/v1", "http://"])
def test_an_endpoint_that_is_not_an_http_url_is_one_line_before_anything_runs(
    tmp_path: Path, base: str
) -> None:
    """The scheme left out (``localhost:11434/v1``, Ollama's address as people write it) reached the
    provider as a path: "OpenAIException - /11434/v1/chat/completions", exit 1, after a session was made."""
    expected = f'expected an http:// or https:// URL (e.g. http://localhost:11434/v1), got "{base}"'
    key = {"OPENAI_API_KEY": "sk-test"}
    for args in (["ask", "hi"], []):
        line = _one_line_exit_2(
            _myrm([*args, "-m", "openai/qwen", "--api-base", base], tmp_path, env_extra=key)
        )
        assert line == f"myrm: --api-base: api_base: {expected}"
    env = {**key, "MYRM_MODEL": "openai/qwen", "MYRM_API_BASE": base}
    assert _one_line_exit_2(_myrm(["ask", "hi"], tmp_path, env_extra=env)) == (
        f"myrm: MYRM_API_BASE: api_base: {expected}"
    )
    assert _myrm(["sessions"], tmp_path).stdout.startswith("no sessions yet")


NO_TERMINAL = (
    "myrm: the full screen needs a terminal, and standard {} is not one; for one turn from a script or a "
    'pipe: myrm ask "…" (echo "…" | myrm ask reads the message from standard input)'
)
# Standard input and output on the terminal given, standard error left as the caller set it.
TTY_IN_OUT = """
import os, runpy, sys
fd = os.open(sys.argv[1], os.O_RDWR)
os.dup2(fd, 0)
os.dup2(fd, 1)
sys.argv = ["myrm"]
runpy.run_module("myrm_tui", run_name="__main__", alter_sys=True)
"""


def test_the_full_screen_without_a_terminal_is_one_line_not_a_hang(
    tmp_path: Path, emulator: ProviderEmulator
) -> None:
    """``echo "fix it" | myrm`` (or myrm in a CI job, or with ``2>log``) drew escape codes into a pipe and
    waited for keys for ever, the message unread. Real processes: what matters is their descriptors."""
    env = _env(
        tmp_path,
        {
            "MYRM_MODEL": "openai/gpt-4o-mini",
            "MYRM_API_BASE": emulator.openai_base,
            "OPENAI_API_KEY": "sk-test",
        },
    )
    piped = warm.run(
        [sys.executable, "-m", "myrm_tui.cli"],
        input="fix the bug\n",
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=60,
    )
    assert (piped.returncode, piped.stdout, piped.stderr.splitlines()) == (
        2,
        "",
        [NO_TERMINAL.format("input")],
    )
    master, slave = os.openpty()
    try:
        logged = warm.run(
            [sys.executable, "-c", TTY_IN_OUT, os.ttyname(slave)],
            capture_output=True,
            text=True,
            env=env,
            cwd=ROOT,
            timeout=60,
        )
    finally:
        os.close(slave)
        os.close(master)
    assert (logged.returncode, logged.stderr.splitlines()) == (2, [NO_TERMINAL.format("error")])
    assert not emulator.requests


# Standard input and error (what the full screen reads and draws on) on the terminal given.
TTY_IN_ERR = TTY_IN_OUT.replace("os.dup2(fd, 1)", "os.dup2(fd, 2)")


def test_the_full_screen_on_a_dumb_terminal_is_one_line_not_escape_codes(
    tmp_path: Path, emulator: ProviderEmulator
) -> None:
    """Found (firsthour5): ``TERM=dumb myrm`` (Emacs' M-x shell) drew the full screen as escape codes and
    waited for keys. A real process on a real terminal; what it wrote there is read back."""
    env = _env(
        tmp_path,
        {
            "MYRM_MODEL": "openai/gpt-4o-mini",
            "MYRM_API_BASE": emulator.openai_base,
            "OPENAI_API_KEY": "sk-test",
            "TERM": "dumb",
        },
    )
    master, slave = os.openpty()
    try:
        proc = warm.run(
            [sys.executable, "-c", TTY_IN_ERR, os.ttyname(slave)],
            capture_output=True,
            text=True,
            env=env,
            cwd=ROOT,
            timeout=30,  # it answers in a second or two; without the check it waits for keys for ever
        )
        shown = b""
        while select.select([master], [], [], 0)[0]:
            shown += os.read(master, 65536)
    finally:
        os.close(slave)
        os.close(master)
    assert (proc.returncode, proc.stdout, shown.decode().splitlines()) == (
        2,
        "",
        [
            "myrm: the full screen needs a terminal that can move its cursor, and TERM=dumb says this one "
            "cannot; run it in a terminal emulator (in Emacs: M-x vterm or ansi-term), or for one turn: "
            'myrm ask "…"'
        ],
    )
    assert not emulator.requests


def test_bad_config_file_is_one_line_exit_2(tmp_path: Path) -> None:
    cfg = tmp_path / "none.toml"
    cfg.write_text('context_window = "abc"\n')
    expected = (
        f"{cfg}: context_window: expected an integer (0 = from the model registry, else 1000 "
        'to 10000000), got "abc"'
    )
    for args in (["ask", "hi"], []):
        assert _one_line_exit_2(_myrm(args, tmp_path)) == f"myrm: {expected}"
    doctor = _myrm(["doctor"], tmp_path)  # the same line, in its report (stdout)
    assert (
        doctor.returncode == 2
        and doctor.stdout.strip() == f"config: {expected}"
        and "Traceback" not in doctor.stderr
    )
    cfg.write_text('model = "gpt-4o"\nx = = 1\n')
    assert _one_line_exit_2(_myrm(["ask", "hi"], tmp_path)).endswith(
        "invalid TOML: Invalid value (at line 2, column 5)"
    )
    cfg.write_text('allowed_commands = "git status"\n')
    assert (
        _one_line_exit_2(_myrm(["ask", "hi"], tmp_path))
        == f'myrm: {cfg}: allowed_commands: expected a list of strings, got "git status"'
    )
    cfg.unlink()
    line = _one_line_exit_2(_myrm(["ask", "hi"], tmp_path, env_extra={"MYRM_ALLOWED_COMMANDS": "git status"}))
    assert line.startswith("myrm: MYRM_ALLOWED_COMMANDS: allowed_commands: expected a JSON list")


def test_unknown_key_and_bad_workspace_filter_warn_and_the_turn_runs(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    """A trusted folder (``--trust``): its broken rule file is a warning. (Untrusted, it is not read at all:
    tests/test_trust.py.)"""
    (tmp_path / "none.toml").write_text("contxt_window = 5000\n")
    rules = workspace / ".myrm" / "filters"
    rules.mkdir(parents=True)
    (rules / "broken.yaml").write_text("rules: {name: [\n")
    emulator.enqueue(Reply(text="fine"))
    proc = _myrm(
        [
            "ask",
            "hi",
            "--model",
            "openai/gpt-4o-mini",
            "--api-base",
            emulator.openai_base,
            "--workspace",
            str(workspace),
            "--trust",
        ],
        tmp_path,
        env_extra={"OPENAI_API_KEY": "sk-test"},
    )
    assert proc.returncode == 0 and proc.stdout.strip() == "fine" and "Traceback" not in proc.stderr, (
        proc.stderr
    )
    warnings = [ln for ln in proc.stderr.splitlines() if ln.startswith("myrm: warning:")]
    assert warnings == [
        f'myrm: warning: {tmp_path / "none.toml"}: unknown key "contxt_window" (ignored); did you '
        "mean context_window?",
        f"myrm: warning: {rules / 'broken.yaml'}: not valid YAML at line 2, column 1: expected "
        "the node content, but found '<stream end>' (skipped)",
    ]


def test_doctor_reports_the_same_problems(tmp_path: Path, absent_gguf: dict[str, str]) -> None:
    (tmp_path / "none.toml").write_text("contxt_window = 5000\n")
    proc = _myrm(["doctor", "--quiet"], tmp_path, env_extra=absent_gguf)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stdout + proc.stderr
    assert (
        f'myrm doctor: warning: {tmp_path / "none.toml"}: unknown key "contxt_window" (ignored); '
        "did you mean context_window?" in proc.stdout.splitlines()
    )


# -- a provider key missing from the environment: one line before anything starts ----------------------------
NO_KEY = "anthropic/claude-sonnet-4-5 needs ANTHROPIC_API_KEY in the environment (not set)"


def test_a_missing_key_is_one_line_before_ask_starts(
    emulator: ProviderEmulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    line = _one_line_exit_2(_myrm(["-m", "anthropic/claude-sonnet-4-5", "ask", "Say hi"], tmp_path))
    assert line == f"myrm: --model: {NO_KEY}"
    # a model from the environment (or the config file) is checked by ask too
    line = _one_line_exit_2(
        _myrm(["ask", "Say hi"], tmp_path, env_extra={"MYRM_MODEL": "anthropic/claude-sonnet-4-5"})
    )
    assert line == f"myrm: MYRM_MODEL: {NO_KEY}"
    assert emulator.requests == []
    assert _myrm(["sessions"], tmp_path).stdout.startswith("no sessions yet")  # nothing was stored


def test_a_missing_key_is_one_line_before_the_full_screen_opens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    line = _one_line_exit_2(_myrm(["-m", "anthropic/claude-sonnet-4-5"], tmp_path))
    assert line == f"myrm: --model: {NO_KEY}"


def test_a_key_that_is_plainly_set_is_found_without_importing_litellm(tmp_path: Path) -> None:
    """The check runs before the full screen opens: a model named with its provider whose documented key
    is set costs no import of litellm (seconds of CPU); one whose key is missing asks litellm."""
    code = (
        "import asyncio, sys\n"
        "from myrm_tui.provider_keys import key_problem\n"
        "problem = asyncio.run(key_problem(sys.argv[1], '--model'))\n"
        "print(problem, 'litellm' in sys.modules)\n"
    )

    def run(model: str = "anthropic/claude-sonnet-4-5", **env: str) -> str:
        base = {k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")}
        return subprocess.run(
            [sys.executable, "-c", code, model],
            capture_output=True,
            text=True,
            env={**base, **env},
            cwd=ROOT,
            check=True,
        ).stdout.strip()

    assert run(ANTHROPIC_API_KEY="sk-ant-test") == "None False"
    assert run("gpt-4o", OPENAI_API_KEY="sk-test") == "None False"  # a bare name: litellm's registry file
    assert run() == f"--model: {NO_KEY} True"


def _ask_as_nobody(root: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``myrm ask hi`` run in-process as the user ``nobody`` (the effective uid; root passes every
    permission check), from ``root`` (a folder nobody may enter, where ``run_myrm`` comes back to)."""
    ask = ["ask", "-m", "openai/gpt-4o", "hi"]
    env = {**env, "OPENAI_API_KEY": "sk-x"}
    # The same path once as root first, refused as well (the database a folder): the modules it imports
    # are then loaded, as nobody cannot read this interpreter's own library (it is under /root).
    warm_up = {**env, "MYRM_DB": str(root), "MYRM_LOG": os.devnull, "MYRM_CONFIG": os.devnull}
    assert run_myrm(ask, env=warm_up, cwd=ROOT).returncode == 2
    here = Path.cwd()
    os.chdir(root)
    os.seteuid(65534)
    try:
        return run_myrm(ask, env=env, cwd=root)
    finally:
        os.seteuid(0)
        os.chdir(here)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to become another user")
def test_a_data_and_log_folder_another_user_made_is_one_line_not_a_traceback() -> None:
    """Found (firsthour5) running myrm as ``nobody`` where a root ``myrm`` had made the state folders (as
    ``sudo myrm`` once in a shared home does): the database's one line was logged first, and the log file,
    opened at that first record, raised: two tracebacks and exit 1. Now the one line, exit 2, no log file."""
    import shutil
    import tempfile

    root = Path(tempfile.mkdtemp(prefix="myrm-other-"))
    try:
        root.chmod(0o755)
        (root / "log").mkdir(mode=0o755)
        (root / "data").mkdir(mode=0o755)
        env = {
            **os.environ,
            "MYRM_LOG": str(root / "log" / "myrm.log"),
            "MYRM_DB": str(root / "data" / "myrm.db"),
            "MYRM_CONFIG": str(root / "none.toml"),
            "HOME": str(root),
            "XDG_CONFIG_HOME": str(root / "config"),
        }
        proc = _ask_as_nobody(root, env)
        line = _one_line_exit_2(proc)
        assert line.startswith(
            f"myrm: cannot create {root}/data/myrm.db (Permission denied); make its folder"
        )
        assert sorted(p.name for p in root.rglob("*")) == ["data", "log"]
    finally:
        shutil.rmtree(root)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to become another user")
def test_a_config_folder_this_user_may_not_read_is_one_line_not_a_traceback() -> None:
    """Found (firsthour5) running myrm as another user who kept root's HOME (``sudo -u``, ``setpriv``):
    checking whether ``~/.config/myrm/config.toml`` exists raised PermissionError, a traceback. Now the
    one line that names the file, exit 2."""
    import shutil
    import tempfile

    root = Path(tempfile.mkdtemp(prefix="myrm-other-"))
    try:
        root.chmod(0o755)
        (root / "private").mkdir(mode=0o700)
        env = {k: v for k, v in os.environ.items() if k != "MYRM_CONFIG"}
        env |= {"HOME": str(root), "XDG_CONFIG_HOME": str(root / "private"), "MYRM_DB": str(root / "x.db")}
        line = _one_line_exit_2(_ask_as_nobody(root, env))
        assert line == "myrm: ~/private/myrm/config.toml: cannot read it: Permission denied"
    finally:
        shutil.rmtree(root)
