"""Each shell command's resource limits (agent/limits.py): a fork bomb, a process that allocates without end
and a write that would fill the disk are stopped in the command, whatever its sandbox profile, with one line
saying which limit and how to raise it; myrm goes on. Every command here is bounded by itself (a bounded
number of forks, of MiB, of bytes), so that a missing limit makes the test fail, not the machine."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from myrm_tui.agent import sandbox, sandbox_exec
from myrm_tui.agent.limits import MIB, OUT_OF_MEMORY, Limits, limit_notes, pid_cgroup_parent
from myrm_tui.agent.proc import Captured, _proc_stat, run_captured
from myrm_tui.agent.sandbox import READ_ONLY, UNCONFINED, WORKSPACE_WRITE, Confinement
from myrm_tui.agent.tools import ToolContext
from myrm_tui.agent.tools.job_manager import JobManager
from myrm_tui.agent.tools.shell import BashTool
from myrm_tui.config import ConfigError, processes_for, resolve
from myrm_tui.context.vault import ArtifactVault
from myrm_tui.store.db import Store
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests import warm
from tests.helpers import cli_env, emulator_args, run_myrm

# a Python the read-only profile can run (the test's own may live in the hidden home folder)
PY = next(
    (p for p in ("/usr/bin/python3", "/usr/local/bin/python3") if os.access(p, os.X_OK)), sys.executable
)
SMALL = Limits(processes=32, memory_mb=128, file_size_mb=1)
PROFILES = [UNCONFINED] + ([READ_ONLY, WORKSPACE_WRITE] if sandbox.support().available else [])
# the kernel never applies RLIMIT_NPROC to root: there, only a pid cgroup limits processes
no_process_limit = pytest.mark.skipif(
    os.getuid() == 0 and pid_cgroup_parent() is None, reason="root without a pid cgroup: no process limit"
)


async def limited(command: str, workspace: Path, profile: str, limits: Limits = SMALL) -> Captured:
    confine = Confinement(profile, workspace.resolve(), limits=limits)
    return await run_captured(command, workspace, 60, 100_000, confine=confine)


def _where(profile: str) -> str:
    """A folder the profile writes: its temp folder when it writes only there."""
    return '"$TMPDIR"' if profile == READ_ONLY else "."


def _alive(pid: int) -> bool:
    st = _proc_stat(pid)
    return st is not None and st[3] != "Z"


# Forks up to 200 children that sleep, and says how many it could: bounded with or without a limit.
FORKS = (
    f"{PY} -c 'import os, time\n"
    "n = 0\n"
    "for _ in range(200):\n"
    "    try:\n"
    "        pid = os.fork()\n"
    "    except OSError as e:\n"
    '        print("refused after", n, e.strerror); break\n'
    "    if pid == 0:\n"
    "        time.sleep(60); os._exit(0)\n"
    "    n += 1\n"
    "else:\n"
    '    print("forked all", n)\''
)


@no_process_limit
@pytest.mark.parametrize("profile", PROFILES)
async def test_a_fork_bomb_stops_at_the_process_limit_and_leaves_nothing(
    workspace: Path, profile: str
) -> None:
    out = await limited(FORKS, workspace, profile)
    assert "refused after" in out.text, out.text
    assert int(out.text.split("refused after")[1].split()[0]) < SMALL.processes
    assert out.processes_hit or pid_cgroup_parent() is None


@pytest.mark.parametrize("profile", PROFILES)
async def test_a_process_that_allocates_without_end_is_stopped_in_itself(
    workspace: Path, profile: str
) -> None:
    # up to 1 GiB, a MiB at a time: far past the limit of 128 MiB
    grab = f"{PY} -c 'x = [bytearray(1 << 20) for _ in range(1024)]; print(\"got\", len(x))'"
    out = await limited(grab, workspace, profile)
    assert "MemoryError" in out.text and "got" not in out.text, out.text
    assert out.code == 1


@pytest.mark.parametrize("profile", PROFILES)
async def test_a_write_stops_at_the_file_size_limit(workspace: Path, profile: str) -> None:
    big = f"{_where(profile)}/big"
    out = await limited(
        f"dd if=/dev/zero of={big} bs=1M count=3 2>/dev/null; echo dd=$?; stat -c %s {big}",
        workspace,
        profile,
    )
    assert "dd=153" in out.text, out.text  # ended by SIGXFSZ (128 + 25)
    assert out.text.split()[-1] == str(MIB), out.text


@pytest.mark.parametrize("profile", PROFILES)
async def test_no_core_dumps_and_a_limit_cannot_be_raised_again(workspace: Path, profile: str) -> None:
    out = await limited(
        "ulimit -H -c; ulimit -H -f unlimited; echo raised=$?; ulimit -H -f", workspace, profile
    )
    core, _, rest = out.text.partition("\n")
    assert core == "0" and "raised=1" in rest and rest.split()[-1] == str(MIB // 1024), out.text


@pytest.mark.parametrize("profile", PROFILES)
async def test_a_detached_cpu_spinner_ends_with_its_command(workspace: Path, profile: str) -> None:
    """One left running in the command's group (killed at the timeout) and one in a session of its own
    (setsid: outside the group; killed with the command's pid cgroup, when its command ends)."""
    spin = "while :; do :; done"
    command = f"(exec -a spinA bash -c '{spin}') >/dev/null 2>&1 & echo $!; "
    if pid_cgroup_parent() is not None:
        command += f"setsid bash -c '{spin}' >/dev/null 2>&1 & echo $!; "
    out = await run_captured(
        command + "sleep 60",
        workspace,
        1.0,
        100_000,
        confine=Confinement(profile, workspace.resolve(), limits=SMALL),
    )
    pids = [int(p) for p in out.text.split()]
    try:
        assert out.timed_out and pids
        assert not any(_alive(p) for p in pids)  # SIGKILL was sent before run_captured returned
    finally:
        for p in pids:
            if _alive(p):
                os.kill(p, 9)


@pytest.mark.parametrize("profile", PROFILES)
async def test_a_setsid_spinner_left_by_an_ended_command_is_stopped(workspace: Path, profile: str) -> None:
    if pid_cgroup_parent() is None:
        pytest.skip("no pid cgroup here: such a process is stopped when myrm exits (proc.py's watcher)")
    out = await limited("setsid bash -c 'while :; do :; done' >/dev/null 2>&1 & echo $!", workspace, profile)
    pid = int(out.text.split()[0])
    try:
        assert out.code == 0 and out.left_stopped == 1 and not _alive(pid)
    finally:
        if _alive(pid):
            os.kill(pid, 9)


def _tool_ctx(workspace: Path, limits: Limits) -> ToolContext:
    return ToolContext(workspace=workspace, vault=ArtifactVault("s"), auto_approve=True, limits=limits)


async def test_the_model_is_told_which_limit_stopped_the_command_and_how_to_raise_it(workspace: Path) -> None:
    ctx = _tool_ctx(workspace, SMALL)
    out = await BashTool().run({"command": "dd if=/dev/zero of=big bs=1M count=3"}, ctx)
    assert "[a write reached the file size limit of 1 MiB (limit_file_size_mb in config.toml" in out.content
    grab = f"{PY} -c 'x = [bytearray(1 << 20) for _ in range(1024)]'"
    out = await BashTool().run({"command": grab}, ctx)
    assert "limit of 128 MiB a process (limit_memory_mb in config.toml raises it" in out.content
    out = await BashTool().run({"command": "echo fine"}, ctx)
    assert "limit" not in out.content and "stopped" not in out.content
    if pid_cgroup_parent() is not None:
        out = await BashTool().run({"command": "setsid sleep 60 >/dev/null 2>&1 &"}, ctx)
        assert "[the command ended; 1 process(es) it left running were stopped. Start servers" in out.content


async def test_a_command_that_only_shows_a_limits_message_gets_no_note(workspace: Path) -> None:
    """``grep -rn "out of memory" src/`` or ``cat`` of an old log succeeds and names no limit it reached:
    the model was told a process ran out of memory (found in review5). Text alone is a sign when it failed."""
    (workspace / "old.log").write_text(
        "".join(f"{m}\n" for m in MARKERS) + "bash: fork: Resource temporarily unavailable\n"
    )
    ctx = _tool_ctx(workspace, SMALL)
    for command in ("cat old.log", "grep -n . old.log"):
        out = await BashTool().run({"command": command}, ctx)
        assert "<returncode>0</returncode>" in out.content and "Cannot allocate memory" in out.content
        assert "config.toml raises it" not in out.content, out.content


@no_process_limit
async def test_the_process_limit_is_named_to_the_model(workspace: Path) -> None:
    out = await BashTool().run({"command": FORKS}, _tool_ctx(workspace, SMALL))
    assert (
        "[stopped at the process limit: no more than 32 processes and threads (limit_processes" in out.content
    )


async def test_a_limit_of_zero_is_none(workspace: Path) -> None:
    out = await BashTool().run({"command": "ulimit -d; ulimit -f"}, _tool_ctx(workspace, Limits(0, 0, 0)))
    assert out.content.count("unlimited") == 2, out.content
    assert Limits.of(0, 0, 0) is None and Limits.of(0, 0, 1) == Limits(0, 0, 1)


@settings(max_examples=6)
@given(
    processes=st.integers(1, 4096),
    memory=st.integers(64, 1 << 20),
    size=st.integers(1, 1 << 20),
    cgroup=st.one_of(st.none(), st.just("/sys/fs/cgroup/pids/x")),
)
def test_the_limits_reach_the_wrapper_as_written(
    processes: int, memory: int, size: int, cgroup: str | None
) -> None:
    """What the wrapper reads back is what was set, in bytes, for every profile."""
    limits = Limits(processes, memory, size)
    for profile in (UNCONFINED, READ_ONLY, WORKSPACE_WRITE):
        confine = Confinement(profile, Path("/w"), limits=limits)
        tmp = None if profile == UNCONFINED else Path("/t")
        written = sandbox_exec.encode(confine.spec(tmp, Path(cgroup) if cgroup else None))
        spec, argv = sandbox_exec.decode([*written, "--", "true"])
        assert argv == ["true"]
        want = {"core": "0", "data": str(memory * MIB), "fsize": str(size * MIB)}
        if cgroup is None:
            want["nproc"] = str(processes)
        assert spec["limits"] == want
        assert spec.get("cgroup", []) == ([cgroup] if cgroup else [])
        assert spec.get("landlock", True) is (profile != UNCONFINED)


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("limit_processes", "-1", "an integer >= 0"),
        ("limit_memory_mb", "lots", "an integer >= 0"),
        ("limit_file_size_mb", "true", "an integer >= 0"),
    ],
)
def test_each_limit_is_a_checked_setting(key: str, value: str, expected: str) -> None:
    with pytest.raises(ConfigError) as info:
        resolve({}, {}, {}, env={f"MYRM_{key.upper()}": value})
    assert key in str(info.value) and expected in str(info.value)
    assert getattr(resolve({}, {}, {}, env={f"MYRM_{key.upper()}": "7"}), key) == 7


