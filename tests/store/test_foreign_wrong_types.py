"""Another agent's session file whose every field may hold any JSON value (ids that are lists, numbers or
objects; types, messages and flags of the wrong kind): importing it brings over a history a provider
accepts, or refuses the file in one line, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from myrm_tui.context.invariants import check_tool_pairing
from myrm_tui.context.steps.normalize import normalize
from myrm_tui.store.foreign import ForeignError, read_session
from myrm_tui.testing.validation import validate_openai
from tests.helpers import cli_env, run_myrm

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from(["t1", "t2", "u0", "u1", "m1", ""]),
    lambda inner: (
        st.lists(inner, max_size=2) | st.dictionaries(st.sampled_from(["a", "id"]), inner, max_size=2)
    ),
    max_leaves=4,
)
# An id: usually one of a few strings (so lines link up), else any JSON value, hashable or not.
_NAMES = st.sampled_from(["t1", "t2", "u0", "u1", "m1"])
_ID = _NAMES | st.lists(_NAMES, max_size=1) | st.dictionaries(st.just("id"), _NAMES, max_size=1) | _JSON


def _maybe(draw: st.DrawFn, good: st.SearchStrategy[Any]) -> Any:
    """Mostly a value of the field's own kind, so the lines are read far enough to reach the others."""
    return draw(_JSON if draw(st.integers(0, 3)) == 0 else good)


@st.composite
def _block(draw: st.DrawFn) -> Any:
    kind = draw(st.sampled_from(["text", "tool_use", "tool_result", "image", "other"]))
    if kind == "text":
        return {"type": "text", "text": _maybe(draw, st.text(max_size=3))}
    if kind == "tool_use":
        return {"type": "tool_use", "id": draw(_ID), "name": draw(_JSON), "input": draw(_JSON)}
    if kind == "tool_result":
        return {
            "type": "tool_result",
            "tool_use_id": draw(_ID),
            "content": draw(_JSON),
            "is_error": draw(_JSON),
        }
    if kind == "image":
        return {"type": "image", "source": draw(_JSON)}
    return draw(_JSON)


@st.composite
def _claude(draw: st.DrawFn) -> list[Any]:
    lines: list[Any] = []
    for k in range(draw(st.integers(1, 6))):
        kind = _maybe(draw, st.sampled_from(["user", "assistant", "system", "summary"]))
        content = _maybe(draw, st.lists(_block(), max_size=3))
        message = _maybe(draw, st.fixed_dictionaries({"id": _ID, "role": _JSON, "content": st.just(content)}))
        line = {
            "type": kind,
            "uuid": f"u{k}" if draw(st.booleans()) else draw(_ID),
            # mostly the line before, so the lines form a chain the reader follows
            "parentUuid": f"u{k - 1}" if draw(st.booleans()) else draw(_ID),
            "logicalParentUuid": draw(_ID),
            "message": message,
            "isSidechain": draw(st.booleans()) and draw(_JSON),
            "isCompactSummary": draw(_JSON),
            "isMeta": draw(_JSON),
            "subtype": _maybe(draw, st.just("compact_boundary")),
            "agentId": draw(_JSON),
            "cwd": draw(_JSON),
            "sessionId": draw(_JSON),
        }
        lines.append(line)
    lines[0] = {**lines[0], "type": "user", "uuid": "u0"}  # read as a Claude Code transcript
    return lines


@st.composite
def _codex(draw: st.DrawFn) -> list[Any]:
    payload = st.fixed_dictionaries(
        {
            "type": st.sampled_from(
                [
                    "message",
                    "reasoning",
                    "function_call",
                    "custom_tool_call",
                    "local_shell_call",
                    "function_call_output",
                    "user_message",
                ]
            )
            | _JSON,
            "role": st.sampled_from(["user", "assistant"]) | _JSON,
            "content": _JSON,
            "call_id": _ID,
            "id": _ID,
            "name": _JSON,
            "arguments": _JSON,
            "input": _JSON,
            "action": _JSON,
            "output": _JSON,
            "summary": _JSON,
            "message": _JSON,
            "cwd": _JSON,
        }
    )
    rest = draw(
        st.lists(
            st.fixed_dictionaries(
                {
                    "type": st.sampled_from(["response_item", "event_msg", "compacted", "session_meta"])
                    | _JSON,
                    "payload": payload | _JSON,
                }
            ),
            max_size=6,
        )
    )
    return [{"type": "session_meta", "payload": {"cwd": "/nowhere"}}, *rest]


