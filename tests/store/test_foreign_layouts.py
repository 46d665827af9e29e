"""Claude Code transcripts as recent versions write them (parallel calls each on its own line, results hanging
off the call lines rather than the chain, a call written after its sibling's result, subagents' own files)
and gzipped transcripts: every recorded result reaches its call, nothing is answered "no result"."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from myrm_tui.bench.corpus import load_conversations
from myrm_tui.bench.probegen import read_corpus
from myrm_tui.bench.run import make_strategies
from myrm_tui.bench.runner import Prices, StrategyResult, replay
from myrm_tui.context.invariants import check_tool_pairing
from myrm_tui.context.steps.normalize import INTERRUPTED
from myrm_tui.context.tokens import TokenCounter
from myrm_tui.store.foreign import NO_RESULT, read_session, sessions_in


def _line(uuid: str, parent: str | None, kind: str, content: Any, **extra: Any) -> dict[str, Any]:
    mid = extra.pop("mid", None)
    return {
        "type": kind,
        "uuid": uuid,
        "parentUuid": parent,
        "sessionId": extra.pop("session", "s-1"),
        "cwd": "/nowhere",
        "isSidechain": extra.pop("side", False),
        "message": {"role": "assistant" if kind == "assistant" else "user", "content": content}
        | ({"id": mid} if mid else {}),
        **extra,
    }


def _call(uuid: str, parent: str, call: str, mid: str = "m1") -> dict[str, Any]:
    block = {"type": "tool_use", "id": call, "name": "Bash", "input": {"command": f"echo {call}"}}
    return _line(uuid, parent, "assistant", [block], mid=mid)


def _result(uuid: str, parent: str, call: str) -> dict[str, Any]:
    block = {"type": "tool_result", "tool_use_id": call, "content": f"out of {call}"}
    return _line(uuid, parent, "user", [block])


def _write(path: Path, lines: list[dict[str, Any]]) -> Path:
    text = "".join(json.dumps(x) + "\n" for x in lines)
    if path.suffix == ".gz":
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    return path


def _answers(messages: list[Any]) -> dict[str, str]:
    return {m.tool_call_id: m.text for m in messages if m.role == "tool"}


def test_results_hanging_off_parallel_call_lines_reach_their_calls(tmp_path: Path) -> None:
    # As Claude Code 2.1 writes three parallel calls: c2's line is written after c1's result, each result is
    # the child of its own call's line, and the chain to the last line runs through c3 only.
    path = _write(
        tmp_path / "s.jsonl",
        [
            _line("u0", None, "user", "check the three things"),
            _call("a1", "u0", "c1"),
            _result("r1", "a1", "c1"),
            _call("a2", "a1", "c2"),
            _result("r2", "a2", "c2"),
            _call("a3", "a2", "c3"),
            _result("r3", "a3", "c3"),
            _line("a4", "r3", "assistant", [{"type": "text", "text": "All three done."}], mid="m2"),
        ],
    )
    fs = read_session(path)
    check_tool_pairing(fs.messages)
    assert [m.role for m in fs.messages] == ["user", "assistant", "tool", "tool", "tool", "assistant"]
    assert [c.id for c in fs.messages[1].tool_calls] == ["c1", "c2", "c3"]
    assert _answers(fs.messages) == {c: f"out of {c}" for c in ("c1", "c2", "c3")}
    assert fs.dropped == {}


def test_a_rewound_branchs_results_stay_out(tmp_path: Path) -> None:
    # Off-chain results are taken only for calls on the chain: the abandoned branch's stay out.
    path = _write(
        tmp_path / "s.jsonl",
        [
            _line("u0", None, "user", "go"),
            _call("a1", "u0", "old", mid="mx"),
            _result("r1", "a1", "old"),
            _line("u1", None, "user", "no, start over"),
            _call("a2", "u1", "new", mid="my"),
            _result("r2", "a2", "new"),
        ],
    )
    fs = read_session(path)
    assert _answers(fs.messages) == {"new": "out of new"} and "go" not in [m.text for m in fs.messages]


def test_a_subagents_own_file_is_its_conversation(tmp_path: Path) -> None:
    side = {"side": True, "agentId": "a93c"}
    path = _write(
        tmp_path / "agent-a93c.jsonl",
        [
            _line("s0", None, "user", "Explore the parser", **side),
            _line(
                "s1",
                "s0",
                "assistant",
                [{"type": "tool_use", "id": "k1", "name": "Read", "input": {}}],
                **side,
            ),
            _line(
                "s2", "s1", "user", [{"type": "tool_result", "tool_use_id": "k1", "content": "x = 1"}], **side
            ),
            _line("s3", "s2", "assistant", [{"type": "text", "text": "The parser sets x."}], mid="q", **side),
        ],
    )
    fs = read_session(path)
    assert [m.role for m in fs.messages] == ["user", "assistant", "tool", "assistant"]
    assert fs.id == "s-1/agent-a93c"  # not the parent's id, which the subagent's lines carry


def test_gzipped_transcripts_are_read_by_the_importer_the_bench_and_probegen(tmp_path: Path) -> None:
    lines = [
        _line("u0", None, "user", "hi"),
        _call("a1", "u0", "c1"),
        _result("r1", "a1", "c1"),
        *[_line(f"x{i}", f"r{i}" if i == 1 else f"x{i - 1}", "user", f"more {i}") for i in range(1, 12)],
    ]
    folder = tmp_path / "sessions"
    folder.mkdir()
    path = _write(folder / "s.jsonl.gz", lines)
    assert sessions_in(folder) == [path]
    assert _answers(read_session(path).messages) == {"c1": "out of c1"}
    (conv,) = load_conversations(path)
    rows = list(read_corpus(folder))
    assert [r["id"] for r in rows] == [conv.id] and len(rows[0]["messages"]) == len(conv.messages)


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(min_value=1, max_value=5),
    data=st.data(),
)
def test_parallel_calls_written_in_any_order_are_all_answered(
    tmp_path_factory: Any, n: int, data: Any
) -> None:
    """Property: however a reply's call lines and their results interleave in the file (a result always
    after its own call), and whichever line the chain runs through, each call gets its own result."""
    calls = [f"c{i}" for i in range(n)]
    # an interleaving: a random merge of call lines and results, each result after its call
    pending = list(calls)
    written: list[str] = []
    order: list[tuple[str, str]] = []
    while pending or written:
        options = ([("call", pending[0])] if pending else []) + [("result", c) for c in written]
        kind, c = data.draw(st.sampled_from(options))
        order.append((kind, c))
        if kind == "call":
            pending.pop(0)
            written.append(c)
        else:
            written.remove(c)
    lines = [_line("u0", None, "user", "go")]
    last = "u0"
    for kind, c in order:
        if kind == "call":
            lines.append(_call(f"a-{c}", last, c))
            last = f"a-{c}"
        else:
            lines.append(_result(f"r-{c}", f"a-{c}", c))
    lines.append(_line("end", lines[-1]["uuid"], "assistant", [{"type": "text", "text": "done"}], mid="m9"))
    path = _write(tmp_path_factory.mktemp("p") / "s.jsonl", lines)
    fs = read_session(path)
    check_tool_pairing(fs.messages)
    assert _answers(fs.messages) == {c: f"out of {c}" for c in calls}
    assert NO_RESULT not in [m.text for m in fs.messages] and fs.dropped == {}


def test_a_compact_boundary_whose_logical_parent_was_never_written_keeps_what_came_before(
    tmp_path: Path,
) -> None:
    # Claude Code 2.1 names a logicalParentUuid that is not in the file: the earlier part is still the
    # session's (the agent's calls and results before its compaction), not cut off.
    boundary = {
        "type": "system",
        "subtype": "compact_boundary",
        "uuid": "b1",
        "parentUuid": None,
        "logicalParentUuid": "never-written",
        "sessionId": "s-1",
        "isSidechain": False,
    }
    summary = _line("u1", "b1", "user", "Summary: c1 printed its output.", isCompactSummary=True)
    path = _write(
        tmp_path / "s.jsonl",
        [
            _line("u0", None, "user", "start"),
            _call("a1", "u0", "c1"),
            _result("r1", "a1", "c1"),
            boundary,
            summary,
            _line("a2", "u1", "assistant", [{"type": "text", "text": "Continuing."}], mid="m2"),
        ],
    )
    fs = read_session(path)
    assert [m.role for m in fs.messages] == ["user", "assistant", "tool", "user", "assistant"]
    assert fs.messages[0].text == "start" and fs.messages[3].meta == {"imported_summary": "claude-code"}


def test_an_image_by_url_stays_a_pointer_and_a_document_leaves_a_stand_in(tmp_path: Path) -> None:
    blocks = [
        {"type": "text", "text": "see these"},
        {"type": "image", "source": {"type": "url", "url": "https://example.org/shot.png"}},
        {"type": "image", "source": {"type": "file", "file_id": "file_01"}},
        {
            "type": "document",
            "title": "spec.pdf",
            "source": {"type": "base64", "media_type": "application/pdf"},
        },
    ]
    fs = read_session(_write(tmp_path / "s.jsonl.gz", [_line("u0", None, "user", blocks)]))
    parts = fs.messages[0].content
    assert isinstance(parts, list)
    assert parts[1] == {"type": "image_url", "image_url": {"url": "https://example.org/shot.png"}}
    stand_ins = [p["text"] for p in parts[2:]]
    assert stand_ins == [
        "[image file in the other agent's transcript: not carried over]",
        '[document application/pdf "spec.pdf" in the other agent\'s transcript: not carried over]',
    ]
    assert (
        fs.id == "s-1"
        and read_session(
            _write(tmp_path / "x.jsonl.gz", [{**_line("u", None, "user", "hi"), "sessionId": None}])
        ).id
        == "x"
    )


async def test_the_bench_replays_an_imported_session_with_its_results_in_place(tmp_path: Path) -> None:
    """Each message of an imported session has its own id in the bench (the engine derives its rewrites'
    ids from them): with every id empty, compaction replaced recorded results by "interrupted" stand-ins."""
    lines: list[dict[str, Any]] = [_line("u0", None, "user", "audit the modules")]
    for k in range(12):
        for j in range(3):  # three parallel calls a reply, each on its line, as Claude Code writes them
            lines.append(_call(f"a{k}.{j}", lines[-1]["uuid"], f"c{k}.{j}", mid=f"m{k}"))
        for j in range(3):
            out = _result(f"r{k}.{j}", f"a{k}.{j}", f"c{k}.{j}")
            out["message"]["content"][0]["content"] = f"module {k}.{j}: " + " ".join(
                f"w{k}x{i}" for i in range(100)
            )
            lines.append(out)
    lines.append(
        _line("end", lines[-1]["uuid"], "assistant", [{"type": "text", "text": "Audited."}], mid="mz")
    )
    (conv,) = load_conversations(_write(tmp_path / "s.jsonl", lines))
    assert len({m.id for m in conv.messages}) == len(conv.messages) and all(m.id for m in conv.messages)
    counter = TokenCounter()
    (strategy,) = make_strategies(["myrm"], [], counter, None, 10)
    views: list[list[Any]] = []
    build = strategy.build

    async def keep(history: Any, k: int) -> Any:
        views.append(await build(history, k))
        return views[-1]

    strategy.build = keep  # type: ignore[method-assign,assignment]
    result = StrategyResult("myrm")
    await replay(conv, strategy, result, 4000, counter, Prices.for_model("claude-sonnet-4-5"))
    assert result.compactions > 0 and result.rejected_requests == 0
    assert not [m for v in views for m in v if m.role == "tool" and m.text == INTERRUPTED]


def _codex(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": "2026-05-11T13:28:45Z", "type": kind, "payload": payload}


def _codex_turn(words: str, with_item: bool) -> list[dict[str, Any]]:
    said = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": words}]}
    call = {"type": "function_call", "call_id": f"c-{words}", "name": "exec_command", "arguments": "{}"}
    return [
        *([_codex("response_item", said)] if with_item else []),
        _codex("event_msg", {"type": "user_message", "message": words}),
        _codex("response_item", call),
        _codex("response_item", {"type": "function_call_output", "call_id": f"c-{words}", "output": "ok"}),
        _codex("response_item", {"type": "message", "role": "assistant", "content": f"did {words}"}),
    ]


def test_a_codex_desktop_rollout_keeps_the_words_only_its_ui_events_hold(tmp_path: Path) -> None:
    # Codex Desktop (0.128, 2026) writes the user's words as event_msg lines only; the CLI writes them both
    # as a response_item and an event_msg: each must come over once.
    meta = _codex("session_meta", {"id": "cx-desk", "cwd": "/nowhere", "source": "vscode"})
    context = {"type": "message", "role": "user", "content": "<environment_context>cwd</environment_context>"}
    desktop = _write(
        tmp_path / "desk.jsonl",
        [
            meta,
            _codex("response_item", context),
            *_codex_turn("analyze", False),
            *_codex_turn("draft", False),
        ],
    )
    cli = _write(tmp_path / "cli.jsonl", [meta, *_codex_turn("analyze", True), *_codex_turn("draft", True)])
    for path in (desktop, cli):
        fs = read_session(path)
        check_tool_pairing(fs.messages)
        assert [(m.role, m.text) for m in fs.messages if m.role == "user" or m.text.startswith("did")] == [
            ("user", "analyze"),
            ("assistant", "did analyze"),
            ("user", "draft"),
            ("assistant", "did draft"),
        ], path.name
