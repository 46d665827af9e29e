"""The LLM summary path: prepared in the background (a turn never waits on it), reusing the cached prefix
when the summarizer is the main model, adopted by the compaction, and audited against the ledger."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

from myrm_tui.agent.events import SummaryProgress, TurnDone
from myrm_tui.context.steps.summarize import SummaryAuditor
from myrm_tui.context.summary import fields as summary_model
from myrm_tui.context.summary import prepared
from myrm_tui.context.summary.prepared import PreparedSummary
from myrm_tui.context.types import Message
from myrm_tui.store.db import Store
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.helpers import (
    call,
    collect,
    conversation,
    crowded_state,
    make_agent,
    openai_settings,
    run_pipeline,
)

MARK = "LLM_SUMMARY_MARKER_7f3"


def llm_summary(**over: Any) -> summary_model.Summary:
    s: dict[str, Any] = dict(
        user_goal="Fix the bug.",
        current_state=f"{MARK}: reading files",
        key_facts=[MARK],
        decisions=[f"{MARK}: read every module first"],
    )
    return summary_model.Summary.from_json({**s, **over})


def is_summary_request(body: dict[str, Any]) -> bool:
    return any("You compact an agent session" in str(m.get("content")) for m in body.get("messages", []))


def scripted(steps: int, summary: Reply, log: list[str]) -> Any:
    """Main requests: ``steps`` tool calls then a final answer; summarize requests: ``summary``."""
    count = {"main": 0}

    def reply(body: dict[str, Any]) -> Reply:
        if is_summary_request(body):
            log.append("summary asked")
            return summary
        count["main"] += 1
        log.append(f"main {count['main']}")
        if count["main"] <= steps:
            return Reply(tool_calls=[("bash", {"command": f"cat mod{count['main'] % 12}.py"})])
        return Reply(text="All files read.")

    return reply


def write_files(workspace: Path) -> None:
    for i in range(12):
        (workspace / f"mod{i}.py").write_text(
            "\n".join(
                f"def handler_{i}_{k}(x):  # route /api/v{i}/{k} returns {k * 17 + i}" for k in range(60)
            )
        )


async def test_a_turn_never_waits_on_the_summarizer_and_no_request_is_over_budget(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    """The summary is held back (gate) for the whole turn: the turn still runs its 16 steps, compacts with
    the extractive summary when the budget requires it (twice by the 14th step; 30 steps compacted six
    times, at twice the CPU), and ends before the summarizer answers; the late answer then upgrades the
    kept summary record. Esc is not involved: nothing cancels it."""
    write_files(workspace)
    gate = threading.Event()
    log: list[str] = []
    emulator.default = scripted(16, Reply(text=json.dumps(llm_summary().to_json()), gate=gate), log)  # type: ignore[assignment]
    settings = openai_settings(emulator, summarizer_model="openai/gpt-4o-mini", max_steps=40)
    agent = await make_agent(store, workspace, settings, window=16_000)
    events = await collect(agent, "read the files")
    assert isinstance(events[-1], TurnDone) and events[-1].steps == 17
    assert any(isinstance(e, SummaryProgress) and e.state == "preparing" for e in events)
    first = log.index("summary asked")
    assert any(x.startswith("main") for x in log[first + 1 :]), "the turn went on while the summary was asked"
    prep = agent.session.preparer
    assert prep.busy, "the summarizer had not answered when the turn ended"
    assert agent.session.state.compactions >= 1  # compacted meanwhile, with the extractive summary
    rows = [r for r in await store.metrics(agent.session_id) if r.get("compacted")]
    assert rows and {r["summary_source"] for r in rows} == {"extractive"}
    budget = agent.session.config.input_budget
    assert all(r["tokens_out"] <= budget for r in await store.metrics(agent.session_id) if "tokens_out" in r)
    assert emulator.rejected == []
    gate.set()
    await prep.wait()
    assert prep.last_event == "upgraded"  # its compaction came first: the kept record carries it
    assert agent.session.state.summary is not None and MARK in json.dumps(
        agent.session.state.summary.to_json()
    )
    saved = await store.load_state(agent.session_id)
    assert saved is not None and MARK in saved


async def test_the_summarize_request_is_the_sent_request_plus_an_instruction_and_reads_the_cache(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    write_files(workspace)
    log: list[str] = []
    emulator.default = scripted(12, Reply(text=json.dumps(llm_summary().to_json())), log)  # type: ignore[assignment]
    settings = openai_settings(emulator, summarizer_model="openai/gpt-4o-mini", max_steps=40)
    agent = await make_agent(store, workspace, settings, window=16_000)
    await collect(agent, "read the files")
    await agent.session.preparer.wait()
    reqs = emulator.accepted
    k = next(i for i, r in enumerate(reqs) if is_summary_request(r.body))
    summ, before = reqs[k].body, reqs[k - 1].body
    assert not is_summary_request(before)
    assert summ["messages"][:-1] == before["messages"]  # same system prompt, messages, order
    assert summ["tools"] == before["tools"]
    assert summ.get("prompt_cache_key") == before.get("prompt_cache_key")
    last = summ["messages"][-1]
    assert last["role"] == "user" and "do not call tools" in last["content"]
    cache = reqs[k].cache
    assert cache is not None and cache.cached_tokens / cache.input_tokens >= 0.8
    bill = agent.session.preparer.status()
    assert bill["summarizer_calls"] >= 1 and bill["summarizer_reuses_cache"] is True
    assert bill["summarizer_cached_input_tokens"] >= 0.8 * bill["summarizer_input_tokens"] > 0
    assert bill["summarizer_cost_usd"] > 0
    rows = [r for r in await store.metrics(agent.session_id) if r.get("kind") == "summarizer"]
    assert len(rows) == bill["summarizer_calls"]  # stored: the panel's totals survive a restart
    from myrm_tui.app.widgets.health_panel import _summarizer_lines

    lines = _summarizer_lines(bill, rows)
    assert (
        lines[0].startswith(f"summarizer calls   {len(rows)} ") and "reads the main model's cache" in lines[1]
    )


async def test_a_lite_summarizer_is_sent_the_span_once_and_says_it_cannot_reuse_the_cache(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    write_files(workspace)
    log: list[str] = []
    emulator.default = scripted(12, Reply(text=json.dumps(llm_summary().to_json())), log)  # type: ignore[assignment]
    settings = openai_settings(emulator, summarizer_model="openai/gpt-4.1-nano", max_steps=40)
    agent = await make_agent(store, workspace, settings, window=16_000)
    await collect(agent, "read the files")
    await agent.session.preparer.wait()
    summ = next(r.body for r in emulator.accepted if is_summary_request(r.body))
    assert summ["model"] == "gpt-4.1-nano" and not summ.get("tools")
    assert [m["role"] for m in summ["messages"]] == ["system", "user"]
    assert "Messages to summarize" in summ["messages"][1]["content"]
    status = agent.session.preparer.status()
    assert status["summarizer_reuses_cache"] is False
    from myrm_tui.app.widgets.health_panel import _summarizer_lines

    assert any("cannot reuse the main model's cache" in ln for ln in _summarizer_lines(status))


async def test_a_ready_prepared_summary_is_used_by_the_next_compaction_without_a_call(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    write_files(workspace)
    log: list[str] = []
    emulator.default = scripted(40, Reply(text=json.dumps(llm_summary().to_json())), log)  # type: ignore[assignment]
    settings = openai_settings(emulator, summarizer_model="openai/gpt-4o-mini", max_steps=60)
    agent = await make_agent(store, workspace, settings, window=16_000)
    prep = agent.session.preparer
    ready = asyncio.Event()
    prep.listeners.append(lambda e: ready.set() if e == "ready" else None)
    turn = asyncio.ensure_future(collect(agent, "read the files"))
    await asyncio.wait([turn, asyncio.ensure_future(ready.wait())], return_when=asyncio.FIRST_COMPLETED)
    await turn
    await prep.wait()
    rows = [r for r in await store.metrics(agent.session_id) if r.get("compacted")]
    assert any(r["summary_source"].startswith("llm") for r in rows), [r["summary_source"] for r in rows]
    assert agent.session.state.summary is not None and MARK in json.dumps(
        agent.session.state.summary.to_json()
    )
    asked = log.count("summary asked")
    assert 1 <= asked <= len([x for x in log if x.startswith("main")]) // 4


async def test_esc_never_cancels_a_background_summary(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    write_files(workspace)
    gate = threading.Event()
    log: list[str] = []
    emulator.default = scripted(40, Reply(text=json.dumps(llm_summary().to_json()), gate=gate), log)  # type: ignore[assignment]
    settings = openai_settings(emulator, summarizer_model="openai/gpt-4o-mini", max_steps=60)
    agent = await make_agent(store, workspace, settings, window=16_000)
    prep = agent.session.preparer
    started = asyncio.Event()
    prep.listeners.append(lambda e: started.set() if e == "preparing" else None)
    turn = asyncio.ensure_future(collect(agent, "read the files"))
    await started.wait()
    turn.cancel()  # what Esc does to the turn's worker
    await asyncio.gather(turn, return_exceptions=True)
    assert prep.busy
    gate.set()
    await prep.wait()
    assert prep.last_event in ("ready", "upgraded")
    kept = (
        prep.ready.summary
        if prep.ready is not None and prep.last_event == "ready"
        else agent.session.state.summary
    )
    assert kept is not None and MARK in json.dumps(kept.to_json())


def test_the_auditor_merges_back_ledger_facts_a_summary_dropped() -> None:
    msgs = conversation(0)
    msgs.append(
        Message(
            role="assistant",
            content="Running the tests.",
            id="ra",
            tool_calls=(call("call_t", "pytest tests/test_io.py"),),
        )
    )
    msgs.append(
        Message(
            role="tool",
            content="<returncode>1</returncode>\n<output>\n"
            "FAILED tests/test_io.py::test_read_4421 - KeyError: 'amount_55'\n"
            "3 failed, 12 passed in 0.41s\n</output>",
            id="rt",
            tool_call_id="call_t",
            name="bash",
        )
    )
    from myrm_tui.context.summary import ledger

    lines = ledger.record(msgs)
    dropped = llm_summary(completed_actions=["ran the tests, some failed"])
    kept = SummaryAuditor().keep_ledger(dropped, lines)
    text = json.dumps(kept.to_json())
    for fact in (
        "tests/test_io.py::test_read_4421",
        "3 failed, 12 passed in 0.41s",
        "pytest tests/test_io.py",
    ):
        assert fact in text, fact
    assert MARK in text  # the model's own facts stay
    # A summary that keeps every fact gets nothing added.
    assert SummaryAuditor().keep_ledger(kept, lines) == kept
    # The model keeps at least half of the field's room for its own facts.
    own = [f"fact {i}" for i in range(15)]
    crowded = SummaryAuditor().keep_ledger(llm_summary(key_facts=own), lines).key_facts
    assert len(crowded) == 15 and set(own[-7:]) <= set(crowded)
    assert any("3 failed, 12 passed in 0.41s" in f for f in crowded)


async def test_a_compaction_adopts_a_prepared_summary_and_summarizes_the_rest_extractively() -> None:
    raw = conversation(30)
    covered = frozenset(m.id for m in raw[2:20])
    prep = PreparedSummary(llm_summary(), covered, "llm", 0)
    _, run = await run_pipeline(
        raw, window=16_000, force_compaction=True, prepared_summary=prep, summary_in_background=True
    )
    assert run.metrics.summary_source == "llm+extractive"
    block = next(m for m in run.messages if m.meta.get("kind") == "summary")
    assert MARK in block.text
    assert any("prepared summary: covers" in e for e in run.metrics.events)


async def test_in_the_background_a_compaction_without_a_prepared_summary_never_calls_the_summarizer() -> None:
    calls: list[str] = []

    async def summarizer(system: str, user: str) -> str:
        calls.append(user)
        return json.dumps(llm_summary().to_json())

    _, run = await run_pipeline(
        conversation(30),
        window=16_000,
        force_compaction=True,
        summarizer=summarizer,
        summary_in_background=True,
    )
    assert run.metrics.summary_source == "extractive" and calls == []


def test_foldable_spans_after_the_head_and_before_the_tail() -> None:
    from tests.helpers import COUNTER

    raw = conversation(20)
    span = prepared.foldable(raw, COUNTER, 2_000)
    assert span[0].id == raw[2].id  # after the system prompt and the task
    assert raw[-1] not in span and span[-1].role == "tool"


async def test_the_tui_shows_the_summary_being_written_and_esc_leaves_it_running(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    from myrm_tui.app.widgets.status_line import StatusLine
    from tests.helpers import make_app, type_and_send, wait_until

    write_files(workspace)
    gate = threading.Event()
    log: list[str] = []
    emulator.default = scripted(40, Reply(text=json.dumps(llm_summary().to_json()), gate=gate), log)  # type: ignore[assignment]
    app = make_app(
        emulator,
        tmp_path,
        workspace,
        preheat=False,
        summarizer_model="openai/gpt-4o-mini",
        context_window=16_000,
        max_steps=60,
    )
    async with app.run_test(size=(140, 42)) as pilot:
        status = app.query_one(StatusLine)
        await wait_until(pilot, lambda: app.ready.is_set())
        await type_and_send(pilot, "read the files")
        await wait_until(pilot, lambda: "writing the summary of older messages" in str(status.render()), 60)
        await pilot.press("escape")
        await wait_until(pilot, lambda: not app.busy)
        prep = app.controller.agent.session.preparer  # type: ignore[union-attr]
        assert prep.busy and "writing the summary" in str(status.render())
        gate.set()
        await wait_until(pilot, lambda: not prep.busy, 30)
        assert prep.last_event in ("ready", "upgraded"), (prep.last_event, str(status.render()))
        await wait_until(
            pilot,
            lambda: (
                "summary of older messages ready" in str(status.render())
                or "upgraded" in str(status.render())
            ),
        )


async def test_in_the_background_the_semantic_filter_does_not_call_the_summarizer_either() -> None:
    calls: list[str] = []

    async def summarizer(system: str, user: str) -> str:
        calls.append(user)
        return "a short summary of the output"

    prose = " ".join(f"word{i} of a long unstructured log line number {i}." for i in range(1_500))
    raw = [
        *conversation(0),
        Message(role="assistant", content="", id="a1", tool_calls=(call("c1", "cat build.log"),)),
        Message(
            role="tool",
            content=f"<returncode>0</returncode>\n<output>\n{prose}\n</output>",
            id="t1",
            tool_call_id="c1",
            name="bash",
        ),
    ]
    # A session whose view the output crowds: the filter cuts it on arrival (``context/filters/room.py``).
    _, run = await run_pipeline(
        raw, 128_000, crowded_state(), summarizer=summarizer, summary_in_background=True
    )
    assert calls == [] and any("head+tail" in str(m.meta.get("filter")) for m in run.messages)
    _, run = await run_pipeline(raw, 128_000, crowded_state(), summarizer=summarizer)
    assert len(calls) == 1  # inline (``/compact``, the bench's plain completer): the semantic filter runs


async def test_a_write_cancelled_while_it_begins_leaves_no_transaction_open(store: Store) -> None:
    """Esc can cancel the turn during a store write; the background summary's write that follows must
    not find the connection inside a transaction nobody will end."""
    row = await store.create_session(model="m", workspace="/tmp")
    for _ in range(5):
        task = asyncio.ensure_future(store.add_metrics(row.id, 1, {"kind": "x"}))
        await asyncio.sleep(0)  # inside Store.transaction: BEGIN sent to the connection's thread
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await store.add_metrics(row.id, 1, {"kind": "summarizer"})  # raised TransactionError before
    assert not store.conn.in_transaction


def test_a_route_is_priced_from_litellm_and_the_cheaper_one_wins() -> None:
    from myrm_tui.llm.pricing import summary_routes

    # gpt-4o reading 12K cached tokens costs more than gpt-4o-mini sent a 6K span once...
    quotes = summary_routes("gpt-4o", "gpt-4o-mini", 12_000, 12_000, 6_000, 800)
    assert {q.route for q in quotes} == {"prefix", "span"}
    assert min(quotes, key=lambda q: q.usd).model == "gpt-4o-mini"
    # ...while a main model cheaper than the lite one wins on its own cache.
    quotes = summary_routes("gpt-4.1-nano", "gpt-4o-mini", 12_000, 12_000, 6_000, 800)
    assert min(quotes, key=lambda q: q.usd).route == "prefix"
    # A cold cache makes the prefix dearer than a warm one: the cache state counts.
    warm, cold = (summary_routes("gpt-4o", "x", 12_000, c, 0, 800)[0].usd for c in (12_000, 0))
    assert cold > warm
    # A model litellm has no price for (a local endpoint) is not quoted.
    assert [q.route for q in summary_routes("openai/my-local-llama", "gpt-4o-mini", 1, 1, 1, 1)] == ["span"]


async def routed_summary(
    emulator: ProviderEmulator, store: Store, workspace: Path, monkeypatch: Any, main: str
) -> tuple[dict[str, Any], Any]:
    """A turn long enough to prepare a summary, with myrm left to choose the summarizer (the lite model
    the provider has is gpt-4o-mini; the emulator serves both). The summary is first asked after the
    fifth or sixth step: 12 steps leave it twice that (40 took three times the CPU for the same request)."""
    from myrm_tui.agent import session as session_mod
    from myrm_tui.agent import summary_prep

    lite = "openai/gpt-4o-mini"
    monkeypatch.setattr(summary_prep, "summarizer_model", lambda s: lite)
    monkeypatch.setattr(session_mod, "summarizer_model", lambda s: lite)
    write_files(workspace)
    log: list[str] = []
    emulator.default = scripted(12, Reply(text=json.dumps(llm_summary().to_json())), log)  # type: ignore[assignment]
    settings = openai_settings(emulator, model=main, summarizer_model="", max_steps=60, context_window=16_000)
    agent = await make_agent(store, workspace, settings, window=16_000)
    await collect(agent, "read the files")
    await agent.session.preparer.wait()
    body = next(r.body for r in emulator.accepted if is_summary_request(r.body))
    return body, agent.session.preparer


async def test_left_to_myrm_a_dear_main_model_hands_the_summary_to_the_lite_model(
    emulator: ProviderEmulator, store: Store, workspace: Path, monkeypatch: Any
) -> None:
    body, prep = await routed_summary(emulator, store, workspace, monkeypatch, "openai/gpt-4o")
    assert body["model"] == "gpt-4o-mini" and not body.get("tools")  # the span, sent once
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert prep.route.route == "span" and set(prep.status()["summary_route_quotes"]) == {
        "openai/gpt-4o",
        "openai/gpt-4o-mini",
    }
    from myrm_tui.app.widgets.health_panel import _summarizer_lines

    route = [ln for ln in _summarizer_lines(prep.status()) if ln.startswith("summary route")]
    assert route and "openai/gpt-4o-mini $" in route[0] and "openai/gpt-4o $" in route[0]


async def test_left_to_myrm_a_cheap_main_model_summarizes_from_its_own_cache(
    emulator: ProviderEmulator, store: Store, workspace: Path, monkeypatch: Any
) -> None:
    body, prep = await routed_summary(emulator, store, workspace, monkeypatch, "openai/gpt-4.1-nano")
    assert body["model"] == "gpt-4.1-nano" and body.get("tools")  # the last request as sent, plus one
    assert prep.route.route == "prefix" and prep.reuses_prefix


def test_a_summary_is_prepared_one_predicted_round_before_the_compaction_point() -> None:
    from myrm_tui.context.config import ContextConfig
    from myrm_tui.context.step import settings_for
    from myrm_tui.context.steps.precompact import PreCompactSettings, band_for, prepare_from

    config = ContextConfig(max_context_tokens=16_000)
    # No history yet: nothing predicted, the compaction point is the full level itself.
    assert prepare_from(config, []) == config.compress_force_threshold > config.monitor_threshold
    growth = [300, 2_500, 400]
    band = band_for(settings_for(PreCompactSettings, config), growth)
    start = prepare_from(config, growth)
    assert start == band.full - band.predicted and config.monitor_threshold <= start < band.full
    # Rounds as large as the band: it never starts before the monitor level.
    assert prepare_from(config, [20_000]) == config.monitor_threshold
