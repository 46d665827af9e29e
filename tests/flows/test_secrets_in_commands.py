"""Secrets reaching the agent's commands (attacker6, item 1): a prompt-injected model runs ``env`` (or
``echo $OPENAI_API_KEY``) and reads back what myrm's environment holds. myrm's provider keys and every
other secret-looking variable (``*KEY*``, ``*TOKEN*``, ``*SECRET*``, ``*PASSW*``, ``*CREDENTIAL*``) must not
reach a command the agent runs, in the foreground or the background, confined or not, approved by the
user or by ``approval = "auto"``; a variable the user names in ``shell_env_keep`` does. What the command saw
is read from the tool result the provider emulator received (what the model would see)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from myrm_tui.agent.permissions import Assessment
from myrm_tui.attachments import attach
from myrm_tui.store.db import Store
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.helpers import collect, make_agent, openai_settings

SECRETS = {
    "OPENAI_API_KEY": "sk-proj-leak-openai-0001",
    "ANTHROPIC_API_KEY": "sk-ant-leak-anthropic-0002",
    "GH_TOKEN": "ghp_leak_github_0003",
    "AWS_SECRET_ACCESS_KEY": "leak-aws-secret-0004",
    "db_password": "leak-password-0005",
    "GOOGLE_APPLICATION_CREDENTIALS": "/leak/credentials-0006.json",
}
PLAIN = {"MYRM_ATTACK_PLAIN": "plain-value-0007"}


@pytest.fixture
def secret_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in {**SECRETS, **PLAIN}.items():
        monkeypatch.setenv(name, value)


def _tool_results(emulator: ProviderEmulator) -> str:
    """Every tool result the emulator was sent."""
    return "\n".join(
        str(m.get("content"))
        for r in emulator.accepted
        for m in r.body["messages"]
        if m.get("role") == "tool"
    )


async def _run(
    emulator: ProviderEmulator,
    tmp_path: Path,
    workspace: Path,
    call: dict[str, Any],
    approver: Any = None,
    wait_for: Path | None = None,
    **settings: Any,
) -> None:
    """One turn in which the model runs ``call``; with ``wait_for``, the session stays open (its jobs
    running) until that file is there."""
    store = await Store.open(tmp_path / "s.db")
    try:
        agent = await make_agent(store, workspace, openai_settings(emulator, **settings), approver=approver)
        emulator.enqueue(Reply(tool_calls=[("bash", call)]), Reply(text="done"))
        await collect(agent, "run it")
        for _ in range(1200):  # a background job may still run when the turn ends
            if wait_for is None or wait_for.exists():
                break
            await asyncio.sleep(0.05)
        await agent.close()
    finally:
        await store.close()


@pytest.mark.parametrize("sandbox", ["read-only-auto", "workspace-write", "off"])
async def test_an_approved_command_sees_no_secret_variable(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path, secret_env: None, sandbox: str
) -> None:
    """``env`` under ``approval = "auto"``, in every sandbox mode: the plain variable is there (the
    command saw myrm's environment), no secret is."""
    await _run(emulator, tmp_path, workspace, {"command": "env"}, sandbox=sandbox)
    seen = _tool_results(emulator)
    assert "MYRM_ATTACK_PLAIN=plain-value-0007" in seen
    assert [v for v in SECRETS.values() if v in seen] == []


async def test_a_command_the_user_said_yes_to_sees_no_secret_variable(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path, secret_env: None
) -> None:
    """``approval = "ask"``: the user answers y to ``echo $OPENAI_API_KEY …`` (a prompt-injected model's
    request looks harmless): the variables are empty in it."""
    asked: list[str] = []

    async def yes(tool: str, command: str, assessment: Assessment) -> str:
        asked.append(command)
        return "yes"

    command = 'echo "k=$OPENAI_API_KEY a=$ANTHROPIC_API_KEY g=$GH_TOKEN p=$MYRM_ATTACK_PLAIN"'
    await _run(emulator, tmp_path, workspace, {"command": command}, approver=yes, approval="ask")
    assert asked == [command]
    assert "k= a= g= p=plain-value-0007" in _tool_results(emulator)


async def test_a_background_job_sees_no_secret_variable(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path, secret_env: None
) -> None:
    """A background job (``run_in_background``) writes its environment to a file: no secret in it."""
    command = "env > seen.part && mv seen.part seen.txt"
    seen_file = workspace / "seen.txt"
    call = {"command": command, "run_in_background": True}
    await _run(emulator, tmp_path, workspace, call, wait_for=seen_file)
    assert "Started background job" in _tool_results(emulator)
    seen = seen_file.read_text()
    assert "MYRM_ATTACK_PLAIN=plain-value-0007" in seen
    assert [v for v in SECRETS.values() if v in seen] == []


async def test_shell_env_keep_passes_the_named_variable_only(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path, secret_env: None
) -> None:
    """``shell_env_keep = ["GH_TOKEN"]`` (for ``gh``): that one reaches the command, the others do not."""
    await _run(emulator, tmp_path, workspace, {"command": "env"}, shell_env_keep=["GH_TOKEN"])
    seen = _tool_results(emulator)
    assert "GH_TOKEN=ghp_leak_github_0003" in seen
    assert [n for n, v in SECRETS.items() if v in seen] == ["GH_TOKEN"]


@pytest.fixture
def myrm_in_workspace(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """myrm's config (holding a key), log and (opened by the test) database inside the workspace, which is
    also the home folder (myrm run in ``~``): its ``.ssh`` holds a private key. A plain file holds the same
    marker words, to show the tools work."""
    (workspace / "myrm-config.toml").write_text('api_key = "sk-config-leak-0010"\n')
    (workspace / "myrm.log").write_text("INFO log-leak-0011\n")
    (workspace / ".ssh").mkdir()
    (workspace / ".ssh" / "id_ed25519").write_text("ssh-leak-0012\n")
    (workspace / "notes.txt").write_text("visible-0013 leak\n")
    monkeypatch.setenv("MYRM_CONFIG", str(workspace / "myrm-config.toml"))
    monkeypatch.setenv("MYRM_LOG", str(workspace / "myrm.log"))
    monkeypatch.setenv("HOME", str(workspace))
    return workspace


PRIVATE = ("sk-config-leak-0010", "log-leak-0011", "ssh-leak-0012", "agent-db-leak-0014")


@pytest.mark.parametrize("sandbox", ["read-only-auto", "off"])
async def test_myrms_own_files_in_the_workspace_reach_no_tool(
    emulator: ProviderEmulator, tmp_path: Path, myrm_in_workspace: Path, sandbox: str
) -> None:
    """The model reads, greps, globs and ``cat``s myrm's database, config and log and ``~/.ssh`` inside the
    workspace: each tool says no (one line), a read-only ``cat`` of them is no longer read-only (it asks;
    with nobody to ask it is declined), and nothing of them reaches the provider; the plain file does."""
    ws = myrm_in_workspace
    store = await Store.open(ws / "agent.db")
    try:
        settings = openai_settings(emulator, approval="ask", sandbox=sandbox)
        agent = await make_agent(store, ws, settings)
        await store.set_setting("probe", "agent-db-leak-0014")  # in the database's file, not a message
        calls = [
            ("file_read_tool", {"paths": ["myrm-config.toml", "myrm.log", "agent.db", ".ssh/id_ed25519"]}),
            ("file_read_tool", {"paths": ["notes.txt"]}),
            ("grep", {"pattern": "leak"}),
            ("glob", {"pattern": "**/*"}),
            ("bash", {"command": "cat myrm-config.toml myrm.log .ssh/id_ed25519 agent.db-wal agent.db"}),
        ]
        emulator.enqueue(Reply(tool_calls=calls), Reply(text="done"))
        await collect(agent, "read everything")
        await agent.close()
    finally:
        await store.close()
    seen = _tool_results(emulator)
    assert "visible-0013" in seen and "notes.txt" in seen
    assert "myrm's own data" in seen and "declined" in seen
    assert [s for s in PRIVATE if s in seen] == []
    assert "agent.db" not in seen.replace("'agent.db'", "")  # named only where refused, never listed


def test_an_at_mention_of_myrms_config_attaches_nothing(myrm_in_workspace: Path) -> None:
    """``@myrm-config.toml`` (``myrm ask``, an editor, the TUI): left as written, its key not sent; a
    plain file's mention attaches."""
    text, labels = attach("see @myrm-config.toml and @.ssh/id_ed25519 and @notes.txt", myrm_in_workspace)
    assert "visible-0013" in text and len(labels) == 1
    assert "sk-config-leak-0010" not in text and "ssh-leak-0012" not in text
