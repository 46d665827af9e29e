"""MCP tools from a local stdio server written for the tests: listed, callable, spilled, crash-safe."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import Any

import pytest

from myrm_tui.agent.events import ToolFinished
from myrm_tui.agent.mcp_client import MAX_MCP_TOOLS, OversizedResultHandler
from myrm_tui.agent.tools.files import FileReadTool
from myrm_tui.context.vault import ArtifactVault
from myrm_tui.store.db import Store
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.conftest import FIXTURES
from tests.helpers import collect, make_agent, openai_settings

SERVER = {"name": "fixture", "command": sys.executable, "args": [str(FIXTURES / "mcp_server.py")]}


async def test_mcp_tools_are_bound_called_spilled_and_survive_a_crash(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    agent = await make_agent(store, workspace, openai_settings(emulator, mcp_servers=[SERVER]))
    try:
        assert {"mcp__fixture__big_report", "mcp__fixture__echo", "mcp__fixture__crash"} <= set(
            agent.tool_runner.tools.tools
        )
        emulator.enqueue(
            Reply(tool_calls=[("mcp__fixture__echo", {"text": "ping"}), ("mcp__fixture__big_report", {})]),
            Reply(text="Got the report."),
        )
        events = await collect(agent, "use the mcp tools")
        results = {e.call.name: e.message for e in events if isinstance(e, ToolFinished)}
        assert results["mcp__fixture__echo"].text == "echo: ping"
        big = results["mcp__fixture__big_report"]
        assert len(big.text) < 20_000 and "vault://" in big.text and "file_read_tool" in big.text
        uri = big.meta["vault_uri"]
        full = (await store.vault_get(uri)).content  # type: ignore[union-attr]
        assert len(full) == 100_000
        read = await FileReadTool().run({"paths": [uri], "line_range": "500:500"}, agent.tool_runner.ctx)
        assert "500\trow 00500:" in read.content
        tools_sent = [t["function"]["name"] for t in emulator.accepted[-1].body["tools"]]
        assert tools_sent == [t["function"]["name"] for t in emulator.accepted[0].body["tools"]]  # bound once
        emulator.enqueue(
            Reply(tool_calls=[("mcp__fixture__crash", {})]),
            Reply(tool_calls=[("mcp__fixture__echo", {"text": "again"})]),
            Reply(text="The MCP server is gone; carrying on."),
        )
        events = await collect(agent, "crash it")
        errs = [e.message.text for e in events if isinstance(e, ToolFinished)]
        assert errs[0].startswith("Error:") and "fixture" in errs[0]
        assert errs[1].startswith("Error:") and ("not running" in errs[1] or "stopped" in errs[1])
        assert emulator.rejected == [] and events[-1].__class__.__name__ == "TurnDone"
    finally:
        await agent.close()


def test_oversized_handler_falls_back_to_head_truncation_without_a_vault() -> None:
    h = OversizedResultHandler(1_000)
    text, uri = h.handle("z" * 5_000, "t", None)
    assert uri is None and text.startswith("z" * 1_000) and "cut at 1,000" in text
    text, uri = h.handle("z" * 5_000, "t", ArtifactVault("s"))
    assert uri is not None and uri in text


async def test_streamable_http_server(tmp_path: Path) -> None:
    import asyncio
    import socket
    import subprocess

    from myrm_tui.agent.mcp_client import McpServerConfig, connect_all
    from myrm_tui.agent.tools.base import ToolContext

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, str(FIXTURES / "mcp_server.py"), "http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(100):  # wait for the port, at most ~10 s
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
            except OSError:
                await asyncio.sleep(0.1)
        conns, tools, errors = await connect_all([McpServerConfig("web", url=f"http://127.0.0.1:{port}/mcp")])
        assert errors == [] and {t.remote for t in tools} >= {"echo", "big_report"}
        ctx = ToolContext(workspace=tmp_path, vault=ArtifactVault("s"))
        echo = next(t for t in tools if t.remote == "echo")
        assert (await echo.run({"text": "over http"}, ctx)).content == "echo: over http"
        for c in conns:
            await c.close()
    finally:
        proc.terminate()
        proc.wait(10)


async def test_tools_no_provider_would_take_are_left_out_and_the_session_goes_on(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    """A server's tools are bound into every request: one that breaks the provider's rules (300,000
    characters of schema, a function name taken twice, more tools than a request carries) would fail
    every request of the session for good. Such a tool is left out, one line
    each (a count for the ones past the limit), and the rest work."""
    hostile = {"name": "hostile", "command": sys.executable, "args": [str(FIXTURES / "mcp_hostile.py")]}
    agent = await make_agent(store, workspace, openai_settings(emulator, mcp_servers=[hostile]))
    try:
        bound = set(agent.tool_runner.tools.tools)
        assert "mcp__hostile__fine" in bound and "mcp__hostile__dup_name" in bound
        assert "mcp__hostile__huge" not in bound
        assert len([n for n in bound if n.startswith("mcp__")]) <= MAX_MCP_TOOLS
        emulator.enqueue(Reply(tool_calls=[("mcp__hostile__fine", {"text": "ping"})]), Reply(text="Done."))
        events = await collect(agent, "use the tool")
        results = [e.message.text for e in events if isinstance(e, ToolFinished)]
        assert results == ["fine: ping"] and emulator.rejected == [], emulator.rejected
        rows = await store.metrics(agent.session_id)
        said = [e for r in rows if r.get("kind") == "mcp_error" for e in r["events"]]
        assert len(said) == 3, said  # huge, the second dup, and the count past the limit
        assert all("\n" not in line and "left out" in line for line in said)
    finally:
        await agent.close()


async def test_late_servers_a_dead_one_is_said_at_the_first_turn_and_an_up_one_joins_without_a_line(
    emulator: ProviderEmulator, store: Store, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A front-end with turns to come (``mcp_late``): the build waits for no server; at the first turn a
    server that died is one line and not waited on, one up by then is bound without a line, and one never
    answering is given up on once ``STARTUP_TIMEOUT`` has passed (said at the turn after)."""
    from myrm_tui.agent import mcp_client
    from myrm_tui.agent.events import Notice
    from myrm_tui.agent.factory import build_agent

    monkeypatch.setattr(mcp_client, "STARTUP_TIMEOUT", 120.0)
    dead = {"name": "dies", "command": sys.executable, "args": ["-c", "raise SystemExit(3)"]}
    silent = {"name": "silent", "command": "sleep", "args": ["300"]}
    settings = openai_settings(emulator, mcp_servers=[SERVER, dead, silent])
    row = await store.create_session(model=settings.model, workspace=str(workspace))
    agent = await build_agent(store, row.id, settings, workspace, mcp_late=True)
    try:
        late = agent.turns.late
        assert late is not None and [c.config.name for c in late.pending] == ["fixture", "dies", "silent"]
        fixture, dies, _ = late.pending
        await fixture.ready()  # the fixture up and the dead one ended before the first turn
        await _ended(dies)
        emulator.enqueue(Reply(text="one"), Reply(text="two"))
        said = [e.text for e in await collect(agent, "first") if isinstance(e, Notice)]
        assert "mcp__fixture__echo" in _sent_tools(emulator) and not any("fixture" in t for t in said)
        assert [t for t in said if "'dies'" in t] == [t for t in said if "'dies' did not start" in t] != []
        assert [t for t in said if "'silent'" in t] == [
            "MCP server 'silent' is still starting: this turn goes on without its tools; they join at the "
            "first turn after it is up"
        ]
        monkeypatch.setattr(mcp_client, "STARTUP_TIMEOUT", 0.0)  # its time is up
        said = [e.text for e in await collect(agent, "second") if isinstance(e, Notice)]
        assert said == ["MCP server 'silent' did not start: no answer within 0 s"] and late.pending == []
    finally:
        await agent.close()


