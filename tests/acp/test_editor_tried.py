"""``myrm acp`` tried as an editor drives it and as an attacker would: the protocol-version handshake,
requests whose method is not a string, answers over the line limit. Each test is a finding that was
fixed; the real process where the finding showed there, the SDK's client otherwise."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, schema, text_block

from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests import warm
from tests.acp.test_server import Editor, in_process
from tests.helpers import cli_env


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n"


def _acp(tmp: Path, emu: ProviderEmulator, workspace: Path, lines: bytes) -> list[dict[str, Any]]:
    """``myrm acp`` as its own process fed ``lines``, then its input ended: every message it wrote."""
    done = warm.run(
        [
            sys.executable,
            "-m",
            "myrm_tui.cli",
            "acp",
            "-m",
            "openai/gpt-4o-mini",
            "--api-base",
            emu.openai_base,
        ],
        input=lines,
        capture_output=True,
        env=cli_env(tmp),
        cwd=workspace,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    return [json.loads(x) for x in done.stdout.splitlines()]


def test_the_version_answered_is_ours_and_a_method_that_is_no_string_is_refused_by_its_id(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    """A client of protocol 0 was told 0 (the spec: an agent that does not speak the requested version
    answers its latest); ``"method": null`` was never answered (the SDK took it for an answer) and held
    myrm's exit for its whole grace."""
    said = _acp(
        tmp_path,
        emulator,
        workspace,
        _line({"id": 1, "method": "initialize", "params": {"protocolVersion": 0}})
        + _line({"id": 2, "method": "initialize", "params": {"protocolVersion": PROTOCOL_VERSION + 1}})
        + _line({"id": 3, "method": None, "params": {}})
        + _line({"id": "four", "method": 5})
        + _line({"id": 5, "method": "initialize", "params": {"protocolVersion": PROTOCOL_VERSION}}),
    )
    answers = {m["id"]: m for m in said if "method" not in m}
    assert set(answers) == {1, 2, 3, "four", 5}
    assert [answers[i]["result"]["protocolVersion"] for i in (1, 2, 5)] == [PROTOCOL_VERSION] * 3
    assert answers[3]["error"]["code"] == answers["four"]["error"]["code"] == -32600


async def test_an_answer_over_the_line_limit_fails_its_request_and_the_turn_goes_on(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    """The editor answered ``fs/read_text_file`` with a line over the limit: the line was dropped, and the
    turn waited for that answer for ever. Now the request fails and the file is read from the disk."""

    class HugeBuffers(Editor):
        async def read_text_file(self, session_id: str, path: str, **_: Any) -> schema.ReadTextFileResponse:
            return schema.ReadTextFileResponse(content="x" * 100_000)

    emulator.enqueue(Reply(tool_calls=[("file_read_tool", {"paths": ["hello.py"]})]), Reply(text="Read it."))
    editor = HugeBuffers()
    async with in_process(tmp_path, emulator, editor, line_limit=64 * 1024) as (conn, wire, _, _server):
        caps = schema.ClientCapabilities(fs=schema.FileSystemCapabilities(read_text_file=True))
        await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=caps)
        sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        # bounded: without the fix the turn never ends
        done = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("read hello.py")]), 60)
    assert done.stop_reason == "end_turn"
    read = next(m for m in emulator.accepted[1].body["messages"] if m["role"] == "tool")
    assert "return 'hello'" in read["content"]  # the disk's text, after the editor's answer failed
    asked = [m for d, m in wire.messages if d == "incoming" and m.get("method") == "fs/read_text_file"]
    assert len(asked) == 1
    assert not [m for d, m in wire.messages if d == "incoming" and "error" in m]  # nothing sent to the editor
