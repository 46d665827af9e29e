"""The agent's ``history_search`` tool, through the real loop, litellm and the provider emulator: a fact a
compaction took out of the view is found again, with a pointer that ``file_read_tool`` reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from myrm_tui.agent.events import ToolFinished, TurnDone
from myrm_tui.agent.fingerprint import builtin_tool_schemas
from myrm_tui.agent.prompts import MODES, PromptLibrary
from myrm_tui.agent.tools.history import MAX_CHARS
from myrm_tui.paths import prompts_dir
from myrm_tui.store import history
from myrm_tui.store.db import Store
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.helpers import collect, make_agent, openai_settings

FACT = "QZ93X-decision-kept"


def _tool_text(events: list, name: str) -> str:
    return next(e.message.text for e in events if isinstance(e, ToolFinished) and e.call.name == name)


async def test_a_compacted_fact_is_found_and_its_pointer_reads_back(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    agent = await make_agent(store, workspace, openai_settings(emulator))
    emulator.enqueue(
        Reply(tool_calls=[("bash", {"command": f"echo 'the cache key is {FACT}'"})]),
        Reply(text=f"Decision: we keep {FACT} as the cache key."),
    )
    await collect(agent, "find the cache key")
    for i in range(3):
        emulator.enqueue(Reply(text=f"step {i} done"))
        await collect(agent, f"next step {i}")
    await agent.compact_now()
    emulator.enqueue(
        Reply(tool_calls=[("history_search", {"query": FACT})]),
        Reply(text="found it"),
    )
    events = await collect(agent, "what was the cache key?")
    assert isinstance(events[-1], TurnDone)
    found = _tool_text(events, "history_search")
    # What the model got back: pointers with line ranges, the fact among the shown lines.
    pointer = found.splitlines()[0].split()[0]
    assert pointer.startswith(f"vault://{agent.session_id}/") and FACT in found
    line_range = found.splitlines()[0].split()[2]
    emulator.enqueue(
        Reply(tool_calls=[("file_read_tool", {"paths": [pointer], "line_range": line_range})]),
        Reply(text="read it"),
    )
    events = await collect(agent, "open it")
    assert FACT in _tool_text(events, "file_read_tool")


async def test_answers_stay_bounded_and_say_when_nothing_matches(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    agent = await make_agent(store, workspace, openai_settings(emulator))
    long_lines = "\n".join(f"common word line {i} " + "x" * 400 for i in range(50))
    emulator.enqueue(
        Reply(tool_calls=[("bash", {"command": f"printf '{long_lines}'"})]),
        Reply(text="ok"),
    )
    for n in range(9):
        emulator.enqueue(Reply(text=f"common word reply {n} " + "y" * 300))
    await collect(agent, "print it")
    for n in range(9):
        await collect(agent, f"common word question {n}")
    emulator.enqueue(
        Reply(tool_calls=[("history_search", {"query": "common word", "limit": 8})]),
        Reply(tool_calls=[("history_search", {"query": "absent-term-77"})]),
        Reply(tool_calls=[("history_search", {"query": "common word", "limit": 8})]),
        Reply(text="done"),
    )
    events = await collect(agent, "search")
    found = [e.message.text for e in events if isinstance(e, ToolFinished)]
    assert len(found[0]) <= MAX_CHARS + 200 and found[0].count("vault://") >= 3
    # A search never finds its own query, nor the hits an earlier search returned.
    assert found[1] == "no match for 'absent-term-77' in this session's history"
    assert found[2] == found[0]


async def test_without_fts5_the_tool_says_so_in_one_line(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(history, "fts5_available", lambda: False)
    store = await Store.open(tmp_path / "nofts.db")
    try:
        agent = await make_agent(store, workspace, openai_settings(emulator))
        emulator.enqueue(Reply(tool_calls=[("history_search", {"query": "x"})]), Reply(text="ok"))
        events = await collect(agent, "search")
        text = _tool_text(events, "history_search")
        assert history.UNAVAILABLE in text and "\n" not in text.strip()
    finally:
        await store.close()


def test_bound_in_every_session_and_the_prompts_that_name_tools_mention_it() -> None:
    assert "history_search" in [s["function"]["name"] for s in builtin_tool_schemas()]
    lib = PromptLibrary(prompts_dir())
    for mode in MODES:
        prompt = lib.system_prompt(mode, "openai/gpt-4o")
        if "file_read_tool" in prompt:  # a mode whose prompt names the tools names this one too
            assert "history_search" in prompt, mode
