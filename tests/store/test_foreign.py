"""Sessions of other agents brought over: small transcripts written as Claude Code and Codex CLI lay them
out, odd ones included, read as myrm messages a provider accepts, and continued under myrm's engine."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from myrm_tui.store.foreign import NO_RESULT, ForeignError, kind_of, read_session
from myrm_tui.testing.emulator import ProviderEmulator
from tests.helpers import cli_env, emulator_args, run_myrm

PNG = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
    )
).decode()


def _write(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def _cc(uuid: str, parent: str | None, kind: str, content: Any, **extra: Any) -> dict[str, Any]:
    role = "assistant" if kind == "assistant" else "user"
    return {
        "type": kind,
        "uuid": uuid,
        "parentUuid": parent,
        "sessionId": "cc-1",
        "cwd": "/nowhere/project",
        "isSidechain": False,
        "message": {"role": role, "content": content, **({"id": extra.pop("mid")} if "mid" in extra else {})},
        **extra,
    }


def claude_transcript(tmp: Path) -> Path:
    """Thinking, a reply split over lines, two parallel calls, a sidechain, a rewound branch, a compact
    boundary with Claude Code's summary, an image, and a last call that never got its result."""
    return _write(
        tmp / "3f1c.jsonl",
        [
            {"type": "summary", "summary": "Fix the parser", "leafUuid": "u9"},
            _cc("u1", None, "user", "Fix the failing parser test"),
            _cc(
                "a1",
                "u1",
                "assistant",
                [{"type": "thinking", "thinking": "Look first.", "signature": "sig"}],
                mid="m1",
            ),
            _cc("a2", "a1", "assistant", [{"type": "text", "text": "Reading both files."}], mid="m1"),
            _cc(
                "a3",
                "a2",
                "assistant",
                [{"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "a.py"}}],
                mid="m1",
            ),
            _cc(
                "a4",
                "a3",
                "assistant",
                [{"type": "tool_use", "id": "t2", "name": "Read", "input": {"file_path": "b.py"}}],
                mid="m1",
            ),
            _cc("s1", "a4", "user", "subagent prompt", isSidechain=True),
            _cc(
                "r1", "a4", "user", [{"type": "tool_result", "tool_use_id": "t1", "content": "def a(): pass"}]
            ),
            _cc(
                "r2",
                "r1",
                "user",
                [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t2",
                        "content": [{"type": "text", "text": "def b(): raise"}],
                        "is_error": False,
                    }
                ],
            ),
            _cc(
                "x1",
                "r2",
                "assistant",
                [{"type": "text", "text": "An abandoned answer (rewound)."}],
                mid="m9",
            ),
            _cc("a5", "r2", "assistant", [{"type": "text", "text": "The bug is in b: it raises."}], mid="m2"),
            {
                "type": "system",
                "subtype": "compact_boundary",
                "uuid": "c1",
                "parentUuid": None,
                "logicalParentUuid": "a5",
                "isSidechain": False,
            },
            _cc("u5", "c1", "user", "Summary: the bug is in b.py, b() raises.", isCompactSummary=True),
            _cc(
                "u6",
                "u5",
                "user",
                [
                    {"type": "text", "text": "Here is the screenshot"},
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
                ],
            ),
            _cc(
                "a6",
                "u6",
                "assistant",
                [{"type": "tool_use", "id": "t3", "name": "Bash", "input": {"command": "pytest"}}],
                mid="m3",
            ),
            _cc("r9", "a6", "user", [{"type": "tool_result", "tool_use_id": "nope", "content": "orphan"}]),
        ],
    )


def codex_rollout(tmp: Path) -> Path:
    def item(payload: dict[str, Any]) -> dict[str, Any]:
        return {"timestamp": "2026-11-01T10:00:00Z", "type": "response_item", "payload": payload}

    return _write(
        tmp / "rollout-2026-11-01T10-00-00-abc.jsonl",
        [
            {"type": "session_meta", "payload": {"id": "cx-1", "cwd": str(tmp), "instructions": "be codex"}},
            item(
                {
                    "type": "message",
                    "role": "developer",
                    "content": [{"type": "input_text", "text": "codex rules"}],
                }
            ),
            item(
                {
                    "type": "message",
                    "role": "user",
                    "content": [
                        {"type": "input_text", "text": "<environment_context>cwd</environment_context>"}
                    ],
                }
            ),
            item(
                {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": "List the files"}],
                }
            ),
            {"type": "event_msg", "payload": {"type": "user_message", "message": "List the files"}},
            item(
                {
                    "type": "reasoning",
                    "summary": [{"type": "summary_text", "text": "Use ls."}],
                    "encrypted_content": "xx",
                }
            ),
            item(
                {
                    "type": "function_call",
                    "name": "shell",
                    "arguments": json.dumps({"command": ["ls"]}),
                    "call_id": "c1",
                }
            ),
            item(
                {
                    "type": "function_call",
                    "name": "shell",
                    "arguments": json.dumps({"command": ["pwd"]}),
                    "call_id": "c2",
                }
            ),
            item(
                {
                    "type": "function_call_output",
                    "call_id": "c1",
                    "output": json.dumps({"output": "a.py\nb.py", "metadata": {"exit_code": 0}}),
                }
            ),
            item(
                {
                    "type": "function_call_output",
                    "call_id": "c2",
                    "output": {"content": "no such dir", "success": False},
                }
            ),
            item(
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": "Two files: a.py and b.py."}],
                }
            ),
            {"type": "compacted", "payload": {"message": "The user listed files; a.py and b.py exist."}},
            item(
                {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": "Now run the tests"}],
                }
            ),
            item(
                {
                    "type": "local_shell_call",
                    "call_id": "c3",
                    "status": "completed",
                    "action": {"type": "exec", "command": ["pytest"]},
                }
            ),
        ],
    )


