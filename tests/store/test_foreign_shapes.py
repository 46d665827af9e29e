"""Every record shape Claude Code and Codex CLI write (listed, with their sources, in bench/foreign/README.md,
"Record shapes"), mixed in generated sessions: each file imports to a history the provider emulator's
rules accept, or is refused in one line; and a fact placed in any shape that carries what the agent saw
or said is in the imported history."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from myrm_tui.bench.probegen import tool_facts
from myrm_tui.context.invariants import check_tool_pairing
from myrm_tui.context.steps.cache_optimize import place_images
from myrm_tui.context.steps.normalize import normalize
from myrm_tui.context.types import Message
from myrm_tui.store.foreign import ForeignError, kind_of, read_session
from myrm_tui.testing.emulator import ProviderEmulator
from myrm_tui.testing.validation import validate_openai
from tests.helpers import cli_env, emulator_args, run_myrm

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgAAIAAAUAAaJPXQAAAABJRU5ErkJggg=="
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "foreign"


_OUTPUTS = ("ccResult", "srvResult", "cxOut", "cxTool")


@dataclass
class _Session:
    """Lines being written, the facts placed in content-bearing shapes, and text that must not come over."""

    lines: list[Any] = field(default_factory=list)
    facts: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)  # the facts placed in a tool's output
    absent: list[str] = field(default_factory=list)
    n: int = 0

    def fact(self, where: str) -> str:
        self.n += 1
        self.facts.append(f"{where}Fact{self.n}q")
        if where in _OUTPUTS:
            self.outputs.append(self.facts[-1])
        return self.facts[-1]

    def last_reply(self) -> str:
        """The closing reply's words: every output's fact, used (so probegen counts it a tool fact)."""
        return "done: " + " ".join(self.outputs)

    def add(self, line: Any) -> _Session:
        self.lines.append(line)
        return self

    def uid(self, prefix: str) -> str:
        self.n += 1
        return f"{prefix}{self.n}"


# -- Claude Code ------------------------------------------------------------------------------------


def _cc(s: _Session, kind: str, content: Any, **extra: Any) -> dict[str, Any]:
    """A main-line event whose parent is the last one on the chain."""
    parent = next((x["uuid"] for x in reversed(s.lines) if isinstance(x, dict) and "uuid" in x), None)
    role = "assistant" if kind == "assistant" else "user"
    mid = extra.pop("mid", None)
    message = {"role": role, "content": content, **({"id": mid} if mid else {})}
    line = {"type": kind, "uuid": s.uid("u"), "parentUuid": parent, "sessionId": "cc", "cwd": "/nowhere"}
    line.update(message=message, isSidechain=False, **extra)
    s.lines.append(line)
    return line


def _cc_call(s: _Session, name: str, result: Callable[[str], Any], is_error: bool = False) -> None:
    call = s.uid("toolu_")
    _cc(s, "assistant", [{"type": "tool_use", "id": call, "name": name, "input": {"q": s.fact("ccArg")}}])
    block = {"type": "tool_result", "tool_use_id": call, "content": result(s.fact("ccResult"))}
    _cc(s, "user", [{**block, "is_error": True} if is_error else block], toolUseResult={"stdout": "ui copy"})


def _cc_server(s: _Session, name: str, result: Callable[[str], Any]) -> None:
    """A call the API ran itself, its result, and the text after it: one reply, a block a line."""
    call, mid = s.uid("srvtoolu_"), s.uid("msg_")
    _cc(
        s,
        "assistant",
        [{"type": "server_tool_use", "id": call, "name": name, "input": {"query": s.fact("srvQuery")}}],
        mid=mid,
    )
    kind = "web_search_tool_result" if name == "web_search" else "web_fetch_tool_result"
    _cc(
        s, "assistant", [{"type": kind, "tool_use_id": call, "content": result(s.fact("srvResult"))}], mid=mid
    )
    _cc(s, "assistant", [{"type": "text", "text": s.fact("srvAfter")}], mid=mid)


_CLAUDE_SHAPES: dict[str, Callable[[_Session], object]] = {
    "user words": lambda s: _cc(s, "user", s.fact("ccUser")),
    "user blocks": lambda s: _cc(s, "user", [{"type": "text", "text": s.fact("ccUserBlock")}]),
    "reply": lambda s: _cc(s, "assistant", [{"type": "text", "text": s.fact("ccSaid")}]),
    "thinking": lambda s: _cc(
        s,
        "assistant",
        [
            {"type": "thinking", "thinking": s.fact("ccThought"), "signature": "sig"},
            {"type": "text", "text": s.fact("ccSaid")},
        ],
    ),
    "split reply": lambda s: [
        _cc(s, "assistant", [{"type": "text", "text": s.fact("ccSplit")}], mid="m-split"),
        _cc(s, "assistant", [{"type": "text", "text": s.fact("ccSplit")}], mid="m-split"),
    ],
    "call": lambda s: _cc_call(s, "Bash", lambda f: f),
    "failed call": lambda s: _cc_call(s, "Bash", lambda f: f"Exit code 1\n{f}", is_error=True),
    "result blocks with an image": lambda s: _cc_call(
        s,
        "Read",
        lambda f: [
            {"type": "text", "text": f},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
        ],
    ),
    "MCP call": lambda s: _cc_call(s, "mcp__github__get_issue", lambda f: [{"type": "text", "text": f}]),
    "tool reference": lambda s: _cc_call(
        s, "ToolSearch", lambda f: [{"type": "tool_reference", "tool_name": f}]
    ),
    "web search": lambda s: _cc_server(
        s,
        "web_search",
        lambda f: [
            {
                "type": "web_search_result",
                "title": f,
                "url": "https://example.org/a",
                "encrypted_content": "EnC",
            }
        ],
    ),
    "web fetch": lambda s: _cc_server(
        s,
        "web_fetch",
        lambda f: {
            "type": "web_fetch_result",
            "url": "https://example.org/b",
            "content": {
                "type": "document",
                "source": {"type": "text", "media_type": "text/plain", "data": f},
            },
        },
    ),
    "queued prompt": lambda s: s.add(
        {
            "type": "attachment",
            "uuid": s.uid("u"),
            "parentUuid": next(x["uuid"] for x in reversed(s.lines) if isinstance(x, dict) and "uuid" in x),
            "attachment": {"type": "queued_command", "prompt": s.fact("ccQueued"), "commandMode": "prompt"},
        }
    ),
    "compaction": lambda s: _cc_compaction(s),
}


def _cc_compaction(s: _Session) -> None:
    """Claude Code's boundary (no parent: its logical parent links over it) and its summary."""
    before = next(x["uuid"] for x in reversed(s.lines) if isinstance(x, dict) and "uuid" in x)
    boundary = {"subtype": "compact_boundary", "parentUuid": None, "logicalParentUuid": before}
    _cc(s, "system", "Conversation compacted", **boundary, compactMetadata={"trigger": "auto"})
    _cc(s, "user", s.fact("ccSummary"), isCompactSummary=True, isVisibleInTranscriptOnly=True)


