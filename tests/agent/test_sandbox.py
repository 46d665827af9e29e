"""The OS sandbox of shell commands (issue 44): what a confined command cannot do (write outside its temp
folder, read the user's secrets, reach the network or myrm's own process), what each profile means, and
that the shell tool runs every unasked command confined, or asks where no sandbox can be had."""

from __future__ import annotations

import asyncio
import os
import pty
import shlex
import shutil
import socket
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from myrm_tui.agent import sandbox, sandbox_exec
from myrm_tui.agent.permissions import Assessment, CommandRules
from myrm_tui.agent.proc import Captured, run_captured
from myrm_tui.agent.sandbox import READ_ONLY, WORKSPACE_WRITE, Confinement, Support
from myrm_tui.agent.sandbox_exec import DENIED
from myrm_tui.agent.tools import ToolContext
from myrm_tui.agent.tools.base import Approval
from myrm_tui.agent.tools.job_manager import JobManager
from myrm_tui.agent.tools.shell import BashTool
from myrm_tui.context.vault import ArtifactVault
from myrm_tui.testing.emulator import ProviderEmulator
from tests.helpers import make_app, run_myrm, started, wait_until

needs_sandbox = pytest.mark.skipif(
    not sandbox.support().available, reason=f"no sandbox here: {sandbox.support().missing}"
)


async def confined(command: str, workspace: Path, profile: str = READ_ONLY) -> Captured:
    """``command`` in ``profile``, given myrm's whole environment (``keep_env=None``): what the sandbox
    itself drops, not what the shell tool drops before it (tests/flows/test_secrets_in_commands.py)."""
    return await run_captured(
        command, workspace, 60, 100_000, confine=Confinement(profile, workspace.resolve()), keep_env=None
    )


class Listener:
    """Loopback endpoints that record whether anything reached them: a TCP listener (a connection waits
    in its backlog until accepted), a UDP socket and a UNIX socket by path (as an ssh agent's)."""

    def __init__(self, folder: Path) -> None:
        self.tcp = socket.create_server(("127.0.0.1", 0))
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", 0))
        self.unix_path = folder / "agent.sock"
        self.unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.unix.bind(str(self.unix_path))
        self.unix.listen()
        for s in (self.tcp, self.udp, self.unix):
            s.setblocking(False)

    @property
    def tcp_port(self) -> int:
        return int(self.tcp.getsockname()[1])

    def clients(self) -> str:
        """The command that tries all three (bash for TCP and UDP, perl for the UNIX socket)."""
        udp_port = self.udp.getsockname()[1]
        unix = (
            f"perl -MIO::Socket::UNIX -e 'IO::Socket::UNIX->new(Peer => \"{self.unix_path}\") or exit 3'"
            if shutil.which("perl")
            else "true"
        )
        return (
            f"(exec 3<>/dev/tcp/127.0.0.1/{self.tcp_port}) ; echo tcp=$?; "
            f"(echo x > /dev/udp/127.0.0.1/{udp_port}) ; echo udp=$?; {unix}; echo unix=$?"
        )

    def reached(self) -> list[str]:
        got = []
        for name, s in (("tcp", self.tcp), ("unix", self.unix)):
            try:
                conn, _ = s.accept()
                conn.close()
                got.append(name)
            except BlockingIOError:
                pass
        try:
            self.udp.recv(16)
            got.append("udp")
        except BlockingIOError:
            pass
        return got

    def close(self) -> None:
        for s in (self.tcp, self.udp, self.unix):
            s.close()


@pytest.fixture
def listener(tmp_path: Path) -> Iterator[Listener]:
    folder = tmp_path / "sock"
    folder.mkdir()
    endpoints = Listener(folder)
    yield endpoints
    endpoints.close()


