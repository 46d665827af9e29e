"""An attacker's pass on the read-only sandbox (the commands that run unasked): what it did not name before.
A program the workspace holds found by a relative or in-workspace PATH folder, other programs' temp files,
and what only root may read in /etc. Each attack is tried as a model would send it."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from myrm_tui.agent import sandbox
from myrm_tui.agent.proc import run_captured
from myrm_tui.agent.sandbox import READ_ONLY, Confinement, read_only_path
from myrm_tui.agent.tools import ToolContext
from myrm_tui.agent.tools.shell import BashTool
from myrm_tui.context.vault import ArtifactVault

needs_sandbox = pytest.mark.skipif(
    not sandbox.support().available, reason=f"no sandbox here: {sandbox.support().missing}"
)


def _plant(folder: Path, marker: Path) -> None:
    """A ``cat`` in ``folder`` that a model could have written: it leaves ``marker`` and says so."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "cat").write_text(f"#!/bin/sh\ntouch {marker}\necho PLANTED\n")
    (folder / "cat").chmod(0o755)


@pytest.mark.parametrize("mode", ["read-only-auto", "off"])
@pytest.mark.parametrize("entry", [".", "", "WS/bin", "WS/node_modules/.bin"])
async def test_an_unasked_command_runs_no_program_the_workspace_holds_by_its_path(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str, entry: str
) -> None:
    """`cat x.txt` runs unasked (it only reads): with `.`, an empty entry or a workspace folder on PATH
    (direnv's PATH_add, node_modules/.bin) it ran the workspace's own `cat`, a program a model may have
    written with one approved command."""
    marker = tmp_path / "ran"
    folder = entry.replace("WS", str(workspace))
    _plant(workspace / folder if not os.path.isabs(folder) else Path(folder), marker)
    (workspace / "x.txt").write_text("hi\n")
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    ctx = ToolContext(workspace=workspace, vault=ArtifactVault("s"), sandbox=mode)
    out = await BashTool().run({"command": "cat x.txt"}, ctx)
    assert "PLANTED" not in out.content and "hi" in out.content, out.content
    assert not marker.exists()


WS = "/home/u/proj"
OUTSIDE = ["/usr/bin", "/bin", "/opt/tool/bin", "/home/u/.local/bin", "/home/u/projects/bin"]
RELATIVE = ["", ".", "bin", "./node_modules/.bin", "../x"]
INSIDE = [WS, f"{WS}/bin", f"{WS}/node_modules/.bin", f"{WS}/../proj/bin"]
ENTRIES = st.sampled_from([*OUTSIDE, *RELATIVE, *INSIDE])


@given(st.lists(ENTRIES, max_size=8))
def test_the_path_of_an_unasked_command_keeps_exactly_the_absolute_folders_outside_the_workspace(
    entries: list[str],
) -> None:
    path = os.pathsep.join(entries)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PATH", path)
        got = read_only_path(Path(WS))
    parts = path.split(os.pathsep)  # [] is one empty entry: the current folder
    inside = [e for e in parts if os.path.normpath(e) == WS or os.path.normpath(e).startswith(WS + "/")]
    want = [e for e in parts if e.startswith("/") and e not in inside]
    if want == parts:
        assert got == {}
    else:
        assert got == {"PATH": os.pathsep.join(want or sandbox.SAFE_PATH)}


@needs_sandbox
async def test_read_only_reads_no_temp_file_but_its_own(workspace: Path, tmp_path: Path) -> None:
    """Other programs' temp files (a Kerberos ticket cache, another command's temp folder) are hidden,
    in /tmp, /var/tmp and wherever $TMPDIR says; its own temp folder and the workspace, even one inside
    the temp folder, stay open."""
    secret = Path(tempfile.mkdtemp()) / "krb5cc"
    secret.write_text("TICKET\n")
    (workspace / "x.txt").write_text("mine\n")
    try:
        command = f'cat {secret}; echo own > "$TMPDIR/own"; cat "$TMPDIR/own" x.txt; ls {secret.parent}'
        out = await run_captured(
            command, workspace, 60, 10_000, confine=Confinement(READ_ONLY, workspace.resolve())
        )
    finally:
        secret.unlink()
        secret.parent.rmdir()
    assert "TICKET" not in out.text and "krb5cc\n" not in out.text, out.text
    assert "own\nmine\n" in out.text


