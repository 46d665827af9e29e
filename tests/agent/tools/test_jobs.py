"""Background shell jobs: output to a log on disk (L7), incremental reads, vault spill, limits, kill and
clean-up."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import select
import signal
import stat
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from myrm_tui.agent.permissions import Assessment
from myrm_tui.agent.tools import ToolContext, ToolError
from myrm_tui.agent.tools.base import Approval
from myrm_tui.agent.tools.files import FileReadTool
from myrm_tui.agent.tools.jobs import BashOutputTool, JobManager
from myrm_tui.agent.tools.shell import BashTool
from myrm_tui.context.vault import ArtifactVault
from myrm_tui.store.db import Store
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests import warm
from tests.helpers import cli_env, collect, emulator_args, openai_settings


@pytest.fixture
async def jctx(workspace: Path, tmp_path: Path) -> AsyncIterator[ToolContext]:
    ctx = ToolContext(
        workspace=workspace,
        vault=ArtifactVault("sess"),
        auto_approve=True,
        jobs=JobManager(tmp_path / "jobs" / "sess", poll=0.05),
    )
    yield ctx
    assert ctx.jobs is not None
    await ctx.jobs.close()


async def _finished(ctx: ToolContext, job_id: str) -> None:
    assert ctx.jobs is not None
    await asyncio.wait_for(ctx.jobs.get(job_id).done.wait(), 20)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def test_background_job_returns_at_once_and_output_is_read_incrementally(jctx: ToolContext) -> None:
    started = await BashTool().run(
        {"command": "echo first; sleep 0.3; echo second >&2", "run_in_background": True}, jctx
    )
    job_id = started.meta["job_id"]
    assert job_id == "job-1" and "bash_output" in started.content
    assert jctx.jobs is not None
    job = jctx.jobs.get(job_id)
    for _ in range(100):  # wait for the first line without waiting for the job
        if job.log.stat().st_size:
            break
        await asyncio.sleep(0.02)
    first = await BashOutputTool().run({"job_id": job_id}, jctx)
    assert 'status="running"' in first.content and "first" in first.content and "second" not in first.content
    await _finished(jctx, job_id)
    second = await BashOutputTool().run({"job_id": job_id}, jctx)
    assert (
        'status="exited 0"' in second.content and "second" in second.content and "first" not in second.content
    )
    listing = await BashOutputTool().run({}, jctx)
    assert "job-1: exited 0" in listing.content


async def test_job_output_goes_to_an_owner_only_log_on_disk_and_big_reads_spill_to_the_vault(
    jctx: ToolContext,
) -> None:
    started = await BashTool().run({"command": "seq 1 1000000", "run_in_background": True}, jctx)
    await _finished(jctx, started.meta["job_id"])
    assert jctx.jobs is not None
    log = jctx.jobs.get("job-1").log
    assert log.stat().st_size > 6_000_000 and stat.S_IMODE(log.stat().st_mode) == 0o600
    res = await BashOutputTool().run({"job_id": "job-1"}, jctx)
    assert len(res.content) < jctx.job_output_chars and "vault://" in res.content
    entry = jctx.vault.get_cached(res.meta["vault_uri"])
    assert entry is not None and entry.content.endswith("1000000\n") and entry.content.startswith("1\n2\n")
    part = await FileReadTool().run({"paths": [res.meta["vault_uri"]], "line_range": "500000:500001"}, jctx)
    assert "500000" in part.content and "500001" in part.content


async def test_a_job_writing_past_the_log_limit_is_stopped(jctx: ToolContext) -> None:
    assert jctx.jobs is not None
    jctx.jobs.log_limit = 1_000_000
    started = await BashTool().run({"command": "yes spam", "run_in_background": True}, jctx)
    await _finished(jctx, started.meta["job_id"])
    job = jctx.jobs.get("job-1")
    assert job.status.startswith("stopped (its output passed 1,000,000 bytes")
    assert job.log.stat().st_size < 200_000_000 and not _alive(job.pid)


async def test_kill_and_close_end_the_process_groups_and_remove_the_logs(jctx: ToolContext) -> None:
    assert jctx.jobs is not None
    a = (await BashTool().run({"command": "sleep 60 & sleep 60", "run_in_background": True}, jctx)).meta[
        "job_id"
    ]
    b = (await BashTool().run({"command": "sleep 60", "run_in_background": True}, jctx)).meta["job_id"]
    res = await BashOutputTool().run({"job_id": a, "kill": True}, jctx)
    assert "stopped (killed on request)" in res.content and not _alive(jctx.jobs.get(a).pid)
    pid_b, root = jctx.jobs.get(b).pid, jctx.jobs.root
    await jctx.jobs.close()
    assert not _alive(pid_b) and not root.exists()


async def test_unknown_job_and_sessions_without_jobs_are_clear_errors(
    jctx: ToolContext, workspace: Path
) -> None:
    with pytest.raises(ToolError, match="no background job 'job-9'"):
        await BashOutputTool().run({"job_id": "job-9"}, jctx)
    bare = ToolContext(workspace=workspace, vault=ArtifactVault("s"), auto_approve=True)
    with pytest.raises(ToolError, match="not available"):
        await BashTool().run({"command": "true", "run_in_background": True}, bare)


async def test_background_commands_still_need_approval(workspace: Path, tmp_path: Path) -> None:
    asked: list[str] = []

    async def approver(tool: str, command: str, assessment: Assessment) -> Approval:
        asked.append(command)
        return "no"

    ctx = ToolContext(
        workspace=workspace,
        vault=ArtifactVault("s"),
        approver=approver,
        jobs=JobManager(tmp_path / "j"),
    )
    res = await BashTool().run({"command": "touch started", "run_in_background": True}, ctx)
    assert res.meta.get("declined") and asked == ["touch started"] and not (workspace / "started").exists()
    assert ctx.jobs is not None and ctx.jobs.jobs == {}


async def test_background_jobs_survive_an_agent_rebuild_and_end_with_the_session(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    from myrm_tui.agent.factory import build_agent
    from myrm_tui.agent.hot_rebuild import ChatAgentExecutionCache

    row = await store.create_session(workspace=str(workspace))
    cache = ChatAgentExecutionCache(lambda s, jobs: build_agent(store, row.id, s, workspace, jobs=jobs))
    first = await cache.get(openai_settings(emulator), 128_000)
    emulator.enqueue(
        Reply(tool_calls=[("bash", {"command": "sleep 30", "run_in_background": True})]),
        Reply(text="started"),
    )
    await collect(first, "start the dev server")
    assert first.tool_runner.ctx.jobs is not None
    job = first.tool_runner.ctx.jobs.get("job-1")
    second = await cache.get(
        openai_settings(emulator, prompt_mode="lean"), 128_000
    )  # settings changed: a new agent
    assert (
        second is not first
        and second.tool_runner.ctx.jobs is not None
        and second.tool_runner.ctx.jobs.get("job-1") is job
    )
    assert job.exit_code is None and _alive(job.pid)
    await cache.clear()
    assert job.stopped == "the session ended" and not _alive(job.pid)


def _wait_exit(pid: int, timeout: float) -> bool:
    """Wait for ``pid`` (not our child) to exit, on a pidfd: True once it is gone."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        return bool(select.select([fd], [], [], timeout)[0])
    finally:
        os.close(fd)


