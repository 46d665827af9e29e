"""A 250-turn session lived in the full screen (Pilot, real keys, the provider emulator as the model through
litellm's HTTP stack; ``tests/app/lived.py`` scripts it: big reads, failing commands, edits, greps), and what
a user would feel of it late in the session:

- memory: the process's RSS after each turn (growth a turn, first and last quarter), the transcript's
  mounted widgets;
- keys: 40 characters typed in one burst while a reply streams at turn ``--burst-at``: seconds until all are
  in the box, in order;
- turns: wall seconds a turn (median of the first and the last 25), automatic compactions;
- ``history_search`` at the end finds the fact told at turn 10;
- resume: the stored session reopened by the real ``myrm --session ID`` in a pseudo-terminal
  (``perf.one_run``): first frame and ready, beside a new session's.

    PYTHONPATH=. .venv/bin/python bench/longlive.py [--turns 250] [--window 16000] [--json out.json]

A measurement, not a test: it prints the figures (bench/results.md keeps them, "Round 22: longlive").
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

from myrm_tui.testing.emulator import ProviderEmulator
from tests.app.lived import FACT, LOOKUP, SLOW, Lived, key_burst, message, prepare, rss_mb
from tests.helpers import make_app, send_turn, started, type_and_send, wait_until

BURST = "the quick brown fox jumps over it twice"  # 39 characters + the trailing digit below


async def live(
    turns: int,
    window: int,
    burst_at: int,
    tmp: Path,
    emu: ProviderEmulator,
    trace: tuple[int, int] | None = None,
    keep_requests: bool = False,
) -> dict[str, Any]:
    from myrm_tui.app.widgets.chat_log import ChatLog
    from myrm_tui.app.widgets.prompt_input import PromptInput

    ws = tmp / "ws"
    prepare(ws)
    lived = Lived()
    emu.default = lived.route
    app = make_app(
        emu, tmp, ws, summarizer_model="extractive", preheat=False, keepalive=False, context_window=window
    )
    rows: list[dict[str, Any]] = []
    out: dict[str, Any] = {"turns": turns, "window": window}
    async with started(app, size=(120, 40)) as pilot:
        chat = app.query_one(ChatLog)
        prompt = app.screen.query_one(PromptInput)
        out["rss_start_mb"] = round(rss_mb(), 1)
        for i in range(turns):
            if i == burst_at:
                await type_and_send(pilot, SLOW)
                await wait_until(pilot, lambda: streaming_text(chat) != "", 60)
                out["burst_s"] = round(await key_burst(pilot, BURST + "1"), 3)
                out["burst_in_order"] = prompt.text == BURST + "1"
                lived.resume.set()
                await wait_until(pilot, lambda: not app.busy, 60)
                prompt.text = ""
            if trace is not None and i == trace[0]:
                gc.collect()
                tracemalloc.start(TRACE_FRAMES)
                snapshots = [tracemalloc.take_snapshot()]
            started_at = time.perf_counter()
            await send_turn(pilot, app, message(i), timeout=120)
            if not keep_requests:
                # The emulator keeps every request's body for tests to read (~85 KB a turn here): the bench's
                # own growth, not the app's, in the same process's RSS.
                emu.requests.clear()
            if trace is not None and i == trace[1]:
                gc.collect()
                snapshots.append(tracemalloc.take_snapshot())
                tracemalloc.stop()
                out["tracemalloc"] = grown(snapshots[0], snapshots[1], trace[1] - trace[0] + 1)
            rows.append(
                {
                    "turn": i,
                    "s": round(time.perf_counter() - started_at, 3),
                    "rss_mb": round(rss_mb(), 1),
                    "items": len(chat.items),
                    "mounted": len(chat.children),
                    "compactions": sum(1 for it in chat.items if it.kind == "compaction"),
                }
            )
            if i % 25 == 24:
                print(json.dumps(rows[-1]), flush=True)
        await send_turn(pilot, app, LOOKUP, timeout=120)
        out["history_search_found_fact"] = bool(lived.lookups) and FACT.split()[-1] in json.dumps(
            lived.lookups[-1]["messages"][-1]
        )
        assert app.controller.session is not None
        out["session"] = app.controller.session.id
        out["ring"] = str(app.query_one("ContextUsageIndicator").render())
    quarter = max(1, turns // 4)
    first, last = rows[:quarter], rows[-quarter:]
    out["rss_per_turn_first_quarter_mb"] = round((first[-1]["rss_mb"] - first[0]["rss_mb"]) / quarter, 3)
    out["rss_per_turn_last_quarter_mb"] = round((last[-1]["rss_mb"] - last[0]["rss_mb"]) / quarter, 3)
    out["rss_end_mb"] = rows[-1]["rss_mb"]
    out["turn_s_first25_median"] = statistics.median(r["s"] for r in rows[:25])
    out["turn_s_last25_median"] = statistics.median(r["s"] for r in rows[-25:])
    out["mounted_max"] = max(r["mounted"] for r in rows)
    out["items_end"] = rows[-1]["items"]
    out["compactions"] = rows[-1]["compactions"]
    out["rows"] = rows
    return out


TRACE_FRAMES = 8


def grown(before: tracemalloc.Snapshot, after: tracemalloc.Snapshot, turns: int) -> list[dict[str, Any]]:
    """What is still allocated after ``turns`` turns that was not before, by the allocating traceback
    (its innermost frames in myrm_tui, else its innermost ones), largest first."""
    ignore = [tracemalloc.Filter(False, tracemalloc.__file__)]
    diff = after.filter_traces(ignore).compare_to(before.filter_traces(ignore), "traceback")
    rows = []
    for stat in sorted(diff, key=lambda d: d.size_diff, reverse=True)[:25]:
        frames = [f"{f.filename.rsplit('site-packages/', 1)[-1]}:{f.lineno}" for f in stat.traceback]
        ours = [f for f in frames if "myrm_tui" in f]
        rows.append(
            {
                "kb": round(stat.size_diff / 1024, 1),
                "kb_a_turn": round(stat.size_diff / 1024 / turns, 2),
                "blocks": stat.count_diff,
                "where": frames[-6:],  # innermost last
                "ours": ours[-3:],
            }
        )
    return rows


def streaming_text(chat: Any) -> str:
    """The text of the answer streaming now ("" before its first chunk)."""
    item = chat._current_item
    return item.text if item is not None else ""


def resume_paint(db: Path, session: str, runs: int) -> dict[str, Any]:
    """First frame and ready of ``myrm --session ID`` on the lived session's database, and of a new one."""
    from myrm_tui.app.perf import _median, one_run

    myrm = str(Path(sys.executable).with_name("myrm"))
    env = {**os.environ, "OPENAI_API_KEY": "sk-test"}
    base = ["-m", "openai/gpt-4o-mini", "--api-base", "http://127.0.0.1:9/v1"]
    out: dict[str, Any] = {}
    for name, args, database in (("new", base, None), ("lived", [*base, "--session", session], db)):
        runs_done = []
        for _ in range(runs + 1):  # the first writes bytecode caches, as a user's first launch does
            with tempfile.TemporaryDirectory(prefix="longlive-") as t:
                copy = None
                if database is not None:
                    copy = Path(t) / "copy.db"
                    copy.write_bytes(database.read_bytes())
                runs_done.append(one_run([myrm, *args], (120, 40), 1.0, 90.0, db=copy, environ=env))
        runs_done = runs_done[1:]
        out[name] = {
            "first_frame_s": _median([r.first_frame_s for r in runs_done], 99),
            "ready_s": _median([r.ready_s for r in runs_done], 99),
            "typing_40_s": _median([r.typing_s for r in runs_done], 99),
            "idle_rss_mb": _median([r.idle_rss_mb for r in runs_done], 0),
            "phases_cpu_s": runs_done[-1].phases,  # the last run's start-up steps (its log)
        }
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--turns", type=int, default=250)
    ap.add_argument("--window", type=int, default=16_000)
    ap.add_argument("--burst-at", type=int, default=240)
    ap.add_argument("--resume-runs", type=int, default=3, help="0: no resume measured")
    ap.add_argument("--json", type=Path)
    ap.add_argument(
        "--tracemalloc",
        nargs=2,
        type=int,
        metavar=("FROM", "TO"),
        help="trace allocations from turn FROM to turn TO and print what grew, by traceback",
    )
    ap.add_argument(
        "--keep-requests",
        action="store_true",
        help="keep the emulator's record of every request (as before: its growth counted in the RSS)",
    )
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="longlive-") as t, ProviderEmulator() as emu:
        tmp = Path(t)
        burst = min(args.burst_at, args.turns - 1)
        trace = tuple(args.tracemalloc) if args.tracemalloc else None
        result = asyncio.run(live(args.turns, args.window, burst, tmp, emu, trace, args.keep_requests))
        if args.resume_runs > 0:
            result["resume"] = resume_paint(tmp / "tui.db", result["session"], args.resume_runs)
    rows = result.pop("rows")
    print(json.dumps(result, indent=1))
    if args.json:
        args.json.write_text(json.dumps({**result, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
