"""Sessions of other agents brought over: small transcripts written as Claude Code and Codex CLI lay them
out, odd ones included, read as myrm messages a provider accepts, and continued under myrm's engine."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from myrm_tui.context.invariants import check_tool_pairing
from myrm_tui.store.foreign import NO_RESULT, ForeignError, kind_of, read_session
from myrm_tui.testing.emulator import ProviderEmulator
from myrm_tui.testing.validation import validate_openai
from tests.helpers import bench_strategies, cli_env, emulator_args, run_myrm

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
    with pytest.raises(ForeignError, match="not a Claude Code transcript, a Codex rollout or a Hermes"):
        read_session(tmp_path / "notes.jsonl")
    # named as missing, not as a file of another format
    with pytest.raises(ForeignError, match=r"missing\.jsonl: no such file"):
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
    assert bad.stderr.endswith("none.jsonl: no such file\n"), bad.stderr


def test_bench_reads_a_folder_of_other_agents_sessions(tmp_path: Path) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    claude_transcript(folder)
    codex_rollout(folder)
    result = bench_strategies(folder, tmp_path)
    assert result["myrm"]["conversations"] == 2 and result["myrm"]["rejected_requests"] == 0
    assert result["none"]["requests"] == result["myrm"]["requests"] > 0


# -- hostile and odd input ------------------------------------------------------------------------------

_START = {"type": "session_meta", "payload": {"id": "cx", "cwd": "/nowhere"}}


def _cx(item: dict[str, Any]) -> dict[str, Any]:
    return {"type": "response_item", "payload": item}


ODD_BUT_READABLE: dict[str, list[dict[str, Any]]] = {
    # a field of an unexpected type is read as absent, never an AttributeError or TypeError
    "image source a string": [
        _cc("u1", None, "user", [{"type": "image", "source": "abc"}, "x", {"type": "text", "text": "hi"}])
    ],
    "exit metadata a string": [
        _START,
        _cx({"type": "message", "role": "user", "content": "hi"}),
        _cx({"type": "function_call", "call_id": "c", "name": "n", "arguments": "{}"}),
        _cx({"type": "function_call_output", "call_id": "c", "output": '{"output": "o", "metadata": "x"}'}),
    ],
    "shell action a string": [
        _START,
        _cx({"type": "message", "role": "user", "content": "hi"}),
        _cx({"type": "local_shell_call", "call_id": "c", "action": "ls"}),
    ],
    "reasoning summary a number": [
        _START,
        _cx({"type": "message", "role": "user", "content": "hi"}),
        _cx({"type": "reasoning", "summary": 5}),
        _cx({"type": "message", "role": "assistant", "content": "ok"}),
    ],
    # an output string that is JSON nested deeper than the parser recurses is kept as text
    "exec output nested thousands deep": [
        _START,
        _cx({"type": "message", "role": "user", "content": "hi"}),
        _cx({"type": "function_call", "call_id": "c", "name": "n", "arguments": "{}"}),
        _cx({"type": "function_call_output", "call_id": "c", "output": "[" * 100_000 + "]" * 100_000}),
    ],
    # JSON allows a lone surrogate escape; UTF-8 (and so the store) cannot hold one
    "lone surrogate": [_cc("u1", None, "user", "half an emoji: \ud83d, a whole one: \U0001f600")],
}


@pytest.mark.parametrize("name", list(ODD_BUT_READABLE))
def test_odd_fields_import_without_a_traceback(tmp_path: Path, name: str) -> None:
    path = _write(tmp_path / "odd.jsonl", ODD_BUT_READABLE[name])
    r = run_myrm(["sessions", "--import", str(path)], env=cli_env(tmp_path))
    assert (r.returncode, r.stderr) == (0, ""), r.stderr
    assert r.stdout.startswith("imported ")


def test_a_lone_surrogate_becomes_a_replacement_character(tmp_path: Path) -> None:
    path = _write(tmp_path / "s.jsonl", ODD_BUT_READABLE["lone surrogate"])
    assert read_session(path).messages[0].text == "half an emoji: \ufffd, a whole one: \U0001f600"


def test_arrays_nested_thousands_deep_are_one_clear_line(tmp_path: Path) -> None:
    path = _write(tmp_path / "deep.jsonl", [_cc("u1", None, "user", "hi")])
    with path.open("a") as f:
        f.write("[" * 100_000 + "]" * 100_000 + "\n")
    r = run_myrm(["sessions", "--import", str(path)], env=cli_env(tmp_path))
    assert r.returncode == 2
    assert r.stderr == f"myrm: {path}:2: not JSON\n"


def test_calls_sharing_an_id_keep_the_first(tmp_path: Path) -> None:
    call = {"type": "tool_use", "id": "T", "name": "Read", "input": {}}
    path = _write(
        tmp_path / "dup.jsonl",
        [
            _cc("u1", None, "user", "hi"),
            _cc("a1", "u1", "assistant", [call, {**call, "name": "Grep"}]),
            _cc("r1", "a1", "user", [{"type": "tool_result", "tool_use_id": "T", "content": "r"}]),
        ],
    )
    fs = read_session(path)
    assert [c.name for c in fs.messages[1].tool_calls] == ["Read"]
    assert validate_openai({"messages": [m.to_api() for m in fs.messages]}) is None
    assert fs.dropped == {"tool calls with a repeated id": 1}


def test_codex_arguments_not_a_string_become_json(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "args.jsonl",
        [
            _START,
            _cx({"type": "message", "role": "user", "content": "hi"}),
            _cx({"type": "function_call", "call_id": "c", "name": "n", "arguments": {"a": 1}}),
        ],
    )
    assert json.loads(read_session(path).messages[1].tool_calls[0].arguments) == {"a": 1}


# Generated transcripts: ids drawn from a small pool so calls, results, message ids and parents collide
# (reused ids, results before their calls, cycles, replies split around a result), and any JSON where a
# field's type could be wrong.
_IDS = st.sampled_from(["t1", "t2", "t3"])
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=6,
)
_TEXT = st.text(alphabet="ab \n", max_size=4)
_BLOCK = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, _TEXT),
    st.builds(lambda t: {"type": "thinking", "thinking": t, "signature": "s"}, _TEXT),
    st.builds(
        lambda i, n, a: {"type": "tool_use", "id": i, "name": n, "input": a},
        _IDS,
        st.sampled_from(["Read", "Bash"]),
        _JSON,
    ),
    st.builds(
        lambda i, c, e: {"type": "tool_result", "tool_use_id": i, "content": c, "is_error": e},
        _IDS,
        _TEXT | _JSON,
        st.booleans(),
    ),
    _JSON,
)


@st.composite
def _claude_lines(draw: st.DrawFn) -> list[dict[str, Any]]:
    uuids = [f"u{k}" for k in range(draw(st.integers(1, 12)))]
    lines: list[dict[str, Any]] = []
    for k, uuid in enumerate(uuids):
        parent = (
            draw(st.sampled_from([None, *uuids])) if draw(st.booleans()) else (uuids[k - 1] if k else None)
        )
        content = draw(st.lists(_BLOCK, max_size=3) | _TEXT | _JSON)
        kind = draw(st.sampled_from(["user", "assistant"]))
        line = _cc(uuid, parent, kind, content, mid=draw(st.sampled_from(["m1", "m2"])))
        line["isSidechain"] = draw(st.booleans()) and draw(st.booleans())
        lines.append(line)
    return lines


@st.composite
def _codex_lines(draw: st.DrawFn) -> list[dict[str, Any]]:
    item = st.one_of(
        st.builds(
            lambda r, c: {"type": "message", "role": r, "content": c},
            st.sampled_from(["user", "assistant"]),
            _TEXT
            | st.lists(st.builds(lambda t: {"type": "output_text", "text": t}, _TEXT), max_size=2)
            | _JSON,
        ),
        st.builds(
            lambda s: {"type": "reasoning", "summary": s},
            st.lists(st.builds(lambda t: {"text": t}, _TEXT), max_size=2) | _JSON,
        ),
        st.builds(
            lambda i, a: {"type": "function_call", "call_id": i, "name": "shell", "arguments": a},
            _IDS | st.none(),
            _JSON,
        ),
        st.builds(lambda i, a: {"type": "local_shell_call", "call_id": i, "action": a}, _IDS, _JSON),
        st.builds(
            lambda t, i, o: {"type": t, "call_id": i, "output": o},
            st.sampled_from(["function_call_output", "local_shell_call_output"]),
            _IDS,
            _TEXT | _JSON,
        ),
    )
    rest = draw(
        st.lists(
            st.one_of(
                st.builds(_cx, item),
                st.builds(lambda m: {"type": "compacted", "payload": {"message": m}}, _TEXT),
            ),
            max_size=12,
        )
    )
    return [_START, *rest]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.one_of(_claude_lines(), _codex_lines()))
def test_any_imported_history_is_one_a_provider_accepts(tmp_path: Path, lines: list[dict[str, Any]]) -> None:
    """Whatever a transcript holds, what comes over pairs every call with one result, and the provider
    emulator's rules (unique call ids, no stray result, no empty assistant turn) accept it."""
    _imported_is_accepted(tmp_path, lines)