@pytest.fixture
def secrets(tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """A fake home folder with a secret and an ``.ssh`` key, a link to it inside the workspace, and
    myrm's database and log holding secrets too (all outside the workspace)."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / "secret.txt").write_text("HOME_SECRET\n")
    (home / ".ssh" / "id_ed25519").write_text("SSH_SECRET\n")
    (workspace / "homelink").symlink_to(home, target_is_directory=True)
    db = Path(os.environ["MYRM_DB"])
    db.write_text("DB_SECRET\n")
    log = tmp_path / "logs" / "myrm.log"
    log.parent.mkdir()
    log.write_text("LOG_SECRET\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("MYRM_LOG", str(log))
    # a PATH folder that holds the home folder must not make it readable again
    monkeypatch.setenv("PATH", f"{home}{os.pathsep}{tmp_path}{os.pathsep}{os.environ['PATH']}")
    return {"home": home, "db": db, "log": log}


# --- what a confined command cannot do -------------------------------------------------------------------


@needs_sandbox
async def test_read_only_writes_nothing_but_its_temp_folder(workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    out = await confined(
        f'echo "$TMPDIR"; echo x > made.txt; echo y > {outside}/out.txt; rm hello.py; mkdir newdir; '
        'ln -s hello.py link; echo z > "$TMPDIR/t" && cat "$TMPDIR/t"; echo q > /dev/null && echo null-ok',
        workspace,
    )
    tmp = Path(out.text.splitlines()[0])
    assert tmp.name.startswith("myrm-sandbox-") and not tmp.exists()  # private, and removed afterwards
    assert "\nz\n" in out.text and "null-ok" in out.text  # its temp folder and /dev/null work
    assert (workspace / "hello.py").exists()
    assert sorted(p.name for p in workspace.iterdir()) == ["hello.py"]
    assert list(outside.iterdir()) == []
    assert out.text.count("Permission denied") >= 4


@needs_sandbox
async def test_read_only_reads_the_workspace_but_no_secret_outside_it(
    workspace: Path, secrets: dict[str, Path]
) -> None:
    out = await confined(
        f"cat hello.py; cat homelink/secret.txt; cat {secrets['home']}/.ssh/id_ed25519; "
        f"cat {secrets['db']}; cat {secrets['log']}; grep -r SECRET {secrets['home']}",
        workspace,
    )
    assert "def greet" in out.text
    for secret in ("HOME_SECRET", "SSH_SECRET", "DB_SECRET", "LOG_SECRET"):
        assert secret not in out.text
    # unconfined, the same command reads them all: the test can see a leak
    free = await run_captured(f"cat homelink/secret.txt {secrets['db']}", workspace, 60, 100_000)
    assert "HOME_SECRET" in free.text and "DB_SECRET" in free.text


@needs_sandbox
@pytest.mark.parametrize(
    "layout",
    [
        "gitdir: {home}",
        "gitdir: {home}/.ssh",
        "link to {home}",
        "gitdir: {home}/repo/.git with commondir: {home}",
    ],
)
async def test_a_git_folder_the_workspace_names_does_not_open_the_home_folder(
    workspace: Path, secrets: dict[str, Path], layout: str
) -> None:
    """The git folder of a workspace stays readable (a linked worktree's lies in the hidden home), but a
    downloaded repository's ``.git`` may name any folder: only a git folder (``HEAD`` and ``objects``, or
    a ``commondir``) is granted, so ``gitdir: ~`` does not make the home folder readable again."""
    home = secrets["home"]
    repo = home / "repo" / ".git"  # a real-looking git folder whose commondir names the home folder
    (repo / "objects").mkdir(parents=True)
    (repo / "HEAD").write_text("ref: refs/heads/main\n")
    (repo / "commondir").write_text(str(home))
    if layout.startswith("link"):
        (workspace / ".git").symlink_to(home, target_is_directory=True)
    else:
        target = home / ".ssh" if ".ssh" in layout else repo if "commondir" in layout else home
        (workspace / ".git").write_text(f"gitdir: {target}\n")
    out = await confined(f"cat {home}/secret.txt {home}/.ssh/id_ed25519", workspace)
    assert "HOME_SECRET" not in out.text and "SSH_SECRET" not in out.text, out.text


@needs_sandbox
async def test_the_home_folders_dot_folders_stay_hidden_when_the_workspace_is_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("SSH_SECRET\n")
    (home / "notes.txt").write_text("my notes\n")
    monkeypatch.setenv("HOME", str(home))
    out = await confined("cat notes.txt .ssh/id_ed25519", home)
    assert "my notes" in out.text and "SSH_SECRET" not in out.text


@needs_sandbox
async def test_read_only_reaches_no_network(workspace: Path, listener: Listener) -> None:
    out = await confined(listener.clients(), workspace)
    assert listener.reached() == [], out.text
    assert "tcp=1" in out.text and "udp=1" in out.text
    # unconfined, the same command reaches all three: the listener sees a connection when there is one
    free = await run_captured(listener.clients(), workspace, 60, 100_000)
    assert sorted(listener.reached()) == sorted(
        ["tcp", "udp", "unix"] if shutil.which("perl") else ["tcp", "udp"]
    )
    assert "tcp=0" in free.text


@needs_sandbox
async def test_read_only_cannot_reach_myrm_its_environment_or_its_keys(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """myrm's keys are in its environment, which ``/proc/PID/environ`` shows (as it was at exec: a
    process started with the key stands for myrm); the command's own copy has them too."""
    monkeypatch.setenv("SANDBOX_TEST_API_KEY", "KEY_SECRET")
    holder = subprocess.Popen(["sleep", "60"], env=dict(os.environ))
    try:
        me = os.getpid()
        command = (
            f"tr '\\0' '\\n' < /proc/{holder.pid}/environ | grep -c KEY_SECRET; kill -0 {me}; "
            'echo kill=$?; echo "key=${SANDBOX_TEST_API_KEY:-none}"; echo "path=${PATH:+set}"'
        )
        out = await confined(command, workspace)
        assert "KEY_SECRET" not in out.text and "\n0\n" in "\n" + out.text
        assert "kill=1" in out.text  # no signal to a process outside the sandbox
        assert "key=none" in out.text and "path=set" in out.text  # secret-looking variables dropped only
        # unconfined and given every variable (as a hook is): all three reachable
        free = await run_captured(command, workspace, 60, 100_000, keep_env=None)
        assert free.text.startswith("1\n") and "kill=0" in free.text and "key=KEY_SECRET" in free.text
    finally:
        holder.kill()
        holder.wait()


