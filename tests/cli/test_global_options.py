"""Every global option (those of ``myrm --help``) before and after every subcommand: honoured, judged by its
effect (the model and the folder the emulator saw, the database actually read, the session continued), or
refused in one line with exit code 2 and nothing run."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import pytest

from myrm_tui import __version__
from myrm_tui.store.db import Store
from myrm_tui.testing.emulator import ProviderEmulator
from tests import warm
from tests.helpers import cli_env, pipe_streams, run_myrm

ROOT = Path(__file__).resolve().parents[2]
DEAD_BASE = "http://127.0.0.1:9/v1"  # nothing listens there: a request that reaches it fails at once


@dataclass
class World:
    """One case's surroundings: a default database and another one, each with a session; a workspace
    with a broken filter rule; an environment whose model and endpoint are not the ones the option names."""

    tmp: Path
    emulator: ProviderEmulator
    workspace: Path
    session: str  # in the default database
    other_session: str  # in the other database
    absent_gguf: dict[str, str]  # doctor's generation with the embedded model is not these cases'

    @property
    def default_db(self) -> Path:
        return self.tmp / "default.db"

    @property
    def other_db(self) -> Path:
        return self.tmp / "other.db"

    def env(self, **extra: str) -> dict[str, str]:
        return cli_env(
            self.tmp,
            "default.db",
            **{
                "MYRM_MODEL": "openai/env-model",
                "MYRM_API_BASE": self.emulator.openai_base,
                **self.absent_gguf,
                # the workspace's own (broken) rule is read only in a trusted folder (tests/test_trust.py)
                "MYRM_TRUST_WORKSPACE": "true",
                **extra,
            },
        )

    def listing(self, db: Path) -> str:
        return run_myrm(["sessions"], env=self.env(MYRM_DB=str(db)), cwd=ROOT).stdout

    def models_seen(self) -> set[str]:
        return {str(r.body.get("model")) for r in self.emulator.accepted}

    def sent_text(self) -> str:
        return "\n".join(str(r.body.get("messages")) for r in self.emulator.accepted)


async def _seed(db: Path, title: str) -> str:
    store = await Store.open(db)
    try:
        return (await store.create_session(title=title, model="openai/env-model", workspace=str(ROOT))).id
    finally:
        await store.close()


@pytest.fixture
def world(tmp_path: Path, emulator: ProviderEmulator, workspace: Path, absent_gguf: dict[str, str]) -> World:
    rules = workspace / ".myrm" / "filters"
    rules.mkdir(parents=True)
    (rules / "broken-rule.yaml").write_text("rules: {name: [\n")
    return World(
        tmp_path,
        emulator,
        workspace,
        asyncio.run(_seed(tmp_path / "default.db", "seeded in default")),
        asyncio.run(_seed(tmp_path / "other.db", "seeded in other")),
        absent_gguf,
    )


Proc = subprocess.CompletedProcess[str]
Check = Callable[[World, Proc], None]


def _ok(proc: Proc) -> None:
    assert proc.returncode == 0, (proc.returncode, proc.stdout, proc.stderr)


def _doctor_says(label: str, value: Callable[[World], str]) -> Check:
    def check(w: World, proc: Proc) -> None:
        # exit 1: the absent GGUF is a problem doctor reports; the report is what is judged
        assert proc.returncode == 1 and "Traceback" not in proc.stderr, (proc.stdout, proc.stderr)
        lines = [ln.strip() for ln in proc.stdout.splitlines()]
        assert any(ln.startswith(f"{label}: {value(w)}") for ln in lines), proc.stdout

    return check


class _Editor:
    """The least an ACP client is: it takes the updates and declines what it is asked."""

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        pass

    async def request_permission(self, *_: Any, **__: Any) -> Any:
        from acp import schema

        return schema.RequestPermissionResponse(outcome=schema.DeniedOutcome(outcome="cancelled"))


async def _acp_turn(args: list[str], env: dict[str, str], cwd: Path) -> Proc:
    """``myrm ARGS`` (an ``acp`` command line) as an editor runs it: a real process (forked from the warm
    interpreter: ``tests/warm.py``) spoken to over its stdin and stdout: a session, one prompt ("hi from
    the test"), then stdin closed."""
    from acp import PROTOCOL_VERSION, text_block
    from acp.client.connection import ClientSideConnection

    proc = warm.Popen(
        [sys.executable, "-m", "myrm_tui.cli", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=cwd,
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    reader, writer = await pipe_streams(os.dup(proc.stdout.fileno()), os.dup(proc.stdin.fileno()))
    proc.stdin.close()
    proc.stdout.close()
    err = asyncio.ensure_future(asyncio.to_thread(proc.stderr.read))  # drained as it is written
    conn = ClientSideConnection(cast(Any, _Editor()), writer, reader)
    try:
        await asyncio.wait_for(conn.initialize(protocol_version=PROTOCOL_VERSION), 120)
        new = await asyncio.wait_for(conn.new_session(cwd=str(cwd), mcp_servers=[]), 60)
        await asyncio.wait_for(
            conn.prompt(session_id=new.session_id, prompt=[text_block("hi from the test")]), 60
        )
    finally:
        await conn.close()
        writer.close()  # the editor goes away: the agent's stdin ends
        try:
            code = await asyncio.to_thread(proc.wait, 60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)
        stderr = (await asyncio.wait_for(err, 60)).decode(errors="replace")
        proc.stderr.close()
    return subprocess.CompletedProcess(["myrm", *args], code, "", stderr)


def _ask_model(w: World, proc: Proc) -> None:
    _ok(proc)
    assert w.models_seen() == {"option-model"}  # litellm strips the "openai/" the option named
    assert "openai/option-model" in w.listing(w.default_db)  # and the session is stored under it


def _ask_db(w: World, proc: Proc) -> None:
    _ok(proc)  # the turn's session is in the other database (beside its seeded one), none in the default
    assert len(w.listing(w.other_db).splitlines()) == 2
    assert len(w.listing(w.default_db).splitlines()) == 1


def _ask_session(w: World, proc: Proc) -> None:
    _ok(proc)
    assert f"[session {w.session}]" in proc.stderr  # that session continued, no new one
    assert w.listing(w.default_db).count(" msgs ") == 1


def _ask_workspace(w: World, proc: Proc) -> None:
    _ok(proc)
    assert f"workspace: {w.workspace}" in w.sent_text()


def _ask_api_base(w: World, proc: Proc) -> None:
    _ok(proc)
    assert w.models_seen() == {"env-model"}  # the request reached the emulator, not the dead endpoint


def _sessions_db(w: World, proc: Proc) -> None:
    _ok(proc)
    assert "seeded in other" in proc.stdout


def _doctor_workspace(w: World, proc: Proc) -> None:
    assert proc.returncode == 1, (proc.stdout, proc.stderr)  # the broken rule is a problem
    assert "broken-rule.yaml: not valid YAML" in proc.stdout


@dataclass(frozen=True)
class Option:
    flag: str
    value: Callable[[World], str] | None  # None: a flag without a value
    honoured: dict[str, Check]  # subcommand -> what its effect looks like; every other one refuses it
    env: Callable[[World], dict[str, str]] = lambda w: {}


OPTIONS: tuple[Option, ...] = (
    Option(
        "--model",
        lambda w: "openai/option-model",
        {
            "ask": _ask_model,
            "acp": _ask_model,
            "doctor": _doctor_says("model", lambda w: "openai/option-model  [--model]"),
        },
    ),
    Option(
        "--db",
        lambda w: str(w.other_db),
        {
            "ask": _ask_db,
            "acp": _ask_db,
            "sessions": _sessions_db,
            "doctor": _doctor_says("database", lambda w: str(w.other_db)),
        },
    ),
    Option("--session", lambda w: w.session, {"ask": _ask_session}),
    Option("--continue", None, {"ask": _ask_session}),  # the seeded session is the folder's newest
    Option("--workspace", lambda w: str(w.workspace), {"ask": _ask_workspace, "doctor": _doctor_workspace}),
    Option(
        "--api-base",
        lambda w: w.emulator.openai_base,
        {
            "ask": _ask_api_base,
            "acp": _ask_api_base,
            "doctor": _doctor_says("api base", lambda w: w.emulator.openai_base),
        },
        env=lambda w: {"MYRM_API_BASE": DEAD_BASE},
    ),
    Option("--replay", lambda w: str(w.tmp / "recording.jsonl"), {}),
    Option("--speed", lambda w: "0.1", {}),
    Option("--version", None, {}),  # honoured everywhere: checked below
)

# What each subcommand is given besides the option (a session to export: the --db case's effect).
SUBCOMMANDS: dict[str, Callable[[World], list[str]]] = {
    "ask": lambda w: ["ask", "hi from the test"],
    "acp": lambda w: ["acp"],  # an editor's session and one prompt when it runs (_acp_turn)
    "sessions": lambda w: ["sessions", "--export", w.other_session],
    "doctor": lambda w: ["doctor"],
    "bench": lambda w: ["bench", "--corpus", str(w.tmp / "no-corpus.jsonl")],
}


def _help_names(args: list[str], section: str) -> set[str]:
    """The options (long forms) or commands a help screen lists in ``section``."""
    text = run_myrm(args, cwd=ROOT).stdout
    body = text.split(f"\n{section}:\n", 1)[1].split("\n\n", 1)[0]
    if section == "Options":
        return set(re.findall(r"^\s+(?:-\w, )?(--[\w-]+)", body, re.M)) - {"--help"}
    return set(re.findall(r"^  (\w+)\s", body, re.M))


def test_the_table_covers_every_global_option_and_subcommand() -> None:
    assert _help_names(["--help"], "Options") == {o.flag for o in OPTIONS}
    assert _help_names(["--help"], "Commands") == set(SUBCOMMANDS)


CASES = [
    pytest.param(option, sub, where, id=f"{option.flag[2:]}-{where}-{sub}")
    for option in OPTIONS
    for sub in SUBCOMMANDS
    for where in ("before", "after")
]


@pytest.mark.parametrize(("option", "sub", "where"), CASES)
def test_a_global_option_is_honoured_or_refused_wherever_it_stands(
    world: World, option: Option, sub: str, where: str
) -> None:
    given = [option.flag] if option.value is None else [option.flag, option.value(world)]
    rest = SUBCOMMANDS[sub](world)
    args = [*given, *rest] if where == "before" else [*rest, *given]
    env = world.env(**option.env(world))
    if sub == "acp" and sub in option.honoured:
        proc = asyncio.run(_acp_turn(args, env, world.workspace))
    else:
        proc = run_myrm(args, env=env, cwd=ROOT)
    assert "Traceback" not in proc.stderr, proc.stderr
    if option.flag == "--version":
        assert (proc.returncode, proc.stdout) == (0, f"myrm {__version__}\n"), proc.stderr
    elif sub in option.honoured:
        option.honoured[sub](world, proc)
    else:
        assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
        assert proc.stderr.count("\n") == 1 and proc.stdout == "", proc.stderr
        assert proc.stderr.startswith(f"myrm: {option.flag} does not apply to `myrm {sub}` ("), proc.stderr
        assert world.emulator.requests == []


def test_an_option_given_before_and_after_with_two_values_is_refused(world: World) -> None:
    proc = run_myrm(
        ["--model", "openai/a-model", "ask", "hi", "--model", "openai/b-model"], env=world.env(), cwd=ROOT
    )
    assert proc.returncode == 2 and world.emulator.requests == []
    assert proc.stderr == (
        "myrm: --model given twice, before and after `ask`: openai/a-model and openai/b-model\n"
    )
    same = run_myrm(["-m", "openai/a-model", "ask", "hi", "-m", "openai/a-model"], env=world.env(), cwd=ROOT)
    _ok(same)
    assert world.models_seen() == {"a-model"}


def test_speed_without_replay_and_session_with_replay_are_refused(world: World) -> None:
    for args, line in (
        (["--speed", "2"], "myrm: --speed goes with --replay PATH[#ID]\n"),
        (
            ["--replay", str(world.tmp / "r.jsonl"), "--session", world.session],
            "myrm: --session and --replay do not go together (a replay plays in a session of its own)\n",
        ),
    ):
        proc = run_myrm(args, env=world.env(), cwd=ROOT)
        assert (proc.returncode, proc.stderr) == (2, line)


def test_help_shows_flags_as_flags_and_the_replay_id() -> None:
    text = run_myrm(["--help"], cwd=ROOT).stdout
    assert re.search(r"^  -V, --version\s+Print the version", text, re.M), text
    assert "--replay PATH[#ID]" in text and "<bool>" not in text
    assert "<bool>" not in run_myrm(["ask", "--help"], cwd=ROOT).stdout
    sessions = run_myrm(["sessions", "--help"], cwd=ROOT).stdout
    assert "--rename ID TITLE" in sessions and "--export ID" in sessions and "<str" not in sessions


@pytest.mark.parametrize("sub", ["", *SUBCOMMANDS])
def test_h_and_the_help_command_print_what_help_prints(sub: str) -> None:
    """``-h`` and ``myrm help [COMMAND]``, as Claude Code, Codex and aider take them (``-h`` was "No such
    option", ``help`` "No such command")."""
    name = [sub] if sub else []
    full = run_myrm([*name, "--help"], cwd=ROOT)
    assert full.returncode == 0 and full.stdout.startswith("Usage:"), full.stderr
    for args in ([*name, "-h"], ["help", *name]):
        proc = run_myrm(args, cwd=ROOT)
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, full.stdout, ""), args


def test_the_help_command_with_an_unknown_name_is_one_line() -> None:
    proc = run_myrm(["help", "sesions"], cwd=ROOT)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.splitlines() == [
        "myrm: No such command 'sesions'. Did you mean 'sessions'? (`myrm --help` lists what it takes)"
    ]


@pytest.mark.parametrize("args", [["-V"], ["-V", "doctor"], ["sessions", "-V"]])
def test_capital_v_prints_the_version_anywhere(args: list[str]) -> None:
    proc = run_myrm(args, cwd=ROOT)
    assert (proc.returncode, proc.stdout) == (0, f"myrm {__version__}\n"), proc.stderr
