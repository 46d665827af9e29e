"""Any shape, anywhere: a model may send any JSON as a tool call's arguments, and the session goes on.

The call is stored as it came and read again by every later compaction, the tool card, export and
distill; ``context/call_args.py`` is the one reader. These tests send odd shapes through the real
agent loop (litellm → the provider emulator) and the real pipeline.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from myrm_tui.agent.events import CompactionMade, TurnDone, TurnFailed
from myrm_tui.context.call_args import call_args, check, parse
from myrm_tui.context.types import ToolCall
from myrm_tui.store.db import Store
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.helpers import collect, make_agent, openai_settings


def _answered(events: list[object]) -> bool:
    return isinstance(events[-1], TurnDone) and not [e for e in events if isinstance(e, TurnFailed)]


async def test_paths_42_gets_a_clear_error_and_later_turns_and_compactions_work(
    emulator: ProviderEmulator, store: Store, workspace: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The issue's poison: ``file_read_tool {"paths": 42}`` made every later compaction raise in
    ``signals.command_of`` and end the turn with a refusal that blamed the user's message."""
    for i in range(8):
        (workspace / f"mod{i}.py").write_text("\n".join(f"value_{i}_{k} = {k * 7919 % 10007}" for k in range(400)))
    agent = await make_agent(store, workspace, openai_settings(emulator), window=8_000)
    emulator.window = 8_000
    emulator.enqueue(Reply(tool_calls=[("file_read_tool", {"paths": 42})]), Reply(text="That failed."))
    events = await collect(agent, "read the file")
    assert _answered(events)
    error = next(m for m in emulator.accepted[-1].body["messages"] if m["role"] == "tool")["content"]
    assert "paths must be a list, got a number" in error

    with caplog.at_level(logging.ERROR):
        report = await agent.compact_now()
    assert report.metrics.failures == [] and report.metrics.compacted
    compactions = 0
    for i in range(8):  # long answers at 8K: automatic compactions fold the poisoned call
        answer = f"Read mod{i}.py. " + " ".join(f"value_{i}_{k} is {k * 31 % 97}" for k in range(180))
        emulator.enqueue(Reply(tool_calls=[("bash", {"command": f"cat mod{i}.py"})]), Reply(text=answer))
        with caplog.at_level(logging.ERROR):
            events = await collect(agent, f"read mod{i}.py")
        assert _answered(events), events[-3:]
        compactions += sum(isinstance(e, CompactionMade) for e in events)
    assert compactions >= 1
    assert emulator.rejected == []
    failed = [r.getMessage() for r in caplog.records if r.name.startswith("myrm_tui")]
    assert failed == []
    assert all(not r.get("failures") for r in await store.metrics(agent.session_id))


def test_the_accessor_reads_every_shape_without_raising() -> None:
    cases = {
        '{"paths": 42}': ((), ()),
        "[1, 2]": ((), ("not a JSON object (got a list)",)),
        '"a.py"': ((), ("not a JSON object (got a string)",)),
        "null": ((), ("not a JSON object (got null)",)),
        '{"paths": "a.py"}': (("a.py",), ()),
        '{"paths": ["a.py", 3, null, "b.py"]}': (("a.py", "b.py"), ()),
        '{"path": "x.py"}': (("x.py",), ()),
        '{"paths": ': ((), ("not valid JSON (Expecting value at char 10)",)),
        "[" * 100_000: ((), ("not readable JSON (RecursionError)",)),
    }
    for raw, (paths, problems) in cases.items():
        args = parse("file_read_tool", raw)
        assert (args.read_paths, args.problems) == (paths, problems), raw
    odd = parse("bash", '{"command": {"run": "ls"}, "timeout": "9", "s": "\\ud800x"}')
    assert odd.command == "" and odd.number("timeout") is None and odd.text("s") == "\ufffdx"
    assert call_args(ToolCall("c", "bash", '{"command": "ls"}')).command == "ls"


def test_check_names_each_wrong_type_against_the_schema() -> None:
    schema = {
        "type": "object",
        "properties": {
            "paths": {"type": "array", "items": {"type": "string"}},
            "line_range": {"type": "string"},
            "action": {"type": "string", "enum": ["add", "list"]},
            "create": {"type": "boolean"},
            "timeout": {"type": "number"},
        },
        "required": ["paths"],
    }

    def problems(args: object) -> list[str]:
        return check(parse("t", json.dumps(args)), schema)

    assert problems({"paths": 42}) == ["paths must be a list, got a number"]
    assert problems({"paths": ["a", 1]}) == ["paths[1] must be a string, got a number"]
    assert problems({"paths": "a.py"}) == []  # a lone string for a list of strings is read as one
    assert problems({"path": "a.py"}) == []  # file_read_tool's old spelling
    assert problems({}) == ["paths is required"]
    assert problems({"paths": [], "create": "yes", "timeout": True, "action": "drop"}) == [
        "create must be a boolean, got a string",
        "timeout must be a number, got a boolean",
        'action must be one of "add", "list", got "drop"',
    ]
    assert problems([1]) == ["not a JSON object (got a list)"]
