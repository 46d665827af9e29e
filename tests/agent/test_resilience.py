"""Fault injection: stalled and slow summarizers, the circuit breaker, aux shields, oversized outputs,
secrets in summaries, a compaction that fails, and kill -9 during a streamed turn."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from myrm_tui.agent.summarizer import AuxSummarizer, CircuitBreaker, CircuitOpenError
from myrm_tui.context.state import ContextState
from myrm_tui.context.step import NoSettings, Rewritten, Unconfigured, View
from myrm_tui.context.summary.fields import FIELDS, LIST_FIELDS
from myrm_tui.context.types import Message
from myrm_tui.llm.client import LLMClient, ModelSpec
from myrm_tui.store.db import Store
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests import warm
from tests.helpers import (
    COUNTER,
    PIPELINE,
    cli_env,
    collect,
    config_for,
    conversation,
    make_agent,
    openai_settings,
    request_for,
    run_myrm,
    run_pipeline,
)
from tests.llm.test_client import silent_server  # noqa: F401  (a fixture)

if TYPE_CHECKING:
    from myrm_tui.agent.agent import Agent


def _summary_json(**over: object) -> str:
    d: dict[str, object] = {f: ([] if f in LIST_FIELDS else "") for f in FIELDS}
    d.update(user_goal="fix the bug", current_state="working", **over)
    return json.dumps(d)


def _aux(
    emu: ProviderEmulator, inactivity: float = 0.5, breaker: CircuitBreaker | None = None
) -> AuxSummarizer:
    spec = ModelSpec("openai/gpt-4o-mini", api_base=emu.openai_base, api_key="sk-test")
    return AuxSummarizer(
        LLMClient(check_interval=0.1), spec, spec, 128_000, 128_000, breaker, inactivity=inactivity, total=30
    )


async def test_stalled_summarizer_is_cut_and_the_extractive_summary_used(emulator: ProviderEmulator) -> None:
    emulator.enqueue(Reply(text=_summary_json(), stall_after=2))
    view, ctx = await run_pipeline(
        conversation(20), window=8_000, force_compaction=True, summarizer=_aux(emulator)
    )
    emulator._release.set()
    assert ctx.metrics.summary_source == "extractive"
    assert any("InactivityTimeoutError" in e for e in ctx.metrics.events)
    assert any(m.meta.get("kind") == "summary" for m in view)


async def test_slow_but_steady_summarizer_is_not_cut(emulator: ProviderEmulator) -> None:
    # Slower than the limit in total (7 chunks, 0.35 s apart: 2.45 s), never silent for as long; the limit
    # covers the wait for the first byte too, so it leaves room for the request's own round trip.
    emulator.enqueue(Reply(text=_summary_json(), chunk_size=50, chunk_delay=0.35))
    _, ctx = await run_pipeline(
        conversation(20), window=8_000, force_compaction=True, summarizer=_aux(emulator, inactivity=1.5)
    )
    assert ctx.metrics.summary_source == "llm", ctx.metrics.events


def test_breaker_opens_half_opens_and_closes() -> None:
    t = [0.0]
    b = CircuitBreaker(threshold=3, cooldown=60, clock=lambda: t[0])
    for _ in range(3):
        assert b.allow()
        b.record_failure()
    assert b.state == "open" and not b.allow()
    t[0] = 61
    assert b.allow() and b.state == "half_open"
    b.record_failure()
    assert b.state == "open"
    t[0] = 122
    assert b.allow()
    b.record_success()
    assert b.state == "closed" and b.transitions == ["open", "half_open", "open", "half_open", "closed"]


async def test_open_breaker_skips_the_llm_and_uses_extractive(emulator: ProviderEmulator) -> None:
    breaker = CircuitBreaker(threshold=2, cooldown=3600)
    aux = _aux(emulator, breaker=breaker)
    for _ in range(2):
        emulator.enqueue(
            Reply(error=(500, {"error": {"message": "boom", "type": "server_error"}})),
            Reply(error=(500, {"error": {"message": "boom", "type": "server_error"}})),
        )
        await run_pipeline(conversation(20), window=8_000, force_compaction=True, summarizer=aux)
    assert breaker.state == "open"
    before = len(emulator.requests)
    _, ctx = await run_pipeline(conversation(20), window=8_000, force_compaction=True, summarizer=aux)
    assert len(emulator.requests) == before and ctx.metrics.summary_source == "extractive"
    with pytest.raises(CircuitOpenError):
        await aux("s", "u")


def test_aux_ratio_shield_and_guard() -> None:
    aux_spec, main_spec = ModelSpec("small-aux"), ModelSpec("big-main")
    aux = AuxSummarizer(LLMClient(), aux_spec, main_spec, aux_window=8_000, main_window=200_000)
    spec, window = aux.choose(100_000)
    assert spec is main_spec and window == 200_000 and "too small" in aux.warnings[0]
    assert aux.choose(1_000)[0] is aux_spec
    long_text = "word " * 50_000
    fitted = aux.fit(long_text, "system", 8_000)
    assert aux.counter.text(fitted) <= 8_000 * 0.75 and "chars cut" in fitted


async def test_200kb_json_result_becomes_a_valid_skeleton_with_the_original_vaulted(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    payload = {
        "results": [
            {"id": i, "name": f"item-{i}", "tags": ["a", "b", "c"], "blob": "x" * 120} for i in range(1200)
        ],
        "page": 1,
    }
    (workspace / "big.json").write_text(json.dumps(payload))
    agent = await make_agent(store, workspace, openai_settings(emulator))
    emulator.enqueue(
        Reply(tool_calls=[("bash", {"command": "cat big.json"})]), Reply(text="It has 1200 results.")
    )
    await collect(agent, "what is in big.json?")
    sent = emulator.accepted[-1].body["messages"][-1]["content"]
    assert len(sent) < 20_000
    body = sent.split("<output>\n", 1)[1].split("\n</output>", 1)[0]
    skeleton = json.loads(body)
    assert skeleton["page"] == 1 and len(skeleton["results"]) == 7  # 6 items + the "more" marker
    uri = next(w for w in sent.split() if w.startswith("vault://")).rstrip("]—,")
    entry = await store.vault_get(uri)
    assert (
        entry is not None
        and json.loads(entry.content.split("<output>\n", 1)[1].rsplit("</output>", 1)[0]) == payload
    )


async def test_secrets_never_reach_stored_summaries(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    secret = "sk-ant-api03-" + "Z" * 40
    agent = await make_agent(store, workspace, openai_settings(emulator), window=8_000)
    emulator.window = 8_000
    for i in range(12):
        emulator.enqueue(
            Reply(
                tool_calls=[
                    ("bash", {"command": f"echo 'token {secret} user jane@example.com' && seq 1 {300 + i}"})
                ]
            ),
            Reply(text="noted"),
        )
        await collect(agent, f"step {i}: export KEY={secret}")
    # The compact key: answered outputs are trimmed, the view may still fit.
    await agent.session.prepare(force=True)
    assert agent.session.state.compactions >= 1
    state = await store.load_state(agent.session_id)
    assert state is not None and "compacted_summary" in state
    summaries = [m for m in json.loads(state)["base"] if m.get("meta", {}).get("kind") == "summary"]
    assert summaries and all(
        secret not in m["content"] and "jane@example.com" not in m["content"] for m in summaries
    )
    assert any(
        secret in m.text for m in await store.load_messages(agent.session_id)
    )  # the raw store keeps originals


async def test_a_failing_compaction_step_rolls_back_to_the_backup() -> None:
    state = ContextState()
    raw = conversation(20)
    await PIPELINE.run(request_for(raw, state), config_for(64_000), "rb")
    before = state.to_json()

    class Broken(Unconfigured):
        name = "broken"

        async def run(self, view: View, settings: NoSettings) -> Rewritten:
            if view.compacting:
                raise RuntimeError("disk full")
            return Rewritten(messages=view.messages)

    from myrm_tui.context.pipeline import Pipeline

    # After Summarize: the summary was written into the view, and must not reach the state.
    pipe = Pipeline([*PIPELINE.steps[:8], Broken(), *PIPELINE.steps[8:]])
    run = await pipe.run(request_for(raw, state, force_compaction=True), config_for(8_000), "rb")
    assert "compaction failed; pre-compact backup restored" in run.metrics.events
    assert json.loads(state.to_json())["base"] == json.loads(before)["base"] and state.compactions == 0
    assert state.summary is None and not run.compacting
    assert len(run.messages) == len(raw)


TURN = textwrap.dedent(
    """
    import asyncio, sys
    from pathlib import Path
    from myrm_tui.store.db import Store
    from myrm_tui.config import resolve
    from myrm_tui.agent.factory import build_agent

    async def main(db, ws, base, sid):
        store = await Store.open(db)
        given = {"model": "openai/gpt-4o-mini", "api_base": base, "api_key": "sk-test",
                 "summarizer_model": "extractive"}
        s = resolve({}, {}, given, env={})
        agent = await build_agent(store, sid, s, Path(ws))
        async for ev in agent.turns.run("tell me a long story"):
            if type(ev).__name__ == "TextChunk":
                print("chunk", flush=True)

    asyncio.run(main(*sys.argv[1:]))
    """
)


async def test_kill_9_during_streaming_keeps_committed_messages_and_resumes(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    db = tmp_path / "kill.db"
    store = await Store.open(db)
    sid = (await store.create_session()).id
    await store.close()
    emulator.enqueue(Reply(text="once upon a time " * 200, chunk_size=5, chunk_delay=0.02))
    proc = warm.Popen(
        [sys.executable, "-c", TURN, str(db), str(workspace), emulator.openai_base, sid],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert proc.stdout is not None
    for _ in range(5):
        assert proc.stdout.readline().strip() == "chunk"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)
    store = await Store.open(db)
    try:
        msgs = await store.load_messages(sid)
        assert [m.role for m in msgs] == ["system", "user", "user"] and msgs[
            -1
        ].text == "tell me a long story"
        from myrm_tui.agent.factory import build_agent

        agent = await build_agent(store, sid, openai_settings(emulator), workspace)
        emulator.enqueue(Reply(text="resumed fine"))
        await collect(agent, "are you there?")
        assert emulator.rejected == [] and (await store.load_messages(sid))[-1].text == "resumed fine"
    finally:
        await store.close()


# -- L4 stream recovery: the provider counts more than we do -----------------------------------------


@pytest.mark.parametrize(
    ("message", "sizes"),
    [
        (
            "This model's maximum context length is 8192 tokens. However, your messages resulted "
            "in 9,500 tokens.",
            (8192, 9500),
        ),
        (
            "This model's maximum context length is 128000 tokens. However, you requested 130000 "
            "tokens (120000 in the messages, 10000 in the completion).",
            (118000, 120000),
        ),
        ("prompt is too long: 210000 tokens > 200000 maximum", (200000, 210000)),
        ("input length and `max_tokens` exceed context limit: 187254 + 20000 > 200000", (180000, 187254)),
        ("context window exceeded", None),
    ],
)
def test_overflow_sizes_are_read_from_the_providers_message(
    message: str, sizes: tuple[int, int] | None
) -> None:
    from myrm_tui.llm.errors import ContextOverflowError

    assert ContextOverflowError("overflow", provider_message=message).sizes() == sizes


async def test_overflow_stage_1_shrinks_tool_outputs_under_the_hard_limit() -> None:
    raw = conversation(6, output_chars=9_000)
    view, ctx = await run_pipeline(raw, window=32_000, hard_limit=4_000)
    assert ctx.metrics.compaction_reason == "context overflow (provider)"
    assert ctx.plan.level.name == "EMERGENCY"
    assert ctx.tokens <= 4_000 and "drop_oldest_rounds" not in ctx.metrics.removed
    from myrm_tui.context.invariants import check_view

    assert check_view(view, raw) == []
    assert raw[-1].tool_call_id in {
        m.tool_call_id for m in view
    }  # the newest round is shortened, not dropped


async def test_overflow_stage_2_drops_the_oldest_rounds_when_shrinking_is_not_enough() -> None:
    raw = [*conversation(20, output_chars=400), Message(role="user", content="now run the tests", id="cu2")]
    plain, _ = await run_pipeline(raw, window=16_000, force_compaction=True)
    view, ctx = await run_pipeline(raw, window=16_000, hard_limit=1_500)
    assert COUNTER.messages(plain) > 1_500  # an ordinary compaction keeps the tail: it would overflow again
    assert ctx.metrics.removed.get("drop_oldest_rounds", 0) > 0 and ctx.tokens <= 1_500
    from myrm_tui.context.invariants import check_view

    assert check_view(view, raw) == []
    assert (
        view[-1].text == "now run the tests" and view[1].text == raw[1].text
    )  # current instruction and protected head
    assert any(m.meta.get("kind") == "summary" for m in view)


async def _session_until_overflows(
    emulator: ProviderEmulator,
    store: Store,
    workspace: Path,
    scale: float,
    turns: int,
    window: int = 8_000,
    lines: int = 60,
) -> tuple[list[list[object]], Agent]:
    from myrm_tui.agent.events import AssistantSaved, TurnFailed

    for i in range(turns):
        (workspace / f"mod{i}.py").write_text(
            "\n".join(f"value_{i}_{k} = {k}  # setting number {k} of module {i}" for k in range(lines))
        )
    agent = await make_agent(store, workspace, openai_settings(emulator, prompt_mode="naked"), window=window)
    emulator.window, emulator.token_scale = window, scale
    turns_events = []
    for i in range(turns):
        emulator.enqueue(
            Reply(tool_calls=[("bash", {"command": f"cat mod{i}.py"})]), Reply(text=f"Read mod{i}.py.")
        )
        events = await collect(agent, f"read mod{i}.py")
        assert not any(isinstance(e, TurnFailed) for e in events), [
            e for e in events if isinstance(e, TurnFailed)
        ]
        assert any(isinstance(e, AssistantSaved) and e.message.text == f"Read mod{i}.py." for e in events)
        turns_events.append(events)
    return turns_events, agent


@pytest.mark.parametrize(("scale", "stage2"), [(1.8, False), (5.0, True)])
async def test_provider_overflow_is_recovered_in_one_retry(
    emulator: ProviderEmulator, store: Store, workspace: Path, scale: float, stage2: bool
) -> None:
    """Our tokenizer says the request fits; the provider's counts ``scale`` times more and refuses it. (1.8:
    the planned compaction keeps views a predicted round under the budget, where 1.6 is still taken.)"""
    from myrm_tui.agent.events import Notice

    # Stage 2 needs a view that shrinking outputs cannot bring under the provider's count while the head and
    # the newest round still can be: large outputs, in a window where the tool schemas are a small part.
    if stage2:
        turns, agent = await _session_until_overflows(emulator, store, workspace, scale, 20, 16_000, 200)
    else:
        turns, agent = await _session_until_overflows(emulator, store, workspace, scale, 14)
    overflowed = [t for t in turns if any(isinstance(e, Notice) and "context overflow" in e.text for e in t)]
    assert overflowed, "the scenario must make the provider refuse at least one request"
    assert emulator.rejected and all(
        r.rejection is not None and r.rejection.code == "context_length_exceeded" for r in emulator.rejected
    )
    for rej in emulator.rejected:  # every refusal is followed by an accepted retry
        after = emulator.requests[emulator.requests.index(rej) + 1]
        assert after.rejection is None
    metrics = [
        m
        for m in await store.metrics(agent.session_id)
        if m.get("compaction_reason") == "context overflow (provider)"
    ]
    assert metrics
    dropped = sum(
        m.get("removed", {}).get("drop_oldest_rounds", 0) for m in await store.metrics(agent.session_id)
    )
    assert (dropped > 0) == stage2


async def test_a_failing_lite_summarizer_falls_back_to_the_main_model(emulator: ProviderEmulator) -> None:
    lite = ModelSpec("openai/gpt-4o-mini", api_base=emulator.openai_base, api_key="sk-test")
    main = ModelSpec("openai/gpt-4o", api_base=emulator.openai_base, api_key="sk-test")
    aux = AuxSummarizer(LLMClient(check_interval=0.1), lite, main, 128_000, 128_000, inactivity=5, total=30)
    gone = {
        "error": {
            "message": "The model `gpt-4o-mini` does not exist or you do not have access to it.",
            "type": "invalid_request_error",
            "code": "model_not_found",
        }
    }
    emulator.enqueue(Reply(error=(404, gone)), Reply(text=_summary_json()))
    _, ctx = await run_pipeline(conversation(20), window=8_000, force_compaction=True, summarizer=aux)
    assert ctx.metrics.summary_source == "llm" and [r.body["model"] for r in emulator.requests] == [
        "gpt-4o-mini",
        "gpt-4o",
    ]
    assert "failed (BadRequestError); used openai/gpt-4o" in aux.warnings[0] and aux.breaker.failures == 0
    emulator.enqueue(Reply(text=_summary_json()))
    await run_pipeline(conversation(20), window=8_000, force_compaction=True, summarizer=aux)
    assert emulator.requests[-1].body["model"] == "gpt-4o"  # a missing lite model is not asked again


def test_summarizer_defaults_to_the_providers_lite_model_else_the_main_one() -> None:
    from myrm_tui.config import Settings, summarizer_model

    assert summarizer_model(Settings(model="anthropic/claude-sonnet-4-5")) == "anthropic/claude-haiku-4-5"
    assert (
        summarizer_model(Settings(model="openai/qwen2.5", api_base="http://127.0.0.1:11434/v1"))
        == "openai/qwen2.5"
    )
    assert summarizer_model(Settings(model="mistral/mistral-large-latest")) == "mistral/mistral-large-latest"
    assert (
        summarizer_model(Settings(model="anthropic/claude-sonnet-4-5", summarizer_model="extractive"))
        == "extractive"
    )


async def test_preflight_refuses_a_request_that_cannot_fit_before_calling_the_api(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    from myrm_tui.agent.events import TurnDone, TurnFailed

    # The full prompt and the tool schemas alone are over a 2,000-token window: nothing can be cut.
    agent = await make_agent(store, workspace, openai_settings(emulator), window=2_000)
    events = await collect(agent, "please review hello.py")
    failed = [e for e in events if isinstance(e, TurnFailed)]
    assert failed and failed[0].kind == "preflight"
    assert "the system prompt" in failed[0].error and "larger window" in failed[0].error
    assert "\n" not in failed[0].error
    assert isinstance(events[-1], TurnDone) and emulator.requests == []


async def test_a_first_message_over_the_window_is_cut_into_the_vault_and_answered(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    from myrm_tui.agent.events import TurnFailed

    agent = await make_agent(store, workspace, openai_settings(emulator, prompt_mode="naked"), window=8_000)
    emulator.enqueue(Reply(text="Reviewed."))
    spec = "please review this spec:\n" + "\n".join(
        f"line {i}: lorem ipsum dolor sit amet" for i in range(900)
    )
    events = await collect(agent, spec + "\nThe deadline is FRIDAY-42.")
    assert not [e for e in events if isinstance(e, TurnFailed)]
    body = emulator.accepted[-1].body
    first = next(
        m for m in body["messages"] if m["role"] == "user" and "review this spec" in str(m["content"])
    )
    text = str(first["content"])
    # The opening and the closing lines stay, the middle is a pointer with the line range cut.
    assert text.startswith("please review this spec:") and "FRIDAY-42" in text
    uri = re.search(r"vault://\S+?/[0-9a-f]{16}", text)
    assert uri and re.search(r'line_range="\d+:\d+"', text)
    assert await store.vault_get(uri.group(0)) is not None  # the whole text is there


_OVERFLOW = Reply(
    error=(
        400,
        {
            "error": {
                "message": "This model's maximum context length is 8000 tokens. However, your messages "
                "resulted in 9000 tokens. Please reduce the length of the messages.",
                "type": "invalid_request_error",
                "code": "context_length_exceeded",
            }
        },
    )
)


async def test_every_overflow_of_a_turn_gets_its_own_retry(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    """Issue 13.7's cause. The one retry was per turn: a turn whose first request overflowed, was
    recovered and retried, failed outright when a later request of the same turn (after a tool call)
    overflowed too. Whether a turn met two overflows depended on a few tokens of the environment
    message, i.e. on the length of pytest's tmp path (pytest-N grows every run): the flaky test."""
    from myrm_tui.agent.events import AssistantSaved, Notice, TurnFailed

    agent = await make_agent(store, workspace, openai_settings(emulator, prompt_mode="naked"), window=8_000)
    emulator.enqueue(
        _OVERFLOW, Reply(tool_calls=[("bash", {"command": "echo step"})]), _OVERFLOW, Reply(text="Done.")
    )
    events = await collect(agent, "do the two steps")
    assert not [e for e in events if isinstance(e, TurnFailed)]
    assert sum(isinstance(e, Notice) and "context overflow" in e.text for e in events) == 2
    assert [e.message.text for e in events if isinstance(e, AssistantSaved)][-1] == "Done."
    assert [r.body["messages"][-1]["role"] for r in emulator.requests] == ["user", "user", "tool", "tool"]


