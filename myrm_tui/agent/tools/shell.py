"""``bash``: run one shell command in the workspace, with approval, a timeout and bounded capture.

Output is captured up to ``max_output_bytes``; the rest is read and counted but not kept in the
message — the whole stream goes to the vault instead, so a runaway command cannot flood memory or
the context. The process group is killed on timeout or cancel. With ``run_in_background`` the
command becomes a job (``tools/jobs.py``) whose output goes to a log file on disk, read with
``bash_output``. Which commands run without asking is decided in ``agent/permissions.py``; in which OS
sandbox a command runs, in ``agent/sandbox.py``: one that runs unasked because it only reads is confined
to reading (and its git to inert settings), one the user approved runs as configured by ``sandbox``.
"""

from __future__ import annotations

import logging
import shlex
import uuid
from dataclasses import dataclass, field, replace
from typing import Any

from myrm_tui.agent.limits import limit_notes, make_pid_cgroup
from myrm_tui.agent.permissions import git_hardening_env
from myrm_tui.agent.proc import (  # noqa: F401  (re-exported: their old home)
    READ_CHUNK,
    REAPER,
    SHELL_ENV,
    SPILL_LIMIT,
    Captured,
    kill_group,
    run_captured,
    unpassable,
)
from myrm_tui.agent.sandbox import (
    UNCONFINED,
    Confinement,
    no_sandbox_reason,
    profile_for,
    read_only_path,
)
from myrm_tui.agent.sandbox_exec import DENIED
from myrm_tui.agent.tools.base import ToolContext, ToolError, ToolResult, workspace_root

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Plan:
    """How an approved command runs: its sandbox (None: unconfined) and environment to add."""

    confine: Confinement | None = None
    env: dict[str, str] = field(default_factory=dict)


def plan(ctx: ToolContext, read_only: bool) -> Plan:
    """A read-only command's git settings made inert; its sandbox as ``ctx.sandbox`` chooses; the
    resource limits of ``ctx.limits`` whatever the sandbox."""
    # guard: read-only-git-settings-that-run-programs
    env = git_hardening_env(ctx.workspace) if read_only else {}
    if read_only:
        # guard: sandbox-no-workspace-program-by-path
        env.update(read_only_path(ctx.workspace))
    profile = profile_for(ctx.sandbox, read_only)
    if profile is None:
        # guard: limits-hold-for-unconfined-commands-too
        if ctx.limits is None:
            return Plan(None, env)
        return Plan(Confinement(UNCONFINED, ctx.workspace.resolve(), limits=ctx.limits), env)
    return Plan(Confinement(profile, ctx.workspace.resolve(), env, ctx.limits))


def unrunnable(command: str) -> str | None:
    """Why bash cannot be given ``command`` (``bash -c COMMAND``), else None."""
    problem = unpassable(command, "the command")
    if problem and problem.startswith("the command is "):  # too long: what to do instead
        return f"{problem}. Write long content to a file with file_edit_tool (create=true), then run it short"
    return problem


