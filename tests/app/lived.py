"""A session lived in the full screen, turn after turn, as a user lives it: the provider emulator is the
model, scripted by what each request asks (``route``): it reads a big file, runs a failing command, edits
a file, greps, or only answers; a fact told at turn ``FACT_TURN`` is looked up with ``history_search`` when
asked. Shared by the lived-session tests (bounded, and ``long``) and ``bench/longlive.py`` (memory and key
latency at turn 250)."""

from __future__ import annotations

import asyncio
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from myrm_tui.testing.emulator import Reply

FACT_TURN = 10
FACT = "the release codename is PERIWINKLE-4471"
LOOKUP = "what was the release codename I told you long ago?"
SLOW = "answer slowly"  # a turn whose reply pauses mid-stream until ``Lived.resume`` is set
_TURN = re.compile(r"^turn (\d+):", re.M)

TITLE_PROMPT = "Write a title of at most six words"


def prepare(ws: Path) -> None:
    """The project the model works in: a big module, a script that fails, a notes file it edits."""
    ws.mkdir(parents=True, exist_ok=True)
    handler = "def handler_{0}(request):\n    return {{'id': {0}, 'ok': {1}}}\n"
    (ws / "big.py").write_text("\n".join(handler.format(i, i % 3 != 0) for i in range(1500)))
    (ws / "fail.py").write_text("print('running checks')\nraise SystemExit('check 7 failed: E42')\n")
    (ws / "notes.txt").write_text("notes\nEND\n")


def _text(content: Any) -> str:
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


@dataclass
class Lived:
    """The emulator's script for a lived session, and what it saw."""

    resume: threading.Event = field(default_factory=threading.Event)
    lookups: list[dict[str, Any]] = field(default_factory=list)  # the requests after a history_search

    def route(self, body: dict[str, Any]) -> Reply:
        msgs = body.get("messages", [])
        if any(TITLE_PROMPT in _text(m.get("content")) for m in msgs[:2]):
            return Reply(text="A lived session")
        last = msgs[-1] if msgs else {}
        user = next((_text(m.get("content")) for m in reversed(msgs) if m.get("role") == "user"), "")
        if last.get("role") == "tool":
            asked: dict[str, Any] = next((m for m in reversed(msgs) if m.get("role") == "assistant"), {})
            names = [c.get("function", {}).get("name") for c in asked.get("tool_calls") or []]
            if "history_search" in names:
                self.lookups.append(body)
            n = len(msgs)
            return Reply(text=f"Done: the step worked ({n} messages in view). " + "The details follow. " * 30)
        if SLOW in user:
            self.resume.clear()
            return Reply(
                text="A slow answer, " + "word " * 400, chunk_size=8, pause_after=3, resume=self.resume
            )
        if LOOKUP in user:
            return Reply(tool_calls=[("history_search", {"query": "release codename"})])
        m = _TURN.search(user)
        i = int(m.group(1)) if m else 0
        match i % 5:
            case 0:
                return Reply(tool_calls=[("file_read_tool", {"paths": ["big.py"]})])
            case 1:
                return Reply(tool_calls=[("bash", {"command": f"python3 fail.py --run {i}"})])
            case 2:
                edit = {"path": "notes.txt", "old_string": "END", "new_string": f"turn {i} was here\nEND"}
                return Reply(tool_calls=[("file_edit_tool", edit)])
            case 3:
                return Reply(tool_calls=[("grep", {"pattern": f"handler_{i}\\b", "path": "."})])
            case _:
                return Reply(text=f"Turn {i}: nothing to run. " + "Some thoughts on it. " * 20)


def message(i: int) -> str:
    """The user's message of turn ``i``."""
    extra = f" Remember: {FACT}." if i == FACT_TURN else ""
    return f"turn {i}: go on with the work, step {i}.{extra}"


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


async def key_burst(pilot: Any, typed: str, timeout: float = 30.0) -> float:
    """Type ``typed`` as one burst of real key events (as a fast typist or a paste-less terminal sends
    them) into the prompt box; the seconds until every character is in the box."""
    from textual import events

    from myrm_tui.app.widgets.prompt_input import PromptInput

    app = pilot.app
    prompt = app.screen.query_one(PromptInput)
    before = prompt.text
    driver = app._driver
    start = time.perf_counter()
    for ch in typed:
        key = events.Key(ch if ch.isalnum() else "space" if ch == " " else ch, ch)
        key.set_sender(app)
        driver.send_message(key)
    end = start + timeout
    while prompt.text != before + typed:
        if time.perf_counter() > end:
            raise AssertionError(f"the burst did not land: {prompt.text!r}")
        await asyncio.sleep(0.002)
    return time.perf_counter() - start