def _valid_pairing(messages: list[Any]) -> None:
    """Every call answered right after its reply, every result after its call: what providers require."""
    open_ids: set[str] = set()
    for m in messages:
        if m.role == "tool":
            assert m.tool_call_id in open_ids, m
            open_ids.discard(m.tool_call_id)
        else:
            assert not open_ids, f"unanswered calls {open_ids} before a {m.role} message"
        if m.role == "assistant":
            assert m.content or m.tool_calls
            open_ids = {c.id for c in m.tool_calls}
    assert not open_ids


def test_claude_code_transcript(tmp_path: Path) -> None:
    path = claude_transcript(tmp_path)
    assert kind_of(path) == "claude-code"
    fs = read_session(path)
    _valid_pairing(fs.messages)
    roles = [m.role for m in fs.messages]
    assert roles == ["user", "assistant", "tool", "tool", "assistant", "user", "user", "assistant", "tool"]
    reply = fs.messages[1]
    assert (
        reply.text == "Reading both files." and reply.reasoning == "Look first." and not reply.thinking_blocks
    )
    assert [c.id for c in reply.tool_calls] == ["t1", "t2"]  # parallel calls, one reply over four lines
    assert fs.messages[3].text == "def b(): raise"
    texts = " ".join(m.text for m in fs.messages)
    assert "subagent prompt" not in texts and "abandoned" not in texts  # sidechain and rewound branch
    summary = fs.messages[5]
    assert summary.meta == {"imported_summary": "claude-code"} and "Claude Code wrote" in summary.text
    image = fs.messages[6].content
    assert isinstance(image, list) and image[1]["image_url"]["url"].startswith("data:image/png;base64,")
    assert fs.messages[-1].text == NO_RESULT and fs.messages[-1].meta["is_error"]
    assert fs.dropped == {"results without a call": 1, "calls without a result": 1}
    assert fs.workspace == "/nowhere/project" and fs.title == "Fix the failing parser test"


def test_codex_rollout(tmp_path: Path) -> None:
    path = codex_rollout(tmp_path)
    assert kind_of(path) == "codex"
    fs = read_session(path)
    _valid_pairing(fs.messages)
    assert [m.role for m in fs.messages] == [
        "user",
        "assistant",
        "tool",
        "tool",
        "assistant",
        "user",
        "user",
        "assistant",
        "tool",
    ]
    assert fs.messages[0].text == "List the files"  # Codex's own instructions and environment left out
    calls = fs.messages[1]
    assert calls.reasoning == "Use ls." and [
        json.loads(c.arguments)["command"] for c in calls.tool_calls
    ] == [["ls"], ["pwd"]]
    assert fs.messages[2].text == "a.py\nb.py" and not fs.messages[2].meta
    assert fs.messages[3].meta == {"is_error": True}
    assert fs.messages[5].meta == {"imported_summary": "codex"}
    assert fs.messages[-1].text == NO_RESULT
    assert fs.workspace == str(tmp_path) and fs.id == "cx-1"


def test_a_five_megabyte_line_and_bad_files(tmp_path: Path) -> None:
    big = "x" * (5 * 1024 * 1024)
    path = _write(
        tmp_path / "big.jsonl",
        [
            _cc("u1", None, "user", "read the log"),
            _cc(
                "a1",
                "u1",
                "assistant",
                [{"type": "tool_use", "id": "t1", "name": "Read", "input": {}}],
                mid="m",
            ),
            _cc("r1", "a1", "user", [{"type": "tool_result", "tool_use_id": "t1", "content": big}]),
        ],
    )
    fs = read_session(path)
    assert len(fs.messages[-1].text) == len(big)
    (tmp_path / "notes.jsonl").write_text('{"hello": 1}\n')
    with pytest.raises(ForeignError, match="neither a Claude Code transcript nor a Codex rollout"):
        read_session(tmp_path / "notes.jsonl")
    with pytest.raises(ForeignError, match="neither"):
        read_session(tmp_path / "missing.jsonl")


def test_imported_session_continues_under_myrm(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    env = cli_env(tmp_path)
    path = codex_rollout(tmp_path)
    done = run_myrm(["sessions", "--import", str(path)], env=env, cwd=workspace)
    assert done.returncode == 0, done.stderr
    assert "imported 9 messages from codex" in done.stdout
    sid = done.stdout.split(" as ")[1].split()[0]
    asked = run_myrm(
        ["ask", "what did we find?", "--session", sid, *emulator_args(emulator, workspace)], env=env
    )
    assert asked.returncode == 0, asked.stderr
    assert not emulator.rejected
    sent = emulator.accepted[-1].body["messages"]
    said = json.dumps(sent)
    assert "Two files: a.py and b.py." in said and "Codex CLI wrote" in said and "what did we find?" in said
    bad = run_myrm(["sessions", "--import", str(tmp_path / "none.jsonl")], env=env)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "myrm:" in bad.stderr


def test_bench_reads_a_folder_of_other_agents_sessions(tmp_path: Path) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    claude_transcript(folder)
    codex_rollout(folder)
    out = tmp_path / "bench.json"
    done = run_myrm(
        [
            "bench",
            "--corpus",
            str(folder),
            "--window",
            "4000",
            "--strategies",
            "myrm,none",
            "--json",
            str(out),
        ],
        env=cli_env(tmp_path),
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(out.read_text())["strategies"]
    assert result["myrm"]["conversations"] == 2 and result["myrm"]["rejected_requests"] == 0
    assert result["none"]["requests"] == result["myrm"]["requests"] > 0
