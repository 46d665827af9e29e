"""``bash``: run one shell command in the workspace, with approval, a timeout and bounded capture.

Output is captured up to ``max_output_bytes``; the rest is read and counted but not kept in the
message — the whole stream goes to the vault instead (L7 background-output spill), so a runaway
command cannot flood memory or the context. The process group is killed on timeout or cancel.
"""

from __future__ import annotations

import asyncio
import os
import signal
from typing import Any

from myrm_tui.agent.tools.base import ToolContext, ToolError, ToolResult, decode_output

READ_CHUNK = 65_536
SPILL_LIMIT = 50_000_000  # beyond this even the vault copy is cut


class BashTool:
    name = "bash"
    description = (
        "Run a bash command in the workspace root and return its exit status and combined stdout/stderr. "
        "Non-interactive; use timeout (seconds) for long commands."
    )
    parameters = {
        "type": "object",
        "properties": {"command": {"type": "string"}, "timeout": {"type": "number"}},
        "required": ["command"],
    }

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        command = args.get("command")
        if not isinstance(command, str) or not command.strip():
            raise ToolError("command must be a non-empty string")
        if not await self._approved(command, ctx):
            return ToolResult("The user declined to run this command.", is_error=True, meta={"declined": True})
        timeout = float(args.get("timeout") or ctx.bash_timeout)
        proc = await asyncio.create_subprocess_exec(
            "bash", "-c", command, cwd=str(ctx.workspace), stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, start_new_session=True,
            env={**os.environ, "PAGER": "cat", "GIT_PAGER": "cat", "TERM": "dumb"},
        )
        kept = bytearray()
        spill = bytearray()
        total = 0
        timed_out = False

        async def pump() -> None:
            nonlocal total
            assert proc.stdout is not None
            while chunk := await proc.stdout.read(READ_CHUNK):
                total += len(chunk)
                if len(kept) < ctx.max_output_bytes:
                    kept.extend(chunk[: ctx.max_output_bytes - len(kept)])
                if len(spill) < SPILL_LIMIT:
                    spill.extend(chunk[: SPILL_LIMIT - len(spill)])

        try:
            await asyncio.wait_for(asyncio.gather(pump(), proc.wait()), timeout)
        except TimeoutError:
            timed_out = True
            _kill_group(proc)
            await proc.wait()
        except asyncio.CancelledError:
            _kill_group(proc)
            raise
        text, label = decode_output(bytes(kept))
        notes = [label] if label else []
        meta: dict[str, Any] = {"exit_code": proc.returncode, "bytes": total}
        if total > len(kept):
            full, _ = decode_output(bytes(spill))
            uri = ctx.vault.put(full, "tool_output", self.name, reason="output_spill", command=command[:200])
            meta["vault_uri"] = uri
            notes.append(f"[output was {total:,} bytes; the first {len(kept):,} are shown; full output: {uri}]")
        if timed_out:
            notes.append(f"[killed after {timeout:.0f} s timeout]")
        code = proc.returncode if not timed_out else 124
        meta["exit_code"] = code
        body = "\n".join([*notes, text]) if notes else text
        return ToolResult(f"<returncode>{code}</returncode>\n<output>\n{body}</output>", is_error=code != 0, meta=meta)

    async def _approved(self, command: str, ctx: ToolContext) -> bool:
        if ctx.auto_approve or any(command.strip().startswith(p) for p in ctx.allowed_prefixes):
            return True
        if ctx.approver is None:
            return False
        answer = await ctx.approver(self.name, command)
        if answer == "always":
            ctx.allowed_prefixes.add(command.strip().split()[0])
            return True
        return answer == "yes"


def _kill_group(proc: asyncio.subprocess.Process) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