@st.composite
def _hermes(draw: st.DrawFn) -> dict[str, Any]:
    message = st.fixed_dictionaries(
        {
            "role": st.sampled_from(["user", "assistant", "tool", "system"]) | _JSON,
            "content": _JSON,
            "tool_calls": _JSON
            | st.lists(
                st.fixed_dictionaries(
                    {
                        "id": _ID,
                        "function": _JSON | st.fixed_dictionaries({"name": _JSON, "arguments": _JSON}),
                    }
                ),
                max_size=2,
            ),
            "tool_call_id": _ID,
            "reasoning": _JSON,
        }
    )
    return {"session_id": draw(_JSON), "messages": draw(st.lists(message | _JSON, max_size=6))}


def _write(path: Path, lines: list[Any]) -> Path:
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


_ANY_CASE = st.one_of(
    _claude().map(lambda v: ("t.jsonl", v)),
    _codex().map(lambda v: ("r.jsonl", v)),
    _hermes().map(lambda v: ("session_x.json", v)),
)


# make test runs a fixed 60 (each a file written and read); the long twin 200 new ones.
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=_ANY_CASE)
def test_any_field_of_any_type_imports_or_is_refused_in_one_line(
    tmp_path: Path, case: tuple[str, Any]
) -> None:
    imports_or_is_refused(tmp_path, case)


@pytest.mark.long
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=_ANY_CASE)
def test_long_any_field_of_any_type_imports_or_is_refused_in_one_line(
    tmp_path: Path, case: tuple[str, Any]
) -> None:
    """The same property over 200 transcripts (``make test-long``)."""
    imports_or_is_refused(tmp_path, case)


def imports_or_is_refused(tmp_path: Path, case: tuple[str, Any]) -> None:
    name, value = case
    path = tmp_path / name
    if name.endswith(".json"):
        path.write_text(json.dumps(value))
    else:
        _write(path, value)
    try:
        messages = read_session(path).messages
    except ForeignError:
        return
    assert check_tool_pairing(messages) == []
    for m in messages:
        assert len({c.id for c in m.tool_calls}) == len(m.tool_calls)
    if messages:
        # A call's name is the other agent's (any text); the pipeline's normalize step renames one a provider
        # refuses on every request, so the history is checked as it is sent.
        sent, _ = normalize(messages)
        assert validate_openai({"messages": [m.to_api() for m in sent]}) is None


def test_a_transcript_whose_ids_are_lists_imports(tmp_path: Path) -> None:
    """Found: 'myrm sessions --import' of a transcript whose message and call ids were lists printed a
    TypeError traceback (unhashable type: 'list')."""
    path = _write(
        tmp_path / "t.jsonl",
        [
            {"type": "user", "uuid": "u0", "message": {"role": "user", "content": "hi"}},
            {
                "type": "assistant",
                "uuid": "a",
                "parentUuid": "u0",
                "message": {
                    "id": [1],
                    "content": [{"type": "tool_use", "id": [2], "name": "Read", "input": {}}],
                },
            },
            {
                "type": "user",
                "uuid": "b",
                "parentUuid": "a",
                "message": {"content": [{"type": "tool_result", "tool_use_id": [2], "content": "r"}]},
            },
        ],
    )
    r = run_myrm(["sessions", "--import", str(path)], env=cli_env(tmp_path))
    assert (r.returncode, r.stderr) == (0, ""), r.stderr
    assert r.stdout.startswith("imported 3 messages from claude-code")
