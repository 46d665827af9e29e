"""Hermes Agent's sessions brought over: each layout it writes (session file, session log, request dump,
ShareGPT trajectories), small and odd ones, read as messages a provider accepts; hostile files fail in one
line; a folder of them is a bench corpus."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from myrm_tui.bench.corpus import load_conversations
from myrm_tui.bench.probegen import read_corpus
from myrm_tui.context.invariants import check_tool_pairing
from myrm_tui.store.foreign import NO_RESULT, ForeignError, kind_of, read_session, read_sessions, sessions_in
from myrm_tui.store.foreign_hermes import _blocks
from myrm_tui.testing.validation import validate_openai
from tests.helpers import bench_strategies, cli_env, run_myrm

SUMMARY = "[CONTEXT COMPACTION — REFERENCE ONLY] Earlier turns were compacted. ## Active Task: fix the merge"


def _call(cid: str, command: str) -> dict[str, Any]:
    args = json.dumps({"command": command})
    return {
        "id": cid,
        "call_id": cid,
        "type": "function",
        "function": {"name": "terminal", "arguments": args},
    }


MESSAGES: list[dict[str, Any]] = [
    {"role": "system", "content": "You are Hermes."},
    {"role": "user", "content": "restart the gateway"},
    {"role": "assistant", "content": SUMMARY},
    {"role": "user", "content": "are my forked files gone?"},
    {
        "role": "assistant",
        "content": "Checking the reflog.",
        "reasoning": "the push was forced",
        "finish_reason": "tool_calls",
        "tool_calls": [_call("call_1", "git reflog | head"), _call("call_2", "git status")],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": '{"output": "d340a5b63 HEAD@{0}", "exit_code": 0}'},
    {"role": "tool", "tool_call_id": "call_2", "content": '{"output": "nothing to commit", "exit_code": 0}'},
    {"role": "assistant", "content": [{"type": "text", "text": "Commit d340a5b63 still has them."}]},
]


def _session_file(folder: Path, sid: str = "20260504_222136_1a2f0e", gz: bool = False) -> Path:
    obj = {
        "session_id": sid,
        "model": "GLM-5",
        "platform": "weixin",
        "system_prompt": "You are Hermes.",
        "tools": [{"type": "function", "function": {"name": "terminal"}}],
        "message_count": len(MESSAGES),
        "messages": MESSAGES,
    }
    path = folder / f"session_{sid}.json{'.gz' if gz else ''}"
    text = json.dumps(obj, ensure_ascii=False, indent=2)
    path.write_bytes(gzip.compress(text.encode()) if gz else text.encode())
    return path


def _lines(path: Path, objs: list[Any]) -> Path:
    path.write_text("".join(json.dumps(o, ensure_ascii=False) + "\n" for o in objs))
    return path


def _check(messages: list[Any]) -> None:
    assert check_tool_pairing(messages) == []
    assert validate_openai({"messages": [m.to_api() for m in messages]}) is None


def _expect_the_conversation(messages: list[Any]) -> None:
    _check(messages)
    assert [m.role for m in messages] == ["user", "user", "user", "assistant", "tool", "tool", "assistant"]
    assert messages[1].meta == {"imported_summary": "hermes"} and "Hermes Agent wrote" in messages[1].text
    assert "## Active Task: fix the merge" in messages[1].text
    reply = messages[3]
    assert [c.id for c in reply.tool_calls] == [
        "call_1",
        "call_2",
    ] and reply.reasoning == "the push was forced"
    assert json.loads(reply.tool_calls[0].arguments) == {"command": "git reflog | head"}
    assert {m.tool_call_id: m.text for m in messages if m.role == "tool"} == {
        "call_1": '{"output": "d340a5b63 HEAD@{0}", "exit_code": 0}',
        "call_2": '{"output": "nothing to commit", "exit_code": 0}',
    }
    assert not any(m.meta for m in messages if m.role == "tool")  # both succeeded
    assert messages[-1].text == "Commit d340a5b63 still has them."
    assert "You are Hermes." not in json.dumps([m.to_api() for m in messages])  # its own system prompt


@pytest.mark.parametrize("gz", [False, True])
def test_a_session_file(tmp_path: Path, gz: bool) -> None:
    path = _session_file(tmp_path, gz=gz)
    assert kind_of(path) == "hermes"
    fs = read_session(path)
    assert (fs.agent, fs.id, fs.dropped) == ("hermes", "20260504_222136_1a2f0e", {"system messages": 1})
    _expect_the_conversation(fs.messages)


@pytest.mark.parametrize("meta_line", [True, False], ids=["session_meta line", "spring 2026, no meta line"])
def test_a_session_log(tmp_path: Path, meta_line: bool) -> None:
    head = [{"role": "session_meta", "tools": [], "model": "GLM-5"}] if meta_line else []
    rows = [{**m, "timestamp": "2026-05-04T22:24:58"} for m in MESSAGES]
    path = _lines(tmp_path / "20260504_222136_1a2f0e.jsonl", head + rows)
    assert kind_of(path) == "hermes"
    fs = read_session(path)
    assert fs.id == "20260504_222136_1a2f0e" and fs.dropped == {"system messages": 1}
    _expect_the_conversation(fs.messages)


def test_a_spring_2026_log_that_begins_with_the_users_words_keeps_them(tmp_path: Path) -> None:
    # no session_meta line and no system prompt line: its first line is the user's first message
    path = _lines(tmp_path / "20260301_101010_abcdef.jsonl", MESSAGES[1:])
    fs = read_session(path)
    _check(fs.messages)
    assert fs.messages[0].text == "restart the gateway" and fs.title == "restart the gateway"


def test_a_request_dump(tmp_path: Path) -> None:
    dump = {
        "timestamp": "2026-06-26T12:33:56.659272",
        "session_id": "20260626_082031_8f84e1",
        "reason": "non_retryable_client_error",
        "request": {
            "method": "POST",
            "url": "https://openrouter.ai/api/v1/chat/completions",
            "headers": {"Authorization": "Bearer [REDACTED:BEARER]"},
            "body": {"model": "m", "messages": MESSAGES, "tools": []},
        },
        "error": {"type": "APIStatusError"},
    }
    path = tmp_path / "request_dump_20260626_082031_8f84e1_20260626_123356_659272.json"
    path.write_text(json.dumps(dump))
    fs = read_session(path)
    assert fs.id == "20260626_082031_8f84e1@2026-06-26T12:33:56.659272"
    _expect_the_conversation(fs.messages)


def _gpt(think: str, text: str, *calls: dict[str, Any]) -> dict[str, str]:
    blocks = "".join(f"<tool_call>\n{json.dumps(c)}\n</tool_call>\n" for c in calls)
    return {"from": "gpt", "value": f"<think>\n{think}\n</think>\n{text}{blocks}"}


def _responses(*contents: Any) -> dict[str, str]:
    body = "\n".join(
        f"<tool_response>\n{json.dumps({'tool_call_id': f'x{k}', 'name': 'terminal', 'content': c})}\n"
        "</tool_response>"
        for k, c in enumerate(contents)
    )
    return {"from": "tool", "value": body}


TRAJECTORY = [
    {"from": "system", "value": "You are a function calling AI model. <tools>[]</tools>"},
    {"from": "human", "value": "What Python version is installed, and where?"},
    _gpt(
        "Two commands.",
        "",
        {"name": "terminal", "arguments": {"command": "python3 --version"}},
        {"name": "terminal", "arguments": {"command": "which python3"}},
    ),
    _responses("Python 3.11.6", {"output": "/usr/bin/python3", "exit_code": 0}),
    _gpt("", "Python 3.11.6, at /usr/bin/python3."),
]


def test_an_older_summary_and_a_system_note_mid_session(tmp_path: Path) -> None:
    messages = [
        {"role": "system", "content": "You are Hermes."},
        {"role": "assistant", "content": "[CONTEXT SUMMARY]: the user wants the cron output"},
        {"role": "user", "content": "and now?"},
        {"role": "system", "content": "[System: The active model for this chat has changed to m3.]"},
        {"role": "assistant", "content": "Now the logs."},
    ]
    path = tmp_path / "session_old.json"
    path.write_text(json.dumps({"session_id": "old", "messages": messages}))
    fs = read_session(path)
    assert [m.meta for m in fs.messages] == [{"imported_summary": "hermes"}, {}, {}]
    assert fs.dropped == {"system messages": 2}  # both said in the one-line import report


def test_a_failed_result_is_marked_as_hermes_reports_it(tmp_path: Path) -> None:
    results = {
        "c1": '{"output": "ls: cannot access x", "exit_code": 2, "error": null}',
        "c2": '{"output": "ok", "exit_code": 0, "error": null}',
        "c3": '{"total_count": 0, "error": "Path not found: docs/features"}',
        "c4": '{"success": false, "message": "patch did not apply"}',
        "c5": '{"exit_code": true, "content": "a flag, not a code"}',
        "c6": "plain text that says error",
        "c7": "{not json",
    }
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "try them"},
        {"role": "assistant", "content": "", "tool_calls": [_call(c, "x") for c in results]},
        *({"role": "tool", "tool_call_id": c, "content": r} for c, r in results.items()),
    ]
    path = tmp_path / "session_f.json"
    path.write_text(json.dumps({"session_id": "f", "messages": messages}))
    failed = {m.tool_call_id for m in read_session(path).messages if m.meta.get("is_error")}
    assert failed == {"c1", "c3", "c4"}
    turns = [{"from": "human", "value": "go"}, _gpt("", "", *[{"name": "x", "arguments": {}}] * 2)]
    turns.append(_responses({"output": "boom", "exit_code": 1}, {"output": "fine", "exit_code": 0}))
    traj = _lines(tmp_path / "trajectory_samples.jsonl", [{"conversations": turns}])
    (fs,) = read_sessions(traj)
    assert [bool(m.meta.get("is_error")) for m in fs.messages if m.role == "tool"] == [True, False]


def test_trajectories_one_conversation_a_line(tmp_path: Path) -> None:
    other = [
        {"from": "human", "value": "hello"},
        # a call whose response was never recorded, then one whose JSON is broken
        _gpt("", "Looking.", {"name": "terminal", "arguments": {"command": "ls"}}),
        {"from": "gpt", "value": "<think>\n</think>\n<tool_call>\n{not json\n</tool_call>"},
        {"from": "gpt", "value": "Done."},
    ]
    path = _lines(
        tmp_path / "trajectory_samples.jsonl",
        [{"conversations": TRAJECTORY, "model": "m", "completed": True}, {"conversations": other}],
    )
    assert kind_of(path) == "hermes"
    first, second = read_sessions(path)
    _check(first.messages)
    assert [m.role for m in first.messages] == ["user", "assistant", "tool", "tool", "assistant"]
    reply = first.messages[1]
    assert reply.reasoning == "Two commands." and [c.name for c in reply.tool_calls] == ["terminal"] * 2
    assert json.loads(reply.tool_calls[1].arguments) == {"command": "which python3"}
    assert first.messages[2].text == "Python 3.11.6"
    assert json.loads(first.messages[3].text) == {"output": "/usr/bin/python3", "exit_code": 0}
    assert first.messages[4].text == "Python 3.11.6, at /usr/bin/python3." and not first.messages[4].reasoning
    assert first.id == "trajectory_samples#1" and second.id == "trajectory_samples#2"
    _check(second.messages)
    assert NO_RESULT in [m.text for m in second.messages]
    assert second.dropped == {"calls without a result": 1, "unreadable tool calls": 1}
    with pytest.raises(ForeignError, match="holds 2 conversations"):
        read_session(path)


def test_a_folder_of_hermes_sessions_is_a_bench_corpus(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    folder.mkdir()
    _session_file(folder, gz=True)
    # the log of the same session beside it holds only its last messages: left out
    _lines(folder / "20260504_222136_1a2f0e.jsonl", MESSAGES[3:])
    _lines(folder / "20260505_011145_3db412.jsonl", MESSAGES)  # a log without its session file
    (folder / "sessions.json").write_text(json.dumps({"agent:main:cli": {"session_id": "x"}}))
    _lines(folder / "trajectory_samples.jsonl", [{"conversations": TRAJECTORY}] * 2)
    # a request dump of a session whose file (or log) is here repeats its start: left out; one alone is read
    for sid in ("20260504_222136_1a2f0e", "20260505_011145_3db412", "20260626_082031_8f84e1"):
        dump = {"session_id": sid, "request": {"body": {"messages": MESSAGES[:4]}}}
        (folder / f"request_dump_{sid}_20260626_123356_659272.json").write_text(json.dumps(dump))
    assert [p.name for p in sessions_in(folder)] == [
        "20260505_011145_3db412.jsonl",
        "request_dump_20260626_082031_8f84e1_20260626_123356_659272.json",
        "session_20260504_222136_1a2f0e.json.gz",
        "trajectory_samples.jsonl",
    ]
    convs = load_conversations(folder)
    assert [c.id for c in convs] == [
        "20260505_011145_3db412",
        "20260626_082031_8f84e1@dump",
        "20260504_222136_1a2f0e",
        "trajectory_samples#1",
        "trajectory_samples#2",
    ]
    assert all(c.meta == {"agent": "hermes"} for c in convs)
    assert [d["id"] for d in read_corpus(folder)] == [c.id for c in convs]  # probegen reads the same
    result = bench_strategies(folder, tmp_path)
    assert result["myrm"]["conversations"] == 5 and result["myrm"]["rejected_requests"] == 0


# -- hostile and odd input ------------------------------------------------------------------------------

ODD_BUT_READABLE: dict[str, list[Any]] = {
    # a field of an unexpected type is read as absent, never an AttributeError or TypeError
    "content a number": [{"role": "user", "content": 5}, {"role": "assistant", "content": "ok"}],
    "tool calls a JSON string": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "", "tool_calls": json.dumps([_call("c1", "ls")])},
        {"role": "tool", "tool_call_id": "c1", "content": "a.py"},
    ],
    "tool calls a broken string": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "x", "tool_calls": "[{'id': 'c1'"},
    ],
    "call without a function": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "x", "tool_calls": [{"id": "c1"}, "c2", None]},
    ],
    "arguments an object": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "tool_calls": [{"id": "c", "function": {"name": "n", "arguments": {"a": 1}}}]},
    ],
    "result without a call": [{"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": 7}],
    "a message not an object": [{"role": "user", "content": "hi"}, "stray", ["x"]],
    "reasoning a list": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "k", "reasoning": [1]},
    ],
    "image and odd parts": [
        {
            "role": "user",
            "content": [{"type": "image_url", "image_url": {"url": "data:image/png;base64,AA"}}, 3],
        }
    ],
}


@pytest.mark.parametrize("name", list(ODD_BUT_READABLE))
def test_odd_fields_import_without_a_traceback(tmp_path: Path, name: str) -> None:
    path = tmp_path / "session_odd.json"
    path.write_text(json.dumps({"session_id": "odd", "messages": ODD_BUT_READABLE[name]}))
    _check(read_session(path).messages)
    r = run_myrm(["sessions", "--import", str(path)], env=cli_env(tmp_path))
    assert (r.returncode, r.stderr) == (0, ""), r.stderr
    assert r.stdout.startswith("imported ") and "from hermes" in r.stdout


def test_hostile_files_fail_in_one_line_and_a_huge_output_comes_whole(tmp_path: Path) -> None:
    big = "x" * (5 * 1024 * 1024)
    path = _lines(
        tmp_path / "big.jsonl",
        [
            {"role": "user", "content": "read the log"},
            {"role": "assistant", "content": "", "tool_calls": [_call("c1", "cat log")]},
            {"role": "tool", "tool_call_id": "c1", "content": big},
        ],
    )
    assert len(read_session(path).messages[-1].text) == len(big)
    bad_line = _lines(tmp_path / "trajectory_samples.jsonl", [{"conversations": TRAJECTORY}])
    with bad_line.open("a") as f:
        f.write('{"conversations": [\n')
    deep = tmp_path / "session_deep.json"
    deep.write_text('{"session_id": "d", "messages": ' + "[" * 100_000 + "]" * 100_000 + "}")
    cut = tmp_path / "session_cut.json.gz"
    cut.write_bytes(gzip.compress(json.dumps({"session_id": "c", "messages": MESSAGES}).encode())[:-20])
    wrong = tmp_path / "session_list.json"
    wrong.write_text("[1, 2]")
    for p, why in [
        (bad_line, f"{bad_line}:2: not JSON"),
        (deep, f"{deep}: not JSON"),
        (cut, f"{cut}: "),
        (wrong, f"{wrong}: not a Claude Code transcript, a Codex rollout or a Hermes Agent session"),
    ]:
        r = run_myrm(["sessions", "--import", str(p)], env=cli_env(tmp_path))
        assert r.returncode == 2 and r.stderr.count("\n") == 1 and r.stderr.startswith(f"myrm: {why}"), (
            r.stderr
        )


def test_a_corrupt_gzip_fails_in_one_line_and_a_folder_passes_over_it(tmp_path: Path) -> None:
    good = _session_file(tmp_path, gz=True)
    data = bytearray(gzip.compress(json.dumps({"session_id": "b", "messages": MESSAGES * 40}).encode()))
    data[20:60] = bytes(b ^ 0x55 for b in data[20:60])  # the deflate stream itself, not its trailer
    bad = tmp_path / "session_bad.json.gz"
    bad.write_bytes(bytes(data))
    assert kind_of(bad) is None and sessions_in(tmp_path) == [good]
    r = run_myrm(["sessions", "--import", str(bad)], env=cli_env(tmp_path))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and r.stderr.startswith(f"myrm: {bad}: "), r.stderr


@pytest.mark.parametrize("gz", [False, True])
def test_a_lone_surrogate_in_a_session_file_becomes_a_replacement_character(tmp_path: Path, gz: bool) -> None:
    # as in the line-a-message layouts: JSON allows the escape, UTF-8 (the store, a bench file) cannot hold it
    said = '"half: \\ud83d, whole: \\ud83d\\ude00"'
    text = '{"session_id": "s", "messages": [{"role": "user", "content": ' + said + "}]}"
    path = tmp_path / f"session_s.json{'.gz' if gz else ''}"
    path.write_bytes(gzip.compress(text.encode()) if gz else text.encode())
    assert read_session(path).messages[0].text == "half: \ufffd, whole: \U0001f600"


def test_json_nested_thousands_deep_inside_a_field_is_left_out_not_a_traceback(tmp_path: Path) -> None:
    deep = "[" * 100_000 + "]" * 100_000  # a RecursionError in json.loads, not a ValueError
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "x", "tool_calls": deep}]
    session = tmp_path / "session_deep.json"
    session.write_text(json.dumps({"session_id": "d", "messages": messages}))
    fs = read_session(session)
    _check(fs.messages)
    assert fs.dropped == {"unreadable tool call lists": 1}
    turns = [
        {"from": "human", "value": "hi"},
        {"from": "gpt", "value": f"<tool_call>{deep}</tool_call>"},
        _gpt("", "", {"name": "terminal", "arguments": {}}),
        {"from": "tool", "value": f"<tool_response>{deep}</tool_response>"},
    ]
    (fs,) = read_sessions(_lines(tmp_path / "trajectory_samples.jsonl", [{"conversations": turns}]))
    _check(fs.messages)
    assert fs.dropped == {"unreadable tool calls": 1} and fs.messages[-1].text == deep


def test_a_tool_call_the_model_only_thought_about_is_no_call(tmp_path: Path) -> None:
    # Hermes writes a turn's calls after its </think>; a <tool_call> inside the thinking was never run
    thought = '<tool_call>\n{"name": "terminal", "arguments": {"command": "rm -rf build"}}\n</tool_call>'
    turns = [
        {"from": "human", "value": "clean up?"},
        {"from": "gpt", "value": f"<think>\nI could {thought} but no.\n</think>\nNothing to clean."},
    ]
    (fs,) = read_sessions(_lines(tmp_path / "trajectory_samples.jsonl", [{"conversations": turns}]))
    assert [(m.role, m.text, m.tool_calls) for m in fs.messages] == [
        ("user", "clean up?", ()),
        ("assistant", "Nothing to clean.", ()),
    ]
    assert "rm -rf build" in (fs.messages[1].reasoning or "") and fs.dropped == {}


def test_a_line_of_unclosed_tags_is_read_in_one_pass(tmp_path: Path) -> None:
    """A lazy ``<tool_call>\\s*(.*?)\\s*</tool_call>`` rescans from every tag and backtracks over every
    space: 4,000 spaces after one tag took 22 s, cubic; 50,000 would take hours (without the one-pass
    reader this test fails by the suite's timeout). Nothing is closed, so all of it is the reply's text."""
    value = "<tool_call>" + " " * 50_000 + "<tool_call>{}" * 2_000 + " done"
    turns = [
        {"from": "human", "value": "go"},
        {"from": "gpt", "value": value},
        {"from": "tool", "value": "<tool_response>" + " " * 50_000},
    ]
    (fs,) = read_sessions(_lines(tmp_path / "trajectory_samples.jsonl", [{"conversations": turns}]))
    assert [m.text for m in fs.messages] == ["go", value]
    assert fs.dropped == {"results without a call": 1}


_FRAGMENT = st.sampled_from(["<tool_call>", "</tool_call>", "<tool_call", " ", "\n", "a", "{}", "<"])


@settings(max_examples=200)
@given(st.lists(_FRAGMENT, max_size=30).map("".join))
def test_blocks_read_what_the_lazy_pattern_read(text: str) -> None:
    import re

    pattern = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.S)
    assert _blocks(text, "tool_call") == (pattern.findall(text), pattern.sub("", text))


_IDS = st.sampled_from(["c1", "c2", "c3"])
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=6,
)
_TEXT = st.text(alphabet="ab \n", max_size=4) | st.just(SUMMARY)
_MESSAGE = st.one_of(
    st.builds(
        lambda r, c: {"role": r, "content": c},
        st.sampled_from(["user", "assistant", "system"]),
        _TEXT | _JSON,
    ),
    st.builds(
        lambda c, ids: {"role": "assistant", "content": c, "tool_calls": [_call(i, "ls") for i in ids]},
        _TEXT,
        st.lists(_IDS, max_size=3),
    ),
    st.builds(lambda i, c: {"role": "tool", "tool_call_id": i, "content": c}, _IDS | _JSON, _TEXT | _JSON),
    _JSON,
)
_TURN = st.one_of(
    st.builds(lambda t: {"from": "human", "value": t}, _TEXT),
    st.builds(
        lambda t, n: _gpt("t", t, *[{"name": "terminal", "arguments": {"k": k}} for k in range(n)]),
        _TEXT,
        st.integers(0, 3),
    ),
    st.builds(lambda cs: _responses(*cs), st.lists(_TEXT | _JSON, max_size=3)),
    st.builds(
        lambda f, v: {"from": f, "value": v}, st.sampled_from(["gpt", "tool", "system", "x"]), _TEXT | _JSON
    ),
)


ANY_HISTORY = settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
HISTORY = {"messages": st.lists(_MESSAGE, max_size=12), "turns": st.lists(_TURN, max_size=12)}


# make test runs a fixed 100 histories; the long twin 300 new ones.
@settings(ANY_HISTORY, max_examples=100)
@given(**HISTORY)
def test_any_imported_hermes_history_is_one_a_provider_accepts(
    tmp_path: Path, messages: list[Any], turns: list[Any]
) -> None:
    """Whatever a session file or trajectory holds, what comes over pairs every call with one result, and
    the provider emulator's rules (unique call ids, no stray result, no empty assistant turn) accept it."""
    imports_as_accepted(tmp_path, messages, turns)


@pytest.mark.long
@settings(ANY_HISTORY, max_examples=300)
@given(**HISTORY)
def test_long_any_imported_hermes_history_is_one_a_provider_accepts(
    tmp_path: Path, messages: list[Any], turns: list[Any]
) -> None:
    """The same property over 300 histories (``make test-long``)."""
    imports_as_accepted(tmp_path, messages, turns)


def imports_as_accepted(tmp_path: Path, messages: list[Any], turns: list[Any]) -> None:
    session = tmp_path / "session_gen.json"
    session.write_text(json.dumps({"session_id": "gen", "messages": messages}))
    trajectories = _lines(
        tmp_path / "trajectory_samples.jsonl", [{"conversations": [{"from": "human", "value": "go"}, *turns]}]
    )
    for fs in [read_session(session), *read_sessions(trajectories)]:
        if fs.messages:
            _check(fs.messages)
        for m in fs.messages:
            assert len({c.id for c in m.tool_calls}) == len(m.tool_calls)


# -- the recorded Hermes sessions in bench/hermes/ (see its README for sources and licences) ----------------

HERMES = Path(__file__).resolve().parents[2] / "bench" / "hermes"
RECORDED = sessions_in(HERMES)


def test_the_recorded_hermes_sessions_are_there() -> None:
    assert len(RECORDED) == 4 and {kind_of(p) for p in RECORDED} == {"hermes"}


@pytest.mark.parametrize("path", RECORDED, ids=lambda p: p.name)
def test_a_recorded_hermes_session_imports_without_loss(path: Path) -> None:
    raw = json.loads(gzip.decompress(path.read_bytes()))
    messages = raw.get("messages") or raw["request"]["body"]["messages"]
    fs = read_session(path)
    system = sum(m["role"] == "system" for m in messages)
    assert fs.dropped == ({"system messages": system} if system else {})
    _check(fs.messages)
    calls = [c["id"] for m in messages for c in m.get("tool_calls") or []]
    assert [c.id for m in fs.messages for c in m.tool_calls] == calls
    results = {m["tool_call_id"]: m["content"] for m in messages if m["role"] == "tool"}
    assert {m.tool_call_id: m.text for m in fs.messages if m.role == "tool"} == results
    assert NO_RESULT not in results.values()
    summaries = sum(str(m.get("content")).startswith("[CONTEXT COMPACTION") for m in messages)
    assert sum(m.meta.get("imported_summary") == "hermes" for m in fs.messages) == summaries >= 1
    thought = [m["reasoning"] for m in messages if m["role"] == "assistant" and m.get("reasoning")]
    assert [m.reasoning for m in fs.messages if m.reasoning] == thought
