"""Bounds on one reply (issue 44, item 5): at most ``MAX_PARALLEL`` of a reply's tool calls run at once and
at most ``MAX_CALLS`` run at all; every other call gets an error result the model can read, so each
tool call keeps its result and the next request is valid (the emulator accepts it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from myrm_tui.agent.events import Notice
from myrm_tui.agent.tool_runner import MAX_CALLS, MAX_PARALLEL, ToolRunner
from myrm_tui.store.db import Store
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.helpers import collect, make_agent, openai_settings

ASKED = 300


async def test_a_reply_of_many_calls_runs_a_bounded_number_at_a_bounded_pace(
    emulator: ProviderEmulator, store: Store, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    running = [0, 0]  # now, most at once
    execute = ToolRunner.execute

    async def counted(self: ToolRunner, *args: Any, **kwargs: Any) -> Any:
        running[0] += 1
        running[1] = max(running)
        try:
            return await execute(self, *args, **kwargs)
        finally:
            running[0] -= 1

    monkeypatch.setattr(ToolRunner, "execute", counted)
    agent = await make_agent(store, workspace, openai_settings(emulator))
    calls = [("bash", {"command": f"echo call-{k}"}) for k in range(ASKED)]
    emulator.enqueue(Reply(tool_calls=calls, calls_per_chunk=100), Reply(text="Done."))
    events = await collect(agent, "run them all")
    assert running[1] == MAX_PARALLEL
    notices = [e.text for e in events if isinstance(e, Notice)]
    assert any(f"{ASKED:,} tool calls" in n for n in notices)
    stored = await store.load_messages(agent.session_id)
    asked = next(m for m in stored if m.tool_calls)
    results = {m.tool_call_id: m.text for m in stored if m.role == "tool"}
    assert len(asked.tool_calls) == ASKED and set(results) == {c.id for c in asked.tool_calls}
    ran = [c for c in asked.tool_calls if "call-" in results[c.id]]
    refused = [c for c in asked.tool_calls if results[c.id].startswith("Error: not run.")]
    assert len(ran) == MAX_CALLS and ran == list(asked.tool_calls[:MAX_CALLS])
    assert len(refused) == ASKED - MAX_CALLS
    assert f"at most {MAX_CALLS} run per reply" in results[refused[0].id]
    sent = emulator.accepted[-1].body["messages"]  # the next request carries every call and its result
    assert emulator.rejected == [] and sum(m["role"] == "tool" for m in sent) == ASKED
