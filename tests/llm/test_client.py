"""The LLM client through real litellm HTTP to the emulator: streaming, usage, typed errors, timeouts."""

from __future__ import annotations

import asyncio
import json
import re
import socket
import sys
import threading
import time
from collections.abc import Iterator

import pytest

from myrm_tui.llm.client import LLMClient, ModelSpec
from myrm_tui.llm.errors import (
    AuthError,
    BadRequestError,
    ContextOverflowError,
    EmptyReplyError,
    InactivityTimeoutError,
    IncompleteStreamError,
    LLMTimeoutError,
    ProviderError,
    RateLimitError,
    classify,
)
from myrm_tui.llm.events import Finish, TextDelta, ToolCallDelta, Usage
from myrm_tui.llm.progress import ProgressClock, guarded
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests import warm
from tests.helpers import FakeTime

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "bash",
            "description": "run",
            "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
        },
    }
]


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
        (
            400,
            {
                "error": {
                    "message": "This model's maximum context length is 10 tokens",
                    "type": "invalid_request_error",
                    "code": "context_length_exceeded",
                }
            },
            ContextOverflowError,
        ),
    ],
)
async def test_provider_errors_become_typed(
    emulator: ProviderEmulator, status: int, body: dict, kind: type
) -> None:
    emulator.enqueue(Reply(error=(status, body)))
    with pytest.raises(kind):
        await _all(LLMClient(), openai(emulator), [{"role": "user", "content": "hi"}])


async def test_rejected_request_is_a_bad_request(emulator: ProviderEmulator) -> None:
    with pytest.raises(BadRequestError, match="must be a response"):
        await _all(LLMClient(), openai(emulator), [{"role": "tool", "tool_call_id": "x", "content": "r"}])


async def test_stalled_stream_is_cut_by_the_inactivity_watchdog(emulator: ProviderEmulator) -> None:
    emulator.enqueue(Reply(text="partial answer that will stall " * 4, chunk_size=8, stall_after=3))
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

    out = [
        x
        async for x in guarded(
            slow_but_steady(),
            inactivity=90,
            total=10_000,
            check_interval=10,
            clock=ProgressClock(clock),
            sleep=clock.sleep,
        )
    ]
    assert len(out) == 30

    async def dead():
        yield 1
        await asyncio.Event().wait()  # never another token
        yield 2

    with pytest.raises(InactivityTimeoutError):
        _ = [
            x
            async for x in guarded(
                dead(),
                inactivity=90,
                total=10_000,
                check_interval=10,
                clock=ProgressClock(clock),
                sleep=clock.sleep,
            )
        ]


async def test_watchdog_total_ceiling_cuts_a_stream_that_never_ends() -> None:
    clock = FakeTime()

    async def endless():
        for i in range(10_000):  # a token every 20 s, forever: never idle, never done
            clock.t += 20
            await asyncio.sleep(0)  # a socket read suspends; let the watchdog run
            yield i

    got: list[int] = []
    with pytest.raises(LLMTimeoutError, match="600 s ceiling") as err:
        async for x in guarded(
            endless(),
            inactivity=90,
            total=600,
            check_interval=10,
            clock=ProgressClock(clock),
            sleep=clock.sleep,
        ):
            got.append(x)
    assert (
        not isinstance(err.value, InactivityTimeoutError) and 10 <= len(got) <= 30
    )  # the watchdog's sleeps advance the clock too


def test_classify_maps_plain_exceptions() -> None:
    assert isinstance(classify(TimeoutError("t")), LLMTimeoutError)
    assert isinstance(classify(ValueError("prompt is too long: 300000 tokens")), ContextOverflowError)