async def _ended(conn: Any) -> None:
    with contextlib.suppress(Exception):
        await conn.ready()


def _sent_tools(emulator: ProviderEmulator) -> list[str]:
    return [t["function"]["name"] for t in emulator.accepted[-1].body.get("tools") or []]


async def test_a_first_turn_cancelled_while_it_waits_for_a_late_server_leaves_no_task_behind() -> None:
    """The first turn waits ``FIRST_WAIT`` at most for the servers still starting; cancelled during that
    wait (Esc, a quit), it leaves no task waiting on a start behind (each would end with the start's
    failure, never read: asyncio's "exception was never retrieved"), and the start goes on."""
    import asyncio
    import time

    from myrm_tui.agent import mcp_client

    silent = mcp_client.McpServerConfig.from_dict({"name": "silent", "command": "sleep", "args": ["300"]})
    conn = mcp_client.McpConnection(silent)
    late = mcp_client.LateServers([conn], OversizedResultHandler(), time.monotonic())
    before = asyncio.all_tasks()
    take = asyncio.ensure_future(late.take([], 0))
    await asyncio.sleep(0)  # one step of the loop: the turn is inside its wait
    assert not take.done()
    take.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await take
    try:
        waiting = [t for t in asyncio.all_tasks() - before if "McpConnection.ready" in repr(t.get_coro())]
        assert waiting == []
        assert conn.started is None and late.pending == [conn]  # its start goes on
    finally:
        await late.close()
