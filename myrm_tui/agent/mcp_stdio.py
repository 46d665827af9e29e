"""The stdio transport of an MCP server, bounded against a hostile one (the SDK's ``stdio_client`` is not):

- a message (one line of stdout) is read in time linear in its size, and one over ``MAX_MESSAGE_BYTES``
  ends the connection with one line (``McpServerError``), before myrm's memory does: the SDK's reader
  joins the pending text to each new chunk and splits it again, quadratic in a line's length (a 50 MB
  result took 20 s of CPU and 300 MB; an endless line grows until memory runs out);
- bytes that are not UTF-8 are decoded with U+FFFD (the SDK's strict decoding killed the reader, and the
  call waited for its time limit);
- the server's stderr goes to its log file up to ``STDERR_LOG_BYTES`` a start, the rest read and dropped
  (a server that logs without end filled the disk), never to the terminal.
- its messages are on a budget (``MessageBudget``: ``BURST`` at once, ``RATE`` a second after): a server
  sending notifications without end (each costs myrm ~70 µs of CPU to parse and dispatch: a core's worth
  until the call's 120 s limit) is stopped with one line once it is spent, its call failing then.

Its streams are the SDK's (``ClientSession`` takes them as ``stdio_client``'s). Shutting down closes
stdin, waits ``STOP_WAIT`` for the server to exit, then kills its process group.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager, suppress
from typing import Any, BinaryIO

import anyio
from anyio.abc import Process

log = logging.getLogger(__name__)

MAX_MESSAGE_BYTES = 64 << 20  # one JSON-RPC message from a server: a 50 MB result is read (and vaulted)
STDERR_LOG_BYTES = 1 << 20  # of a server's stderr written to its log, each time it starts
READ_CHUNK = 1 << 16
STOP_WAIT = 2.0  # seconds a server has to exit once its stdin is closed
# A server's messages (notifications, requests, answers, lines that are not JSON, all alike): BURST at once,
# then RATE a second. A progress or log stream of a long tool (tens a second) never comes near it; a flood
# is stopped within BURST messages (~0.35 s of myrm's CPU) and cannot hold more than ~4 % of a core.
BURST = 5_000
RATE = 500.0


class MessageBudget:
    """A token bucket: ``take(now)`` spends one message at time ``now`` (seconds, monotonic); False once
    more than ``burst`` plus ``rate`` a second since the first have come."""

    def __init__(self, burst: int = BURST, rate: float = RATE) -> None:
        self.burst, self.rate = burst, rate
        self.left = float(burst)
        self.at: float | None = None

    def take(self, now: float) -> bool:
        if self.at is not None:
            self.left = min(float(self.burst), self.left + (now - self.at) * self.rate)
        self.at = now
        if self.left < 1:
            return False
        self.left -= 1
        return True


class McpServerError(Exception):
    """What a server did that ends its connection (its ``str`` is the one line the user sees)."""


def _parse(line: bytes) -> Any:
    """One stdout line as the SDK's session takes it: a ``SessionMessage``, or the parse error (logged;
    the session shows it and goes on, as the SDK's transport does)."""
    from mcp import types
    from mcp.shared.message import SessionMessage

    try:
        message = types.jsonrpc_message_adapter.validate_json(
            line.decode("utf-8", errors="replace"), by_name=False
        )
    except ValueError as exc:
        log.warning("an MCP server sent a line that is not JSON-RPC (%d bytes)", len(line), exc_info=True)
        return exc
    return SessionMessage(message)