async def test_close_ends_a_job_that_removed_its_own_log(workspace: Path, tmp_path: Path) -> None:
    """The watcher used to die on the missing log (FileNotFoundError), and close() then waited forever."""
    jobs = JobManager(tmp_path / "jobs" / "s", poll=0.05)
    ctx = ToolContext(workspace=workspace, vault=ArtifactVault("s"), auto_approve=True, jobs=jobs)
    log = jobs.root / "job-1.log"
    started = await BashTool().run({"command": f"rm -f {log}; sleep 60", "run_in_background": True}, ctx)
    job = jobs.get(started.meta["job_id"])
    try:
        while log.exists() and job.exit_code is None:  # the job removes its log first thing
            await asyncio.sleep(0.02)
        ended, _ = await asyncio.wait(
            set(jobs._watchers), timeout=jobs.poll * 4
        )  # a few polls of the missing log
        assert (
            not ended and not job.done.is_set()
        )  # the watcher lives on: the job is still running, and still watched
        assert (await BashOutputTool().run({"job_id": job.id}, ctx)).meta["status"] == "running"
        await asyncio.wait_for(jobs.close(), 20)
        assert job.stopped == "the session ended" and _wait_exit(job.pid, 10) and not jobs.root.exists()
    finally:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(job.pid, signal.SIGKILL)


def test_ask_ends_its_background_jobs(emulator: ProviderEmulator, tmp_path: Path, workspace: Path) -> None:
    """``myrm ask`` used to exit with its job still running: the job went on and created its file."""
    emulator.enqueue(
        Reply(tool_calls=[("bash", {"command": "sleep 3 && touch created", "run_in_background": True})]),
        Reply(text="Started it."),
    )
    env = cli_env(tmp_path, "ask.db")
    proc = warm.run(
        [
            sys.executable,
            "-m",
            "myrm_tui.cli",
            "ask",
            "start it",
            *emulator_args(emulator, workspace),
            "--yes",
            "--json",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    started = next(e["output"] for e in events if e["type"] == "tool_result")
    m = re.search(r"pid (\d+)", started)
    assert m is not None, started
    pid = int(m[1])
    try:
        assert _wait_exit(
            pid, 30
        )  # the job is gone: killed when ask ended, or (the bug) after touching its file
        assert not (workspace / "created").exists()
        assert not (tmp_path / "jobs").exists() or not any((tmp_path / "jobs").rglob("*.log"))
    finally:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)


def test_sigterm_to_ask_ends_its_background_jobs(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    """A terminated ``ask`` (SIGTERM, or SIGHUP when its terminal closes) used to leave its jobs running."""
    emulator.enqueue(
        Reply(tool_calls=[("bash", {"command": "sleep 5 && touch created", "run_in_background": True})]),
        Reply(text="still talking " * 200, chunk_size=4, chunk_delay=0.2),  # ask is mid-reply when signalled
    )
    env = cli_env(tmp_path, "ask.db")
    args = [sys.executable, "-m", "myrm_tui.cli", "ask", "start it", *emulator_args(emulator, workspace)]
    args += ["--yes", "--json"]
    ask = warm.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    assert ask.stdout is not None
    pid = 0
    try:
        for line in ask.stdout:
            event = json.loads(line)
            if event["type"] == "tool_result":
                m = re.search(r"pid (\d+)", event["output"])
                assert m is not None, event
                pid = int(m[1])
            if event["type"] == "message_delta" and pid:
                break  # the job runs and the reply is streaming: now the terminal goes away
        assert pid
        ask.send_signal(signal.SIGTERM)
        _, err = ask.communicate(timeout=60)
        assert ask.returncode == 128 + signal.SIGTERM
        assert "myrm: stopped by SIGTERM" in err and "Traceback" not in err
        assert _wait_exit(pid, 30)
        assert not (workspace / "created").exists()
    finally:
        if ask.poll() is None:
            ask.kill()
        if pid:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
