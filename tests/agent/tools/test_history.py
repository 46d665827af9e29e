"""The agent's ``history_search`` tool, through the real loop, litellm and the provider emulator: a fact a
compaction took out of the view is found again, with a pointer that ``file_read_tool`` reads."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from myrm_tui.agent.events import ToolFinished, TurnDone
from myrm_tui.agent.factory import build_agent
from myrm_tui.agent.fingerprint import builtin_tool_schemas
from myrm_tui.agent.prompts import MODES, PromptLibrary
from myrm_tui.agent.tools.history import MAX_CHARS
from myrm_tui.context.types import Message, ToolCall
from myrm_tui.context.vault import VaultEntry
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


# -- the property: any session and its fork, every hit a pointer to text that is there ----------------------

_WORDS = ["the", "test", "fails", "config", "value", "error", "line", "résumé", "日本語", "設定ファイルの値"]
_FACT = st.text("bcdfghjkmnpqrstvwxz0123456789", min_size=6, max_size=10).filter(
    lambda s: any(c.isdigit() for c in s) and any(c.isalpha() for c in s)
)
# A row: its role, filler words, a planted fact, whether it is a vaulted output, a long line's length.
_ROW = st.tuples(
    st.sampled_from(["user", "assistant", "tool"]),
    st.lists(st.sampled_from(_WORDS), max_size=12).map(" ".join),
    _FACT,
    st.booleans(),
    st.integers(0, 900),
)
_ROWS = st.lists(_ROW, max_size=6)


async def _store_row(store: Store, sid: str, i: int, row: tuple[str, str, str, bool, int]) -> str | None:
    """Store ``row`` in session ``sid``; the vault:// pointer of its output when it is vaulted."""
    role, text, fact, vaulted, width = row
    long = " ".join([text or "word"] * (width // max(len(text), 4)))[:width]
    body = f"{long}\n{long} {fact} {text}\n{long}"
    if vaulted:  # a turn whose output was spilled: the message holds only the pointer, the vault the text
        await store.append_message(sid, Message(role="user", content="run it"))
        uri = f"vault://{sid}/out{i}"
        entry = VaultEntry(uri, body, "tool_output", "bash", created_at=time.time())
        await store.append_message(sid, Message(role="user", content=f"see {uri}"), vault=[entry])
        return uri
    if role == "assistant":
        call = ToolCall(f"c{i}", "bash", json.dumps({"command": f"echo {fact}"}))
        await store.append_message(sid, Message(role="assistant", content=text, tool_calls=(call,)))
        await store.append_message(sid, Message(role="tool", content="ok", tool_call_id=f"c{i}"))
    else:
        await store.append_message(sid, Message(role="tool" if role == "tool" else "user", content=body))
    return None


def _hits(answer: str) -> list[tuple[str, str, list[str]]]:
    """history_search's answer read as the model reads it: each hit's pointer, line range and lines."""
    hits: list[tuple[str, str, list[str]]] = []
    if answer.startswith("no match for "):
        return hits
    for line in answer.splitlines():
        if line.startswith("vault://"):
            uri, word, lines, _ = line.split(" ", 3)
            assert word == "lines", line
            hits.append((uri, lines, []))
        elif line.startswith("  "):
            hits[-1][2].append(line[2:])
        else:
            assert line.startswith("[") and line.endswith("more hits left out: narrow the query]"), line
    return hits


async def _search_fork(
    emu: ProviderEmulator, tmp: Path, before: list[Any], cut: int, fork_rows: list[Any], later: list[Any]
) -> None:
    store = await Store.open(tmp / "p.db")
    try:
        parent = (await store.create_session(workspace=str(tmp))).id
        seqs, outputs = [], []
        for i, row in enumerate(before):
            outputs.append(await _store_row(store, parent, i, row))
            seqs.append(await store._max_seq(parent))
        # the fork holds the parent's rows up to ``cut`` (``/fork N``; all of an empty session)
        fork = (await store.fork_session(parent, upto_seq=seqs[cut - 1] if cut else None)).id
        for i, row in enumerate(later):  # the parent goes on after the fork, and so does the fork
            outputs.append(await _store_row(store, parent, 100 + i, row))
        own = [await _store_row(store, fork, 200 + i, row) for i, row in enumerate(fork_rows)]
        other = (await store.create_session()).id
        await _store_row(
            store, other, 0, ("user", "the test", before[0][2] if before else "q1w2e3", False, 0)
        )
        # what the fork's history holds: its own messages and outputs, its parent's outputs up to the fork
        ours = [r[2] for r in before[:cut] + fork_rows]
        theirs = [r[2] for r in before[cut:] + later]
        mine = {u for u in outputs[:cut] + own if u is not None}
        agent = await build_agent(store, fork, openai_settings(emu), tmp)
        try:
            for query in [*ours, *theirs, "the test", "résumé 日本語 line", "設定ファイルの値"]:
                args = {"query": query, "limit": 8}
                res = await agent.tool_runner.execute(ToolCall("s", "history_search", json.dumps(args)))
                assert not res.is_error, res.content
                # the bound: hits are added while they fit, the first one always (a few cut lines)
                assert len(res.content.encode()) <= MAX_CHARS + 60 or len(_hits(res.content)) == 1
                shown = "\n".join(ln for _, _, lines in _hits(res.content) for ln in lines)
                if query in ours:
                    assert query in shown, (query, res.content)
                elif query in theirs and query not in ours:
                    assert query not in shown, (query, res.content)
                for uri, lines, cut_lines in _hits(res.content):
                    # the fork's own message or output, or one of its parent's outputs from before the fork
                    assert uri.startswith(f"vault://{fork}/m") or uri in mine, (uri, query)
                    read = await agent.tool_runner.execute(
                        ToolCall("r", "file_read_tool", json.dumps({"paths": [uri], "line_range": lines}))
                    )
                    assert not read.is_error, read.content
                    there = [ln.split("\t", 1)[1] for ln in read.content.splitlines()[1:]]
                    assert len(there) == len(cut_lines), (read.content, cut_lines)
                    for have, hit in zip(there, cut_lines, strict=True):
                        assert hit.strip("…") in have, (hit, have)
            # a pointer followed by hand (they are guessable): the parent's outputs and messages from
            # before the fork point open, those stored after it (before the fork was made, or since) do not
            upto = seqs[cut - 1] if cut else -1
            pointers = [(u, i >= cut) for i, u in enumerate(outputs) if u is not None]
            pointers += [
                (f"vault://{parent}/m{n}", n > upto) for n in range(await store._max_seq(parent) + 1)
            ]
            for uri, later_work in pointers:
                read = await agent.tool_runner.execute(
                    ToolCall("r", "file_read_tool", json.dumps({"paths": [uri]}))
                )
                assert read.is_error == later_work, (uri, upto, read.content)
        finally:
            await agent.close()
    finally:
        await store.close()


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@example(  # /fork 1 of three turns: the second turn's output and messages are the parent's alone
    rows=[
        ("user", "the test", "b1c2d3f4", False, 0),
        ("tool", "config value", "g5h6j7k8", True, 300),
        ("assistant", "日本語 line", "m9n8p7q6", False, 0),
    ],
    split=(1, 3, 3),
)
@given(
    rows=st.lists(_ROW, min_size=1, max_size=16, unique_by=lambda r: r[2]),
    split=st.tuples(st.integers(0, 16), st.integers(0, 16), st.integers(0, 16)),
)
def test_every_hit_of_a_fork_points_at_its_own_history_and_reads_back(
    emulator_server: ProviderEmulator, rows: list[Any], split: tuple[int, int, int], tmp_path_factory: Any
) -> None:
    """For any session forked at any point, the parent and the fork both going on after it: every hit of
    the fork's history_search is a pointer and line range that file_read_tool reads back holding the hit's
    lines, the answer stays within its bound, each fact of the fork's history is found, and nothing the
    parent stored after the fork point is (neither its later messages nor their vaulted outputs): not
    found, and not read when the model follows a pointer to it."""
    a, b, c = sorted(split)
    before, fork_rows, later = rows[:b], rows[b:c], rows[c:]
    cut = min(max(a, 1), len(before))  # the product forks after a user message, never before the first
    asyncio.run(_search_fork(emulator_server, tmp_path_factory.mktemp("hs"), before, cut, fork_rows, later))


@pytest.mark.long
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    rows=st.lists(_ROW, min_size=1, max_size=24, unique_by=lambda r: r[2]),
    split=st.tuples(st.integers(0, 24), st.integers(0, 24), st.integers(0, 24)),
)
def test_long_every_hit_of_a_fork_points_at_its_own_history_and_reads_back(
    emulator_server: ProviderEmulator, rows: list[Any], split: tuple[int, int, int], tmp_path_factory: Any
) -> None:
    a, b, c = sorted(split)
    before, fork_rows, later = rows[:b], rows[b:c], rows[c:]
    cut = min(max(a, 1), len(before))
    asyncio.run(_search_fork(emulator_server, tmp_path_factory.mktemp("hs"), before, cut, fork_rows, later))