@asynccontextmanager
async def stdio_transport(
    command: str, args: Sequence[str], env: dict[str, str], errlog: BinaryIO
) -> AsyncIterator[tuple[Any, Any]]:
    """Start ``command`` (its environment: the SDK's default variables and ``env``) and yield the
    (read, write) streams of its session; its stderr goes to ``errlog``, bounded."""
    from mcp.client.stdio import get_default_environment
    from mcp.shared.message import SessionMessage

    process = await anyio.open_process(
        [command, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**get_default_environment(), **env},
        start_new_session=True,  # its own group: stopped whole
    )
    hostile: list[str] = []  # what the server did that stops it: killed at once, not asked to exit

    def broke(what: str) -> McpServerError:
        hostile.append(what)
        return McpServerError(f"{what}; the server was stopped")

    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)

    async def read_stdout() -> None:
        assert process.stdout is not None
        pending = bytearray()
        budget = MessageBudget(BURST, RATE)
        async with read_writer:
            while True:
                try:
                    chunk = await process.stdout.receive(READ_CHUNK)
                except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                    return  # the server is gone: the session sees the stream end
                *whole, rest = chunk.split(b"\n")
                for n, part in enumerate(whole):
                    line = bytes(pending + part) if n == 0 and pending else part
                    if n == 0:
                        pending.clear()
                    if line.strip():
                        # guard: mcp-a-servers-messages-are-on-a-budget
                        if not budget.take(anyio.current_time()):
                            raise broke(
                                f"it sent messages without pause (over {BURST:,} at once, then "
                                f"{RATE:,.0f} a second)"
                            )
                        try:
                            await read_writer.send(_parse(line))
                        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                            # guard: mcp-what-a-server-says-as-it-closes-is-dropped
                            return  # the session is gone (closed): what the server still says is not read
                pending += rest
                # guard: mcp-a-message-has-a-size-limit
                if len(pending) > MAX_MESSAGE_BYTES:
                    mb = MAX_MESSAGE_BYTES >> 20
                    raise broke(f"it sent a message over {mb} MB (not read)")

    async def write_stdin() -> None:
        assert process.stdin is not None
        async with write_reader:
            async for message in write_reader:
                data = message.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                try:
                    await process.stdin.send(data.encode())
                except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                    await read_writer.aclose()  # the session sees the end, no request waits forever
                    return

    async def drain_stderr() -> None:
        assert process.stderr is not None
        room = STDERR_LOG_BYTES
        while True:
            try:
                chunk = await process.stderr.receive(READ_CHUNK)
            except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                return
            # guard: mcp-server-stderr-is-bounded
            if room > 0:
                kept = chunk[:room]
                room -= len(kept)
                try:
                    errlog.write(kept)
                    if room <= 0:
                        errlog.write(f"\n[stderr past {STDERR_LOG_BYTES:,} bytes dropped]\n".encode())
                    errlog.flush()
                except OSError:  # a full disk: dropped, the server goes on
                    log.warning("cannot write an MCP server's stderr to its log", exc_info=True)
                    room = 0

    async with anyio.create_task_group() as tg:
        tg.start_soon(read_stdout)
        tg.start_soon(write_stdin)
        tg.start_soon(drain_stderr)
        try:
            yield read_stream, write_stream
        finally:
            with anyio.CancelScope(shield=True):
                await _stop(process, polite=not hostile)
                for stream in (read_stream, write_stream):
                    await stream.aclose()
            tg.cancel_scope.cancel()


async def _stop(process: Process, polite: bool = True) -> None:
    """Close the server's stdin, give it ``STOP_WAIT`` to exit (none unless ``polite``: a server that broke
    its bounds is not waited for, its call waiting meanwhile), then kill its process group."""
    if process.stdin is not None:
        with suppress(OSError, anyio.ClosedResourceError, anyio.BrokenResourceError):
            await process.stdin.aclose()
    with anyio.move_on_after(STOP_WAIT if polite else 0):
        await process.wait()
    if process.returncode is None:
        with suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        with anyio.move_on_after(STOP_WAIT):
            await process.wait()
        if process.returncode is None:
            log.warning("MCP server process %d is still there after SIGKILL; left", process.pid)
            return
    # its pipes closed now, not when collected (after the loop's end)
    with suppress(OSError, anyio.ClosedResourceError, anyio.BrokenResourceError):
        await process.aclose()
