"""What round 21 left for an editor. The model picker (Zed's had nothing to show and nothing to set): this
SDK's protocol (agent-client-protocol 0.12.1) has no ``session/set_model`` and no ``models`` in
``session/new``; a picker is a session config option of category ``model``, set with
``session/set_config_option``. The SDK's own errors reach myrm's log, not stderr alone."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, RequestError, schema, text_block

from myrm_tui.agent import mcp_client
from myrm_tui.agent.api import Sessions
from myrm_tui.context.types import Message
from myrm_tui.llm.local import DEFAULT_LOCAL_MODEL
from myrm_tui.store.db import Store
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests import warm
from tests.acp.test_server import Editor, Wire, _start, in_process, real_process
from tests.helpers import cli_env


async def test_the_editor_is_offered_the_models_and_the_one_it_picks_answers_the_next_prompt(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")  # its provider's models are offered
    emulator.enqueue(Reply(text="from the picked model"))
    async with in_process(tmp_path, emulator, Editor()) as (conn, wire, _, server):
        sid = await _start(conn, workspace)
        (option,) = _answer(wire, "session/new")["configOptions"]
        assert option["category"] == "model" and option["type"] == "select"
        assert option["currentValue"] == "openai/gpt-4o-mini"
        offered = [o["value"] for o in option["options"]]
        assert offered[0] == "openai/gpt-4o-mini" and "gpt-4o-mini" in offered
        assert DEFAULT_LOCAL_MODEL in offered
        picked = await conn.set_config_option(config_id="model", session_id=sid, value="gpt-4o-mini")
        assert picked.config_options[0].current_value == "gpt-4o-mini"
        done = await conn.prompt(session_id=sid, prompt=[text_block("hello")])
        assert done.stop_reason == "end_turn"
        agent = server.sessions[sid].session.agent
        assert agent is not None and agent.session.settings.model == "gpt-4o-mini"
        with pytest.raises(RequestError):
            await conn.set_config_option(config_id="model", session_id=sid, value="evil/model")
        with pytest.raises(RequestError):
            await conn.set_config_option(config_id="temperature", session_id=sid, value="gpt-4o-mini")
        assert server.sessions[sid].cli["model"] == "gpt-4o-mini"  # a refused value changes nothing


async def test_the_model_myrm_acp_started_with_is_still_offered_after_another_is_picked(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found in review: the picker offered the model in force, the providers' defaults and the embedded one.
    Once another was picked, the model ``myrm acp -m`` started with (none of those) was off the list and
    refused, and the picker is an editor's only way to set the model: it was lost for the session."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    emulator.enqueue(Reply(text="from the first model again"))
    async with in_process(tmp_path, emulator, Editor(), model="openai/gpt-4o") as (conn, _wire, _, server):
        sid = await _start(conn, workspace)
        away = await conn.set_config_option(config_id="model", session_id=sid, value="gpt-4o-mini")
        assert "openai/gpt-4o" in [o.value for o in away.config_options[0].options]
        back = await conn.set_config_option(config_id="model", session_id=sid, value="openai/gpt-4o")
        assert back.config_options[0].current_value == "openai/gpt-4o"
        done = await conn.prompt(session_id=sid, prompt=[text_block("hello")])
        assert done.stop_reason == "end_turn"
        agent = server.sessions[sid].session.agent
        assert agent is not None and agent.session.settings.model == "openai/gpt-4o"
        assert emulator.accepted[-1].body["model"].endswith("gpt-4o")


async def test_a_model_picked_that_takes_no_tools_shows_the_mode_it_gets(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    """Found in review: the embedded model (always offered) takes no tools, so it gets the ``chat`` mode;
    picked in the editor, the mode the editor showed stayed ``full``, and picking a model back did not say
    ``full`` again either."""
    async with in_process(tmp_path, emulator, Editor()) as (conn, wire, _, _server):
        sid = await _start(conn, workspace)
        assert _answer(wire, "session/new")["modes"]["currentModeId"] == "full"
        await conn.set_config_option(config_id="model", session_id=sid, value=DEFAULT_LOCAL_MODEL)
        assert [u["currentModeId"] for u in wire.updates("current_mode_update")] == ["chat"]
        await conn.set_config_option(config_id="model", session_id=sid, value="openai/gpt-4o-mini")
        assert [u["currentModeId"] for u in wire.updates("current_mode_update")] == ["chat", "full"]


async def test_a_build_that_failed_with_no_prompt_after_it_is_logged_with_its_traceback(
    emulator: ProviderEmulator,
    tmp_path: Path,
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Found in review: the agent is built after ``session/new`` is answered; one whose build failed
    and that the editor never prompted was closed without a word of why (close() awaited only a build
    still running), its failure left to the collector's "exception was never retrieved"."""

    async def broken(*_: Any, **__: Any) -> Any:
        raise RuntimeError("the agent could not be built")

    monkeypatch.setattr(Sessions, "_build", broken)
    with caplog.at_level("WARNING", logger="myrm_tui.acp.server"):
        async with in_process(tmp_path, emulator, Editor()) as (conn, _wire, _, server):
            sid = await _start(conn, workspace)
            build = server.sessions[sid].build
            assert build is not None
            await asyncio.wait([build])  # failed, and no prompt waits for it
    logged = [r for r in caplog.records if r.name == "myrm_tui.acp.server" and r.exc_info]
    assert [str(r.exc_info[1]) for r in logged if r.exc_info] == ["the agent could not be built"]