async def test_a_cut_stream_is_retried_once_and_its_partial_text_kept_marked(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    from myrm_tui.agent.events import AssistantSaved, Notice, TurnFailed
    from myrm_tui.agent.turn import CUT_SUFFIX

    agent = await make_agent(store, workspace, openai_settings(emulator))
    emulator.enqueue(
        Reply(text="Part one of the answer, then", chunk_size=8, drop_connection_after=3),
        Reply(text="the rest of it."),
    )
    events = await collect(agent, "explain")
    assert not [e for e in events if isinstance(e, TurnFailed)]
    notice = next(e for e in events if isinstance(e, Notice) and "cut off" in e.text)
    assert "after 16 chars" in notice.text and notice.text.endswith("Retrying once.")
    assert [e.message.text for e in events if isinstance(e, AssistantSaved)] == ["the rest of it."]
    stored = await store.load_messages(agent.session_id)
    cut = next(m for m in stored if m.role == "assistant" and m.meta.get("interrupted"))
    assert cut.text == "Part one of the " + CUT_SUFFIX
    retried = emulator.accepted[-1].body["messages"]
    assert retried[-2]["content"] == cut.text and "Continue from where it stopped" in retried[-1]["content"]


async def test_a_stream_cut_twice_ends_the_turn_with_one_clear_line(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    from myrm_tui.agent.events import TurnFailed

    agent = await make_agent(store, workspace, openai_settings(emulator))
    emulator.enqueue(
        *[Reply(text="Part one of the answer, then", chunk_size=8, drop_connection_after=3)] * 2,
        Reply(text="never asked"),
    )
    events = await collect(agent, "explain")
    failed = [e for e in events if isinstance(e, TurnFailed)]
    assert (
        len(failed) == 1
        and failed[0].error.startswith("The reply was cut off")
        and failed[0].kind == "IncompleteStreamError"
    )
    assert len(emulator.requests) == 2 and emulator.script  # retried once, not twice


def _ask(args: list[str], tmp: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return run_myrm(["ask", *args], env=cli_env(tmp, "ask.db", **env))


@pytest.mark.parametrize(
    ("replies", "says"),
    [
        (
            [Reply(text="Part one of the answer, then", chunk_size=8, drop_connection_after=3)] * 2,
            "myrm: The reply was cut off: the stream ended without a finish reason",
        ),
        (
            [Reply(raw_body=b"data: [DONE]\n\n")] * 2,
            "myrm: The provider's stream ended without a reply and without a finish reason",
        ),
        (
            [Reply(raw_body=b"<html>502</html>", raw_content_type="text/html")] * 2,
            "body that is not server-sent events; Content-Type: text/html",
        ),
        ([Reply(text="")], "myrm: The model sent an empty reply"),
    ],
    ids=["cut-twice", "done-only", "html-200", "empty"],
)
def test_ask_exits_1_with_one_line_on_a_cut_empty_or_bogus_stream(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path, replies: list[Reply], says: str
) -> None:
    emulator.enqueue(*replies, Reply(text="never asked"))
    proc = _ask(
        [
            "hi",
            "--model",
            "openai/gpt-4o-mini",
            "--api-base",
            emulator.openai_base,
            "--workspace",
            str(workspace),
        ],
        tmp_path,
    )
    assert proc.returncode == 1, proc.stderr
    assert says in proc.stderr and "Traceback" not in proc.stderr
    assert len(emulator.requests) == len(replies)


def test_ask_ends_at_the_configured_idle_limit_when_the_server_never_answers(
    silent_server: str,  # noqa: F811  (the fixture imported above)
    tmp_path: Path,
    workspace: Path,
) -> None:
    proc = _ask(
        ["hi", "--model", "openai/gpt-4o-mini", "--api-base", silent_server, "--workspace", str(workspace)],
        tmp_path,
        MYRM_SUMMARIZER_INACTIVITY_SECONDS="1",
    )
    assert proc.returncode == 1, proc.stderr
    m = re.search(r"myrm: No response for ([\d.]+) s \(limit 1\.0 s\)", proc.stderr)
    assert m is not None and 1.0 <= float(m[1]) < 3.0, proc.stderr