@pytest.fixture
def silent_server() -> Iterator[str]:
    """A TCP server that accepts every connection and never sends a byte (a hung proxy, a dead model)."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen()
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        srv.settimeout(0.1)
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
                held.append(conn)  # kept open, never read, never answered
            except TimeoutError:
                continue
            except OSError:
                return

    t = threading.Thread(target=accept, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{srv.getsockname()[1]}/v1"
    stop.set()
    t.join(5)
    for c in held:
        c.close()
    srv.close()


def _seconds_said(message: str) -> tuple[float, float]:
    m = re.search(r"for ([\d.]+) s \(limit ([\d.]+) s\)", message)
    assert m is not None, message
    return float(m[1]), float(m[2])


async def test_a_server_that_accepts_and_never_answers_is_cut_at_the_idle_limit(silent_server: str) -> None:
    """The wait for the response headers used to be under the total limit only (606 s for a 600 s ceiling)."""
    client = LLMClient(inactivity_timeout=1.0, total_timeout=30, check_interval=10)
    t0 = time.monotonic()
    said = rf"No response for .* {re.escape(silent_server)} did not answer"  # the address waited on
    with pytest.raises(InactivityTimeoutError, match=said) as err:
        await _all(
            client,
            ModelSpec("openai/gpt-4o-mini", api_base=silent_server, api_key="sk-test"),
            [{"role": "user", "content": "hi"}],
        )
    took = time.monotonic() - t0
    idle, limit = _seconds_said(str(err.value))
    assert (
        limit == 1.0 and 1.0 <= idle < 3.0 and took < 8
    )  # at the limit (a busy machine adds a little), not at the 10 s check or the ceiling


async def test_the_watchdog_fires_at_the_limit_and_says_the_real_numbers() -> None:
    """A 3 s limit checked every 10 s used to fire at 10 s and say so: 'No token for 10 s (limit 3 s)'."""
    clock = FakeTime()

    async def stalls():
        yield 1
        await asyncio.Event().wait()
        yield 2

    with pytest.raises(InactivityTimeoutError) as err:
        _ = [
            x
            async for x in guarded(
                stalls(),
                inactivity=3,
                total=600,
                check_interval=10,
                clock=ProgressClock(clock),
                sleep=clock.sleep,
            )
        ]
    idle, limit = _seconds_said(str(err.value))
    assert (
        limit == 3
        and 3 <= idle < 3.1
        and 3 <= clock.t < 3.1
        and "No token for 3.0 s (limit 3.0 s)" in str(err.value)
    )


async def test_a_cut_stream_is_an_error_not_an_answer(emulator: ProviderEmulator) -> None:
    """litellm ends a dropped stream with a made-up finish_reason 'stop'; the client asks what the provider
    sent."""
    emulator.enqueue(Reply(text="The answer is forty-two, because", chunk_size=8, drop_connection_after=3))
    got: list = []
    with pytest.raises(
        IncompleteStreamError, match=r"cut off: the stream ended without a finish reason after 16 chars"
    ):
        async for ev in LLMClient().stream(openai(emulator), [{"role": "user", "content": "hi"}]):
            got.append(ev)
    assert "".join(e.text for e in got if isinstance(e, TextDelta)) == "The answer is fo"


@pytest.mark.parametrize(
    ("reply", "kind", "says"),
    [
        (
            Reply(raw_body=b"data: [DONE]\n\n"),
            IncompleteStreamError,
            r"ended without a reply and without a finish reason .*Content-Type: text/event-stream",
        ),
        (
            Reply(raw_body=b"<html><body>502 Bad Gateway</body></html>", raw_content_type="text/html"),
            IncompleteStreamError,
            r"not server-sent events; Content-Type: text/html",
        ),
        (
            Reply(
                raw_body=json.dumps(
                    {
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": "hi"},
                                "finish_reason": "stop",
                            }
                        ]
                    }
                ).encode(),
                raw_content_type="application/json",
            ),
            IncompleteStreamError,
            r"Content-Type: application/json",
        ),
        (Reply(text=""), EmptyReplyError, r"empty reply \(finish reason 'stop', no text and no tool call\)"),
        (
            Reply(text="", reasoning="Let me think about this."),
            EmptyReplyError,
            r"only 24 chars of reasoning",
        ),
    ],
    ids=["done-only", "html-200", "json-200", "empty", "reasoning-only"],
)
async def test_empty_and_bogus_replies_are_clear_errors(
    emulator: ProviderEmulator, reply: Reply, kind: type, says: str
) -> None:
    emulator.enqueue(reply)
    with pytest.raises(kind, match=says):
        await _all(LLMClient(), openai(emulator), [{"role": "user", "content": "hi"}])


ONE_TOKENIZER = r"""
import asyncio, sys
import tiktoken.registry
from myrm_tui.llm.client import LLMClient, ModelSpec
from myrm_tui.llm.events import Usage

async def main():
    usage = []
    for model in sys.argv[2:]:
        spec = ModelSpec(model, api_base=sys.argv[1], api_key="sk-test")
        messages = [{"role": "user", "content": "count me " * 2000}]
        usage += [e async for e in LLMClient().stream(spec, messages, max_tokens=1) if isinstance(e, Usage)]
    print(sorted(tiktoken.registry.ENCODINGS), len(usage))

asyncio.run(main())
"""


def test_a_streamed_call_loads_no_second_tokenizer(emulator: ProviderEmulator) -> None:
    """litellm counted every streamed prompt itself for a cost figure nobody reads, loading cl100k_base
    (~30 MB beside myrm's o200k_base) on the first call: in a fresh process, after calls to models litellm
    would count with it, only myrm's encoding is loaded, and the usage still comes from the provider."""
    emulator.enqueue(Reply(text="a"), Reply(text="b"))
    models = ["openai/gpt-4-0613", "openai/some-model-litellm-does-not-know"]
    # Forked from the warm interpreter: it imported litellm as myrm does (offline, nothing counted yet).
    out = warm.run(
        [sys.executable, "-c", ONE_TOKENIZER, emulator.openai_base, *models],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.split("\n")[0] == "['o200k_base'] 2"
