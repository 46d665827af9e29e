"""A local provider emulator: OpenAI chat completions and Anthropic messages over real HTTP.

Tests point litellm at it (``api_base``) so every call crosses the real litellm HTTP stack. It
- rejects what the real APIs reject, with their status and error text (``validation``);
- simulates prefix caching per cache key (OpenAI: ``prompt_cache_key`` or the API key, automatic;
  with ``openai_cache_by = "key"`` only ``prompt_cache_key`` routes, so a request without one reads
  nothing but an exact repeat; Anthropic: explicit ``cache_control`` breakpoints) and reports it in
  ``usage``;
- replies from a per-test script: text, reasoning, tool calls, delays, stalls, HTTP errors.

It runs its own event loop in a thread, so sync and async tests can use it alike.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from myrm_tui.context.tokens import IMAGE_TOKENS, TokenCounter
from myrm_tui.testing.prefix_cache import CacheResult, PrefixCacheSimulator, fingerprint
from myrm_tui.testing.validation import Rejection, sign_thinking, validate_anthropic, validate_openai


@dataclass
class Reply:
    text: str = ""
    tool_calls: list[tuple[str, Any]] = field(default_factory=list)  # (name, arguments dict or raw str)
    call_ids: list[str] = field(default_factory=list)  # the calls' ids (a random id for each one missing)
    reasoning: str = ""
    # Characters per streamed chunk of text (and of reasoning). Providers stream a few tokens a chunk; the
    # default is a few words, because every chunk costs litellm ~0.7 ms of CPU and a test that is not about
    # streaming only needs the reply to arrive in pieces. Tests about streaming set it small.
    chunk_size: int = 48
    args_chunk_size: int = 64  # characters per streamed piece of a tool call's JSON arguments
    # Whole tool calls (id, name, arguments) per chunk when over 1, as a delta may carry several: a reply
    # of 10,000 calls in 100 chunks instead of 20,000 (litellm spends ~1 ms of CPU a chunk).
    calls_per_chunk: int = 1
    chunk_delay: float = 0.0
    stall_after: int | None = None  # send this many chunks, then go silent (a hung model)
    # A runaway model: text chunks, each different, for ever (never a finish), ``chunk_delay`` apart, until
    # the client goes away or the emulator stops.
    endless: bool = False
    error: tuple[int, dict[str, Any]] | None = None  # HTTP status and JSON body instead of a reply
    drop_connection_after: int | None = None  # send this many chunks, then cut the connection
    # A broken provider: this body is sent as-is with HTTP 200 instead of a reply (an SSE stream of
    # only ``data: [DONE]``, an HTML error page, a JSON body for a streaming request...).
    raw_body: bytes | None = None
    raw_content_type: str = "text/event-stream"
    # Seconds before the answer starts (a slow model: a summarizer taking 5 s a call); ``stop()`` cuts it.
    delay: float = 0.0
    gate: threading.Event | None = None  # or: no answer until the test sets this event (ordering tests)
    # Mid-stream: after this many chunks, the rest waits until the test sets ``resume`` (a reply caught
    # while it streams, however slow the machine).
    pause_after: int | None = None
    resume: threading.Event | None = None


@dataclass
class Recorded:
    api: str  # "openai" | "anthropic"
    body: dict[str, Any]
    headers: dict[str, str]
    rejection: Rejection | None
    cache: CacheResult | None
    at: float
    cache_key: str = ""  # the cache namespace the request was accounted in


ReplyFn = Callable[[dict[str, Any]], Reply]


def _pieces(text: str, size: int) -> list[str]:
    """``text`` in consecutive slices of ``size`` characters, as it is streamed."""
    return [text[i : i + size] for i in range(0, len(text), size)]


def _call_id(reply: Reply, k: int) -> str:
    return reply.call_ids[k] if k < len(reply.call_ids) else f"call_{uuid.uuid4().hex[:12]}"


def _strip_cache_control(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _strip_cache_control(v) for k, v in obj.items() if k != "cache_control"}
    if isinstance(obj, list):
        return [_strip_cache_control(v) for v in obj]
    return obj


def _is_image(part: Any) -> bool:
    return isinstance(part, dict) and part.get("type") in ("image_url", "image")


def _count_images(content: Any) -> int:
    if not isinstance(content, list):
        return 0
    return sum(
        1 if _is_image(p) else _count_images(p.get("content")) if isinstance(p, dict) else 0 for p in content
    )


def _without_images(content: Any) -> Any:
    if not isinstance(content, list):
        return content
    return [
        {**p, "content": _without_images(p.get("content"))} if isinstance(p, dict) and "content" in p else p
        for p in content
        if not _is_image(p)
    ]


class ProviderEmulator:
    def __init__(self, window: int = 128_000, min_cache_tokens: int = 1024) -> None:
        self.window = window
        self.windows: dict[str, int] = {}
        # The provider's tokenizer against ours: real ones differ (Claude's and Gemini's count more
        # than cl100k), so a request our count fits can still overflow. Applied to the window check.
        self.token_scale = 1.0
        self.script: deque[Reply | ReplyFn] = deque()
        self.default: Reply | ReplyFn = Reply(text="ok")
        self.requests: list[Recorded] = []
        self.openai_cache = PrefixCacheSimulator("automatic", min_cache_tokens)
        # "auth": ``prompt_cache_key``, else the API key (lenient); "key": ``prompt_cache_key`` only —
        # without one, a request shares a cache only with identical requests (prefix-hash routing
        # spreads growing conversations over machines), so a missing key shows in the figures.
        self.openai_cache_by = "auth"
        self.anthropic_cache = PrefixCacheSimulator("explicit", min_cache_tokens)
        self.counter = TokenCounter()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None
        self.port = 0
        self._release = threading.Event()  # set to end every stalled stream
        # As Ollama, vLLM and LM Studio: chat completions only under /v1; the bare path answers 404.
        self.versioned_only = False
        # As a real provider: with a key set here, any other ``Authorization`` is refused with a 401
        # before the request is read (None: every key is taken).
        self.api_key: str | None = None

    # -- lifecycle ------------------------------------------------------------------------------
    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_base(self) -> str:
        return f"{self.url}/v1"

    def start(self) -> ProviderEmulator:
        ready = threading.Event()

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            app = web.Application(client_max_size=64 * 1024 * 1024)
            app.router.add_post("/v1/chat/completions", self._openai)
            app.router.add_post("/chat/completions", self._openai)
            app.router.add_post("/v1/messages", self._anthropic)
            self._runner = web.AppRunner(app, access_log=None)
            loop.run_until_complete(self._runner.setup())
            site = web.TCPSite(self._runner, "127.0.0.1", 0)
            loop.run_until_complete(site.start())
            self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
            ready.set()
            loop.run_forever()
            loop.run_until_complete(self._runner.cleanup())
            loop.close()

        self._thread = threading.Thread(target=run, name="provider-emulator", daemon=True)
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError("provider emulator did not start")
        return self

    def stop(self) -> None:
        self._release.set()
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(10)

    def __enter__(self) -> ProviderEmulator:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- scripting ------------------------------------------------------------------------------
    def enqueue(self, *replies: Reply | ReplyFn) -> None:
        self.script.extend(replies)

    def _next(self, body: dict[str, Any]) -> Reply:
        # Cache preheats and keep-alive probes (a 1-token reply) never take a scripted turn.
        if (body.get("max_tokens") or body.get("max_completion_tokens")) == 1:
            return Reply(text="o")
        item = self.script.popleft() if self.script else self.default
        return item(body) if callable(item) else item

    @property
    def accepted(self) -> list[Recorded]:
        return [r for r in self.requests if r.rejection is None]

    @property
    def rejected(self) -> list[Recorded]:
        return [r for r in self.requests if r.rejection is not None]

    # -- token accounting -----------------------------------------------------------------------
    def _segments(self, body: dict[str, Any], api: str) -> tuple[list[tuple[str, int]], list[int]]:
        segs: list[tuple[str, int]] = []
        marks: list[int] = []
        tools = body.get("tools") or []
        if tools:
            clean = _strip_cache_control(tools)
            segs.append((fingerprint(clean), self.counter.text(json.dumps(clean))))
            if any("cache_control" in t for t in tools):
                marks.append(0)
        system = body.get("system")
        if system:
            clean = _strip_cache_control(system)
            segs.append(
                (
                    fingerprint(clean),
                    self.counter.text(json.dumps(clean) if not isinstance(clean, str) else clean),
                )
            )
            if isinstance(system, list) and any("cache_control" in b for b in system):
                marks.append(len(segs) - 1)
        for m in body.get("messages") or []:
            clean = _strip_cache_control(m)
            content = clean.get("content")
            images = _count_images(content)
            if images:  # an image costs a flat amount, not the length of its base64 text
                content = _without_images(content)
            text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
            # The model reads a call's arguments as it wrote them: non-ASCII text is not \u-escaped (that
            # tripled the count of a call whose arguments hold non-BMP text).
            calls = clean.get("tool_calls")
            extra = json.dumps(calls, ensure_ascii=False) if calls else ""
            tokens = 4 + self.counter.text(text or "") + self.counter.text(extra) + images * IMAGE_TOKENS
            segs.append((fingerprint(clean), tokens))
            c = m.get("content")
            if isinstance(c, list) and any(isinstance(b, dict) and "cache_control" in b for b in c):
                marks.append(len(segs) - 1)
        return segs, marks

    def _window(self, body: dict[str, Any]) -> int:
        return self.windows.get(str(body.get("model")), self.window)

    # -- handlers -------------------------------------------------------------------------------
    async def _read(self, request: web.Request) -> dict[str, Any] | web.Response:
        try:
            body = await request.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            return web.json_response(
                {
                    "error": {
                        "message": "We could not parse the JSON body of your request.",
                        "type": "invalid_request_error",
                    }
                },
                status=400,
            )
        return (
            body
            if isinstance(body, dict)
            else web.json_response({"error": {"message": "body must be an object"}}, status=400)
        )

    async def _openai(self, request: web.Request) -> web.StreamResponse:
        if self.versioned_only and not request.path.startswith("/v1/"):
            return web.Response(status=404, text="404 page not found")
        if self.api_key is not None and request.headers.get("Authorization") != f"Bearer {self.api_key}":
            error = {"message": "Incorrect API key provided.", "type": "invalid_request_error"}
            return web.json_response({"error": {**error, "code": "invalid_api_key"}}, status=401)
        body = await self._read(request)
        if isinstance(body, web.Response):
            return body
        segs, _ = self._segments(body, "openai")
        total = int(sum(n for _, n in segs) * self.token_scale)
        rej = validate_openai(body, self._window(body), total)
        headers = dict(request.headers)
        if rej is not None:
            self.requests.append(Recorded("openai", body, headers, rej, None, time.time()))
            return web.json_response(
                {"error": {"message": rej.message, "type": rej.type, "param": None, "code": rej.code}},
                status=rej.status,
            )
        key = self._openai_cache_key(body, headers, segs)
        cache = self.openai_cache.request(key, segs)
        self.requests.append(Recorded("openai", body, headers, None, cache, time.time(), key))
        reply = self._next(body)
        if reply.delay or reply.gate is not None:
            await self._wait(reply.delay, reply.gate)
            if request.transport is None or request.transport.is_closing():
                return web.Response(status=499)  # the client went away meanwhile: nothing to send
        if reply.error:
            return web.json_response(reply.error[1], status=reply.error[0])
        if (broken := await self._broken(reply)) is not None:
            return broken
        completion = max(1, len(reply.text) // 4 + 5 * len(reply.tool_calls))
        usage: dict[str, Any] = {
            "prompt_tokens": cache.input_tokens,
            "completion_tokens": completion,
            "total_tokens": cache.input_tokens + completion,
            "prompt_tokens_details": {"cached_tokens": cache.cached_tokens},
        }
        if not body.get("stream"):
            return web.json_response(self._openai_full(body, reply, usage))
        return await self._openai_stream(request, body, reply, usage)

    def _openai_cache_key(
        self, body: dict[str, Any], headers: dict[str, str], segs: list[tuple[str, int]]
    ) -> str:
        routed = body.get("prompt_cache_key")
        if routed:
            return f"key:{routed}"
        if self.openai_cache_by == "key":
            return f"content:{fingerprint(segs)}"
        return str(headers.get("Authorization", "anon"))

    def _openai_full(self, body: dict[str, Any], reply: Reply, usage: dict[str, Any]) -> dict[str, Any]:
        msg: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
        if reply.tool_calls:
            msg["tool_calls"] = [
                {
                    "id": _call_id(reply, k),
                    "type": "function",
                    "function": {"name": n, "arguments": a if isinstance(a, str) else json.dumps(a)},
                }
                for k, (n, a) in enumerate(reply.tool_calls)
            ]
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model"),
            "choices": [
                {"index": 0, "message": msg, "finish_reason": "tool_calls" if reply.tool_calls else "stop"}
            ],
            "usage": usage,
        }

    async def _openai_stream(
        self, request: web.Request, body: dict[str, Any], reply: Reply, usage: dict[str, Any]
    ) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        await resp.prepare(request)
        cid = f"chatcmpl-{uuid.uuid4().hex[:12]}"
        base = {
            "id": cid,
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": body.get("model"),
        }
        if reply.endless:
            await self._endless(resp, base, reply)
            return resp
        chunks: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
        chunks += [{"reasoning_content": p} for p in _pieces(reply.reasoning, reply.chunk_size)]
        chunks += [{"content": p} for p in _pieces(reply.text, reply.chunk_size)]
        for k, (name, args) in enumerate(reply.tool_calls if reply.calls_per_chunk <= 1 else ()):
            raw = args if isinstance(args, str) else json.dumps(args)
            chunks.append(
                {
                    "tool_calls": [
                        {
                            "index": k,
                            "id": _call_id(reply, k),
                            "type": "function",
                            "function": {"name": name, "arguments": ""},
                        }
                    ]
                }
            )
            chunks += [
                {"tool_calls": [{"index": k, "function": {"arguments": p}}]}
                for p in _pieces(raw, reply.args_chunk_size)
            ]
        if reply.calls_per_chunk > 1:
            whole = [
                {
                    "index": k,
                    "id": _call_id(reply, k),
                    "type": "function",
                    "function": {
                        "name": name,
                        "arguments": args if isinstance(args, str) else json.dumps(args),
                    },
                }
                for k, (name, args) in enumerate(reply.tool_calls)
            ]
            step = reply.calls_per_chunk
            chunks += [{"tool_calls": whole[i : i + step]} for i in range(0, len(whole), step)]
        if not await self._send_chunks(
            resp,
            [{**base, "choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in chunks],
            reply,
        ):
            return resp
        finish = "tool_calls" if reply.tool_calls else "stop"
        await self._sse(resp, {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
        if (body.get("stream_options") or {}).get("include_usage"):
            await self._sse(resp, {**base, "choices": [], "usage": usage})
        await resp.write(b"data: [DONE]\n\n")
        await resp.write_eof()
        return resp

    async def _endless(self, resp: web.StreamResponse, base: dict[str, Any], reply: Reply) -> None:
        n = 0
        try:
            while not self._release.is_set():
                n += 1
                delta = {"content": f"{reply.text or 'and'} {n} {uuid.uuid4().hex[: n % 7 + 1]} "}
                await self._sse(
                    resp, {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
                )
                await asyncio.sleep(reply.chunk_delay)  # 0 still lets the client's disconnect through
        except ConnectionError:  # the client gave up on it: what a runaway stream is for
            return

    async def _wait(self, seconds: float, gate: threading.Event | None) -> None:
        end = time.monotonic() + seconds
        while not self._release.is_set() and (
            time.monotonic() < end or (gate is not None and not gate.is_set())
        ):
            await asyncio.sleep(0.01 if gate is not None else min(0.05, max(end - time.monotonic(), 0)))

    async def _broken(self, reply: Reply) -> web.Response | None:
        """The reply of a misbehaving provider (``raw_body``), or None for a normal one."""
        if reply.raw_body is not None:
            return web.Response(
                body=reply.raw_body, status=200, headers={"Content-Type": reply.raw_content_type}
            )
        return None

    async def _send_chunks(
        self, resp: web.StreamResponse, payloads: list[dict[str, Any]], reply: Reply, event: str | None = None
    ) -> bool:
        for n, p in enumerate(payloads):
            if reply.stall_after is not None and n >= reply.stall_after:
                await asyncio.get_running_loop().run_in_executor(None, self._release.wait, 600)
                return False
            if reply.drop_connection_after is not None and n >= reply.drop_connection_after:
                if resp._req is not None and resp._req.transport is not None:  # type: ignore[attr-defined]
                    resp._req.transport.close()  # type: ignore[attr-defined]
                return False
            if reply.pause_after is not None and n == reply.pause_after and reply.resume is not None:
                await self._wait(0.0, reply.resume)
            if reply.chunk_delay:
                await asyncio.sleep(reply.chunk_delay)
            await self._sse(resp, p, p.get("type") if event is None else event)
        return True

    @staticmethod
    async def _sse(resp: web.StreamResponse, payload: dict[str, Any], event: str | None = None) -> None:
        prefix = f"event: {event}\n" if event else ""
        await resp.write(f"{prefix}data: {json.dumps(payload)}\n\n".encode())

    async def _anthropic(self, request: web.Request) -> web.StreamResponse:
        body = await self._read(request)
        if isinstance(body, web.Response):
            return body
        segs, marks = self._segments(body, "anthropic")
        total = int(sum(n for _, n in segs) * self.token_scale)
        rej = validate_anthropic(body, self._window(body), total)
        headers = dict(request.headers)
        if rej is not None:
            self.requests.append(Recorded("anthropic", body, headers, rej, None, time.time()))
            return web.json_response(
                {"type": "error", "error": {"type": rej.type, "message": rej.message}}, status=rej.status
            )
        key = str(headers.get("x-api-key", "anon"))
        cache = self.anthropic_cache.request(key, segs, marks)
        self.requests.append(Recorded("anthropic", body, headers, None, cache, time.time()))
        reply = self._next(body)
        if reply.delay or reply.gate is not None:
            await self._wait(reply.delay, reply.gate)
            if request.transport is None or request.transport.is_closing():
                return web.Response(status=499)  # the client went away meanwhile: nothing to send
        if reply.error:
            return web.json_response(reply.error[1], status=reply.error[0])
        if (broken := await self._broken(reply)) is not None:
            return broken
        usage = {
            "input_tokens": cache.input_tokens - cache.cached_tokens - cache.cache_write_tokens,
            "cache_read_input_tokens": cache.cached_tokens,
            "cache_creation_input_tokens": cache.cache_write_tokens,
            "output_tokens": max(1, len(reply.text) // 4),
        }
        stop = "tool_use" if reply.tool_calls else "end_turn"
        blocks: list[dict[str, Any]] = []
        if (body.get("thinking") or {}).get("type") == "enabled":
            # Extended thinking: every reply opens with a thinking block the API signs.
            thought = reply.reasoning or "Let me think about this request."
            blocks.append({"type": "thinking", "thinking": thought, "signature": sign_thinking(thought)})
        if reply.text:
            blocks.append({"type": "text", "text": reply.text})
        for name, args in reply.tool_calls:
            blocks.append(
                {
                    "type": "tool_use",
                    "id": f"toolu_{uuid.uuid4().hex[:12]}",
                    "name": name,
                    "input": args if isinstance(args, dict) else json.loads(args or "{}"),
                }
            )
        mid = f"msg_{uuid.uuid4().hex[:12]}"
        if not body.get("stream"):
            return web.json_response(
                {
                    "id": mid,
                    "type": "message",
                    "role": "assistant",
                    "model": body.get("model"),
                    "content": blocks,
                    "stop_reason": stop,
                    "stop_sequence": None,
                    "usage": usage,
                }
            )
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        start_usage = {**usage, "output_tokens": 1}
        events: list[dict[str, Any]] = [
            {
                "type": "message_start",
                "message": {
                    "id": mid,
                    "type": "message",
                    "role": "assistant",
                    "model": body.get("model"),
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": start_usage,
                },
            }
        ]
        for i, b in enumerate(blocks):
            if b["type"] == "thinking":
                events.append(
                    {
                        "type": "content_block_start",
                        "index": i,
                        "content_block": {"type": "thinking", "thinking": "", "signature": ""},
                    }
                )
                events += [
                    {
                        "type": "content_block_delta",
                        "index": i,
                        "delta": {"type": "thinking_delta", "thinking": p},
                    }
                    for p in _pieces(b["thinking"], reply.chunk_size)
                ]
                events.append(
                    {
                        "type": "content_block_delta",
                        "index": i,
                        "delta": {"type": "signature_delta", "signature": b["signature"]},
                    }
                )
            elif b["type"] == "text":
                events.append(
                    {"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}}
                )
                events += [
                    {"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": p}}
                    for p in _pieces(b["text"], reply.chunk_size)
                ]
            else:
                events.append(
                    {
                        "type": "content_block_start",
                        "index": i,
                        "content_block": {"type": "tool_use", "id": b["id"], "name": b["name"], "input": {}},
                    }
                )
                raw = json.dumps(b["input"])
                events += [
                    {
                        "type": "content_block_delta",
                        "index": i,
                        "delta": {"type": "input_json_delta", "partial_json": p},
                    }
                    for p in _pieces(raw, reply.args_chunk_size)
                ]
            events.append({"type": "content_block_stop", "index": i})
        events.append(
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": usage["output_tokens"]},
            }
        )
        events.append({"type": "message_stop"})
        if await self._send_chunks(resp, events, reply, event=None):
            await resp.write_eof()
        return resp
