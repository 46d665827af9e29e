"""``bash``: run one shell command in the workspace, with approval, a timeout and bounded capture.

Output is captured up to ``max_output_bytes``; the rest is read and counted but not kept in the
message — the whole stream goes to the vault instead, so a runaway command cannot flood memory or
the context. The process group is killed on timeout or cancel. With ``run_in_background`` the
command becomes a job (``tools/jobs.py``) whose output goes to a log file on disk, read with
``bash_output``. Which commands run without asking is decided in ``agent/permissions.py``.
"""

from __future__ import annotations

from typing import Any

from myrm_tui.agent.proc import (  # noqa: F401  (re-exported: their old home)
    READ_CHUNK,
    SHELL_ENV,
    SPILL_LIMIT,
    Captured,
    kill_group,
    run_captured,
)
from myrm_tui.agent.tools.base import ToolContext, ToolError, ToolResult


class BashTool:
    name = "bash"
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
        if not await self._approved(command, ctx):
            return ToolResult(
                "The user declined to run this command.", is_error=True, meta={"declined": True}
            )
        if args.get("run_in_background"):
            return await self._background(command, ctx)
        timeout = float(args.get("timeout") or ctx.bash_timeout)
        out = await run_captured(
            command, ctx.workspace, timeout, ctx.max_output_bytes, on_output=ctx.on_output
        )
        notes = [out.label] if out.label else []
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
        body = "\n".join([*notes, out.text]) if notes else out.text
        return ToolResult(
            f"<returncode>{out.code}</returncode>\n<output>\n{body}</output>",
            is_error=out.code != 0,
            meta=meta,
        )

    async def _background(self, command: str, ctx: ToolContext) -> ToolResult:
        if ctx.jobs is None:
            raise ToolError("background jobs are not available in this session")
        job = await ctx.jobs.start(command, ctx.workspace, SHELL_ENV)
        return ToolResult(
            f"Started background job {job.id} (pid {job.pid}): {command}\n"
            f'Read its output with bash_output(job_id="{job.id}"); stop it with '
            f'bash_output(job_id="{job.id}", kill=true). '
            "It is stopped when the session ends.",
            meta={"job_id": job.id},
        )

    async def _approved(self, command: str, ctx: ToolContext) -> bool:
        """Run unasked when the rules cover every part of ``command``; otherwise the user decides."""
        if ctx.auto_approve:
            return True
        verdict = ctx.allowed_commands.assess(command, ctx.workspace)
        if verdict.allowed:
            return True
        if ctx.approver is None:
            return False
        answer = await ctx.approver(self.name, command, verdict)
        if answer == "always":
            ctx.allowed_commands.remember(verdict)
            return True
        return answer == "yes"
