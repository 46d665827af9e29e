"""MCP tools from a local stdio server written for the tests: listed, callable, spilled, crash-safe."""

from __future__ import annotations

import sys
from pathlib import Path

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