def _cc_noise(s: _Session, which: int) -> None:
    """Shapes that carry nothing the model saw or said (skipped on purpose), and unknown ones."""
    parent = next((x["uuid"] for x in reversed(s.lines) if isinstance(x, dict) and "uuid" in x), None)
    if which == 0:
        s.absent.append(s.uid("apiErrorNotice"))
        _cc(s, "assistant", [{"type": "text", "text": s.absent[-1]}], isApiErrorMessage=True)
        return
    s.add(
        [
            {"type": "file-history-snapshot", "messageId": "m", "snapshot": {"trackedFileBackups": {}}},
            {"type": "queue-operation", "operation": "enqueue", "content": "typed"},
            {"type": "summary", "summary": "a title", "leafUuid": "nowhere"},
            {"type": "progress", "uuid": s.uid("u"), "parentUuid": parent, "data": {"type": "bash_progress"}},
            {"type": "system", "subtype": "turn_duration", "uuid": s.uid("u"), "parentUuid": parent},
            {
                "type": "attachment",
                "uuid": s.uid("u"),
                "parentUuid": parent,
                "attachment": {"type": "hook_success"},
            },
            {"type": "brand-new-type", "uuid": s.uid("u"), "parentUuid": parent, "message": {"content": 3}},
            {"type": "custom-title", "customTitle": "t"},
        ][which - 1]
    )