def test_the_default_memory_bound_is_half_the_machines_memory() -> None:
    """Read from /proc/meminfo here, not from sysconf as the code does: a fixed 4 GiB would stop a big
    link or a test loading a model on a 64 GiB machine, with a bound no smaller than 1 GiB on a tiny one."""
    meminfo = Path("/proc/meminfo").read_text()
    total_mib = int(re.search(r"^MemTotal:\s+(\d+) kB$", meminfo, re.M)[1]) // 1024  # type: ignore[index]
    got = resolve({}, {}, {}, env={}).limit_memory_mb
    assert got == max(1024, total_mib // 2) or abs(got - total_mib // 2) <= 1
    assert resolve({}, {}, {}, env={}).limit_file_size_mb == 8192


@given(cpus=st.one_of(st.none(), st.integers(1, 1024)))
def test_the_default_process_bound_grows_with_the_cpus_and_stops_a_fork_bomb(cpus: int | None) -> None:
    """A parallel build on a big machine (threads count: a JVM runs ~20) fits; a fork bomb still stops at
    a few thousand per CPU's share, far below what the kernel allows a user (pid_max 4,194,304)."""
    bound = processes_for(cpus)
    assert 4096 <= bound <= 4096 + 256 * (cpus or 1)
    assert bound >= 256 * (cpus or 1)
    assert resolve({}, {}, {}, env={}).limit_processes == processes_for(os.cpu_count())


def test_myrm_ask_applies_the_configured_limits_and_survives_a_runaway_command(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    """The settings reach the shell: with limit_file_size_mb = 2 the model's 5 MiB write stops at 2 MiB,
    the model reads why, and myrm finishes the turn."""
    emulator.enqueue(
        Reply(tool_calls=[("bash", {"command": "dd if=/dev/zero of=big bs=1M count=5"})]), Reply(text="Done.")
    )
    env = {
        **os.environ,
        "MYRM_DB": str(tmp_path / "ask.db"),
        "MYRM_CONFIG": str(tmp_path / "none.toml"),
        "MYRM_LIMIT_FILE_SIZE_MB": "2",
        "OPENAI_API_KEY": "sk-test",
    }
    args = ["ask", "--yes", "--model", "openai/gpt-4o-mini", "--api-base", emulator.openai_base]
    proc = run_myrm([*args, "--workspace", str(workspace), "go"], env=env, cwd=workspace)
    assert proc.returncode == 0 and proc.stdout.strip() == "Done.", proc.stderr
    assert (workspace / "big").stat().st_size == 2 * MIB
    told = str(emulator.accepted[-1].body["messages"][-1]["content"])
    assert "file size limit of 2 MiB (limit_file_size_mb" in told, told


@no_process_limit
async def test_a_background_job_has_the_same_limits(workspace: Path, tmp_path: Path) -> None:
    ctx = _tool_ctx(workspace, SMALL)
    ctx.jobs = JobManager(tmp_path / "jobs")
    try:
        await BashTool().run({"command": FORKS, "run_in_background": True}, ctx)
        job = ctx.jobs.get("job-1")
        await asyncio.wait_for(job.done.wait(), 60)
        text = job.log.read_text()
        assert "refused after" in text and int(text.split("refused after")[1].split()[0]) < SMALL.processes
    finally:
        await ctx.jobs.close()


@pytest.mark.parametrize("profile", PROFILES)
async def test_a_command_gets_the_default_sigpipe_not_pythons(workspace: Path, profile: str) -> None:
    """The wrapper is Python, which ignores SIGPIPE and SIGXFSZ, and an ignored signal stays ignored
    across exec: `yes | head -1` ended in a "Broken pipe" error in every sandboxed command."""
    out = await limited("yes | head -1", workspace, profile)
    assert out.text == "y\n" and out.code == 0, out.text


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A real 8 MiB file system (a tmpfs: mounting one needs root), unmounted afterwards."""
    disk = tmp_path / "disk"
    disk.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(disk)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"no small file system to fill here: {done.stderr.decode().strip()}")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def test_a_command_that_fills_the_disk_leaves_myrms_database_whole(
    emulator: ProviderEmulator, small_disk: Path
) -> None:
    """Files each under the file size limit still fill a disk: the database on it refuses the turn in one
    line ("disk is full"), keeps what it had, and works again once there is room."""
    workspace = small_disk / "ws"
    workspace.mkdir()
    env = cli_env(small_disk)
    emulator.enqueue(Reply(text="first answer"))
    proc = run_myrm(["ask", *emulator_args(emulator, workspace), "--yes", "hello"], env=env, cwd=workspace)
    assert proc.returncode == 0, proc.stderr
    sid = re.search(r"\[session (\w+)\]", proc.stderr)
    assert sid is not None
    # 256 KiB files until the disk refuses one, then 400 KB of output to store
    fill = "i=0; while head -c 262144 /dev/zero > f$i 2>/dev/null; do i=$((i+1)); done; echo $i; seq 1 60000"
    emulator.enqueue(Reply(tool_calls=[("bash", {"command": fill})]), Reply(text="filled"))
    args = ["ask", *emulator_args(emulator, workspace), "--yes", "--session", sid.group(1), "fill it"]
    # a process of its own, as a user's myrm: its session lock goes with it, however its turn ended
    run = [sys.executable, "-m", "myrm_tui.cli", *args]
    proc = warm.run(run, capture_output=True, text=True, env=env, cwd=workspace, timeout=120)
    assert shutil.disk_usage(small_disk).free < 256 * 1024  # the command did fill it
    assert "Traceback" not in proc.stderr + proc.stdout
    if proc.returncode != 0:  # what the disk could not hold was refused in one line
        errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("myrm:")]
        assert proc.returncode == 2 and len(errors) == 1 and "disk is full" in errors[0], proc.stderr[-3000:]
    for f in workspace.glob("f*"):
        f.unlink()

    async def check() -> list[str]:
        store = await Store.open(small_disk / "cli.db")
        try:
            async with store.conn.execute("PRAGMA integrity_check") as cur:
                assert (await cur.fetchone())[0] == "ok"  # type: ignore[index]
            return [m.text for m in await store.load_messages(sid.group(1))]
        finally:
            await store.close()

    texts = asyncio.run(check())
    assert "hello" in texts and "first answer" in texts and "fill it" in texts
    emulator.script.clear()
    emulator.enqueue(Reply(text="room again"))
    args = ["ask", *emulator_args(emulator, workspace), "--yes", "--session", sid.group(1), "again"]
    proc = run_myrm(args, env=env, cwd=workspace)
    assert proc.returncode == 0 and proc.stdout.strip() == "room again", proc.stderr[-3000:]


@pytest.mark.skipif(os.getuid() != 0, reason="runs the wrapper as another user (nobody), which needs root")
def test_without_a_pid_cgroup_the_limit_counts_over_what_the_uid_already_runs(tmp_path: Path) -> None:
    """RLIMIT_NPROC counts every process of the uid: set to the limit alone, a user who already runs more
    could not start a single one. The wrapper sets it to the uid's count plus the limit. Run as nobody,
    who already runs 12 sleepers here."""
    nobody = 65534

    def as_nobody() -> None:
        os.setgid(nobody)
        os.setuid(nobody)

    sleepers = [subprocess.Popen(["sleep", "60"], preexec_fn=as_nobody, cwd="/") for _ in range(12)]
    out = Path(tempfile.mkdtemp()) / "out"
    out.parent.chmod(0o777)
    try:
        # a copy nobody may read (the tree may lie in a folder only root enters)
        script = shutil.copy(sandbox_exec.__file__, out.parent / "sandbox_exec.py")
        os.chmod(script, 0o644)
        wrapper = [PY, "-I", "-S", script, "--no-landlock", "--limit", "nproc=6", "--"]
        # its own group, so that the children it forked (they sleep) go with it
        run = subprocess.Popen(
            [*wrapper, "bash", "-c", f"{FORKS} > {out} 2>&1"],
            preexec_fn=as_nobody,
            cwd="/",
            start_new_session=True,
        )
        run.wait(60)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(run.pid, signal.SIGKILL)
        text = out.read_text()
    finally:
        for s in sleepers:
            s.kill()
            s.wait()
        shutil.rmtree(out.parent)
    assert "refused after" in text, text
    assert 2 <= int(text.split("refused after")[1].split()[0]) < 6


MARKERS = {
    **dict.fromkeys(OUT_OF_MEMORY, "limit_memory_mb"),
    "File too large": "limit_file_size_mb",
    "bash: fork: retry: Resource temporarily unavailable": "limit_processes",
}


@given(before=st.text(max_size=80), marker=st.sampled_from(sorted(MARKERS)), after=st.text(max_size=80))
def test_the_note_names_the_limit_whatever_the_output_around_its_message(
    before: str, marker: str, after: str
) -> None:
    notes = limit_notes(Limits(), 1, f"{before}{marker}{after}", processes_hit=False)
    assert any(MARKERS[marker] in n for n in notes) and all("\n" not in n for n in notes)
    assert limit_notes(Limits(0, 0, 0), 1, f"{before}{marker}{after}", processes_hit=False) == []


@given(st.text(max_size=200), st.integers(-64, 255))
def test_no_note_without_a_sign_of_a_limit(text: str, code: int) -> None:
    signs = [*MARKERS, "fork", "Resource temporarily unavailable"]
    assume(not any(s in text for s in signs) and code not in (153, -25))
    assert limit_notes(Limits(), code, text, processes_hit=False) == []


@given(before=st.text(max_size=80), marker=st.sampled_from(sorted(MARKERS)), after=st.text(max_size=80))
def test_a_command_that_succeeded_gets_no_note_from_its_text(before: str, marker: str, after: str) -> None:
    assert limit_notes(Limits(), 0, f"{before}{marker}{after}", processes_hit=False) == []
