"""A slow or dead MCP server does not hold the first prompt for its start-up timeout (round 22 left it):
the TUI's agent waits ``mcp_client.FIRST_WAIT`` for the servers, the first turn goes on with those up and
says in one line which is not, and the late one's tools join at the first turn after it is up."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from myrm_tui.agent import mcp_client
from myrm_tui.app.widgets.chat_log import ChatLog
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.helpers import make_app, send_turn, started, wait_until

FIXTURE = Path(__file__).parent.parent / "fixtures" / "mcp_server.py"
# Starts serving only once the test opens the FIFO (its first argument) for writing.
WAIT_THEN_SERVE = (
    "import os, sys; open(sys.argv[1]).read(); os.execv(sys.executable, [sys.executable, sys.argv[2]])"
)


def _open_gate(gate: Path) -> None:
    """Let the waiting server go on: opening the FIFO to write waits for its reader (the server)."""
    fd = os.open(gate, os.O_WRONLY)
    os.close(fd)


def _tools(body: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in body.get("tools") or []]


async def test_a_slow_mcp_server_does_not_hold_the_first_turn_and_joins_when_it_is_up(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Its timeout far past the test's bounds: held by the server (the defect), the app is never ready.
    monkeypatch.setattr(mcp_client, "STARTUP_TIMEOUT", 600.0)
    gate = tmp_path / "gate"
    os.mkfifo(gate)
    fast = {"name": "fast", "command": sys.executable, "args": [str(FIXTURE)]}
    slow = {
        "name": "slow",
        "command": sys.executable,
        "args": ["-c", WAIT_THEN_SERVE, str(gate), str(FIXTURE)],
    }
    emulator.enqueue(Reply(text="first answer"), Reply(text="second answer"))
    app = make_app(emulator, tmp_path, workspace, mcp_servers=[fast, slow], preheat=False, keepalive=False)
    async with started(app) as pilot:
        chat = app.query_one(ChatLog)
        agent = app.controller.agent
        assert agent is not None and agent.turns.late is not None
        late = agent.turns.late
        # the app is ready without waiting for them; the fast one is up before the first message is sent
        await wait_until(pilot, lambda: any(c.config.name == "fast" and c.started for c in late.pending), 60)
        await send_turn(pilot, app, "first")
        first = next(r.body for r in emulator.accepted if "first" in str(r.body["messages"]))
        assert "mcp__fast__echo" in _tools(first) and "mcp__slow__echo" not in _tools(first)
        notices = [it.text for it in chat.items if it.kind == "notice"]
        assert [n for n in notices if "MCP server" in n] == [
            "MCP server 'slow' is still starting: this turn goes on without its tools; they join at the "
            "first turn after it is up"
        ]
        await asyncio.to_thread(_open_gate, gate)
        (slow_conn,) = late.pending
        await wait_until(pilot, lambda: slow_conn.started is not None, 60)
        await send_turn(pilot, app, "second")
        second = emulator.accepted[-1].body
        assert "second" in str(second["messages"])
        assert {"mcp__fast__echo", "mcp__slow__echo"} <= set(_tools(second))
        notices = [it.text for it in chat.items if it.kind == "notice"]
        assert "MCP server 'slow' is up: its tools join from this turn" in notices
