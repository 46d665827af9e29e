"""``myrm ask --output-format stream-json``: one JSON object a line, a versioned schema (``SCHEMA``,
documented in docs/headless.md). What each agent event becomes; the running totals the final ``result``
reports."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import select
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from myrm_tui.agent.events import (
    AgentEvent,
    AssistantSaved,
    CompactionMade,
    ContextReport,
    Notice,
    ReasoningChunk,
    StreamCut,
    SummaryProgress,
    TextChunk,
    ToolFinished,
    ToolStarted,
    TurnDone,
    TurnFailed,
    UserSaved,
)
from myrm_tui.context.text.call_args import call_args

log = logging.getLogger(__name__)

VERSION = 1

# Exit codes of ``myrm ask`` (every output format).
EXIT_OK, EXIT_TURN_FAILED, EXIT_USAGE = 0, 1, 2  # signals: 128 + the signal's number (SIGTERM: 143)

_STR, _INT, _NUM, _BOOL = {"type": "string"}, {"type": "integer"}, {"type": "number"}, {"type": "boolean"}
_USAGE = {
    "type": ["object", "null"],
    "properties": {"input_tokens": _INT, "output_tokens": _INT, "cached_input_tokens": _INT},
    "required": ["input_tokens", "output_tokens", "cached_input_tokens"],
    "additionalProperties": False,
}
_CONTEXT: dict[str, Any] = {
    "type": "object",
    "properties": {"tokens": _INT, "window": _INT},
    "required": ["tokens", "window"],
    "additionalProperties": False,
}


def _event(name: str, /, **props: Any) -> dict[str, Any]:
    properties = {"type": {"const": name}, "version": {"const": VERSION}, **props}
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


# The JSON Schema of every line: one of these objects. A new field or event means a new VERSION.
SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "myrm stream-json event",
    "oneOf": [
        _event(
            "init",
            session_id=_STR,
            model=_STR,
            window=_INT,
            workspace=_STR,
            tools={"type": "array", "items": _STR},
        ),
        _event("user", text=_STR),
        _event("message_delta", text=_STR),
        _event("thinking_delta", text=_STR),
        _event("message", role={"const": "assistant"}, text=_STR, usage=_USAGE),
        _event("tool_use", id=_STR, name=_STR, input={}),
        _event("tool_result", id=_STR, name=_STR, output=_STR, is_error=_BOOL),
        _event("context", tokens=_INT, window=_INT),
        _event(
            "compaction", trigger=_STR, level=_STR, tokens_before=_INT, tokens_after=_INT, duration_ms=_NUM
        ),
        _event("retry", reason=_STR, partial=_STR),
        _event("notice", level={"enum": ["info", "warning", "error"]}, text=_STR),
        _event("summary", state=_STR),
        _event("error", kind=_STR, message=_STR, unsent=_BOOL),
        _event(
            "result",
            status={"enum": ["success", "error", "interrupted"]},
            session_id=_STR,
            steps=_INT,
            usage=_USAGE,
            cost_usd=_NUM,
            context=_CONTEXT,
            duration_ms=_NUM,
        ),
    ],
}


@dataclass
class StreamJson:
    """Turns a session's events into stream-json lines; keeps the totals the ``result`` line reports."""

    session_id: str
    model: str
    started: float = field(default_factory=time.monotonic)
    input_tokens: int = 0
    output_tokens: int = 0
    cached: int = 0
    cost: float = 0.0
    context: tuple[int, int] = (0, 0)
    failed: bool = False
    steps: int = 0  # replies saved in the turn under way
    in_turn: bool = False  # a line of a turn went out and its ``result`` did not yet

    def init(self, window: int, workspace: str, tools: list[str]) -> dict[str, Any]:
        fields = {"session_id": self.session_id, "model": self.model, "window": window}
        return self._line("init", **fields, workspace=workspace, tools=tools)

    def event(self, ev: AgentEvent, schema_tokens: int = 0) -> dict[str, Any] | None:
        """The line for ``ev``, or None for events only a live view shows (a running tool's output)."""
        line = self._event(ev, schema_tokens)
        if line is not None:
            self.in_turn = not isinstance(ev, TurnDone)
        return line

    def stopped(self) -> dict[str, Any] | None:
        """The ``result`` (status interrupted) of a turn a signal stopped, or None between turns: the
        stream's consumer still sees each turn end."""
        return self.event(TurnDone(self.steps, interrupted=True)) if self.in_turn else None

    def _event(self, ev: AgentEvent, schema_tokens: int) -> dict[str, Any] | None:
        match ev:
            case UserSaved():
                return self._line("user", text=ev.message.text)
            case TextChunk():
                return self._line("message_delta", text=ev.text)
            case ReasoningChunk():
                return self._line("thinking_delta", text=ev.text)
            case AssistantSaved():
                self.steps += 1
                usage = None
                if ev.usage is not None:
                    from myrm_tui.llm.pricing import estimate_cost

                    self.input_tokens += ev.usage.prompt_tokens
                    self.output_tokens += ev.usage.completion_tokens
                    self.cached += ev.usage.cached_tokens or 0
                    self.cost += estimate_cost(self.model, ev.usage)
                    usage = _usage(
                        ev.usage.prompt_tokens, ev.usage.completion_tokens, ev.usage.cached_tokens or 0
                    )
                return self._line("message", role="assistant", text=ev.message.text, usage=usage)
            case ToolStarted():
                # guard: stream-json-reads-arguments-through-call-args
                parsed = call_args(ev.call)  # the one reader: any text, nested past the recursion limit too
                args: Any = dict(parsed.fields) if parsed.ok else ev.call.arguments
                try:
                    json.dumps(args, allow_nan=False)  # 1e999 or NaN: no JSON a strict reader takes
                except (ValueError, RecursionError):
                    args = ev.call.arguments  # the model's arguments, as it wrote them
                return self._line("tool_use", id=ev.call.id, name=ev.call.name, input=args)
            case ToolFinished():
                failed = bool(ev.message.meta.get("is_error"))
                return self._line(
                    "tool_result", id=ev.call.id, name=ev.call.name, output=ev.message.text, is_error=failed
                )
            case ContextReport():
                self.context = (ev.tokens + schema_tokens, ev.window)
                return self._line("context", tokens=self.context[0], window=ev.window)
            case CompactionMade():
                r = ev.record
                return self._line(
                    "compaction",
                    trigger=str(r.trigger),
                    level=r.level,
                    tokens_before=r.tokens_before,
                    tokens_after=r.tokens_after,
                    duration_ms=round(r.duration_ms, 1),
                )
            case StreamCut():
                return self._line("retry", reason="stream_cut", partial=ev.partial)
            case Notice():
                return self._line("notice", level=ev.level, text=ev.text)
            case SummaryProgress():
                return self._line("summary", state=ev.state)
            case TurnFailed():
                self.failed = True
                return self._line("error", kind=ev.kind, message=ev.error, unsent=ev.unsent)
            case TurnDone():
                status = "error" if self.failed else "interrupted" if ev.interrupted else "success"
                self.failed, self.steps = False, 0  # the next turn (stream-json input) starts clean
                return self._line(
                    "result",
                    status=status,
                    session_id=self.session_id,
                    steps=ev.steps,
                    usage=_usage(self.input_tokens, self.output_tokens, self.cached),
                    cost_usd=round(self.cost, 6),
                    context={"tokens": self.context[0], "window": self.context[1]},
                    duration_ms=round((time.monotonic() - self.started) * 1000, 1),
                )
        return None

    @staticmethod
    def _line(name: str, /, **fields: Any) -> dict[str, Any]:
        return {"type": name, "version": VERSION, **fields}