# -- Codex CLI ---------------------------------------------------------------------------------------


def _cx_call(s: _Session, kind: str, output: Callable[[str], Any]) -> None:
    call = s.uid("call_")
    if kind == "function_call":
        args = json.dumps({"cmd": s.fact("cxArg")})
        item: dict[str, Any] = {
            "type": "function_call",
            "name": "exec_command",
            "arguments": args,
            "call_id": call,
        }
        out_kind = "function_call_output"
    elif kind == "custom_tool_call":
        patch = f"*** Begin Patch\n*** Add File: {s.fact('cxPatch')}.py\n*** End Patch"
        item = {"type": "custom_tool_call", "name": "apply_patch", "input": patch, "call_id": call}
        out_kind = "custom_tool_call_output"
    else:
        action = {"type": "exec", "command": ["bash", "-lc", s.fact("cxShell")]}
        item = {"type": "local_shell_call", "call_id": call, "status": "completed", "action": action}
        out_kind = "function_call_output"
    s.lines.append(item)
    s.lines.append({"type": out_kind, "call_id": call, "output": output(s.fact("cxOut"))})


_CODEX_SHAPES: dict[str, Callable[[_Session], object]] = {
    "user words": lambda s: s.add(
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": s.fact("cxUser")}]}
    ),
    "reply": lambda s: s.add(
        {
            "type": "message",
            "role": "assistant",
            "phase": "final_answer",
            "content": [{"type": "output_text", "text": s.fact("cxSaid")}],
        }
    ),
    "reasoning": lambda s: [
        s.add(
            {
                "type": "reasoning",
                "summary": [{"type": "summary_text", "text": s.fact("cxSummary")}],
                "content": [{"type": "reasoning_text", "text": s.fact("cxThought")}],
                "encrypted_content": "gAAAA",
            }
        ),
        _CODEX_SHAPES["reply"](s),
    ],
    "call, text output": lambda s: _cx_call(s, "function_call", lambda f: f),
    "call, exec JSON output": lambda s: _cx_call(
        s, "function_call", lambda f: json.dumps({"output": f, "metadata": {"exit_code": 1}})
    ),
    "call, content items": lambda s: _cx_call(
        s,
        "function_call",
        lambda f: [
            {"type": "input_text", "text": f},
            {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}"},
        ],
    ),
    "call, failed": lambda s: _cx_call(s, "function_call", lambda f: {"content": f, "success": False}),
    "apply_patch": lambda s: _cx_call(s, "custom_tool_call", lambda f: f),
    "apply_patch, content items": lambda s: _cx_call(
        s, "custom_tool_call", lambda f: [{"type": "input_text", "text": f}]
    ),
    "local shell": lambda s: _cx_call(s, "local_shell_call", lambda f: f),
    "web search": lambda s: s.add(
        {
            "type": "web_search_call",
            "status": "completed",
            "action": {"type": "search", "query": s.fact("cxQ")},
        }
    ),
    "tool search": lambda s: [
        s.add(
            {
                "type": "tool_search_call",
                "call_id": s.uid("ts"),
                "execution": "client",
                "arguments": {"q": s.fact("cxTs")},
            }
        ),
        s.add(
            {
                "type": "tool_search_output",
                "call_id": s.lines[-1]["call_id"],
                "status": "completed",
                "execution": "client",
                "tools": [{"name": s.fact("cxTool")}],
            }
        ),
    ],
    "image generation": lambda s: s.add(
        {
            "type": "image_generation_call",
            "id": "ig1",
            "status": "completed",
            "revised_prompt": s.fact("cxImg"),
            "result": PNG,
        }
    ),
    "agent message": lambda s: s.add(
        {
            "type": "agent_message",
            "author": "worker",
            "recipient": "root",
            "content": [{"type": "input_text", "text": s.fact("cxAgent")}],
        }
    ),
}
# Shapes only the envelope holds (a bare rollout, before it, had none of them).
_CODEX_LINE_SHAPES: dict[str, Callable[[_Session], dict[str, Any]]] = {
    "compaction summary": lambda s: {
        "type": "compacted",
        "payload": {
            "message": s.fact("cxCompacted"),
            "replacement_history": [{"type": "compaction", "encrypted_content": "gAAAA"}],
        },
    },
    "inter-agent message": lambda s: {
        "type": "inter_agent_communication",
        "payload": {"author": "explorer", "recipient": "root", "content": s.fact("cxRelay")},
    },
}
_CODEX_NOISE: list[dict[str, Any]] = [
    {"type": "ghost_snapshot", "ghost_commit": {"id": "abc", "parent": None}},
    {"type": "compaction", "encrypted_content": "gAAAA"},
    {"type": "context_compaction"},
    {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "be brief"}]},
    {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": "<environment_context>x"}],
    },
    {"type": "reasoning", "summary": [], "encrypted_content": "gAAAA"},
    {"type": "some_future_item", "data": 1},
]
_CODEX_NOISE_LINES: list[dict[str, Any]] = [
    {"type": "event_msg", "payload": {"type": "token_count", "info": None}},
    {"type": "event_msg", "payload": {"type": "agent_message", "message": "dup"}},
    {"type": "event_msg", "payload": {"type": "exec_command_end", "aggregated_output": "dup"}},
    {"type": "turn_context", "payload": {"cwd": "/nowhere", "model": "gpt-5"}},
    {"type": "world_state", "payload": {"agents_md": "x"}},
    {"type": "compacted", "payload": {"message": ""}},
    {"type": "some_future_line", "payload": {}},
]


