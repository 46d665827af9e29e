"""The background jobs of one agent (``bash`` with ``run_in_background``): started in their own process
group with stdout and stderr going straight to a log file on disk, read in slices, stopped when their log
passes its limit, killed and removed with the agent. ``bash_output`` (jobs.py) is the model's door to them.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import time
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from myrm_tui.agent.proc import REAPER, command_environment, kill_group, spawn
from myrm_tui.agent.tools.errors import ToolError
from myrm_tui.aio import within

if TYPE_CHECKING:
    from myrm_tui.agent.limits import PidCgroup

log = logging.getLogger(__name__)

JOB_LOG_LIMIT = 200_000_000  # bytes of log one job may write before it is stopped
MAX_READ = 50_000_000  # bytes one bash_output call reads; the rest waits for the next call
MAX_JOBS = 16
REAP_WAIT = 5.0  # seconds to wait for a killed group's leader to be reaped


@dataclass
class Job:
    id: str
    command: str
    pid: int
    log: Path
    started: float
    offset: int = 0  # bytes of the log already returned
    exit_code: int | None = None
    stopped: str = ""  # why myrm stopped it, if it did
    done: asyncio.Event = field(default_factory=asyncio.Event)
    proc: asyncio.subprocess.Process | None = field(default=None, repr=False)
    cgroup: PidCgroup | None = field(default=None, repr=False)  # its pid cgroup (limits.py), if it has one

    @property
    def status(self) -> str:
        if self.stopped:
            return f"stopped ({self.stopped})"
        return "running" if self.exit_code is None else f"exited {self.exit_code}"


class JobManager:
    """The background jobs of one agent."""

    def __init__(self, root: Path, log_limit: int = JOB_LOG_LIMIT, poll: float = 0.5) -> None:
        self.root = root
        self.log_limit = log_limit
        self.poll = poll
        self.jobs: dict[str, Job] = {}
        self._watchers: set[asyncio.Task[None]] = set()

    async def start(
        self,
        command: str,
        cwd: Path,
        env: dict[str, str],
        cgroup: PidCgroup | None = None,
        keep_env: Collection[str] = (),
    ) -> Job:
        """Start ``command`` with myrm's environment but its secret-looking variables (those named in
        ``keep_env`` kept: ``proc.command_environment``) and ``env``; ``cgroup`` (the pid cgroup its wrapper
        joins) is emptied and removed when the job ends."""
        if sum(1 for j in self.jobs.values() if j.exit_code is None) >= MAX_JOBS:
            raise ToolError(
                f"{MAX_JOBS} background jobs are running already; stop one with bash_output(kill=true)"
            )
        self.root.mkdir(parents=True, exist_ok=True, mode=0o700)
        REAPER.guard_dir(self.root)  # removed by the watcher if myrm dies without closing
        job_id = f"job-{len(self.jobs) + 1}"
        log = self.root / f"{job_id}.log"
        # guard: l7-job-log-owner-only
        fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            proc = await spawn(
                "bash",
                "-c",
                command,
                cwd=cwd,
                stdin=asyncio.subprocess.DEVNULL,
                # guard: l7-job-output-to-disk
                stdout=fd,
                stderr=fd,
                env={**command_environment(keep_env), **env},
            )
        except BaseException:
            await _end_cgroup(cgroup)
            raise
        finally:
            os.close(fd)  # the child holds its own copy
        job = Job(job_id, command, proc.pid, log, time.time(), proc=proc, cgroup=cgroup)
        self.jobs[job_id] = job
        task = asyncio.ensure_future(self._watch(job, proc))
        self._watchers.add(task)
        task.add_done_callback(self._watchers.discard)
        return job

    async def _watch(self, job: Job, proc: asyncio.subprocess.Process) -> None:
        try:
            while True:
                try:
                    job.exit_code = await within(proc.wait(), self.poll)
                    break
                except TimeoutError:
                    # guard: l7-log-size-limit
                    if _log_size(job) > self.log_limit:
                        job.stopped = f"its output passed {self.log_limit:,} bytes"
                        kill_group(proc.pid)
        finally:  # whatever ends the watch (even its cancellation), nobody waits on ``done`` forever
            if job.exit_code is not None:
                REAPER.release(proc.pid)
            job.done.set()
        # what the job left running goes with it
        await _end_cgroup(job.cgroup)

    def get(self, job_id: str) -> Job:
        job = self.jobs.get(job_id)
        if job is None:
            known = ", ".join(self.jobs) or "none"
            raise ToolError(f"no background job {job_id!r} (jobs: {known})")
        return job

    def read_new(self, job: Job) -> tuple[bytes, int]:
        """New log bytes since the last read (at most ``MAX_READ``), and how many remain after them."""
        if not job.log.exists():
            return b"", 0
        size = job.log.stat().st_size
        with job.log.open("rb") as f:
            f.seek(job.offset)
            data = f.read(min(size - job.offset, MAX_READ))
        job.offset += len(data)
        return data, max(size - job.offset, 0)

    async def kill(self, job: Job, reason: str = "killed on request") -> None:
        """Kill the job's whole process group and wait until its leader is reaped."""
        if job.exit_code is None:
            job.stopped = reason
            kill_group(job.pid)
            try:
                await within(job.done.wait(), REAP_WAIT)
            except TimeoutError:  # the watcher is gone: reap here, a killed leader exits at once
                if job.proc is not None:
                    job.exit_code = await within(job.proc.wait(), REAP_WAIT)

    async def close(self) -> None:
        """Kill every job's process group and remove the logs (each step runs even if one before failed)."""
        try:
            for job in self.jobs.values():
                try:
                    await self.kill(job, "the session ended")
                except (TimeoutError, OSError):
                    # the group was sent SIGKILL; a leader slow to be reaped must not keep the rest alive
                    pass
        finally:
            for t in list(self._watchers):
                t.cancel()
            await asyncio.gather(*self._watchers, return_exceptions=True)
            for job in self.jobs.values():
                REAPER.release(job.pid)  # killed above
                await _end_cgroup(job.cgroup)
            shutil.rmtree(self.root, ignore_errors=True)
            REAPER.release_dir(self.root)


async def _end_cgroup(cgroup: PidCgroup | None) -> None:
    if cgroup is None:
        return
    await cgroup.kill()
    if cgroup.remove():
        REAPER.release_dir(cgroup.path)
    else:
        log.warning("pid cgroup %s is still in use; removed when myrm exits", cgroup.path)


def _log_size(job: Job) -> int:
    # guard: job-watcher-survives-a-removed-log
    try:
        return job.log.stat().st_size
    except OSError:  # the log was removed (by the job itself, say): nothing more is counted
        return 0