def _opens(paths: list[str]) -> str:
    """A command that opens each path for reading, without blocking or taking it as its terminal, and
    prints the ones it could open: what it could read of them."""
    return "; ".join(
        f"dd if={q} iflag=nonblock,noctty count=0 status=none 2>/dev/null && echo opened {q}"
        for q in map(shlex.quote, paths)
    )


def _opened(text: str) -> set[str]:
    return {line.split(" ", 1)[1] for line in text.splitlines() if line.startswith("opened ")}


def _devices() -> list[str]:
    """Every device node under /dev this user may open for reading (terminals, disks as root, consoles'
    screens…), but a watchdog: opening one arms it, and an unfed watchdog reboots the machine."""
    found = []
    for folder, _, files in os.walk("/dev"):
        for name in files:
            path = os.path.join(folder, name)
            try:
                st = os.lstat(path)
            except OSError:
                continue
            device = stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode)
            if device and "watchdog" not in name and os.access(path, os.R_OK):
                found.append(path)
    return sorted(found)


@needs_sandbox
async def test_read_only_reads_no_terminal_and_no_device_but_the_harmless_ones(workspace: Path) -> None:
    """A terminal is read by its path (``/dev/pts/N``), not only as stdin: a confined command that opens
    myrm's takes the keys the user types next and prints them to the model; as root a disk
    (``/dev/sda``) holds every hidden file. Of every device this user may read, a confined command opens
    only those that hold nothing: null, zero, full, random and urandom. A terminal opened here stands for
    myrm's, so there is always one to find."""
    primary, terminal = pty.openpty()
    try:
        tty = os.ttyname(terminal)
        devices = _devices()
        assert tty in devices
        free = await run_captured(_opens([tty]), workspace, 60, 100_000)
        assert _opened(free.text) == {tty}  # unconfined it opens: the test can see a leak
        out = await confined(_opens(devices), workspace)
        assert _opened(out.text) <= set(sandbox.HARMLESS_DEVICES), out.text
        assert {"/dev/null", "/dev/urandom"} <= _opened(out.text)  # what commands use still works
        (workspace / "tty").symlink_to(tty)  # nor through a link to it inside the workspace
        assert _opened((await confined(_opens(["tty"]), workspace)).text) == set()
    finally:
        os.close(primary)
        os.close(terminal)


