"""``myrm acp``: an editor (the official SDK's client) drives myrm over JSON-RPC against the provider
emulator. The first tests run ``myrm acp`` as a real process (forked by ``tests/warm.py``); the rest run
the same server in this process over a pair of pipes, which shows the same raw messages without paying
``import litellm`` again. Assertions are on the raw JSON-RPC messages each side saw."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, cast

import pytest
from acp import PROTOCOL_VERSION, schema, text_block
from acp.client.connection import ClientSideConnection
from acp.connection import StreamEvent

from myrm_tui.acp.server import MyrmAcpAgent, speak
from myrm_tui.store.db import Store
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests import warm
from tests.helpers import cli_env, pipe_streams

PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)


class Editor:
    """An ACP client as an editor is: it records every update and answers permission requests in turn."""

    def __init__(self, answers: list[str] | None = None) -> None:
        self.updates: list[Any] = []
        self.answers = list(answers or [])
        self.asked: list[Any] = []
        self.update_seen = asyncio.Event()
        self.buffers: dict[str, str] = {}  # path -> the editor's text (unsaved changes)

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        self.updates.append(update)
        self.update_seen.set()

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **_: Any
    ) -> schema.RequestPermissionResponse:
        self.asked.append((tool_call, options))
        if not self.answers:
            return schema.RequestPermissionResponse(outcome=schema.DeniedOutcome(outcome="cancelled"))
        return schema.RequestPermissionResponse(
            outcome=schema.AllowedOutcome(outcome="selected", option_id=self.answers.pop(0))
        )

    async def read_text_file(self, session_id: str, path: str, **_: Any) -> schema.ReadTextFileResponse:
        return schema.ReadTextFileResponse(content=self.buffers[path])

    async def write_text_file(self, session_id: str, path: str, content: str, **_: Any) -> None:
        self.buffers[path] = content

    async def until(self, cond: Callable[[], bool]) -> None:
        """Wait, update by update, until ``cond`` holds (30 s without an update fails)."""
        while not cond():
            self.update_seen.clear()
            await asyncio.wait_for(self.update_seen.wait(), 30)

    def of(self, kind: str) -> list[Any]:
        return [u for u in self.updates if u.session_update == kind]


class Wire:
    """Every raw JSON-RPC message, as (direction seen from the editor, message)."""

    def __init__(self) -> None:
        self.messages: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, event: StreamEvent) -> None:
        self.messages.append((event.direction.value, event.message))

    def sent(self, method: str) -> list[dict[str, Any]]:
        """Messages of ``method`` the agent sent (requests and notifications)."""
        return [m for d, m in self.messages if d == "incoming" and m.get("method") == method]

    def updates(self, kind: str) -> list[dict[str, Any]]:
        return [
            m["params"]["update"]
            for m in self.sent("session/update")
            if m["params"]["update"]["sessionUpdate"] == kind
        ]

    def order(self) -> list[str]:
        """The agent's messages in order, each named by its method and update kind."""
        out = []
        for d, m in self.messages:
            if d != "incoming" or "method" not in m:
                continue
            upd = (m.get("params") or {}).get("update") or {}
            out.append(f"{m['method']}:{upd.get('sessionUpdate', '')}:{upd.get('status', '')}")
        return out


@contextlib.asynccontextmanager
async def in_process(
    tmp: Path, emu: ProviderEmulator, editor: Editor, line_limit: int = 50 * 1024 * 1024, **cli: Any
) -> AsyncIterator[tuple[ClientSideConnection, Wire, int, MyrmAcpAgent]]:
    """The server in this process on a pair of pipes; yields the editor's connection, the wire, the fd
    that writes raw bytes to the server, and the server (``line_limit``: the longest line it reads)."""
    to_agent_r, to_agent_w = os.pipe()
    to_editor_r, to_editor_w = os.pipe()
    raw_w = os.dup(to_agent_w)
    agent_reader, agent_writer = await pipe_streams(to_agent_r, to_editor_w, line_limit)
    editor_reader, editor_writer = await pipe_streams(to_editor_r, to_agent_w)
    store = await Store.open(tmp / "acp.db")
    settings = {"model": "openai/gpt-4o-mini", "api_base": emu.openai_base, "api_key": "sk-test", **cli}
    server = MyrmAcpAgent(store, settings)
    listening = asyncio.create_task(speak(server, agent_reader, agent_writer))
    wire = Wire()
    conn = ClientSideConnection(cast(Any, editor), editor_writer, editor_reader, observers=[wire])
    try:
        yield conn, wire, raw_w, server
    finally:
        await conn.close()
        with contextlib.suppress(OSError):
            os.close(raw_w)
        listening.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await listening
        await server.close()
        await store.close()


