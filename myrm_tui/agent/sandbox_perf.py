"""What the sandbox adds to a shell command's wall time: ``python -m myrm_tui.agent.sandbox_perf``.

Runs ``true`` (and ``git status`` in a small repository) through ``run_captured`` unconfined, with the
resource limits alone (``limits.py``: what every unconfined command pays) and in each profile, alternating,
and prints the median and 90th percentile of each, and the median added."""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from myrm_tui.agent.limits import Limits
from myrm_tui.agent.permissions import git_hardening_env
from myrm_tui.agent.proc import run_captured
from myrm_tui.agent.sandbox import READ_ONLY, UNCONFINED, WORKSPACE_WRITE, Confinement, support


async def _time(command: str, workspace: Path, confine: Confinement | None) -> float:
    start = time.perf_counter()
    out = await run_captured(command, workspace, 60, 100_000, confine=confine)
    if out.code != 0:
        raise RuntimeError(f"{command!r} failed ({out.code}): {out.text}")
    return time.perf_counter() - start


async def measure(runs: int) -> list[str]:
    if not support().available:
        return [f"no sandbox here: {support().missing}"]
    lines = [f"Landlock ABI {support().abi}, {runs} runs each (ms: median / p90)"]
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp)
        subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
        (ws / "a.txt").write_text("a\n")
        for command in ("true", "git status --short"):
            kinds: dict[str, Confinement | None] = {
                "unconfined": None,
                "limits only": Confinement(UNCONFINED, ws, limits=Limits()),
                READ_ONLY: Confinement(READ_ONLY, ws, git_hardening_env(ws)),
                WORKSPACE_WRITE: Confinement(WORKSPACE_WRITE, ws),
                f"{READ_ONLY}+limits": Confinement(READ_ONLY, ws, git_hardening_env(ws), Limits()),
            }
            times: dict[str, list[float]] = {k: [] for k in kinds}
            for _ in range(runs):
                for kind, confine in kinds.items():
                    times[kind].append(await _time(command, ws, confine))
            base = statistics.median(times["unconfined"])
            for kind, got in times.items():
                got.sort()
                med, p90 = statistics.median(got), got[int(0.9 * (len(got) - 1))]
                added = "" if kind == "unconfined" else f"  (+{(med - base) * 1000:.1f})"
                lines.append(f"{command:>18} {kind:>15}: {med * 1000:6.1f} / {p90 * 1000:6.1f}{added}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    for line in asyncio.run(measure(args.runs)):
        print(line)


if __name__ == "__main__":
    main()
