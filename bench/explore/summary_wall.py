"""Wall time of a live ``myrm ask`` of 40 tool steps at 16K through the emulator, with an instant summarizer
and with one taking ``DELAY`` seconds a call: a turn must not wait on the summarizer (target: within 1.25x).

``python bench/explore/summary_wall.py [DELAY] [SUMMARIZER]`` — SUMMARIZER defaults to the main model
(``openai/gpt-4o-mini``: the summarize request reuses the cached prefix); give another name for the lite path.
Prints, per run: wall seconds, main and summarize requests, the largest request against the input budget.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from myrm_tui.context.config import ContextConfig
from myrm_tui.context.summary import fields as summary_model
from myrm_tui.testing.emulator import ProviderEmulator, Reply

STEPS = 40
WINDOW = 16_000
MAIN = "openai/gpt-4o-mini"


def summary_text() -> str:
    s = summary_model.Summary.from_json(
        dict(
            user_goal="Read every module.",
            current_state="Reading the modules one by one.",
            key_facts=[f"handler_{i} routes /api/v{i}" for i in range(10)],
        )
    )
    return json.dumps(s.to_json())


def run(delay: float, summarizer: str) -> dict[str, Any]:
    log: list[str] = []
    count = {"main": 0}
    stamps: list[float] = []  # arrival of each main request

    def reply(body: dict[str, Any]) -> Reply:
        if any("You compact an agent session" in str(m.get("content")) for m in body.get("messages", [])):
            log.append("summary")
            return Reply(text=summary_text(), delay=delay)
        count["main"] += 1
        log.append("main")
        stamps.append(time.perf_counter())
        if count["main"] <= STEPS:
            return Reply(tool_calls=[("bash", {"command": f"cat mod{count['main'] % 12}.py"})])
        return Reply(text="All modules read.")

    with ProviderEmulator() as emu, tempfile.TemporaryDirectory() as tmp:
        emu.default = reply  # type: ignore[assignment]
        ws = Path(tmp) / "ws"
        ws.mkdir()
        for i in range(12):
            (ws / f"mod{i}.py").write_text(
                "\n".join(
                    f"def handler_{i}_{k}(x):  # route /api/v{i}/{k} returns {k * 17 + i}" for k in range(60)
                )
            )
        root = str(Path(__file__).resolve().parents[2])  # this checkout, not an installed copy
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([root, *filter(None, [os.environ.get("PYTHONPATH")])]),
            "MYRM_DB": str(Path(tmp) / "db.sqlite"),
            "MYRM_CONFIG": str(Path(tmp) / "none.toml"),
            "MYRM_MODEL": MAIN,
            "MYRM_API_BASE": emu.openai_base,
            "MYRM_API_KEY": "sk-test",
            "MYRM_CONTEXT_WINDOW": str(WINDOW),
            "MYRM_MAX_STEPS": str(STEPS + 5),
            "MYRM_SUMMARIZER_MODEL": summarizer,
        }
        t = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "myrm_tui.cli", "ask", "--yes", "read every module"],
            cwd=ws,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        wall = time.perf_counter() - t
        sizes = [r.cache.input_tokens for r in emu.accepted if r.cache is not None]
    budget = ContextConfig(max_context_tokens=WINDOW).input_budget
    return {
        "delay_s": delay,
        "wall_s": round(wall, 2),
        "first_to_last_main_request_s": round(stamps[-1] - stamps[0], 2) if stamps else None,
        "exit": done.returncode,
        "main_requests": log.count("main"),
        "summarize_requests": log.count("summary"),
        "largest_request_tokens": max(sizes, default=0),
        "input_budget_tokens (view only, before tool schemas)": budget,
        "rejected": len(emu.rejected),
    }


def main() -> None:
    delay = float(sys.argv[1]) if len(sys.argv) > 1 else 5.0
    summarizer = sys.argv[2] if len(sys.argv) > 2 else MAIN
    fast, slow = run(0.0, summarizer), run(delay, summarizer)
    print(json.dumps({"summarizer": summarizer, "instant": fast, "slow": slow}, indent=2))
    print(f"ratio slow/instant (process wall): {slow['wall_s'] / fast['wall_s']:.2f}")
    a, b = slow["first_to_last_main_request_s"], fast["first_to_last_main_request_s"]
    print(f"ratio slow/instant (first to last request of the turn): {a / b:.2f}" if a and b else "")


if __name__ == "__main__":
    main()