@needs_sandbox
async def test_read_only_reads_none_of_procs_files_that_only_root_may(workspace: Path) -> None:
    """/proc's system files stay readable (``/proc/cpuinfo``), but not those only root may read: as root,
    ``/proc/kcore`` is the machine's memory (myrm's keys in it) and ``/proc/kmsg`` the kernel's log."""
    root_only = [
        e.path
        for e in os.scandir("/proc")
        if not e.name.isdigit() and not e.is_symlink() and e.is_file() and not e.stat().st_mode & 0o004
    ]
    readable = [p for p in root_only if os.access(p, os.R_OK)]
    if not readable:
        pytest.skip("only root may read /proc's root-only files")
    free = await run_captured(_opens(readable), workspace, 60, 100_000)
    assert _opened(free.text) == set(readable)  # unconfined they open: the test can see a leak
    out = await confined(_opens([*readable, "/proc/cpuinfo"]), workspace)
    assert _opened(out.text) == {"/proc/cpuinfo"}, out.text


@needs_sandbox
async def test_workspace_write_writes_the_workspace_only_and_keeps_the_network(
    workspace: Path, tmp_path: Path, listener: Listener
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    out = await confined(
        f"echo x > made.txt; echo y > {outside}/out.txt; (exec 3<>/dev/tcp/127.0.0.1/{listener.tcp_port}); "
        "echo tcp=$?",
        workspace,
        WORKSPACE_WRITE,
    )
    assert (workspace / "made.txt").read_text() == "x\n"
    assert list(outside.iterdir()) == []
    assert "tcp=0" in out.text and listener.reached() == ["tcp"]  # the user approved it: network as usual


def test_a_sandbox_that_cannot_be_applied_runs_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    exec_file = Path(sandbox.EXEC_FILE)
    for options in (["--set", "NOEQUALS"], ["--bogus"], ["--read"], ["--write", "/", "--hide"]):
        proc = subprocess.run(
            [sys.executable, "-I", "-S", str(exec_file), *options, "--", "touch", str(marker)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode == DENIED and "myrm sandbox: not run" in proc.stderr
        assert not marker.exists()


# --- the shell tool: unasked commands run confined, or ask ------------------------------------------------


def _ctx(workspace: Path, mode: str, asked: list[Assessment] | None = None, **kw: object) -> ToolContext:
    async def approver(tool: str, shown: str, assessment: Assessment) -> Approval:
        assert asked is not None, f"asked unexpectedly: {shown}"
        asked.append(assessment)
        return "yes"

    return ToolContext(
        workspace=workspace,
        vault=ArtifactVault("s"),
        approver=approver,
        sandbox=mode,
        **kw,  # type: ignore[arg-type]
    )


@pytest.fixture
def hostile_cat(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, listener: Listener) -> Path:
    """A ``cat`` first on PATH that does what a hostile program reached by a read-only command would:
    write a file and phone home (as a cloned repository's fsmonitor or a poisoned PATH would)."""
    shims = tmp_path / "shims"
    shims.mkdir()
    marker = tmp_path / "PWN"
    (shims / "cat").write_text(
        f"#!/bin/bash\ntouch {marker} PWN_IN_WORKSPACE\n"
        f'(exec 3<>/dev/tcp/127.0.0.1/{listener.tcp_port})\nexec /bin/cat "$@"\n'
    )
    (shims / "cat").chmod(0o755)
    monkeypatch.setenv("PATH", f"{shims}{os.pathsep}{os.environ['PATH']}")
    return marker


@needs_sandbox
async def test_an_unasked_command_is_confined_so_the_allow_list_is_not_the_boundary(
    workspace: Path, hostile_cat: Path, listener: Listener
) -> None:
    assert CommandRules().assess("cat hello.py", workspace).read_only
    # a rule that covers a read-only command does not take it out of the sandbox, nor approval = "auto"
    for rules, auto in ((CommandRules(), False), (CommandRules(["cat"]), False), (CommandRules(), True)):
        ctx = _ctx(workspace, "read-only-auto", allowed_commands=rules, auto_approve=auto)
        res = await BashTool().run({"command": "cat hello.py"}, ctx)
        assert "def greet" in res.content  # it ran, unasked, and did its job
        assert not hostile_cat.exists() and not (workspace / "PWN_IN_WORKSPACE").exists()
        assert listener.reached() == []
    # with the sandbox off the same command runs the hostile program in full: the attack is real
    await BashTool().run({"command": "cat hello.py"}, _ctx(workspace, "off"))
    assert hostile_cat.exists() and listener.reached() == ["tcp"]


@needs_sandbox
async def test_a_background_read_only_job_is_confined_too(
    workspace: Path, tmp_path: Path, hostile_cat: Path, listener: Listener
) -> None:
    jobs = JobManager(tmp_path / "jobs" / "s", poll=0.05)
    ctx = _ctx(workspace, "read-only-auto", jobs=jobs)
    try:
        res = await BashTool().run({"command": "cat hello.py", "run_in_background": True}, ctx)
        job = jobs.get(res.meta["job_id"])
        assert job.command == "cat hello.py"  # listed as sent, not as the wrapper runs it
        await asyncio.wait_for(job.done.wait(), 60)
        assert job.exit_code == 0 and b"def greet" in job.log.read_bytes()
        assert not hostile_cat.exists() and listener.reached() == []
    finally:
        await jobs.close()


@needs_sandbox
async def test_approved_commands_run_as_before_or_in_the_workspace_write_profile(
    workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    command = f"touch made.txt {outside}/out.txt"
    asked: list[Assessment] = []
    await BashTool().run({"command": command}, _ctx(workspace, "workspace-write", asked))
    assert len(asked) == 1 and (workspace / "made.txt").exists() and list(outside.iterdir()) == []
    await BashTool().run({"command": command}, _ctx(workspace, "read-only-auto", asked))
    assert len(asked) == 2 and (outside / "out.txt").exists()  # approved: unconfined, as before


async def test_without_landlock_every_command_asks_and_none_runs_unconfined_unasked(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sandbox, "support", lambda: Support(0, "the kernel offers no Landlock"))
    asked: list[Assessment] = []
    res = await BashTool().run({"command": "cat hello.py"}, _ctx(workspace, "read-only-auto", asked))
    assert "def greet" in res.content and len(asked) == 1  # it asked first, then ran (approved)
    assert any("no OS sandbox here (the kernel offers no Landlock)" in p for p in asked[0].problems)
    # nobody to ask (`myrm ask` without --yes): it does not run
    ctx = ToolContext(workspace=workspace, vault=ArtifactVault("s"), sandbox="workspace-write")
    res = await BashTool().run({"command": "cat hello.py"}, ctx)
    assert res.meta.get("declined") and "def greet" not in res.content
    # sandbox = "off" was chosen: the rules alone decide, as before
    res = await BashTool().run({"command": "cat hello.py"}, _ctx(workspace, "off"))
    assert "def greet" in res.content
    assert "UNAVAILABLE" in sandbox.support().line("read-only-auto")


def test_the_spec_is_what_the_profiles_promise(workspace: Path, tmp_path: Path) -> None:
    ro = Confinement(READ_ONLY, workspace).spec(tmp_path / "t")
    assert ro["network"] is False and ro["write"] == [str(tmp_path / "t"), "/dev/null"]
    assert str(Path(os.environ["MYRM_DB"])) in ro["hidden_always"]  # type: ignore[operator]
    assert "/proc" in ro["hidden_always"]  # type: ignore[operator]
    ww = Confinement(WORKSPACE_WRITE, workspace).spec(tmp_path / "t")
    assert ww["network"] is True and str(workspace) in ww["write"]  # type: ignore[operator]
    assert sandbox_exec.decode([*sandbox_exec.encode(ro), "--", "true"]) == (ro, ["true"])


# --- said once: doctor and the side panel ----------------------------------------------------------------


def test_doctor_says_which_sandbox_runs_or_that_there_is_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, absent_gguf: dict[str, str]
) -> None:
    env = {
        **os.environ,
        "MYRM_DB": str(tmp_path / "d.db"),
        "MYRM_CONFIG": str(tmp_path / "none.toml"),
        **absent_gguf,
    }
    monkeypatch.setattr(sandbox, "support", lambda: Support(0, "the kernel offers no Landlock"))
    proc = run_myrm(["doctor"], env=env)
    assert (
        "sandbox: UNAVAILABLE (the kernel offers no Landlock): every shell command asks first" in proc.stdout
    ), proc.stdout
    # (one doctor run) the other lines it may print
    assert Support(7).line("workspace-write") == "workspace-write (Landlock ABI 7 + seccomp)"
    assert Support(0, "x").line("off").startswith("off (")


@pytest.mark.parametrize("missing", ["the kernel offers no Landlock", ""])
async def test_the_side_panel_says_when_there_is_no_sandbox(
    missing: str, emulator: ProviderEmulator, tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from textual.widgets import Static

    monkeypatch.setattr(sandbox, "support", lambda: Support(0 if missing else 7, missing))
    app = make_app(emulator, tmp_path, workspace, preheat=False)
    async with started(app, size=(140, 42)) as pilot:
        line = app.query_one("#sandbox", Static)
        if missing:
            await wait_until(pilot, lambda: line.display and "No OS sandbox here" in str(line.render()))
            assert "(the kernel offers no Landlock): shell commands ask first" in str(line.render())
        else:
            await wait_until(pilot, lambda: not line.display)


def test_the_setting_takes_the_three_profiles_and_names_them_when_wrong() -> None:
    from myrm_tui.config import ConfigError, resolve

    assert resolve({}, {}, {}, env={}).sandbox == "read-only-auto"
    for mode in sandbox.MODES:
        assert resolve({"sandbox": mode}, {}, {}, env={}).sandbox == mode
    assert resolve({}, {}, {}, env={"MYRM_SANDBOX": "off"}).sandbox == "off"
    with pytest.raises(ConfigError) as err:
        resolve({"sandbox": "strict"}, {}, {}, env={})
    assert "sandbox" in str(err.value) and '"read-only-auto", "workspace-write", "off"' in str(err.value)


LANDLOCK_ONLY = """
import socket, sys
sys.path.insert(0, sys.argv[1])
import sandbox_exec
sandbox_exec._install_seccomp = lambda *args: None  # Landlock's own network rules, alone
sandbox_exec.apply({"read": ["/"], "network": False})
for kind, address in ((socket.SOCK_STREAM, int(sys.argv[2])), (socket.SOCK_DGRAM, int(sys.argv[3]))):
    s = socket.socket(socket.AF_INET, kind)
    try:
        s.connect(("127.0.0.1", address))
        s.send(b"x")
        print("reached")
    except OSError as exc:
        print("refused", exc.errno)
"""


@pytest.mark.skipif(sandbox.support().abi < 4, reason="Landlock's network rules need ABI 4")
def test_landlock_alone_refuses_tcp_and_seccomp_is_what_stops_udp(listener: Listener) -> None:
    """Two layers: Landlock refuses TCP connect and bind; UDP (and UNIX sockets) it does not know, which
    is why the seccomp filter refuses every new socket."""
    folder = str(Path(sandbox.EXEC_FILE).parent)
    udp = listener.udp.getsockname()[1]
    proc = subprocess.run(
        [sys.executable, "-I", "-c", LANDLOCK_ONLY, folder, str(listener.tcp_port), str(udp)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.stdout.split("\n")[:2] == ["refused 13", "reached"], proc.stdout + proc.stderr
    assert listener.reached() == ["udp"]


@needs_sandbox
async def test_git_works_in_a_linked_worktree_whose_repository_is_in_the_hidden_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if shutil.which("git") is None:
        pytest.skip("needs git")
    home = tmp_path / "home"
    main = home / "proj"
    main.mkdir(parents=True)
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(home)}

    def git(cwd: Path, *args: str) -> None:
        subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, timeout=60)

    git(main, "init", "-q")
    (main / "a.txt").write_text("a\n")
    git(main, "add", "a.txt")
    git(main, "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "a")
    linked = tmp_path / "proj-wt"
    git(main, "worktree", "add", "-q", str(linked))
    (linked / "a.txt").write_text("changed\n")
    monkeypatch.setenv("HOME", str(home))
    out = await confined("git status --short; git log --oneline | wc -l", linked)
    assert out.code == 0 and out.text == " M a.txt\n1\n", out.text
    denied = await confined(f"cat {main}/a.txt", linked)
    assert "Permission denied" in denied.text  # the work tree there stays hidden: only its .git is read
