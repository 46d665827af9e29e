"""The LLM client through real litellm HTTP to the emulator: streaming, usage, typed errors, timeouts."""

from __future__ import annotations

import asyncio

import pytest

from myrm_tui.llm.client import LLMClient, ModelSpec
from myrm_tui.llm.errors import (
    AuthError,
    BadRequestError,
    ContextOverflowError,
    InactivityTimeoutError,
    LLMTimeoutError,
    ProviderError,
    RateLimitError,
    classify,
)
from myrm_tui.llm.events import Finish, TextDelta, ToolCallDelta, Usage
from myrm_tui.llm.progress import ProgressClock, guarded
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.helpers import FakeTime

TOOLS = [{"type": "function", "function": {"name": "bash", "description": "run", "parameters": {"type": "object", "properties": {"command": {"type": "string"}}}}}]


def openai(emu: ProviderEmulator) -> ModelSpec:
    return ModelSpec("openai/gpt-4o-mini", api_base=emu.openai_base, api_key="sk-test")


async def _all(client: LLMClient, spec: ModelSpec, messages: list, **kw: object) -> list:
    return [ev async for ev in client.stream(spec, messages, **kw)]  # type: ignore[arg-type]


async def test_openai_stream_text_tool_calls_usage(emulator: ProviderEmulator) -> None:
    emulator.enqueue(Reply(text="Hello world, streaming.", tool_calls=[("bash", {"command": "ls -la"})]))
    evs = await _all(LLMClient(), openai(emulator), [{"role": "user", "content": "hi"}], tools=TOOLS)
    assert "".join(e.text for e in evs if isinstance(e, TextDelta)) == "Hello world, streaming."
    args = "".join(e.arguments for e in evs if isinstance(e, ToolCallDelta))
    assert args == '{"command": "ls -la"}'
    assert any(isinstance(e, Finish) and e.reason == "tool_calls" for e in evs)
    usage = next(e for e in evs if isinstance(e, Usage))
    assert usage.prompt_tokens > 0 and emulator.accepted[0].body["stream"] is True


async def test_anthropic_stream_reports_cache_read(emulator: ProviderEmulator) -> None:
    spec = ModelSpec("anthropic/claude-sonnet-4-5", api_base=emulator.url, api_key="sk-ant-test")
    big = [{"type": "text", "text": "rules " * 1500, "cache_control": {"type": "ephemeral"}}]
    msgs = [{"role": "system", "content": big}, {"role": "user", "content": "first"}]
    first = await _all(LLMClient(), spec, msgs, max_tokens=50)
    second = await _all(LLMClient(), spec, [*msgs[:1], {"role": "user", "content": "second"}], max_tokens=50)
    u1 = next(e for e in first if isinstance(e, Usage))
    u2 = next(e for e in second if isinstance(e, Usage))
    assert u1.cache_creation_tokens > 1000 and u1.cached_tokens == 0
    assert u2.cached_tokens == u1.cache_creation_tokens
    assert "system" in emulator.accepted[0].body  # litellm moved the system prompt where Anthropic wants it


@pytest.mark.parametrize(
    ("status", "body", "kind"),
    [
        (429, {"error": {"message": "Rate limit reached", "type": "rate_limit_error"}}, RateLimitError),
        (401, {"error": {"message": "Incorrect API key", "type": "invalid_request_error"}}, AuthError),
        (500, {"error": {"message": "internal", "type": "server_error"}}, ProviderError),
        (400, {"error": {"message": "This model's maximum context length is 10 tokens", "type": "invalid_request_error", "code": "context_length_exceeded"}}, ContextOverflowError),
    ],
)
async def test_provider_errors_become_typed(emulator: ProviderEmulator, status: int, body: dict, kind: type) -> None:
    emulator.enqueue(Reply(error=(status, body)))
    with pytest.raises(kind):
        await _all(LLMClient(), openai(emulator), [{"role": "user", "content": "hi"}])


async def test_rejected_request_is_a_bad_request(emulator: ProviderEmulator) -> None:
    with pytest.raises(BadRequestError, match="must be a response"):
        await _all(LLMClient(), openai(emulator), [{"role": "tool", "tool_call_id": "x", "content": "r"}])


async def test_stalled_stream_is_cut_by_the_inactivity_watchdog(emulator: ProviderEmulator) -> None:
    emulator.enqueue(Reply(text="partial answer that will stall " * 4, stall_after=3))
    client = LLMClient(inactivity_timeout=0.6, total_timeout=30, check_interval=0.1)
    got: list = []
    with pytest.raises(InactivityTimeoutError):
        async for ev in client.stream(openai(emulator), [{"role": "user", "content": "hi"}]):
            got.append(ev)
    assert any(isinstance(e, TextDelta) for e in got)
    emulator._release.set()


async def test_watchdog_with_fake_clock_tells_slow_from_dead() -> None:
    clock = FakeTime()

    async def slow_but_steady():
        for i in range(30):  # a token every 50 s for 25 minutes: slow, never silent for 90 s
            clock.t += 50
            await asyncio.sleep(0)  # a socket read suspends: the watchdog checks between tokens
            yield i

    out = [x async for x in guarded(slow_but_steady(), inactivity=90, total=10_000, check_interval=10, clock=ProgressClock(clock), sleep=clock.sleep)]
    assert len(out) == 30

    async def dead():
        yield 1
        await asyncio.Event().wait()  # never another token
        yield 2

    with pytest.raises(InactivityTimeoutError):
        _ = [x async for x in guarded(dead(), inactivity=90, total=10_000, check_interval=10, clock=ProgressClock(clock), sleep=clock.sleep)]


async def test_watchdog_total_ceiling_cuts_a_stream_that_never_ends() -> None:
    clock = FakeTime()

    async def endless():
        for i in range(10_000):  # a token every 20 s, forever: never idle, never done
            clock.t += 20
            await asyncio.sleep(0)  # a socket read suspends; let the watchdog run
            yield i

    got: list[int] = []
    with pytest.raises(LLMTimeoutError, match="600 s ceiling") as err:
        async for x in guarded(endless(), inactivity=90, total=600, check_interval=10, clock=ProgressClock(clock), sleep=clock.sleep):
            got.append(x)
    assert not isinstance(err.value, InactivityTimeoutError) and 10 <= len(got) <= 30  # the watchdog's sleeps advance the clock too


def test_classify_maps_plain_exceptions() -> None:
    assert isinstance(classify(TimeoutError("t")), LLMTimeoutError)
    assert isinstance(classify(ValueError("prompt is too long: 300000 tokens")), ContextOverflowError)
