"""Prompt-cache behaviour against the emulator's prefix-cache simulation."""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path

import pytest

from myrm_tui.agent.keepalive import CacheKeepAliveManager, provider_caches
from myrm_tui.context.report.cache_break import detect, fingerprints
from myrm_tui.context.state import ContextState
from myrm_tui.context.types import Message
from myrm_tui.store.db import Store
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.helpers import (
    FakeTime,
    anthropic_settings,
    collect,
    conversation,
    make_agent,
    openai_settings,
    run_pipeline,
)


async def test_sixty_turns_stay_cached_between_compactions(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    """Answered outputs are trimmed to a few lines, so it takes 55 turns to compact twice; 60 compact three
    times (two thirds of the ninety-turn twin's requests, the same checks)."""
    await stay_cached_between_compactions(emulator, store, workspace, turns=60)


@pytest.mark.long
async def test_long_ninety_turns_stay_cached_between_compactions(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    """The same flow over 90 turns: eight compactions (``make test-long``)."""
    await stay_cached_between_compactions(emulator, store, workspace, turns=90)


async def stay_cached_between_compactions(
    emulator: ProviderEmulator, store: Store, workspace: Path, turns: int
) -> None:
    for i in range(turns):
        (workspace / f"f{i}.txt").write_text("\n".join(f"row {i}.{k} = {k * k}" for k in range(200)))
    agent = await make_agent(
        store, workspace, openai_settings(emulator, summarizer_model="extractive"), window=16_000
    )
    emulator.window = 16_000
    for i in range(turns):
        emulator.enqueue(
            Reply(tool_calls=[("bash", {"command": f"cat f{i}.txt"})]), Reply(text=f"f{i}.txt has 200 rows.")
        )
        await collect(agent, f"how many rows in f{i}.txt?")
    assert emulator.rejected == []
    metrics = [m for m in await store.metrics(agent.session_id) if "prompt_tokens" in m]
    assert len(metrics) == len(emulator.accepted) == 2 * turns
    # Between compactions every request reads from the cache all that the request before it sent, less only
    # what a trim at the tail cut: its uncached tokens are what it adds. (A share of cached tokens would
    # say less: it falls with the size the views run at, however well they are cached.)
    sent = [(r, m) for r, m in zip(emulator.accepted, metrics, strict=True) if r.cache]
    checked = 0
    for (prev, _), (r, m) in itertools.pairwise(sent):
        brk = m.get("cache_break") or {}
        if m.get("compacted") or brk.get("cause") == "compaction":
            continue
        lost = int(brk.get("lost_tokens") or 0) if brk.get("cause") == "trimmed" else 0
        assert r.cache.cached_tokens >= prev.cache.input_tokens - lost, (  # type: ignore[union-attr]
            r.cache,
            prev.cache,
            brk,
        )
        checked += 1
    assert agent.session.state.compactions >= 2
    assert checked >= len(sent) - 2 * agent.session.state.compactions - 1
    breaks = agent.session.state.cache_breaks
    # Only compactions broke the prefix, and trims of an answered output at the tail, which lose only what
    # follows it: the output itself, one reply, and the turn's new messages.
    assert set(breaks) <= {"compaction", "trimmed"}, breaks
    trims = [m["cache_break"] for m in metrics if (m.get("cache_break") or {}).get("cause") == "trimmed"]
    assert len(trims) == breaks.get("trimmed", 0)
    assert all(t["lost_tokens"] < 2_000 for t in trims), trims


async def test_compaction_is_followed_by_a_preheat_and_the_next_turn_hits(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    agent = await make_agent(store, workspace, anthropic_settings(emulator))
    for i in range(3):
        emulator.enqueue(Reply(text=f"answer {i} " + "detail " * 200))
        await collect(agent, f"question {i} " + "context " * 400)
    await agent.compact_now()
    await asyncio.gather(*agent.warmer.background)
    assert agent.warmer.preheats == 1
    preheat = emulator.accepted[-1]
    assert preheat.body["max_tokens"] == 1
    emulator.enqueue(Reply(text="after compaction"))
    await collect(agent, "next question")
    nxt = emulator.accepted[-1].cache
    assert nxt is not None and nxt.cached_tokens >= preheat.cache.cache_write_tokens > 0  # type: ignore[union-attr]
    kinds = [m.get("kind") for m in await store.metrics(agent.session_id)]
    assert "preheat" in kinds


async def test_no_preheat_is_sent_while_a_turn_runs(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    """A preheat typed ahead of a message that was then sent would only queue behind the turn's request
    (on the embedded model it once cut the turn's stream): while a turn runs it is skipped."""
    agent = await make_agent(store, workspace, anthropic_settings(emulator))
    before = len(emulator.requests)
    agent.warmer.pause()  # what a turn does first
    await agent.warmer.preheat()
    assert len(emulator.requests) == before and agent.warmer.preheats == 0
    agent.warmer.resume()
    await agent.warmer.preheat()
    assert len(emulator.requests) == before + 1 and agent.warmer.preheats == 1
    await agent.close()


def _fps(view: list[Message], tools: str = "t1", model: str = "m") -> list[str]:
    return fingerprints(view, tools, model)


def test_break_detector_names_each_cause() -> None:
    base = [
        Message(role="system", content="sys", id="s"),
        Message(role="user", content="q", id="u"),
        Message(role="assistant", content="a", id="a"),
    ]
    sizes = [5, 10, 20, 30]
    prev = _fps(base)
    assert detect(prev, _fps([*base, Message(role="user", content="more", id="u2")]), sizes, False) is None
    assert detect(prev, _fps(base, tools="t2"), sizes, False).cause == "tools_changed"  # type: ignore[union-attr]
    assert detect(prev, _fps(base, model="other"), sizes, False).cause == "model_changed"  # type: ignore[union-attr]
    changed_sys = [Message(role="system", content="sys v2", id="s"), *base[1:]]
    assert detect(prev, _fps(changed_sys), sizes, False).cause == "system_changed"  # type: ignore[union-attr]
    edited = [*base[:2], Message(role="assistant", content="a, edited", id="a")]
    brk = detect(prev, _fps(edited), sizes, False)
    assert brk is not None and brk.cause == "history_edited" and brk.index == 3 and brk.lost_tokens == 30
    assert detect(prev, _fps(edited), sizes, True).cause == "compaction"  # type: ignore[union-attr]


async def test_break_detector_in_the_pipeline_reports_compaction() -> None:
    state = ContextState()
    raw = conversation(20)
    await run_pipeline(raw, window=64_000, state=state, tools_fingerprint="x")
    _, ctx = await run_pipeline(
        [*raw, Message(role="user", content="go on", id="new")],
        window=64_000,
        state=state,
        tools_fingerprint="x",
    )
    assert ctx.metrics.cache_break is None  # appended only
    _, ctx = await run_pipeline(raw, window=8_000, state=state, force_compaction=True, tools_fingerprint="x")
    assert ctx.metrics.cache_break is not None and ctx.metrics.cache_break["cause"] == "compaction"
    assert state.cache_breaks["compaction"] == 1


async def test_keepalive_probes_when_idle_and_stops_during_activity() -> None:
    clock = FakeTime()
    probes: list[float] = []

    async def probe() -> None:
        probes.append(clock.t)

    mgr = CacheKeepAliveManager(
        probe, idle_after=240, interval=240, clock=clock, sleep=clock.sleep, check_every=5
    )
    mgr.start()
    while clock.t < 1000:
        await asyncio.sleep(0)
    assert [round(p) for p in probes] == [240, 480, 720, 960]
    mgr.pause()
    start = len(probes)
    while clock.t < 2000:
        await asyncio.sleep(0)
    assert len(probes) == start and mgr.state == "paused"  # nothing while a turn runs
    mgr.resume()
    while clock.t < 2300:
        await asyncio.sleep(0)
    assert len(probes) == start + 1 and probes[-1] >= 2000 + 240
    await mgr.stop()
    assert mgr.state == "stopped"
    assert (
        provider_caches("anthropic/claude-sonnet-4-5")
        and not provider_caches("local/smollm2-135m")
        and not provider_caches("ollama/qwen")
    )


async def test_tool_narrowing_keeps_the_bound_schemas(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    agent = await make_agent(store, workspace, openai_settings(emulator))
    schemas = list(agent.tool_runner.tools.schemas)
    agent.tool_runner.tools.narrow(["file_read_tool", "grep"])
    assert agent.tool_runner.tools.schemas == schemas  # the cacheable prefix is untouched
    tools, s = agent.tool_runner.tools, agent.session
    # The emulator's endpoint is not native OpenAI: nothing to send.
    assert tools.tool_choice(s.settings.model, s.settings.api_base) is None
    choice = tools.tool_choice("gpt-4o", None)
    assert choice["type"] == "allowed_tools" and [t["name"] for t in choice["tools"]] == [
        "file_read_tool",
        "grep",
    ]
    import pytest

    with pytest.raises(ValueError, match="unknown tools"):
        agent.tool_runner.tools.narrow(["nope"])


def test_token_counter_remembers_recent_texts_exactly_and_stays_bounded() -> None:
    from myrm_tui.context import tokens

    counter = tokens.TokenCounter()
    texts = [f"line {i}: " + "value " * (60 + i % 7) for i in range(tokens.TEXT_CACHE_SIZE + 50)]
    first = [counter.text(t) for t in texts]
    assert [counter.text(t) for t in texts] == first == [len(counter._enc.encode_ordinary(t)) for t in texts]
    assert len(counter._texts) <= tokens.TEXT_CACHE_SIZE