# -- generated sessions -------------------------------------------------------------------------------


@st.composite
def _claude_session(draw: st.DrawFn) -> tuple[str, _Session]:
    s = _Session()
    _cc(s, "user", s.fact("ccFirst"))
    for _ in range(draw(st.integers(1, 8))):
        if draw(st.integers(0, 3)) == 0:
            _cc_noise(s, draw(st.integers(0, 8)))
        else:
            _CLAUDE_SHAPES[draw(st.sampled_from(sorted(_CLAUDE_SHAPES)))](s)
    _cc(s, "assistant", [{"type": "text", "text": s.last_reply()}])
    return "cc.jsonl", s


@st.composite
def _codex_session(draw: st.DrawFn) -> tuple[str, _Session]:
    s = _Session()
    layout = draw(st.sampled_from(["envelope", "bare", "typescript"]))
    _CODEX_SHAPES["user words"](s)
    for _ in range(draw(st.integers(1, 8))):
        pick = draw(st.integers(0, 3))
        if pick == 0:
            s.lines.append(copy.deepcopy(draw(st.sampled_from(_CODEX_NOISE))))
        elif pick == 1 and layout == "envelope":
            line = copy.deepcopy(draw(st.sampled_from(_CODEX_NOISE_LINES)))
            shape = draw(st.sampled_from(sorted(_CODEX_LINE_SHAPES)))
            s.lines.append(line if draw(st.booleans()) else _CODEX_LINE_SHAPES[shape](s))
        else:
            _CODEX_SHAPES[draw(st.sampled_from(sorted(_CODEX_SHAPES)))](s)
    s.add(
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": s.last_reply()}]}
    )
    items = [x if "payload" in x else {"type": "response_item", "payload": x} for x in s.lines]
    if layout == "envelope":
        envelope = {
            "type": "session_meta",
            "payload": {"id": "cx", "cwd": "/nowhere", "cli_version": "0.128"},
        }
        s.lines = [envelope, *items]
        return "rollout-e.jsonl", s
    if layout == "bare":
        meta: dict[str, Any] = {
            "id": "cx",
            "timestamp": "2025-08-01T10:00:00Z",
            "instructions": None,
            "git": {"branch": "main"},
        }
        s.lines = [
            meta,
            {"record_type": "state"},
            *(x for i in items for x in (i["payload"], {"record_type": "state"})),
        ]
        return "rollout-b.jsonl", s
    s.lines = [
        {"session": {"id": "cx", "timestamp": "2025-05-01T10:00:00Z"}, "items": [i["payload"] for i in items]}
    ]
    return "rollout-t.json", s