def _answer(wire: Wire, method: str) -> Any:
    """The result the agent sent to the editor's (first) ``method`` request, as on the wire."""
    (asked,) = [m for d, m in wire.messages if d == "outgoing" and m.get("method") == method]
    for d, m in wire.messages:
        if d == "incoming" and m.get("id") == asked["id"] and "result" in m:
            return m["result"]
    raise AssertionError(f"no answer to {method}")


async def test_an_error_the_sdk_logs_reaches_myrms_log_with_its_traceback_and_stderr(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    """A notification the SDK cannot read (``session/cancel`` without its session id) is logged by the SDK
    on the root logger: it reached stderr alone (Python's last resort), never myrm's log."""
    log = tmp_path / "myrm.log"
    proc = warm.Popen(
        [
            sys.executable,
            "-m",
            "myrm_tui.cli",
            "acp",
            "--model",
            "openai/gpt-4o-mini",
            "--api-base",
            emulator.openai_base,
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=cli_env(tmp_path, MYRM_LOG=str(log)),
        cwd=workspace,
    )
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": PROTOCOL_VERSION}},
        {"jsonrpc": "2.0", "method": "session/cancel", "params": {}},
    ]
    out, err = await asyncio.to_thread(
        proc.communicate, "".join(json.dumps(m) + "\n" for m in lines).encode(), 60
    )
    assert proc.returncode == 0, err
    assert json.loads(out.decode().splitlines()[0])["id"] == 1
    said = "Unhandled error while handling notification method=session/cancel"
    assert said in err.decode()
    logged = log.read_text()
    assert said in logged and "Traceback (most recent call last)" in logged
    assert "sessionId" in logged[logged.index(said) :]  # the SDK's reason, in its traceback


async def test_session_new_is_answered_while_an_mcp_server_starts_and_the_first_prompt_has_its_tools(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An MCP server that never started held ``session/new`` for its start-up timeout (10 s) while the
    editor showed nothing. The server here starts only when the test lets it (a FIFO it reads first), and
    its timeout is raised past the test's own bound: ``session/new`` is answered before it starts; once it
    is up, the first prompt has its tools."""
    monkeypatch.setattr(mcp_client, "STARTUP_TIMEOUT", 120.0)
    gate = tmp_path / "gate"
    os.mkfifo(gate)
    emulator.enqueue(Reply(text="ok"))
    async with in_process(tmp_path, emulator, Editor()) as (conn, _wire, _, server):
        try:
            await conn.initialize(protocol_version=PROTOCOL_VERSION)
            # bounded: held by the server (the defect), it would wait 120 s
            new = await asyncio.wait_for(conn.new_session(cwd=str(workspace), mcp_servers=[_gated(gate)]), 60)
        finally:  # bounded too: a server that never came to read it
            await asyncio.wait_for(asyncio.to_thread(_open_gate, gate), 60)
        (late,) = (await _late(server, new.session_id)).pending
        await _until(lambda: late.started is not None)
        done = await conn.prompt(session_id=new.session_id, prompt=[text_block("hello")])
    assert done.stop_reason == "end_turn"
    tools = [t["function"]["name"] for t in emulator.accepted[-1].body["tools"]]
    assert "mcp__slow__echo" in tools


async def test_a_slow_mcp_server_does_not_hold_the_first_prompt_and_joins_the_next(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Round 22 left it: the first prompt waited for the agent's build, which waited for every MCP server
    up to 10 s. Now it waits ``FIRST_WAIT`` at most, goes on with the servers up and says in one line
    which is not; the next prompt after that server is up has its tools and a line that it joined."""
    monkeypatch.setattr(
        mcp_client, "STARTUP_TIMEOUT", 600.0
    )  # held by it (the defect): the test's bound fails
    gate = tmp_path / "gate"
    os.mkfifo(gate)
    emulator.enqueue(Reply(text="first"), Reply(text="second"))
    editor = Editor()
    async with in_process(tmp_path, emulator, editor) as (conn, _wire, _, server):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        new = await conn.new_session(cwd=str(workspace), mcp_servers=[_gated(gate)])
        try:
            done = await asyncio.wait_for(
                conn.prompt(session_id=new.session_id, prompt=[text_block("one")]), 60
            )
            assert done.stop_reason == "end_turn"
            assert "mcp__slow__echo" not in _tools(emulator.accepted[-1].body)
            said = [u.content.text for u in editor.of("agent_thought_chunk")]  # myrm's notices
            assert any(
                "MCP server 'slow' is still starting: this turn goes on without its tools" in t for t in said
            )
        finally:
            await asyncio.wait_for(asyncio.to_thread(_open_gate, gate), 60)
        (late,) = (await _late(server, new.session_id)).pending
        await _until(lambda: late.started is not None)
        done = await conn.prompt(session_id=new.session_id, prompt=[text_block("two")])
    assert done.stop_reason == "end_turn"
    assert "mcp__slow__echo" in _tools(emulator.accepted[-1].body)
    said = [u.content.text for u in editor.of("agent_thought_chunk")]
    assert any("MCP server 'slow' is up: its tools join from this turn" in t for t in said)


def _gated(gate: Path) -> schema.McpServerStdio:
    """The fixture MCP server, started only once the test opens ``gate`` (a FIFO) for writing."""
    fixture = Path(__file__).parent.parent / "fixtures" / "mcp_server.py"
    wait_then_serve = (
        "import os, sys; open(sys.argv[1]).read(); os.execv(sys.executable, [sys.executable, sys.argv[2]])"
    )
    return schema.McpServerStdio(
        name="slow", command=sys.executable, args=["-c", wait_then_serve, str(gate), str(fixture)], env=[]
    )


def _tools(body: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in body.get("tools") or []]


async def _late(server: Any, sid: str) -> Any:
    """The session's MCP servers still starting (``LateServers``), once its agent is built (the build
    ``session/new`` started: a ``ready()`` while it runs would build a second agent)."""
    ed = server.sessions[sid]
    await server._built(ed)
    agent = await ed.session.ready()
    assert agent.turns.late is not None
    return agent.turns.late


async def _until(cond: Callable[[], bool], timeout: float = 60.0) -> None:
    """Poll ``cond`` (a server's start, which sends the editor nothing) until it holds."""
    end = asyncio.get_running_loop().time() + timeout
    while not cond():
        assert asyncio.get_running_loop().time() < end, "condition not reached in time"
        await asyncio.sleep(0.02)


def _open_gate(gate: Path) -> None:
    """Let the waiting server go on: opening the FIFO to write waits for its reader (the server, started
    in the background), and closing it ends the server's read."""
    with open(gate, "w"):
        pass


async def test_loading_a_session_of_another_folder_tells_the_editor(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    """Round 22 left it: ``session/load`` of a session started in another folder continued it silently on
    the files of the editor's ``cwd`` (Zed lists every folder's sessions: its ``session/list`` sends no
    ``cwd``). The protocol has no field for it; the editor gets one line after the replayed history, as
    ``myrm --session`` prints one. A session of this folder gets none."""
    other = tmp_path / "other-project"
    other.mkdir()
    store = await Store.open(tmp_path / "cli.db")  # the database real_process's myrm opens
    try:
        ids = {}
        for name, folder in (("away", other), ("here", workspace)):
            row = await store.create_session(model="openai/gpt-4o-mini", workspace=str(folder))
            await store.append_message(row.id, Message(role="user", content=f"question {name}"))
            await store.append_message(row.id, Message(role="assistant", content=f"answer {name}"))
            ids[name] = row.id
    finally:
        await store.close()
    editor = Editor()
    async with real_process(tmp_path, emulator, workspace, editor) as (conn, _wire, _proc):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        for name in ("away", "here"):
            await conn.load_session(cwd=str(workspace), session_id=ids[name], mcp_servers=[])
    said = [u.content.text for u in editor.of("agent_message_chunk")]
    warning = (
        f"myrm: warning: session {ids['away']} was started in {other}; it continues here, on the files of "
        f"{workspace.resolve()}\n"
    )
    assert said == ["answer away", warning, "answer here"]