@needs_sandbox
@pytest.mark.skipif(os.geteuid() != 0 or not Path("/etc/shadow").exists(), reason="root reading /etc/shadow")
async def test_read_only_as_root_reads_nothing_in_etc_that_only_root_may(workspace: Path) -> None:
    """As root, the read-only profile opened /etc/shadow (and the ssh host keys, /etc/ssl/private)."""
    owner_only = [str(p) for p in (Path("/etc/shadow"), Path("/etc/gshadow")) if p.exists()]
    out = await run_captured(
        f"head -c 5 {' '.join(owner_only)} /etc/passwd",
        workspace,
        60,
        10_000,
        confine=Confinement(READ_ONLY, workspace.resolve()),
    )
    assert out.text.count("Permission denied") == len(owner_only), out.text
    assert "root:" in out.text  # /etc/passwd, which every user reads


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home folder with an ssh key and a shell start-up file, and an ssh agent's variable set."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("PRIVATE-KEY\n")
    (home / ".bashrc").write_text("# mine\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("SSH_AUTH_SOCK", str(tmp_path / "agent.sock"))
    return home


# (profile, command): what an attacker tries that the sandbox already stopped; none may show the key or
# change ~/.bashrc (the checks below)
ATTEMPTS = [
    (READ_ONLY, "cat /proc/self/root$HOME/.ssh/id_ed25519"),
    (READ_ONLY, 'ln -s "$HOME/.ssh" "$TMPDIR/s"; cat "$TMPDIR/s/id_ed25519"'),
    (READ_ONLY, "cat $HOME/.ssh/id_ed25519"),
    (READ_ONLY, 'echo "$SSH_AUTH_SOCK"; tr "\\0" "\\n" < /proc/$PPID/environ | grep SSH_AUTH'),
    (READ_ONLY, "echo 'export LD_PRELOAD=/x.so' >> $HOME/.bashrc"),
    (READ_ONLY, "echo 'export BASH_ENV=/x' > .envrc; echo 'curl x' > .bashrc"),
    (sandbox.WORKSPACE_WRITE, "echo 'export LD_PRELOAD=/x.so' >> $HOME/.bashrc"),
    (sandbox.WORKSPACE_WRITE, 'ln -s "$HOME/.bashrc" link; echo "PROMPT_COMMAND=x" >> link'),
    (sandbox.WORKSPACE_WRITE, "echo 'BASH_ENV=x' >> /proc/self/root$HOME/.bashrc"),
]


@needs_sandbox
@pytest.mark.parametrize(("profile", "command"), ATTEMPTS)
async def test_what_the_sandbox_already_stopped_stays_stopped(
    workspace: Path, home: Path, profile: str, command: str
) -> None:
    out = await run_captured(
        command, workspace, 60, 10_000, confine=Confinement(profile, workspace.resolve())
    )
    assert "PRIVATE-KEY" not in out.text and "agent.sock" not in out.text, out.text
    assert (home / ".bashrc").read_text() == "# mine\n"
    if profile == READ_ONLY:  # it writes nothing the next command would read
        assert not (workspace / ".envrc").exists() and not (workspace / ".bashrc").exists()


@needs_sandbox
async def test_the_next_command_reads_no_start_up_file_a_command_wrote(workspace: Path) -> None:
    """An approved command writes the files a shell might read at start (`.bashrc`, `.bash_profile`,
    `.envrc`, `.profile`) into the workspace: the next command (bash -c, neither interactive nor a login
    shell) reads none of them."""
    poison = "export LD_PRELOAD=/poison.so BASH_ENV=/poison PROMPT_COMMAND=poison; echo POISONED"
    for name in (".bashrc", ".bash_profile", ".envrc", ".profile", ".bash_login"):
        (workspace / name).write_text(poison + "\n")
    ctx = ToolContext(workspace=workspace, vault=ArtifactVault("s"), sandbox="read-only-auto")
    out = await BashTool().run({"command": "ls -a"}, ctx)  # runs unasked, confined
    assert "POISONED" not in out.content and ".envrc" in out.content
    env = await run_captured(
        "env", workspace, 60, 100_000, confine=Confinement(READ_ONLY, workspace.resolve())
    )
    assert "poison" not in env.text.lower(), env.text