def _write(path: Path, s: _Session) -> Path:
    if path.name.endswith(".json"):
        path.write_text(json.dumps(s.lines[0]))
    else:
        path.write_text("".join(json.dumps(x) + "\n" for x in s.lines))
    return path


def _history(messages: list[Message]) -> str:
    """All an imported history holds: contents, reasoning, calls' names and arguments."""
    return "\n".join(
        json.dumps(m.content) + (m.reasoning or "") + "".join(c.name + c.arguments for c in m.tool_calls)
        for m in messages
    )


def _accepted(messages: list[Message]) -> None:
    if not messages:
        return  # `myrm sessions --import` refuses it in one line: "no messages to import"
    assert check_tool_pairing(messages) == []
    for m in messages:
        assert len({c.id for c in m.tool_calls}) == len(m.tool_calls)
    sent, _ = normalize(messages)
    # as myrm sends it to an OpenAI-style API: a tool result's images move to a user message after it
    body = place_images([m.to_api() for m in sent], images=True, in_tool_results=False)
    assert validate_openai({"messages": body}) is None


_ANY = st.recursive(
    st.none() | st.booleans() | st.integers(-2, 2) | st.sampled_from(["", "x", "message", "u1", "call_1"]),
    lambda inner: (
        st.lists(inner, max_size=2) | st.dictionaries(st.sampled_from(["type", "text"]), inner, max_size=2)
    ),
    max_leaves=4,
)


@st.composite
def _damaged(draw: st.DrawFn) -> tuple[str, _Session]:
    """A generated session with fields of some lines (and of their payloads and blocks) removed or given
    a value of any JSON type."""
    name, s = draw(st.one_of(_claude_session(), _codex_session()))
    lines = s.lines[0]["items"] if name.endswith(".json") else s.lines
    if name == "rollout-e.jsonl" and draw(st.booleans()):  # an undo, of any count
        undo = {"type": "event_msg", "payload": {"type": "thread_rolled_back", "num_turns": draw(_ANY)}}
        lines.insert(draw(st.integers(1, len(lines))), undo)
    for _ in range(draw(st.integers(1, 4))):
        target: Any = draw(st.sampled_from(lines))
        for _depth in range(draw(st.integers(0, 3))):  # into a payload, a message, a block
            inner = [
                v
                for v in (target.values() if isinstance(target, dict) else target)
                if isinstance(v, (dict, list))
            ]
            if not inner:
                break
            target = draw(st.sampled_from(inner))
        if isinstance(target, dict) and target:
            key = draw(st.sampled_from(sorted(target)))
            if draw(st.booleans()):
                del target[key]
            else:
                target[key] = draw(_ANY)
    return name, s


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=st.one_of(_claude_session(), _codex_session()))
def test_a_fact_in_any_content_bearing_shape_comes_over(tmp_path: Path, case: tuple[str, _Session]) -> None:
    name, s = case
    messages = read_session(_write(tmp_path / name, s)).messages
    _accepted(messages)
    held = _history(messages)
    assert [f for f in s.facts if f not in held] == []
    assert [t for t in s.absent if t in held] == []
    # and the probes' rule finds each output's fact where the output is (a tool message)
    found = {f.fact for f in tool_facts([m.to_api() for m in messages])}
    assert [f for f in s.outputs if f not in found] == []


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=_damaged())
def test_every_shape_damaged_imports_or_is_refused_in_one_line(
    tmp_path: Path, case: tuple[str, _Session]
) -> None:
    name, s = case
    path = _write(tmp_path / name, s)
    try:
        messages = read_session(path).messages
    except ForeignError as exc:
        assert "\n" not in str(exc)
        return
    _accepted(messages)


# -- written fixtures ------------------------------------------------------------------------------------

_FIXTURE_FACTS = {
    "claude-code-shapes.jsonl": [
        "queuedPromptFact",
        "searchHitTitleFact",
        "fetchedPageFact",
        "afterSearchFact",
        "mcpIssueFact",
        "failedBashFact",
        "imageReadFact",
    ],
    "codex-shapes.jsonl": [
        "outputItemFact",
        "rawReasoningFact",
        "webQueryFact",
        "relayFact",
        "patchOutputFact",
        "keptAfterRollbackFact",
    ],
    "codex-bare-2025.jsonl": ["bareUserFact", "bareOutputFact", "bareReplyFact"],
    "codex-typescript-2025.json": ["tsUserFact", "tsOutputFact", "tsReplyFact"],
}