async def _start(conn: ClientSideConnection, workspace: Path) -> str:
    await conn.initialize(protocol_version=PROTOCOL_VERSION)
    new = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    return new.session_id


# -- the real process ------------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def real_process(
    tmp: Path, emu: ProviderEmulator, workspace: Path, editor: Editor
) -> AsyncIterator[tuple[ClientSideConnection, Wire, Any]]:
    """``myrm acp`` as its own process, its stdin and stdout the editor's pipes."""
    proc = warm.Popen(
        [
            sys.executable,
            "-m",
            "myrm_tui.cli",
            "acp",
            "--model",
            "openai/gpt-4o-mini",
            "--api-base",
            emu.openai_base,
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=cli_env(tmp),
        cwd=workspace,
    )
    assert proc.stdin is not None and proc.stdout is not None
    reader, writer = await pipe_streams(os.dup(proc.stdout.fileno()), os.dup(proc.stdin.fileno()))
    proc.stdin.close()
    proc.stdout.close()
    wire = Wire()
    conn = ClientSideConnection(cast(Any, editor), writer, reader, observers=[wire])
    try:
        yield conn, wire, proc
    finally:
        await conn.close()
        writer.close()  # the editor goes away: the agent's stdin ends
        try:
            code = await asyncio.to_thread(proc.wait, 30)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
        assert proc.stderr is not None
        err = proc.stderr.read().decode(errors="replace")
        proc.stderr.close()
        assert code == 0, err


async def test_a_turn_with_a_tool_call_asks_the_editor_and_reports_the_last_requests_use(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    emulator.enqueue(
        Reply(tool_calls=[("bash", {"command": "touch made_by_agent"})]),
        Reply(text="Made the file."),
        Reply(tool_calls=[("bash", {"command": "rm -f hello.py"})]),
        Reply(text="Left it."),
    )
    editor = Editor(answers=["yes", "no"])
    async with real_process(tmp_path, emulator, workspace, editor) as (conn, wire, _):
        init = await conn.initialize(protocol_version=PROTOCOL_VERSION)
        assert init.protocol_version == 1
        assert init.agent_capabilities is not None and init.agent_capabilities.load_session
        sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        done = await conn.prompt(session_id=sid, prompt=[text_block("make a file")])
        assert done.stop_reason == "end_turn"
        assert (workspace / "made_by_agent").exists()
        second = await conn.prompt(session_id=sid, prompt=[text_block("remove hello.py")])
        assert second.stop_reason == "end_turn"
        assert (workspace / "hello.py").exists()  # rejected in the editor: never ran

    # The raw messages: the card opens, the editor is asked while it is pending, then it completes.
    order = [o for o in wire.order() if "tool_call" in o or "request_permission" in o]
    assert order[:4] == [
        "session/update:tool_call:pending",
        "session/update:tool_call_update:in_progress",
        "session/request_permission::",
        "session/update:tool_call_update:completed",
    ]
    card = wire.updates("tool_call")[0]
    assert card["kind"] == "execute" and card["title"] == "bash touch made_by_agent"
    asked = wire.sent("session/request_permission")[0]["params"]
    assert {o["kind"] for o in asked["options"]} == {"allow_once", "allow_always", "reject_once"}
    assert asked["toolCall"]["toolCallId"] == card["toolCallId"]
    # Every usage update is one request's figure of the window, never a running sum.
    usage = wire.updates("usage_update")
    assert len(usage) >= 4
    size = usage[-1]["size"]
    assert all(0 < u["used"] <= size for u in usage)
    assert max(u["used"] for u in usage) < 2 * min(u["used"] for u in usage)
    assert usage[-1]["cost"]["currency"] == "USD"
    assert "Made the file." in "".join(u["content"]["text"] for u in wire.updates("agent_message_chunk"))
    commands = wire.updates("available_commands_update")[0]["availableCommands"]
    assert {"compact", "context", "fork"} <= {c["name"] for c in commands}
    # What the provider received: the first turn's tool result went back to it.
    bodies = [r.body for r in emulator.accepted]
    assert any(m.get("role") == "tool" for m in bodies[1]["messages"])

    # A second editor loads the session: the history comes back as the updates it would have seen.
    again = Editor()
    async with real_process(tmp_path, emulator, workspace, again) as (conn, wire2, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        listed = await conn.list_sessions(cwd=str(workspace))
        assert sid in [x.session_id for x in listed.sessions]
        await conn.load_session(cwd=str(workspace), session_id=sid, mcp_servers=[])
    users = [u["content"]["text"] for u in wire2.updates("user_message_chunk")]
    assert users == ["make a file", "remove hello.py"]
    statuses = [u["status"] for u in wire2.updates("tool_call_update")]
    assert statuses == ["completed", "failed"]  # the rejected call failed: "declined" is its result
    assert [u["kind"] for u in wire2.updates("tool_call")] == ["execute", "execute"]


# -- in this process -------------------------------------------------------------------------------


async def test_cancel_keeps_the_partial_text_and_closes_the_open_call(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    emulator.enqueue(Reply(text="Working on it, " * 20, chunk_size=8, stall_after=3))
    editor = Editor()
    async with in_process(tmp_path, emulator, editor) as (conn, _wire, _, server):
        sid = await _start(conn, workspace)
        turn = asyncio.create_task(conn.prompt(session_id=sid, prompt=[text_block("go")]))
        await editor.until(lambda: bool(editor.of("agent_message_chunk")))
        # A second prompt while the turn runs is a JSON-RPC error, not a second turn.
        with pytest.raises(Exception, match="Invalid request"):
            await conn.prompt(session_id=sid, prompt=[text_block("again")])
        await conn.cancel(session_id=sid)
        assert (await asyncio.wait_for(turn, 30)).stop_reason == "cancelled"
        history = (await server.sessions[sid].session.ready()).session.history
    last = history[-1]
    assert last.role == "assistant" and last.text.startswith("Working on it,") and "interrupted" in last.text
    assert len(emulator.accepted) == 1


async def test_a_cancelled_tool_call_is_closed_not_left_pending(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    emulator.enqueue(Reply(tool_calls=[("bash", {"command": "touch started && sleep 30"})]))
    editor = Editor(answers=["yes"])
    async with in_process(tmp_path, emulator, editor) as (conn, wire, _, _server):
        sid = await _start(conn, workspace)
        turn = asyncio.create_task(conn.prompt(session_id=sid, prompt=[text_block("wait")]))
        while not (workspace / "started").exists():  # the command runs: approved, then started
            editor.update_seen.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(editor.update_seen.wait(), 0.05)
        await conn.cancel(session_id=sid)
        assert (await asyncio.wait_for(turn, 30)).stop_reason == "cancelled"
    call_id = wire.updates("tool_call")[0]["toolCallId"]
    last = [u for u in wire.updates("tool_call_update") if u["toolCallId"] == call_id][-1]
    assert last["status"] == "failed"


async def test_bad_input_gets_an_error_and_the_connection_goes_on(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    editor = Editor()
    async with in_process(tmp_path, emulator, editor) as (conn, wire, raw, _):
        sid = await _start(conn, workspace)
        os.write(raw, b"{not json\n" + b'"a string"\n' + b"[1, 2]\n")
        while len([m for d, m in wire.messages if d == "incoming" and "error" in m and m["id"] is None]) < 3:
            editor.update_seen.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(editor.update_seen.wait(), 0.05)
        errors = [m["error"]["code"] for d, m in wire.messages if d == "incoming" and "error" in m]
        assert errors == [-32700, -32600, -32600]
        with pytest.raises(Exception, match="Method not found"):
            await conn._conn.send_request("session/teleport", {"sessionId": sid})
        with pytest.raises(Exception, match="Resource not found"):
            await conn.prompt(session_id="nope", prompt=[text_block("hi")])
        with pytest.raises(Exception, match="Invalid params"):
            await conn.new_session(cwd="relative/path", mcp_servers=[])
        done = await conn.prompt(session_id=sid, prompt=[text_block("still there?")])
    assert done.stop_reason == "end_turn"


async def test_prompt_content_images_and_resources_reach_the_model(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    editor = Editor()
    async with in_process(tmp_path, emulator, editor) as (conn, _wire, _, _server):
        sid = await _start(conn, workspace)
        blocks: list[Any] = [
            text_block("look at these"),
            schema.ImageContentBlock(
                type="image", mime_type="image/png", data=base64.b64encode(PNG).decode()
            ),
            schema.EmbeddedResourceContentBlock(
                type="resource",
                resource=schema.TextResourceContents(
                    uri=(workspace / "unsaved.py").as_uri(), text="x = 1  # unsaved buffer\n"
                ),
            ),
        ]
        await conn.prompt(session_id=sid, prompt=blocks)
    user = [m for m in emulator.accepted[-1].body["messages"] if m["role"] == "user"][-1]
    parts = user["content"]
    assert any(
        p.get("type") == "image_url" and p["image_url"]["url"].startswith("data:image/png") for p in parts
    )
    text = "\n".join(p.get("text", "") for p in parts)
    assert '<file path="unsaved.py">' in text and "x = 1  # unsaved buffer" in text


async def test_slash_commands_and_modes(emulator: ProviderEmulator, tmp_path: Path, workspace: Path) -> None:
    editor = Editor()
    async with in_process(tmp_path, emulator, editor) as (conn, wire, _, server):
        sid = await _start(conn, workspace)
        await conn.prompt(session_id=sid, prompt=[text_block("/context")])
        assert not emulator.accepted  # a command, not a message to the model
        said = "".join(u["content"]["text"] for u in wire.updates("agent_message_chunk"))
        assert "in use (the ring)" in said
        await conn.prompt(session_id=sid, prompt=[text_block("hi")])
        await conn.set_session_mode(session_id=sid, mode_id="chat")
        assert wire.updates("current_mode_update")[-1]["currentModeId"] == "chat"
        await conn.prompt(session_id=sid, prompt=[text_block("hello")])
        full, chat = (r.body["messages"][0]["content"] for r in emulator.accepted[-2:])
        assert "<tool_use_enforcement>" in full and "<tool_use_enforcement>" not in chat
        with pytest.raises(Exception, match="Invalid params"):
            await conn.set_session_mode(session_id=sid, mode_id="godmode")
        await conn.prompt(session_id=sid, prompt=[text_block("/fork")])
        rows = await server.store.list_sessions()
    assert any(r.parent_id == sid for r in rows)


async def test_the_editor_vanishing_mid_turn_keeps_the_session(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    emulator.enqueue(Reply(text="Half of a long answer " * 10, chunk_size=8, stall_after=2))
    editor = Editor()
    async with in_process(tmp_path, emulator, editor) as (conn, _wire, _, server):
        sid = await _start(conn, workspace)
        turn = asyncio.create_task(conn.prompt(session_id=sid, prompt=[text_block("start")]))
        await editor.until(lambda: bool(editor.of("agent_message_chunk")))
        turn.cancel()
        await server.close()  # what stdin's end does: turns cancelled, agents closed, leases released
        store = server.store
        assert await store.lease_holder(sid) is None
        msgs = await store.load_messages(sid)
    assert [m.role for m in msgs][-2:] == ["user", "assistant"]
    kept = msgs[-1].text
    assert kept.startswith("Half of") and kept.endswith("[interrupted by the user]")


async def test_file_reads_and_edits_go_through_the_editor_that_offers_them(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    hello = str((workspace / "hello.py").resolve())
    emulator.enqueue(
        Reply(tool_calls=[("file_read_tool", {"paths": ["hello.py"]})]),
        Reply(
            tool_calls=[
                ("file_edit_tool", {"path": "hello.py", "old_string": "unsaved", "new_string": "saved"})
            ]
        ),
        Reply(text="Done."),
    )
    editor = Editor(answers=["yes"])
    editor.buffers[hello] = "def greet():\n    return 'unsaved'\n"
    async with in_process(tmp_path, emulator, editor) as (conn, wire, _, _server):
        caps = schema.ClientCapabilities(
            fs=schema.FileSystemCapabilities(read_text_file=True, write_text_file=True)
        )
        await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=caps)
        sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        await conn.prompt(session_id=sid, prompt=[text_block("fix the greeting")])
    read_result = next(m for m in emulator.accepted[1].body["messages"] if m["role"] == "tool")
    assert "return 'unsaved'" in read_result["content"]  # the buffer, not the disk
    assert editor.buffers[hello] == "def greet():\n    return 'saved'\n"
    assert (workspace / "hello.py").read_text() == "def greet():\n    return 'hello'\n"  # the editor saves
    asked = [m["method"] for d, m in wire.messages if d == "incoming" and "method" in m]
    assert "fs/read_text_file" in asked and "fs/write_text_file" in asked
    done = [
        u for u in wire.updates("tool_call_update") if u.get("status") == "completed" and u.get("content")
    ]
    diff = next(u["content"][0] for u in done if u["content"][0]["type"] == "diff")
    assert diff["newText"] == "saved" and diff["oldText"] == "unsaved" and diff["path"] == hello


# -- hostile and careless editors ---------------------------------------------------------------------


async def test_loading_a_session_open_in_another_myrm_says_so(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    """The lease's refusal reached the editor as a bare "Internal error" (its reason buried in data)."""
    editor = Editor()
    async with in_process(tmp_path, emulator, editor) as (conn, wire, _, server):
        other = await Store.open(tmp_path / "acp.db")  # another myrm on the same database
        try:
            row = await other.create_session(model="openai/gpt-4o-mini", workspace=str(workspace))
            await other.acquire_lease(row.id)
            await conn.initialize(protocol_version=PROTOCOL_VERSION)
            with pytest.raises(Exception, match="open in another myrm"):
                await conn.load_session(cwd=str(workspace), session_id=row.id, mcp_servers=[])
        finally:
            await other.close()
        assert row.id not in server.sessions
    (error,) = [m["error"] for d, m in wire.messages if d == "incoming" and "error" in m]
    assert error["code"] == -32600 and "open in another myrm" in error["message"]


async def test_a_resource_uri_with_escapes_names_the_file() -> None:
    from myrm_tui.acp.convert import prompt_text

    folder = Path("/work/a project")
    text, _ = prompt_text(
        [
            schema.EmbeddedResourceContentBlock(
                type="resource",
                resource=schema.TextResourceContents(uri=(folder / "my notes.py").as_uri(), text="x = 1"),
            ),
            schema.ResourceContentBlock(type="resource_link", uri=(folder / "a b.py").as_uri(), name="a b"),
        ],
        folder,
    )
    assert text == '@a b.py\n\n<file path="my notes.py">\nx = 1\n</file>'


async def test_a_line_many_times_the_limit_is_dropped_and_the_next_one_served() -> None:
    """An over-long line was skipped only up to twice the limit; past that ``_screen`` died and the
    connection with it."""
    from myrm_tui.acp.server import _screen

    src = asyncio.StreamReader(limit=16)
    dst = asyncio.StreamReader()
    out_r, out_w = os.pipe()
    loop = asyncio.get_running_loop()
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, os.fdopen(out_w, "wb", 0)
    )
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    pump = asyncio.create_task(_screen(src, dst, writer))
    try:
        # The line arrives in pieces, as from a pipe: each piece overruns the limit again.
        for piece in (b'{"x": "', *[b"a" * 40] * 5, b'"}\n{"id": 1}\n'):
            src.feed_data(piece)
            for _ in range(5):  # the pump reads what is there (no time involved: it runs each pass)
                await asyncio.sleep(0)
        src.feed_eof()
        assert await asyncio.wait_for(dst.readline(), 30) == b'{"id": 1}\n'
        await asyncio.wait_for(pump, 30)
        await writer.drain()
        said = os.read(out_r, 4096)
    finally:
        writer.close()
        os.close(out_r)
    assert b'"code": -32600' in said and b"a line over" in said


# -- the input ends before the answers ------------------------------------------------------------


@contextlib.asynccontextmanager
async def raw_editor(
    tmp: Path, emu: ProviderEmulator
) -> AsyncIterator[tuple[asyncio.StreamReader, asyncio.StreamWriter, asyncio.Task[None], MyrmAcpAgent]]:
    """The server in this process; the editor is raw bytes: its writer is the agent's stdin, its reader
    the agent's stdout (as a script piping requests into ``myrm acp``)."""
    to_agent_r, to_agent_w = os.pipe()
    to_editor_r, to_editor_w = os.pipe()
    agent_reader, agent_writer = await pipe_streams(to_agent_r, to_editor_w)
    editor_reader, editor_writer = await pipe_streams(to_editor_r, to_agent_w)
    store = await Store.open(tmp / "acp.db")
    server = MyrmAcpAgent(store, {"model": "openai/gpt-4o-mini", "api_base": emu.openai_base, "api_key": "k"})
    serving = asyncio.create_task(speak(server, agent_reader, agent_writer))
    serving.add_done_callback(lambda _: agent_writer.close())  # as the process's exit closes its stdout
    try:
        yield editor_reader, editor_writer, serving, server
    finally:
        serving.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await serving
        agent_writer.close()
        editor_writer.close()
        await server.close()
        await store.close()


def _request(rid: int, method: str, params: dict[str, Any]) -> bytes:
    import json

    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}).encode() + b"\n"


async def _read_until(
    reader: asyncio.StreamReader, cond: Callable[[dict[str, Any]], bool]
) -> list[dict[str, Any]]:
    """Messages from the agent up to the first that meets ``cond`` (or to the end of its output)."""
    import json

    seen: list[dict[str, Any]] = []
    while line := await asyncio.wait_for(reader.readline(), 60):
        seen.append(json.loads(line))
        if cond(seen[-1]):
            break
    return seen


async def test_requests_sent_before_the_input_ends_are_all_answered(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    """``printf REQUESTS | myrm acp`` got no answer for its valid requests: at the end of stdin the SDK
    cancelled every request still running and the process exited."""
    async with raw_editor(tmp_path, emulator) as (reader, writer, serving, _):
        writer.write(
            b"garbage\n"
            + _request(1, "initialize", {"protocolVersion": PROTOCOL_VERSION})
            + _request(2, "session/new", {"cwd": str(workspace), "mcpServers": []})
            + _request(3, "no/such/method", {})
        )
        await writer.drain()
        writer.close()
        await asyncio.wait_for(serving, 60)
        got = await _read_until(reader, lambda m: False)
    answers = {m["id"]: m for m in got if "method" not in m}
    assert set(answers) == {None, 1, 2, 3}
    assert answers[1]["result"]["protocolVersion"] == PROTOCOL_VERSION
    assert answers[2]["result"]["sessionId"]
    assert answers[3]["error"]["code"] == -32601


async def test_a_turn_running_when_the_input_ends_is_answered_cancelled_and_kept(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    emulator.enqueue(Reply(text="Half of a long answer " * 10, chunk_size=8, stall_after=2))
    async with raw_editor(tmp_path, emulator) as (reader, writer, serving, server):
        writer.write(
            _request(1, "initialize", {"protocolVersion": PROTOCOL_VERSION})
            + _request(2, "session/new", {"cwd": str(workspace), "mcpServers": []})
        )
        sid = (await _read_until(reader, lambda m: m.get("id") == 2))[-1]["result"]["sessionId"]
        writer.write(
            _request(3, "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "go"}]})
        )
        await _read_until(
            reader,
            lambda m: (m.get("params") or {}).get("update", {}).get("sessionUpdate") == "agent_message_chunk",
        )
        writer.close()  # the model has gone silent mid-reply, and the input ends
        await asyncio.wait_for(serving, 60)
        rest = await _read_until(reader, lambda m: False)
        msgs = await server.store.load_messages(sid)
    assert [m["result"] for m in rest if m.get("id") == 3] == [{"stopReason": "cancelled"}]
    assert msgs[-1].role == "assistant" and msgs[-1].text.startswith("Half of")