@pytest.mark.long
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.one_of(_claude_lines(), _codex_lines()))
def test_long_any_imported_history_is_one_a_provider_accepts(
    tmp_path: Path, lines: list[dict[str, Any]]
) -> None:
    """The same property over more generated transcripts (``make test-long``)."""
    _imported_is_accepted(tmp_path, lines)


def _imported_is_accepted(tmp_path: Path, lines: list[dict[str, Any]]) -> None:
    path = _write(tmp_path / "gen.jsonl", lines)
    messages = read_session(path).messages
    assert check_tool_pairing(messages) == []
    for m in messages:
        assert len({c.id for c in m.tool_calls}) == len(m.tool_calls)
    if messages:
        assert validate_openai({"messages": [m.to_api() for m in messages]}) is None


def test_text_after_a_call_in_the_same_reply_keeps_the_call_answered(tmp_path: Path) -> None:
    """Claude Code writes a reply one block a line; a text block after a tool_use of the same message is
    part of that reply, not a new turn that leaves the call unanswered and drops its result."""
    path = _write(
        tmp_path / "after.jsonl",
        [
            _cc("u1", None, "user", "hi"),
            _cc(
                "a1",
                "u1",
                "assistant",
                [{"type": "tool_use", "id": "T", "name": "Read", "input": {}}],
                mid="m",
            ),
            _cc("a2", "a1", "assistant", [{"type": "text", "text": "while that runs"}], mid="m"),
            _cc("r1", "a2", "user", [{"type": "tool_result", "tool_use_id": "T", "content": "the file"}]),
        ],
    )
    fs = read_session(path)
    assert [(m.role, m.text) for m in fs.messages] == [
        ("user", "hi"),
        ("assistant", "while that runs"),
        ("tool", "the file"),
    ]
    assert fs.dropped == {}