@pytest.mark.parametrize("name", sorted(_FIXTURE_FACTS))
def test_a_written_fixture_of_each_shape_imports_with_its_facts(name: str) -> None:
    fs = read_session(FIXTURES / name)
    _accepted(fs.messages)
    held = _history(fs.messages)
    assert [f for f in _FIXTURE_FACTS[name] if f not in held] == []
    assert "undoneTurnFact" not in held and "apiErrorNoticeFact" not in held
    assert fs.workspace == (
        "" if name.endswith(".json") else "/nowhere/project"
    )  # the TypeScript CLI wrote none


def test_a_forked_rollout_is_its_own_session(tmp_path: Path) -> None:
    """A fork's rollout repeats its parent's session_meta after its own: the first names the session."""
    fs = read_session(FIXTURES / "codex-shapes.jsonl")
    assert fs.id == "019a-child"


def test_a_rolled_back_turn_is_not_in_the_history() -> None:
    """Codex's ``thread_rolled_back`` undoes the last turns: its model no longer saw them, so neither
    does the import (as a rewound branch of Claude Code's is left out)."""
    fs = read_session(FIXTURES / "codex-shapes.jsonl")
    words = [m.text for m in fs.messages if m.role == "user"]
    assert not any("undoneTurnFact" in w for w in words)
    assert any("keptAfterRollbackFact" in w for w in words)
    assert fs.dropped.get("turns the other agent rolled back") == 1


def test_codex_output_items_come_over_as_text_and_image() -> None:
    """An output of content items (an MCP tool's, ``view_image``'s) is its text and its image, not the
    items' JSON (its text escaped, the image as base64 text)."""
    fs = read_session(FIXTURES / "codex-shapes.jsonl")
    out = next(m for m in fs.messages if m.tool_call_id == "call_1")
    assert isinstance(out.content, list)
    assert out.content[0] == {"type": "text", "text": "outputItemFact: 3 passed, 0 failed"}
    assert out.content[1]["type"] == "image_url"
    patched = next(m for m in fs.messages if m.tool_call_id == "call_2")
    assert patched.content == "patchOutputFact: Success. Updated the following files:\nM vite.config.ts"


def test_an_encrypted_compaction_brings_no_empty_summary() -> None:
    """A remote compaction's ``compacted`` line has an empty message (its summary is encrypted): no
    summary message stands for it."""
    fs = read_session(FIXTURES / "codex-shapes.jsonl")
    assert [m for m in fs.messages if m.meta.get("imported_summary")] == []
    assert fs.dropped["encrypted compaction summaries"] == 1


def test_older_codex_rollouts_are_recognised() -> None:
    assert {kind_of(FIXTURES / n) for n in ("codex-bare-2025.jsonl", "codex-typescript-2025.json")} == {
        "codex"
    }


@pytest.mark.parametrize("name", ["claude-code-shapes.jsonl", "codex-shapes.jsonl"])
def test_an_imported_fixture_continues_through_the_emulator(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path, name: str
) -> None:
    """Imported, then continued under myrm through litellm to the provider emulator: accepted, with the
    shapes' facts in what was sent."""
    env = cli_env(tmp_path)
    done = run_myrm(["sessions", "--import", str(FIXTURES / name)], env=env, cwd=workspace)
    assert done.returncode == 0, done.stderr
    sid = done.stdout.split(" as ")[1].split()[0]
    asked = run_myrm(["ask", "what next?", "--session", sid, *emulator_args(emulator, workspace)], env=env)
    assert asked.returncode == 0, asked.stderr
    assert not emulator.rejected
    sent = json.dumps(emulator.accepted[-1].body["messages"])
    # reasoning goes only to a model that takes it (the emulator's gpt model does not)
    assert [f for f in _FIXTURE_FACTS[name] if f not in sent] == (
        ["rawReasoningFact"] if name.startswith("codex") else []
    )