def _usage(inp: int, out: int, cached: int) -> dict[str, int]:
    return {"input_tokens": inp, "output_tokens": out, "cached_input_tokens": cached}


def prompts_from(lines: Any) -> Any:
    """``--input-format stream-json``: each line ``{"type": "user", "text": "…"}`` is one turn, or a user
    message as Claude Code's ``--input-format stream-json`` writes it (``{"type": "user", "message":
    {"role": "user", "content": "…" or text parts}}``), so a script written for one drives the other.
    Yields the texts; a line that is neither raises ``ValueError`` naming the line."""
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        # guard: stream-json-input-nested-too-deep
        except (ValueError, RecursionError):  # RecursionError: nested past the interpreter's limit
            raise ValueError(f"stdin line {n}: not JSON") from None
        text = _user_text(obj, n)
        if text is None:
            raise ValueError(f'stdin line {n}: expected {{"type": "user", "text": "…"}}')
        yield text


def _user_text(obj: Any, n: int) -> str | None:
    """The text of one input line's user message, or None when the line is not one."""
    if not isinstance(obj, dict) or obj.get("type") != "user":
        return None
    if isinstance(obj.get("text"), str):
        return str(obj["text"])
    message = obj.get("message")
    if not isinstance(message, dict) or message.get("role", "user") != "user":
        return None
    content = message.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list) or not content:
        return None
    texts = []
    for part in content:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind != "text" or not isinstance(part.get("text"), str):
            # An image or a tool result cannot be given here: refused, never dropped unseen.
            raise ValueError(
                f"stdin line {n}: a {str(kind or type(part).__name__)[:40]!r} part; only text parts are read"
            )
        texts.append(part["text"])
    return "\n".join(texts)