class BashTool:
    name = "bash"
    asks_approval = True  # its question takes its turn among the reply's (tool runner)
    description = (
        "Run a bash command in the workspace root and return its exit status and combined stdout/stderr. "
        "Non-interactive; use timeout (seconds) for long commands. Set run_in_background for servers, "
        "watchers and long runs: it returns a job id at once; read the output later with bash_output."
    )
    parameters = {
        "type": "object",
        "properties": {
            "command": {"type": "string"},
            "timeout": {"type": "number"},
            "run_in_background": {"type": "boolean"},
        },
        "required": ["command"],
    }

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        command = args.get("command")
        if not isinstance(command, str) or not command.strip():
            raise ToolError("command must be a non-empty string")
        problem = unrunnable(command)
        if problem:  # said before anyone is asked about it
            raise ToolError(problem)
        workspace_root(ctx.workspace)  # gone: nothing to ask about, nothing to run
        how = await self._approved(command, ctx)
        # guard: an-unasked-command-does-not-hold-back-later-questions
        ctx.done_asking()  # the reply's later questions need not wait for this command to run
        if how is None:
            return ToolResult(
                "The user declined to run this command.", is_error=True, meta={"declined": True}
            )
        if args.get("run_in_background"):
            return await self._background(command, ctx, how)
        timeout = float(args.get("timeout") or ctx.bash_timeout)
        out = await run_captured(
            command,
            ctx.workspace,
            timeout,
            ctx.max_output_bytes,
            env=how.env,
            on_output=ctx.on_output,
            confine=how.confine,
            keep_env=ctx.env_keep,
        )
        if how.confine is not None and out.code == DENIED and out.text.startswith("myrm sandbox:"):
            log.warning("the sandbox could not be applied: %s", out.text.strip(), stack_info=True)
        notes = [out.label] if out.label else []
        if how.confine is not None and how.confine.limits is not None:
            notes += limit_notes(how.confine.limits, out.code, out.text, out.processes_hit)
        meta: dict[str, Any] = {"exit_code": out.code, "bytes": out.total}
        if out.full is not None:
            uri = ctx.vault.put(
                out.full, "tool_output", self.name, reason="output_spill", command=command[:200]
            )
            meta["vault_uri"] = uri
            notes.append(
                f"[output was {out.total:,} bytes; the first {ctx.max_output_bytes:,} are shown; "
                f"full output: {uri}]"
            )
        if out.timed_out:
            notes.append(f"[killed after {timeout:.0f} s timeout]")
        if out.held:
            notes.append(
                "[the command ended, but a process it started ('… &') kept its output open; it was stopped. "
                "Start servers and watchers with run_in_background]"
            )
        if out.left_stopped and not out.timed_out:
            notes.append(
                f"[the command ended; {out.left_stopped} process(es) it left running were stopped. "
                "Start servers and watchers with run_in_background]"
            )
        body = "\n".join([*notes, out.text]) if notes else out.text
        return ToolResult(
            f"<returncode>{out.code}</returncode>\n<output>\n{body}</output>",
            is_error=out.code != 0,
            meta=meta,
        )

    async def _background(self, command: str, ctx: ToolContext, how: Plan) -> ToolResult:
        if ctx.jobs is None:
            raise ToolError("background jobs are not available in this session")
        shown = command
        cgroup = None
        if how.confine is not None:  # its temp folder goes with the jobs' folder
            tmp = None
            if how.confine.profile != UNCONFINED:
                tmp = ctx.jobs.root / f"sandbox-{uuid.uuid4().hex[:12]}"
                tmp.mkdir(parents=True, mode=0o700)
            limits = how.confine.limits
            # guard: limits-a-background-job-has-its-pid-cgroup
            cgroup = make_pid_cgroup(limits.processes) if limits is not None else None
            if cgroup is not None:
                REAPER.guard_dir(cgroup.path)  # emptied and removed by the watcher if myrm dies first
            argv = how.confine.argv(["bash", "-c", command], tmp, cgroup.path if cgroup else None)
            command = "exec " + shlex.join(argv)
        job = await ctx.jobs.start(command, ctx.workspace, {**SHELL_ENV, **how.env}, cgroup, ctx.env_keep)
        job.command = command = shown  # listed as the model sent it, not as the wrapper runs it
        return ToolResult(
            f"Started background job {job.id} (pid {job.pid}): {command}\n"
            f'Read its output with bash_output(job_id="{job.id}"); stop it with '
            f'bash_output(job_id="{job.id}", kill=true). '
            "It is stopped when the session ends.",
            meta={"job_id": job.id},
        )

    async def _approved(self, command: str, ctx: ToolContext) -> Plan | None:
        """Run unasked when the rules cover every part of ``command`` and, where a sandbox is wanted, one
        is to be had; otherwise the user decides. None: declined."""
        verdict = ctx.allowed_commands.assess(command, ctx.workspace)
        # guard: sandbox-approval-auto-still-confines
        if ctx.auto_approve:  # everything runs; what only reads is still confined (it loses nothing)
            return plan(ctx, verdict.read_only)
        missing = no_sandbox_reason(ctx.sandbox)
        # guard: sandbox-without-one-every-command-asks
        if missing:  # never run unconfined what would have run confined: ask instead
            verdict = replace(verdict, problems=(*verdict.problems, missing))
        # guard: shell-approval
        if verdict.allowed:
            return plan(ctx, verdict.read_only)
        if ctx.approver is None:
            return None
        async with ctx.asking():
            now = ctx.allowed_commands.assess(command, ctx.workspace)
            # guard: an-always-answers-the-commands-still-waiting
            if now.allowed and not missing:
                return plan(ctx, now.read_only)
            answer = await ctx.approver(self.name, command, verdict)
        if answer == "always":
            ctx.allowed_commands.remember(verdict)
            return plan(ctx, read_only=False)
        return plan(ctx, read_only=False) if answer == "yes" else None
