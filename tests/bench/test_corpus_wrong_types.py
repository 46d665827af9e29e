"""A recording's messages and tool definitions whose fields hold any JSON value (a call id that is a list,
a tool definition that is a number): ``myrm --replay`` plays it, or the reader refuses it with its own
error naming the line and the message, never a traceback from deep inside the replay."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from myrm_tui.agent.replay import Replay
from myrm_tui.bench.corpus import CorpusError, load_conversations
from myrm_tui.config import Settings
from myrm_tui.store.db import Store

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-2, 2) | st.sampled_from(["c1", "c2", "Read", ""]),
    lambda inner: (
        st.lists(inner, max_size=2) | st.dictionaries(st.sampled_from(["a", "name"]), inner, max_size=2)
    ),
    max_leaves=4,
)


def _maybe(good: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Mostly the field's own kind, so a line is read as far as the field after it."""
    return st.one_of(good, good, good, _JSON)


_IDS = st.sampled_from(["c1", "c2"])
# An id: a string, or as often a value of another JSON type (a list: unhashable where ids key a dict).
_ID = st.one_of(_IDS, st.lists(_IDS, min_size=1, max_size=1), _JSON)

_CALL = st.fixed_dictionaries(
    {
        "id": _ID,
        "type": st.just("function"),
        "function": _maybe(
            st.fixed_dictionaries({"name": _maybe(st.sampled_from(["Read", "Bash"])), "arguments": _JSON})
        ),
    }
)
_MESSAGE = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant", "tool"]), "content": _maybe(st.text("ab", max_size=3))},
    optional={
        "tool_calls": _maybe(st.lists(_CALL, max_size=2)),
        "tool_call_id": _ID,
        "name": _maybe(st.sampled_from(["Read", "Bash"])),
        "reasoning_content": _maybe(st.text("ab", max_size=3)),
        "thinking_blocks": _maybe(st.lists(st.dictionaries(st.just("thinking"), st.text("ab", max_size=2)))),
    },
)
_TOOL = _maybe(
    st.fixed_dictionaries(
        {
            "type": st.just("function"),
            "function": _maybe(
                st.fixed_dictionaries(
                    {"name": _maybe(st.sampled_from(["Read", "Bash"]))},
                    optional={"parameters": _maybe(st.just({"type": "object", "properties": {}}))},
                )
            ),
        }
    )
)


async def _start(path: Path, tmp: Path) -> None:
    conv = load_conversations(path, limit=1)[0]
    store = await Store.open(tmp / "r.db")
    try:
        agent = await Replay(conv, 0.0).start(store, Settings(), tmp)
        await agent.close()
    finally:
        await store.close()


_MESSAGES = st.lists(_MESSAGE, max_size=5)
_TOOLS = st.one_of(st.just([]), st.lists(_TOOL, min_size=1, max_size=2))


# make test runs the named recordings and a fixed 40 generated ones (each is started as a replay); the long
# twin 120 new ones.
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(messages=_MESSAGES, tools=_TOOLS)
# Found: a result whose tool_call_id was a list ("Could not start: TypeError: unhashable type: 'list'").
@example(messages=[{"role": "tool", "content": "x", "tool_call_id": ["c1"]}], tools=[])
@example(messages=[{"role": "user", "content": "x", "name": {"a": 1}}], tools=[])
@example(messages=[], tools=[5])
def test_a_recording_with_fields_of_any_type_plays_or_is_refused_by_the_reader(
    tmp_path_factory: pytest.TempPathFactory, messages: list[Any], tools: list[Any]
) -> None:
    plays_or_is_refused(tmp_path_factory, messages, tools)


@pytest.mark.long
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(messages=_MESSAGES, tools=_TOOLS)
def test_long_a_recording_with_fields_of_any_type_plays_or_is_refused_by_the_reader(
    tmp_path_factory: pytest.TempPathFactory, messages: list[Any], tools: list[Any]
) -> None:
    """The same property over 120 recordings (``make test-long``)."""
    plays_or_is_refused(tmp_path_factory, messages, tools)


def plays_or_is_refused(
    tmp_path_factory: pytest.TempPathFactory, messages: list[Any], tools: list[Any]
) -> None:
    tmp = tmp_path_factory.mktemp("rec")
    path = tmp / "rec.jsonl"
    line = {"id": "r", "messages": [{"role": "system", "content": "s"}, *messages], "meta": {"tools": tools}}
    path.write_text(json.dumps(line) + "\n")
    try:
        asyncio.run(_start(path, tmp))
    except CorpusError as exc:
        assert f"{path}:1:" in str(exc) and "\n" not in str(exc)


def test_the_tool_definitions_error_shows_the_shape_it_wants(tmp_path: Path) -> None:
    """It printed ``({{type, function: …}})``: doubled braces from a string that is not an f-string."""
    path = tmp_path / "c.jsonl"
    path.write_text(
        json.dumps({"id": "a", "messages": [{"role": "user", "content": "hi"}], "meta": {"tools": [5]}})
    )
    with pytest.raises(
        CorpusError, match=r":1: meta\.tools must be .* \(\{type, function: \{name, parameters\}\}\)$"
    ):
        load_conversations(path)