# What one message from a program may be: as ``myrm acp``'s line limit. Reading stops there (``yes |
# myrm ask -`` would otherwise grow without end), far above what a model's window takes anyway.
STDIN_LIMIT = 50 * 1024 * 1024


def _stdin_fd() -> int | None:
    """Standard input's descriptor; None for a stdin without one (a test's) or none at all (``<&-``)."""
    try:
        return sys.stdin.fileno()
    except (AttributeError, OSError, ValueError):
        return None


def _stdin_chunks() -> Iterator[bytes]:
    """Standard input's bytes, read from its descriptor with ``os.read``: a thread waiting here holds none
    of ``sys.stdin``'s locks, so nothing else that touches the stream (or the interpreter's exit) waits on
    it. A stdin without a descriptor (a test's) is read as text and encoded back; a closed one is empty."""
    # guard: stdin-closed-reads-as-empty
    if sys.stdin is None:  # started with descriptor 0 closed (<&-): Python sets no stdin at all
        return
    fd = _stdin_fd()
    if fd is None:
        yield from (t.encode("utf-8", "surrogateescape") for t in iter(lambda: sys.stdin.read(1 << 16), ""))
        return
    while chunk := os.read(fd, 1 << 16):
        yield chunk


def lines_of(chunks: Iterable[bytes], limit: int | None = None) -> Iterator[str]:
    """The lines of a byte stream as text (bytes that are not UTF-8 become U+FFFD), each found by looking
    at each chunk once (a line of many chunks costs its length, not its length squared); a line over
    ``limit`` bytes (``STDIN_LIMIT``) is a ``ValueError`` naming it, raised before more is kept."""
    limit = STDIN_LIMIT if limit is None else limit
    parts: list[bytes] = []
    size = n = 0
    for chunk in chunks:
        *whole, rest = chunk.split(b"\n")
        for piece in whole:
            n += 1
            size += len(piece)
            # guard: stdin-a-line-is-bounded
            if size > limit:
                raise ValueError(f"stdin line {n}: over {limit:,} bytes")
            yield (b"".join(parts) + piece).decode(errors="replace") + "\n"
            parts, size = [], 0
        parts.append(rest)
        size += len(rest)
        if size > limit:
            raise ValueError(f"stdin line {n + 1}: over {limit:,} bytes")
    if size:
        yield b"".join(parts).decode(errors="replace")


def stdin_lines() -> Iterator[str]:
    """Standard input's lines (``--input-format stream-json``), each at most ``STDIN_LIMIT`` bytes."""
    yield from lines_of(_stdin_chunks())


