"""A model repeating one call, driven from an editor over ACP: the editor is asked, its no stops the turn."""

from __future__ import annotations

from pathlib import Path

from acp import text_block

from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.acp.test_server import Editor, _start, in_process


async def test_the_editor_is_asked_about_a_repeated_call_and_its_no_ends_the_turn(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    emulator.default = Reply(tool_calls=[("glob", {"pattern": "*.txt"})])
    editor = Editor(answers=["no"])
    async with in_process(tmp_path, emulator, editor, approval="auto") as (conn, wire, _, _server):
        sid = await _start(conn, workspace)
        done = await conn.prompt(session_id=sid, prompt=[text_block("find the text files")])
    assert done.stop_reason == "end_turn"
    assert len(editor.asked) == 1  # approval "auto" asks nothing else: this is the loop's question
    card = wire.sent("session/request_permission")[0]["params"]["toolCall"]
    question = card["content"][0]["content"]["text"]
    assert question.startswith(
        'The model keeps asking for the same call:\n```\nglob {"pattern": "*.txt"}\n```'
    )
    thoughts = "".join(u["content"]["text"] for u in wire.updates("agent_thought_chunk"))
    assert "Stopped: the model asked for the same call 3 times in a row" in thoughts
    turn = [r for r in emulator.accepted if r.body.get("tools") and "find the text" in str(r.body)]
    assert len(turn) == 3
