"""MCP tools through the official ``mcp`` SDK: servers from settings (stdio or streamable HTTP), their
tools bound once per session, and oversized outputs spilled to the vault.

Each server connection lives in one background task that owns the SDK's context managers (anyio
needs them entered and left in the same task); tool calls reach it through a queue. A crashed
server turns into a clear tool error and the session goes on.

``OversizedResultHandler``: an output over ``max_output_chars`` goes whole into the ArtifactVault;
the agent gets head and tail, the ``vault://`` pointer and the ``file_read_tool`` hint. Without a
vault it falls back to head truncation.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import time
import uuid
from collections.abc import Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from myrm_tui.agent import proc
from myrm_tui.agent.images import MAX_IMAGE_BYTES
from myrm_tui.agent.spill import spill
from myrm_tui.agent.tools.base import ToolContext, ToolError, ToolResult
from myrm_tui.aio import within
from myrm_tui.context.vault import ArtifactVault
from myrm_tui.logs import log_path

log = logging.getLogger(__name__)

MAX_OUTPUT_CHARS = 20_000
# A request carries at most 128 tools (OpenAI's limit); the built-in tools need the rest.
MAX_MCP_TOOLS = 100
MAX_SCHEMA_CHARS = 20_000  # one tool's input schema: it is sent with every request
CALL_TIMEOUT = 120.0
# A server that starts but never answers (a wrong command that waits on its input): how long it may hold up
# the agent's start. Servers start together, so this is paid once, not once per server.
STARTUP_TIMEOUT = 10.0
# Where a session has turns to come (the TUI, an editor) its agent is built without waiting for the servers;
# its first prompt waits this long at most for those still starting, and goes on with those up. Each late
# one joins at the first turn after it is up, until ``STARTUP_TIMEOUT`` from its start.
FIRST_WAIT = 2.0
_ABORTED: set[asyncio.Task[None]] = set()
# In a stdio server's environment (inherited by what it starts): which connection it belongs to, so a server
# that failed to start can be ended by myrm. The SDK's own clean-up after a cancel did not end a server
# that ignores its closed stdin: `myrm ask` then waited at exit for as long as the server lived.
SERVER_ENV = "MYRM_MCP_SERVER"


def _server_log(name: str) -> BinaryIO:
    """Where a stdio server's stderr goes: ``mcp-servers.log`` beside myrm's log, at most
    ``mcp_stdio.STDERR_LOG_BYTES`` a start. Never the terminal (the TUI owns it: a server's warnings would
    tear its screen)."""
    path = log_path().with_name("mcp-servers.log")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        out = open(path, "ab")  # noqa: SIM115 (closed by the stack)
    except OSError:
        log.warning("cannot open %s; MCP server %r's stderr is dropped", path, name, exc_info=True)
        return open(os.devnull, "wb")
    try:
        out.write(f"--- {name} started {time.strftime('%Y-%m-%d %H:%M:%S')}\n".encode())
        out.flush()
    except OSError:  # a full disk: the server still starts, its stderr goes where the file can take it
        log.warning("cannot write to %s", path, exc_info=True)
    return out


@dataclass(frozen=True)
class McpServerConfig:
    name: str
    command: str = ""
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    url: str = ""

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> McpServerConfig:
        """``ValueError`` naming what is wrong (the entry is skipped: ``configs_from``)."""
        if not d.get("name") or not (d.get("command") or d.get("url")):
            raise ValueError(f"an MCP server needs a name and a command or url, got {repr(d)[:120]}")
        args, env, name = d.get("args", []), d.get("env", {}), str(d["name"])[:60]
        if not isinstance(args, list | tuple) or not all(isinstance(a, str | int | float) for a in args):
            raise ValueError(f"MCP server {name!r}: args must be a list of strings, got {repr(args)[:60]}")
        if not isinstance(env, dict):
            raise ValueError(f"MCP server {name!r}: env must be a table, got {repr(env)[:60]}")
        return cls(
            str(d["name"]),
            str(d.get("command", "")),
            tuple(str(a) for a in args),
            {str(k): str(v) for k, v in env.items()},
            str(d.get("url", "")),
        )


def configs_from(entries: Sequence[dict[str, Any]]) -> tuple[list[McpServerConfig], list[str]]:
    """The valid ``mcp_servers`` entries, and one line for each invalid one (skipped, as a bad hook is)."""
    configs: list[McpServerConfig] = []
    problems: list[str] = []
    for d in entries:
        try:
            # guard: mcp-a-bad-entry-is-skipped
            configs.append(McpServerConfig.from_dict(d))
        except ValueError as exc:
            log.warning("MCP server entry skipped", exc_info=True)
            problems.append(f"MCP server skipped: {exc}")
    return configs, problems


class OversizedResultHandler:
    def __init__(self, max_output_chars: int = MAX_OUTPUT_CHARS) -> None:
        self.max_output_chars = max_output_chars

    def handle(self, text: str, tool: str, vault: ArtifactVault | None) -> tuple[str, str | None]:
        # guard: l1-mcp-vault-spill
        if len(text) <= self.max_output_chars:
            return text, None
        return spill(
            text,
            vault,
            "mcp",
            tool,
            self.max_output_chars // 2 if vault else self.max_output_chars,
            reason="mcp_spill",
        )


def _tool_name(server: str, tool: str) -> str:
    return re.sub(r"[^a-zA-Z0-9_-]", "_", f"mcp__{server}__{tool}")[:64]


class McpConnection:
    """One server: a task that holds the session and answers ``(tool, args, future)`` requests."""

    def __init__(self, config: McpServerConfig) -> None:
        self.config = config
        self.tools: list[Any] = []
        self._queue: asyncio.Queue[tuple[str, dict[str, Any], asyncio.Future[Any]] | None] = asyncio.Queue()
        self._ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        # a server given up on while no one waits for it (aborted late): its failure is read here, not left
        # to asyncio's "exception was never retrieved"
        self._ready.add_done_callback(lambda f: f.cancelled() or f.exception())
        self._mark = f"{os.getpid()}-{uuid.uuid4().hex[:12]}"
        self._task = asyncio.ensure_future(self._serve())
        self.dead: str | None = None

    async def _serve(self) -> None:
        from mcp import ClientSession

        try:
            async with AsyncExitStack() as stack:
                if self.config.url:
                    from mcp.client.streamable_http import streamable_http_client

                    streams = await stack.enter_async_context(streamable_http_client(self.config.url))
                else:
                    from myrm_tui.agent.mcp_stdio import stdio_transport

                    env = {**self.config.env, SERVER_ENV: self._mark}
                    if proc.REAPER.tag:  # ended with myrm, as its tools are, if myrm is killed
                        env[proc.OWNER_ENV] = proc.REAPER.tag
                    errlog = stack.enter_context(_server_log(self.config.name))
                    streams = await stack.enter_async_context(
                        stdio_transport(self.config.command, self.config.args, env, errlog)
                    )
                session = await stack.enter_async_context(ClientSession(streams[0], streams[1]))
                await session.initialize()
                self.tools = list((await session.list_tools()).tools)
                self._ready.set_result(None)
                while (item := await self._queue.get()) is not None:
                    name, args, fut = item
                    try:
                        res = await within(asyncio.ensure_future(session.call_tool(name, args)), CALL_TIMEOUT)
                        if not fut.done():
                            fut.set_result(res)
                    except Exception as exc:
                        log.debug("MCP call %s failed (handed to its caller)", name, exc_info=True)
                        if not fut.done():
                            fut.set_exception(exc)
                        if isinstance(exc, (OSError, EOFError)) or "closed" in str(exc).lower():
                            raise
        except BaseException as exc:
            log.warning("MCP server %r stopped", self.config.name, exc_info=True)
            leaf = _leaf(exc)
            self.dead = f"{type(leaf).__name__}: {leaf}".splitlines()[0]
            if not self._ready.done():
                self._ready.set_exception(
                    ToolError(f"MCP server {self.config.name!r} did not start: {self.dead}")
                )
            while not self._queue.empty():
                item = self._queue.get_nowait()
                if item is not None and not item[2].done():
                    item[2].set_exception(ToolError(f"MCP server {self.config.name!r} stopped: {self.dead}"))
            if isinstance(exc, asyncio.CancelledError):
                raise

    async def ready(self) -> None:
        # shielded: a wait given up on (``FIRST_WAIT``) must not cancel the start, which goes on
        await asyncio.shield(self._ready)

    @property
    def started(self) -> bool | None:
        """True once it answered, False when it failed to start, None while it is starting."""
        if not self._ready.done():
            return None
        return not self._ready.cancelled() and self._ready.exception() is None

    def start_error(self) -> str:
        """Why it did not start (``started`` is False)."""
        exc = None if self._ready.cancelled() else self._ready.exception()
        return str(exc) if exc is not None else f"MCP server {self.config.name!r} did not start"

    async def call(self, tool: str, args: dict[str, Any]) -> Any:
        if self.dead or self._task.done():
            raise ToolError(f"MCP server {self.config.name!r} is not running ({self.dead or 'stopped'})")
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        await self._queue.put((tool, args, fut))
        done, _ = await asyncio.wait(
            {fut, self._task}, timeout=CALL_TIMEOUT + 5, return_when=asyncio.FIRST_COMPLETED
        )
        if fut in done:
            return fut.result()
        raise ToolError(
            f"MCP server {self.config.name!r} stopped during the call ({self.dead or 'no answer'})"
        )

    def abort(self) -> None:
        """Stop a server that failed to start: no polite shutdown. Its processes are killed, so the SDK's
        clean-up (in the background, not holding up the agent's start) ends at once."""
        if not self.config.url:
            killed = proc.kill_marked(self._mark, SERVER_ENV)
            log.debug("MCP server %r aborted; %d process(es) killed", self.config.name, killed)
        self._task.cancel()
        _ABORTED.add(self._task)  # a reference, so the task is not collected before it ends
        self._task.add_done_callback(_ABORTED.discard)

    async def close(self) -> None:
        await self._queue.put(None)
        try:
            await within(asyncio.shield(self._task), 5)
        except (TimeoutError, Exception):
            log.debug("MCP server %r did not stop in 5 s; killed", self.config.name, exc_info=True)
            self.abort()


class McpTool:
    def __init__(self, conn: McpConnection, tool: Any, handler: OversizedResultHandler) -> None:
        self.conn = conn
        self.remote = tool.name
        self.name = _tool_name(conn.config.name, tool.name)
        self.description = (tool.description or f"MCP tool {tool.name} of {conn.config.name}")[:1000]
        self.parameters = dict(tool.input_schema or {"type": "object", "properties": {}})
        self.handler = handler

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        try:
            res = await self.conn.call(self.remote, args)
        except ToolError:
            raise
        except Exception as exc:
            raise ToolError(f"MCP tool {self.name} failed: {type(exc).__name__}: {exc}") from exc
        lines: list[str] = []
        images: list[dict[str, Any]] = []
        for c in res.content or []:
            part = _image(c)
            if part is not None:  # kept as an image: the model (if it has vision) sees it
                images.append(part)
                lines.append(f"[image {len(images)}: {part['image_url']['url'][5:].split(';')[0]}]")
            else:
                lines.append(getattr(c, "text", "") or f"[{getattr(c, 'type', 'content')}]")
        shown, uri = self.handler.handle("\n".join(lines), self.name, ctx.vault)
        return ToolResult(
            shown, is_error=bool(res.is_error), meta={"vault_uri": uri} if uri else {}, images=images
        )


def _image(content: Any) -> dict[str, Any] | None:
    """An MCP ``image`` content item as an ``image_url`` part (its data is base64 already)."""
    if getattr(content, "type", "") != "image":
        return None
    data = getattr(content, "data", "") or ""
    mime = getattr(content, "mimeType", None) or getattr(content, "mime_type", None) or "image/png"
    if not data or len(data) * 3 // 4 > MAX_IMAGE_BYTES:
        return None
    return {"type": "image_url", "image_url": {"url": f"data:{mime};base64,{data}"}}


def _leaf(exc: BaseException) -> BaseException:
    """The first real error inside nested exception groups (anyio wraps a server's failure in them)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


async def connect_all(
    configs: list[McpServerConfig], handler: OversizedResultHandler | None = None
) -> tuple[list[McpConnection], list[McpTool], list[str]]:
    """Start every server at once; returns connections, their tools, and one line for each server that
    failed. A server that dies fails at once; one that never answers costs ``STARTUP_TIMEOUT`` (shared by
    all servers, not added per server)."""
    conns, tools, errors, _ = await connect_some(configs, handler, STARTUP_TIMEOUT)
    return conns, tools, errors


async def connect_some(
    configs: list[McpServerConfig], handler: OversizedResultHandler | None = None, wait: float = 0.0
) -> tuple[list[McpConnection], list[McpTool], list[str], LateServers]:
    """``connect_all`` that waits ``wait`` seconds at most (0: not at all): the servers still starting
    then are not given up on but returned as ``LateServers``, to join when they are up."""
    handler = handler or OversizedResultHandler()
    started = [McpConnection(cfg) for cfg in configs]
    begun = time.monotonic()
    wait = min(wait, STARTUP_TIMEOUT)
    if wait <= 0:
        return [], [], [], LateServers(started, handler, begun)
    results = await asyncio.gather(*(within(c.ready(), wait) for c in started), return_exceptions=True)
    conns: list[McpConnection] = []
    tools: list[McpTool] = []
    errors: list[str] = []
    failed: list[McpConnection] = []
    late: list[McpConnection] = []
    for conn, res in zip(started, results, strict=True):
        if isinstance(res, TimeoutError) and wait < STARTUP_TIMEOUT:
            late.append(conn)
        elif isinstance(res, BaseException):
            errors.append(_no_answer(conn) if isinstance(res, TimeoutError) else str(res))
            failed.append(conn)
        else:
            conns.append(conn)
            tools.extend(McpTool(conn, t, handler) for t in conn.tools)
    for conn in failed:
        conn.abort()
    return conns, bindable(tools, errors), errors, LateServers(late, handler, begun)


def _no_answer(conn: McpConnection) -> str:
    return f"MCP server {conn.config.name!r} did not start: no answer within {STARTUP_TIMEOUT:g} s"


class LateServers:
    """The servers still starting when the agent was built (a front-end with turns to come builds it
    without waiting for them). At each turn's start (``take``) the ones up by then join: their tools are
    bound from that turn on. The first turn waits ``FIRST_WAIT`` at most for them; a later turn does not
    wait, and a server up since joins with a line (the tool prefix changes once, as a rebuild's would).
    One that failed, or is not up ``STARTUP_TIMEOUT`` after its start, is given up on, with a line."""

    def __init__(self, pending: list[McpConnection], handler: OversizedResultHandler, begun: float) -> None:
        self.pending = pending
        self.handler = handler
        self.begun = begun
        self.joined: list[McpConnection] = []
        self.first = True

    async def take(self, bound: Sequence[str], mcp_bound: int) -> tuple[list[McpTool], list[str]]:
        """The tools of the servers up since the last look, bindable beside the ``bound`` tool names
        (``mcp_bound`` of them MCP tools), and a line for each server that joined late, is still starting
        at the first turn, or was given up on."""
        first, self.first = self.first, False
        if first and self.pending:
            # On the starts themselves (``asyncio.wait`` cancels none, and each reads its own failure): a
            # wait given up on, or a turn cancelled during it, leaves no waiting task behind.
            # guard: mcp-the-first-turns-wait-leaves-no-task
            await asyncio.wait([c._ready for c in self.pending], timeout=FIRST_WAIT)
        tools: list[McpTool] = []
        lines: list[str] = []
        overdue = time.monotonic() - self.begun >= STARTUP_TIMEOUT
        for conn in list(self.pending):
            state = conn.started
            if state is None and not overdue:
                if first:
                    lines.append(
                        f"MCP server {conn.config.name!r} is still starting: this turn goes on without its "
                        "tools; they join at the first turn after it is up"
                    )
                continue
            self.pending.remove(conn)
            if state:
                self.joined.append(conn)
                tools.extend(McpTool(conn, t, self.handler) for t in conn.tools)
                if not first:
                    lines.append(f"MCP server {conn.config.name!r} is up: its tools join from this turn")
            else:
                lines.append(conn.start_error() if state is False else _no_answer(conn))
                conn.abort()
        return bindable(tools, lines, set(bound), mcp_bound), lines

    async def close(self) -> None:
        for conn in self.pending:
            conn.abort()
        self.pending = []
        for conn in self.joined:
            await conn.close()


def bindable(
    tools: list[McpTool], errors: list[str], names: set[str] | None = None, already: int = 0
) -> list[McpTool]:
    """The tools a provider takes in every request; each other one is left out with a line in ``errors``
    (the tools past ``MAX_MCP_TOOLS``, however many, with one line for all). ``names`` are the tools
    bound already (``already`` of them MCP tools): a late server's join them.
    A server's tools are bound for the whole session, so one the provider refuses (a schema too large to
    send each time, a function name taken twice, one tool too many) would fail every request of it."""
    kept: list[McpTool] = []
    over = 0
    for tool in tools:
        # guard: mcp-tools-a-provider-refuses-are-left-out
        why = _refused(tool, {*(names or ()), *(t.name for t in kept)})
        if why is not None:
            errors.append(f"MCP server {tool.conn.config.name!r}: tool {tool.remote!r} left out: {why}")
        # guard: mcp-tools-at-most-a-requests-share
        elif already + len(kept) >= MAX_MCP_TOOLS:
            over += 1
        else:
            kept.append(tool)
    if over:
        errors.append(
            f"MCP servers: {over} more tools left out: a request carries at most {MAX_MCP_TOOLS} of them"
        )
    return kept


def _refused(tool: McpTool, names: set[str]) -> str | None:
    """Why the provider would refuse ``tool`` (a schema that is not an object never gets here: the SDK's
    client refuses the server's whole list, and the server fails to start in one line)."""
    try:
        size = len(json.dumps(tool.parameters, allow_nan=False))
    except (TypeError, ValueError, RecursionError):
        return "its input schema is not JSON"
    if size > MAX_SCHEMA_CHARS:
        return f"its input schema is {size:,} characters, sent with every request (over {MAX_SCHEMA_CHARS:,})"
    if tool.name in names:
        return f"its function name {tool.name} is another tool's"
    return None