def read_stdin(limit: int | None = None) -> str:
    """All of standard input as text, at most ``limit`` bytes (``STDIN_LIMIT``): past it, a ``ValueError``
    (the command's one line, exit 2) instead of reading on."""
    limit = STDIN_LIMIT if limit is None else limit
    parts: list[bytes] = []
    size = 0
    for chunk in _stdin_chunks():
        size += len(chunk)
        # guard: stdin-a-message-is-bounded
        if size > limit:
            raise ValueError(f"the message on stdin is over {limit:,} bytes; attach a large file instead")
        parts.append(chunk)
    return b"".join(parts).decode(errors="replace")


def _not_blank(message: str) -> str:
    # An empty message was sent as it was, and a model answers nothing with a paragraph of apology.
    # guard: ask-an-empty-message-is-refused
    if not message.strip():
        raise ValueError('the message is empty: give one (myrm ask "…") or pipe it in')
    return message


def stdin_message(limit: int | None = None) -> Iterator[str]:
    """All of standard input as one message (``myrm ask -``, or ``myrm ask`` with stdin piped)."""
    yield _not_blank(read_stdin(limit))


# How long ``myrm ask "MESSAGE"`` waits for standard input's first byte (or its end) before going on
# without it: a program that started myrm with an open, silent pipe (its default stdin) must not hang the
# turn for ever. ``MYRM_STDIN_WAIT`` (seconds) changes it.
STDIN_WAIT_S = 3.0


def stdin_is_terminal() -> bool:
    """Whether standard input is a terminal (a stdin without a descriptor, a test's, is not)."""
    fd = _stdin_fd()
    return fd is not None and os.isatty(fd)


def _stdin_ready(wait: float) -> bool:
    """Whether standard input has a byte, or its end, within ``wait`` seconds (a file or /dev/null at once;
    a stdin without a descriptor always)."""
    fd = _stdin_fd()
    return fd is None or bool(select.select([fd], [], [], wait)[0])


def _stdin_wait() -> float:
    try:
        return max(0.0, float(os.environ.get("MYRM_STDIN_WAIT", STDIN_WAIT_S)))
    except ValueError:
        return STDIN_WAIT_S


def prompt_with_stdin(prompt: str) -> Iterator[str]:
    """``myrm ask "MESSAGE"`` with something piped in (``pytest 2>&1 | myrm ask "why does it fail?"``): the
    message, then standard input in a ``<stdin>`` block, as Codex's ``exec`` sends it (it was dropped
    unread). From a terminal nothing is read; a pipe that brings neither a byte nor its end within
    ``MYRM_STDIN_WAIT`` seconds is left unread, with a line on stderr saying so."""
    if stdin_is_terminal():
        yield _not_blank(prompt)
        return
    wait = _stdin_wait()
    # guard: ask-a-silent-pipe-is-not-waited-on
    if not _stdin_ready(wait):
        print(
            f"myrm: nothing came on standard input in {wait:g} s; going on without it "
            "(< /dev/null skips the wait)",
            file=sys.stderr,
        )
        yield _not_blank(prompt)
        return
    piped = read_stdin()
    yield _not_blank(f"{prompt}\n\n<stdin>\n{piped.rstrip(chr(10))}\n</stdin>" if piped.strip() else prompt)


async def next_prompt(texts: Iterator[str]) -> str | None:
    """``next(texts, None)`` read in a daemon thread: waiting on stdin for the next line must not block the
    event loop (SIGTERM's handler and background work run on it), nor, once stopped, the process's exit."""
    loop = asyncio.get_running_loop()
    got: asyncio.Future[str | None] = loop.create_future()

    def settle(value: str | None, exc: BaseException | None) -> None:
        if not got.done():
            if exc is not None:
                got.set_exception(exc)
            else:
                got.set_result(value)

    def read() -> None:
        value, exc = None, None
        try:
            value = next(texts, None)
        except Exception as e:  # ValueError for a line that is not a message; an OSError of stdin
            log.info("the next prompt from stdin: %s", e, exc_info=True)  # the caller says it in one line
            exc = e
        try:
            loop.call_soon_threadsafe(settle, value, exc)
        except RuntimeError:  # the loop closed while this waited: the run is over
            pass

    threading.Thread(target=read, name="myrm-stdin", daemon=True).start()
    return await got
