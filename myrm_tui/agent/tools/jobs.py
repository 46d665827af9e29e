"""Background shell jobs (``bash`` with ``run_in_background``) and ``bash_output`` to read them.

Background-output spill: a job's stdout and stderr go straight to a log file on disk (mode
0600, in the session's jobs folder), never through memory, so a chatty server or a long test run
costs nothing until it is read. A job whose log passes ``log_limit`` is stopped. ``bash_output``
returns what is new since the last read; when that is over the tool context's
``job_output_chars`` it goes to the vault and the model gets head, tail and the ``vault://``
pointer. Jobs belong to their session: closing its agent (the TUI leaving the session, ``myrm ask``
ending) kills each job's process group, waits for it to be reaped and removes the logs.
"""

from __future__ import annotations

from typing import Any

from myrm_tui.agent.proc import decode_output
from myrm_tui.agent.spill import spill
from myrm_tui.agent.tools.base import ToolContext, ToolError, ToolResult
from myrm_tui.agent.tools.job_manager import Job, JobManager  # noqa: F401  (re-exported: their old home)


class BashOutputTool:
    name = "bash_output"
    description = (
        "Read the new output of a background job started with bash(run_in_background=true), with its status "
        "(running / exited N). Without job_id, list the jobs. kill=true stops the job."
    )
    parameters = {
        "type": "object",
        "properties": {"job_id": {"type": "string"}, "kill": {"type": "boolean"}},
    }

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        jobs = ctx.jobs
        if jobs is None:
            raise ToolError("background jobs are not available in this session")
        job_id = args.get("job_id")
        if not job_id:
            if not jobs.jobs:
                return ToolResult("No background jobs.")
            return ToolResult(
                "\n".join(f"{j.id}: {j.status} — {j.command[:120]}" for j in jobs.jobs.values())
            )
        job = jobs.get(str(job_id))
        if args.get("kill"):
            await jobs.kill(job)
        data, left = jobs.read_new(job)
        text, label = decode_output(data)
        meta: dict[str, Any] = {"job_id": job.id, "status": job.status}
        notes = [label] if label else []
        # guard: l7-big-reads-to-the-vault
        if len(text) > ctx.job_output_chars:
            text, uri = spill(
                text,
                ctx.vault,
                "tool_output",
                f"{job.id} output",
                ctx.job_output_chars // 2,
                reason="background_spill",
                command=job.command[:200],
            )
            if uri:
                meta["vault_uri"] = uri
        if left:
            notes.append(f"[{left:,} more bytes in the log; call bash_output again for them]")
        body = "\n".join([*notes, text]) if notes else text
        return ToolResult(
            f'<job id="{job.id}" status="{job.status}">\n<output>\n{body}</output>\n</job>', meta=meta
        )
