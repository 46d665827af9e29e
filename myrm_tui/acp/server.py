"""``myrm acp``: myrm as an Agent Client Protocol agent (protocol v1) over stdio, for Zed, JetBrains IDEs,
Neovim, Emacs and Toad. Built on the official SDK (``acp``). Each editor session is a myrm session driven
through the same agent API as the TUI and ``myrm ask`` (``agent/api.py``: a ``ChatSession`` sends, cancels,
compacts): no second agent loop.

What the editor sees: streamed text and thoughts, every tool call with its kind, files and result (an
edit as a diff), a permission request for every command or edit myrm would ask about (nothing runs
while it is open), the context figure after every request (the last request's use, never a running
sum), each compaction as a message, the slash commands and the prompt modes."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import logging
import os
import re
import shutil
import stat
import sys
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, cast

from acp import PROTOCOL_VERSION, RequestError
from acp import schema as s
from acp.connection import StreamDirection, StreamEvent
from acp.helpers import update_agent_message_text, update_agent_thought_text

from myrm_tui import __version__
from myrm_tui.acp import convert
from myrm_tui.agent.api import ChatSession, Sessions, started_elsewhere
from myrm_tui.agent.events import (
    CompactionMade,
    ContextReport,
    Notice,
    ReasoningChunk,
    StreamCut,
    TextChunk,
    ToolFinished,
    ToolStarted,
    TurnDone,
    TurnFailed,
)
from myrm_tui.agent.permissions import Assessment
from myrm_tui.agent.prompts import MODES, mode_for
from myrm_tui.agent.repeat_guard import REPEAT_TOOL
from myrm_tui.aio import within
from myrm_tui.context.types import ToolCall
from myrm_tui.logs import failure_logged
from myrm_tui.safe_text import reveal
from myrm_tui.store.base import SessionBusy
from myrm_tui.store.db import Store

log = logging.getLogger(__name__)

MODE_NAMES = {
    "full": "Full: every rule and tool",
    "lean": "Lean: fewer rules, every tool",
    "naked": "Naked: the least prompt with tools",
    "search": "Search: read-only research",
    "chat": "Chat: no tools (small local models)",
}

# Slash commands an editor offers (``available_commands_update``); each runs on myrm's agent directly.
COMMANDS = (
    ("compact", "Compact the context now (optional focus: what to keep)", "focus"),
    ("context", "What fills the context window now, by category", None),
    ("fork", "Fork this session: the new session id is printed", None),
    ("notes", "The session's notes (what the agent keeps across compactions)", None),
)

MODEL_OPTION = "model"  # the session config option an editor's model picker sets

# The editor's options, in myrm's approval words: allow once, allow always (this session), reject.
PERMISSION_OPTIONS = (
    s.PermissionOption(option_id="yes", name="Allow once", kind="allow_once"),
    s.PermissionOption(option_id="always", name="Allow always (this session)", kind="allow_always"),
    s.PermissionOption(option_id="no", name="Reject", kind="reject_once"),
)


@dataclass
class EditorSession:
    """One editor session: its myrm session (the agent API's), running turn and open tool calls."""

    id: str
    workspace: Path
    cli: dict[str, Any]
    mcp: list[dict[str, Any]] = field(default_factory=list)
    chat: ChatSession | None = None
    turn: asyncio.Task[str] | None = None
    cancelling: bool = False  # the editor cancelled the running turn
    calls: dict[str, ToolCall] = field(default_factory=dict)  # started, not finished
    build: asyncio.Task[Any] | None = None  # its agent being built (MCP servers connecting)

    @property
    def session(self) -> ChatSession:
        assert self.chat is not None, "opened first"
        return self.chat


class MyrmAcpAgent:
    """The ACP agent: the SDK calls these methods for the editor's requests (``acp.interfaces.Agent``)."""

    def __init__(self, store: Store, cli: dict[str, Any]) -> None:
        self.store = store
        self.cli = cli
        self.conn: Any = None
        self.sessions: dict[str, EditorSession] = {}
        self.fs = s.FileSystemCapabilities()  # what the editor offers: reads and writes of its buffers
        self.hung_up = False  # the editor's input ended (``hang_up``)

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    # -- lifecycle ---------------------------------------------------------------------------------
    async def initialize(
        self, protocol_version: int, client_capabilities: s.ClientCapabilities | None = None, **_: Any
    ) -> s.InitializeResponse:
        if client_capabilities is not None and client_capabilities.fs is not None:
            self.fs = client_capabilities.fs
        return s.InitializeResponse(
            # The one version myrm speaks: the client's own if it is that one, else ours (the spec's
            # negotiation: an agent that does not support the requested version answers its latest;
            # echoing an older one claimed to speak it).
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=s.AgentCapabilities(
                load_session=True,
                prompt_capabilities=s.PromptCapabilities(image=True, embedded_context=True, audio=False),
                mcp_capabilities=s.McpCapabilities(http=True, sse=False),
                session_capabilities=s.SessionCapabilities(list=s.SessionListCapabilities()),
            ),
            agent_info=s.Implementation(name="myrm", title="myrm", version=__version__),
        )

    async def authenticate(self, method_id: str, **_: Any) -> s.AuthenticateResponse:
        return s.AuthenticateResponse()

    async def new_session(
        self, cwd: str, mcp_servers: list[Any] | None = None, **_: Any
    ) -> s.NewSessionResponse:
        ed = EditorSession("", _workspace(cwd), dict(self.cli), _mcp_configs(mcp_servers))
        await self._open(ed)
        return s.NewSessionResponse(
            session_id=ed.id, modes=self._modes(ed), config_options=await self._config_options(ed)
        )

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **_: Any
    ) -> s.LoadSessionResponse:
        row = await self.store.get_session(session_id)
        if row is None:
            raise RequestError.resource_not_found(session_id)
        ed = self.sessions.get(session_id)
        if ed is None:
            ed = EditorSession(row.id, _workspace(cwd), dict(self.cli), _mcp_configs(mcp_servers))
            await self._open(ed)
        await self._built(ed)
        agent = await ed.session.ready()
        for update in convert.history_updates(agent.session.history, ed.workspace):
            await self._send(ed, update)
        # The protocol has no field for it; an editor lists every folder's sessions (Zed's list sends no
        # cwd) and loads one in the folder it has open: it continues there, as ``myrm --session`` does,
        # and the editor is told so in the conversation, after the history it replays.
        if elsewhere := started_elsewhere(row.id, row.workspace, ed.workspace):
            await self._send(ed, update_agent_message_text(convert.shown(f"myrm: {elsewhere}\n")))
        await self._usage(ed)
        return s.LoadSessionResponse(modes=self._modes(ed), config_options=await self._config_options(ed))

    async def list_sessions(self, cwd: str | None = None, **_: Any) -> s.ListSessionsResponse:
        rows = await self.store.list_sessions()
        want = str(_workspace(cwd)) if cwd else None
        return s.ListSessionsResponse(
            sessions=[
                s.SessionInfo(
                    session_id=r.id,
                    cwd=r.workspace,
                    title=convert.shown(r.title),
                    updated_at=_iso(r.updated_at),
                )
                for r in rows
                if r.workspace and Path(r.workspace).is_absolute() and (want is None or r.workspace == want)
            ]
        )

    async def set_session_mode(self, session_id: str, mode_id: str, **_: Any) -> s.SetSessionModeResponse:
        ed = self._session(session_id)
        if mode_id not in MODES:
            raise RequestError.invalid_params({"modeId": mode_id, "modes": list(MODES)})
        ed.cli["prompt_mode"] = mode_id  # the next prompt's agent is rebuilt in this mode
        await self._send(
            ed, s.CurrentModeUpdate(session_update="current_mode_update", current_mode_id=mode_id)
        )
        return s.SetSessionModeResponse()

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **_: Any
    ) -> s.SetSessionConfigOptionResponse:
        """The editor's model picker (the ``model`` option; this SDK's protocol has no ``session/set_model``):
        the next prompt's agent is rebuilt for the model picked, as ``/model`` does in the TUI."""
        ed = self._session(session_id)
        choices = await self._models(ed)
        # guard: acp-the-model-picked-is-one-offered
        if config_id != MODEL_OPTION or not isinstance(value, str) or value not in choices:
            raise RequestError.invalid_params({"configId": config_id, "value": value, "models": choices})
        before = _mode(await self._settings(ed))
        ed.cli["model"] = value
        # A model that takes no tools (the embedded one, always offered) gets ``chat``: the editor shows
        # the mode in force, not the one before the pick.
        # guard: acp-a-model-pick-that-changes-the-mode-says-so
        if (mode := _mode(await self._settings(ed))) != before:
            await self._send(
                ed, s.CurrentModeUpdate(session_update="current_mode_update", current_mode_id=mode)
            )
        return s.SetSessionConfigOptionResponse(config_options=await self._config_options(ed))

    async def _config_options(self, ed: EditorSession) -> list[Any]:
        """The session's options an editor shows as pickers: the model (Zed's model picker)."""
        return [
            s.SessionConfigOptionSelect(
                id=MODEL_OPTION,
                name="Model",
                category="model",
                type="select",
                current_value=(await self._settings(ed)).model,
                options=[s.SessionConfigSelectOption(value=m, name=m) for m in await self._models(ed)],
            )
        ]

    async def _models(self, ed: EditorSession) -> list[str]:
        """The models the picker offers (``model_choices``), and the one ``myrm acp`` started with (``-m``
        or the configuration) after them: the picker is an editor's only way to set the model, and once
        another was picked that one was no longer offered, nor taken."""
        from myrm_tui.agent.factory import resolve_settings
        from myrm_tui.agent.model_target import model_choices

        started = (await resolve_settings(self.store, self.cli)).model
        # guard: acp-the-model-started-with-stays-offered
        return list(dict.fromkeys([*model_choices((await self._settings(ed)).model), started]))

    async def _open(self, ed: EditorSession, wait: bool = False) -> None:
        """Open the session (a new one without an id), its lease taken, and start building its agent
        (``wait``: until it is built); the editor learns the commands."""
        sessions = Sessions(
            self.store,
            ed.workspace,
            lambda tool, command, assessment: self._permission(ed, tool, command, assessment),
            files=lambda sid: (
                ClientFiles(self, sid) if self.fs.read_text_file or self.fs.write_text_file else None
            ),
            mcp_late=True,
        )
        settings = await self._settings(ed)
        try:
            ed.chat = await (sessions.open(ed.id, settings) if ed.id else sessions.start(settings))
        except SessionBusy as exc:  # the editor shows an error's message: say why, not "Internal error"
            log.warning("session %s is busy", ed.id, exc_info=True)
            raise RequestError(-32600, str(exc), {"sessionId": ed.id, "reason": "busy"}) from None
        ed.id = ed.chat.id
        # The agent is built while the editor shows the session: a server that never started held
        # session/new for its 10 s. The protocol asks only that the servers be connected; the build does
        # not wait for them, the first prompt waits ``mcp_client.FIRST_WAIT`` at most for those still
        # starting, and each one up later joins at the next prompt.
        # guard: acp-mcp-servers-join-after-session-new
        ed.build = asyncio.ensure_future(ed.chat.ready())
        if wait:
            await self._built(ed)
        self.sessions[ed.id] = ed
        await self._send(
            ed,
            s.AvailableCommandsUpdate(
                session_update="available_commands_update",
                available_commands=[
                    s.AvailableCommand(
                        name=name,
                        description=text,
                        input=s.AvailableCommandInput(root=s.UnstructuredCommandInput(hint=hint))
                        if hint
                        else None,
                    )
                    for name, text, hint in COMMANDS
                ],
            ),
        )

    async def _built(self, ed: EditorSession) -> None:
        """Wait for the session's agent; one that could not be built closes the session (its lease)."""
        if ed.build is None:
            return
        try:
            await asyncio.shield(ed.build)  # a cancelled prompt stops waiting; the build goes on
        except Exception:
            log.exception("building the agent of session %s failed", ed.id)
            self.sessions.pop(ed.id, None)
            await ed.session.close()
            raise
        ed.build = None

    async def _settings(self, ed: EditorSession) -> Any:
        from myrm_tui.agent.factory import resolve_settings

        settings = await resolve_settings(self.store, ed.cli)
        if ed.mcp:  # the editor's servers join the configured ones
            settings = replace(settings, mcp_servers=(*settings.mcp_servers, *ed.mcp))
        return settings

    async def hang_up(self) -> None:
        """The editor's input ended: running turns stop as after ``session/cancel`` (their partial text
        kept, each prompt answered ``cancelled``); requests already received are still answered."""
        self.hung_up = True
        for sid in list(self.sessions):
            await self.cancel(sid)

    async def close(self) -> None:
        """The editor went away: turns cancelled (their partial text kept), agents closed, leases released."""
        for ed in list(self.sessions.values()):
            # A build that failed with no prompt after it (``_built`` logs the others) is logged here, not
            # left to the collector's "exception was never retrieved".
            # guard: acp-a-build-no-prompt-waited-for-is-logged-at-close
            if ed.build is not None:
                if not ed.build.done():
                    ed.build.cancel()
                with contextlib.suppress(asyncio.CancelledError), failure_logged(log, "the agent's build"):
                    await ed.build
            if ed.turn is not None and not ed.turn.done():
                ed.turn.cancel()
                with contextlib.suppress(asyncio.CancelledError), failure_logged(log, "the cancelled turn"):
                    await ed.turn
            try:
                await ed.session.close()
            except Exception:  # its lease is released all the same
                log.exception("closing the agent of session %s failed", ed.id)
        self.sessions.clear()

    # -- a turn ------------------------------------------------------------------------------------
    async def prompt(self, session_id: str, prompt: list[Any], **_: Any) -> s.PromptResponse:
        ed = self._session(session_id)
        if ed.turn is not None and not ed.turn.done() and ed.cancelling:
            # Cancelled, and the next prompt sent without waiting for the answer (Zed waits; a client
            # need not): it follows the cancelled turn, which ends at once, instead of being refused.
            await asyncio.wait([ed.turn])
        if ed.turn is not None and not ed.turn.done():
            raise RequestError.invalid_request(
                {"reason": "a turn is running in this session; cancel it first"}
            )
        text, images = convert.prompt_text(prompt, ed.workspace)
        if not text.strip() and not images:  # as an empty box in the TUI: nothing to send
            return s.PromptResponse(stop_reason="end_turn")
        ed.cancelling = False
        ed.turn = asyncio.create_task(self._turn(ed, text, images))
        try:
            stop = await asyncio.shield(ed.turn)
        except asyncio.CancelledError:
            stop = "cancelled"
        return s.PromptResponse(stop_reason=stop)  # type: ignore[arg-type]

    async def cancel(self, session_id: str, **_: Any) -> None:
        """As Esc in the TUI: the turn stops, its streamed text is kept and unfinished calls are closed."""
        ed = self.sessions.get(session_id)
        if ed is None or ed.turn is None or ed.turn.done():
            return
        ed.cancelling = True
        if not ed.session.cancel():
            ed.turn.cancel()  # not streaming yet (a rebuild, a slash command): the whole prompt stops

    async def _turn(self, ed: EditorSession, text: str, images: list[tuple[str, bytes]]) -> str:
        await self._built(ed)
        await ed.session.ready(await self._settings(ed))  # a new mode rebuilds the agent (its fingerprint)
        stripped = text.strip()
        if stripped.startswith("/") and stripped[1:].split(" ")[0] in {c[0] for c in COMMANDS}:
            await self._command(ed, stripped[1:])
            return "end_turn"
        folder = Path(tempfile.mkdtemp(prefix="myrm-acp-")) if images else None
        try:
            if folder is not None:  # an image is named by its path; the turn reads it at once
                for k, (mime, data) in enumerate(images):
                    path = folder / f"image-{k + 1}.{mime.rsplit('/', 1)[-1]}"
                    path.write_bytes(data)
                    text += f" @{path}"
            return await self._events(ed, text)
        except asyncio.CancelledError:
            await self._close_open_calls(ed)
            return "cancelled"
        finally:
            if folder is not None:
                shutil.rmtree(folder, ignore_errors=True)

    async def _events(self, ed: EditorSession, text: str) -> str:
        stop = "end_turn"
        async for ev in ed.session.send(text):
            match ev:
                case TextChunk():
                    await self._send(ed, update_agent_message_text(convert.shown(ev.text)))
                case ReasoningChunk():
                    await self._send(ed, update_agent_thought_text(convert.shown(ev.text)))
                case StreamCut():
                    await self._send(ed, update_agent_message_text("\n[the reply was cut; retrying]\n"))
                case ToolStarted():
                    ed.calls[ev.call.id] = ev.call
                    await self._send(ed, convert.start_call(ev.call, ed.workspace))
                    await self._send(
                        ed,
                        s.ToolCallProgress(
                            session_update="tool_call_update", tool_call_id=ev.call.id, status="in_progress"
                        ),
                    )
                case ToolFinished():
                    call = ed.calls.pop(ev.call.id, ev.call)
                    await self._send(ed, convert.finish_call(call, ev.message, ed.workspace))
                case ContextReport():
                    await self._usage(ed, ev)
                case CompactionMade():
                    r = ev.record
                    await self._send(
                        ed,
                        update_agent_message_text(
                            f"\n[context compacted ({r.trigger}): {r.tokens_before:,} → {r.tokens_after:,} "
                            "tokens]\n"
                        ),
                    )
                case Notice():
                    await self._send(
                        ed, update_agent_thought_text(convert.shown(f"[{ev.level}] {ev.text}\n"))
                    )
                case TurnFailed():
                    await self._send(ed, update_agent_message_text(convert.shown(f"\n[myrm: {ev.error}]")))
                    stop = "refusal" if ev.unsent else "end_turn"
                case TurnDone():
                    if ev.interrupted:
                        stop = "cancelled"
        await self._close_open_calls(ed)
        return stop

    async def _close_open_calls(self, ed: EditorSession) -> None:
        """Calls that never finished (an interrupted turn) are closed as failed, never left pending."""
        for call_id in list(ed.calls):
            ed.calls.pop(call_id)
            with failure_logged(log, "closing an open tool call in the editor"):
                await self._send(
                    ed,
                    s.ToolCallProgress(
                        session_update="tool_call_update", tool_call_id=call_id, status="failed"
                    ),
                )

    async def _permission(self, ed: EditorSession, tool: str, command: str, assessment: Assessment) -> str:
        """The editor asks the user; a cancelled question (or a vanished editor) is a no."""
        call = next((c for c in reversed(ed.calls.values()) if c.name == tool), None)
        update = s.ToolCallUpdate(
            tool_call_id=call.id if call else f"approval-{tool}",
            # What the user decides on reads as what runs: invisible characters marked, as the TUI's dialog
            # guard: acp-permission-shows-the-command-revealed
            title=reveal(convert.tool_title(call) if call else f"{tool} {assessment.command}"),
            kind=convert.tool_kind(tool),
            status="pending",
            content=[convert.tool_content(convert.text_block(_question(tool, command, assessment)))],
            raw_input=convert.call_args(call) if call else {"command": command},
        )
        try:
            answer = await self.conn.request_permission(
                session_id=ed.id, tool_call=update, options=list(PERMISSION_OPTIONS)
            )
        except Exception:
            log.exception("the editor's permission request failed: answered no")
            return "no"
        outcome = answer.outcome
        if isinstance(outcome, s.AllowedOutcome) and outcome.option_id in ("yes", "always", "no"):
            return outcome.option_id
        return "no"

    async def _command(self, ed: EditorSession, line: str) -> None:
        name, _, arg = line.partition(" ")
        chat = ed.session
        if name == "compact":
            report = await chat.compact(arg.strip())
            await self._usage(ed, report)
            await self._send(
                ed, update_agent_message_text(f"Compacted: the context is {report.tokens:,} tokens.")
            )
        elif name == "context":
            agent = await chat.ready()
            use = agent.window_use()
            await self._send(ed, update_agent_message_text("```\n" + "\n".join(use.lines()) + "\n```"))
        elif name == "fork":
            row = (await Sessions(self.store, ed.workspace).fork(ed.id, chat.settings, compact=False)).row
            await self._send(
                ed, update_agent_message_text(convert.shown(f"Forked: session {row.id} ({row.title})."))
            )
        elif name == "notes":
            await chat.ready()
            notes = chat.notes
            text = "\n".join(f"- {n}" for n in notes) if notes else "No notes yet."
            await self._send(ed, update_agent_message_text(convert.shown(text)))

    # -- sending -----------------------------------------------------------------------------------
    async def _usage(self, ed: EditorSession, report: ContextReport | None = None) -> None:
        """The ring's figure: the latest request's input (our count, tool schemas included) of the window."""
        figures = ed.session.figures(report)
        await self._send(
            ed,
            s.UsageUpdate(
                session_update="usage_update",
                used=figures.used,
                size=figures.window,
                cost=s.Cost(amount=round(figures.cost_usd, 6), currency="USD"),
            ),
        )

    async def _send(self, ed: EditorSession, update: Any) -> None:
        """One update; after the editor's input ended the SDK sends none, and the request still gets its
        answer (the update is dropped, not the request)."""
        try:
            await self.conn.session_update(session_id=ed.id, update=update)
        except ConnectionError:
            if not self.hung_up:
                raise
            log.info("input ended: a %s update not sent", type(update).__name__)

    def _session(self, session_id: str) -> EditorSession:
        ed = self.sessions.get(session_id)
        if ed is None:
            raise RequestError.resource_not_found(session_id)
        return ed

    def _modes(self, ed: EditorSession) -> s.SessionModeState:
        return s.SessionModeState(
            current_mode_id=_mode(ed.session.settings),  # the agent may still be being built
            available_modes=[s.SessionMode(id=m, name=MODE_NAMES.get(m, m)) for m in MODES],
        )


@dataclass
class ClientFiles:
    """File reads and writes through the editor (``fs/read_text_file`` sees unsaved buffers; a write
    updates the editor's buffer), where it offers them; otherwise, or when it fails, myrm uses the disk."""

    agent: MyrmAcpAgent
    session_id: str

    async def read_text(self, full: Path) -> str | None:
        if not self.agent.fs.read_text_file:
            return None
        try:
            answer = await self.agent.conn.read_text_file(session_id=self.session_id, path=str(full))
        except Exception:
            log.warning("the editor could not read %s; reading the disk", full, exc_info=True)
            return None
        return str(answer.content)

    async def write_text(self, full: Path, text: str) -> bool:
        if not self.agent.fs.write_text_file:
            return False
        try:
            await self.agent.conn.write_text_file(session_id=self.session_id, path=str(full), content=text)
        except Exception:
            log.warning("the editor could not write %s; writing the disk", full, exc_info=True)
            return False
        return True


def _question(tool: str, command: str, assessment: Assessment) -> str:
    """The permission request's text. Editors render it as Markdown: a diff's ``--- a.py`` became a rule
    and its ``-`` lines a list, a command's ``*`` emphasis; in a fenced block it reads as it runs."""
    reasons = "; ".join(assessment.reasons) or "not covered by the rules"
    shown = reveal(command)
    # guard: acp-question-fenced
    fence = "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", shown)), default=0))
    # guard: acp-a-repeated-call-gets-its-own-question
    if tool == REPEAT_TOOL:
        return (
            f"The model keeps asking for the same call:\n{fence}\n{shown}\n{fence}\n\n{reveal(reasons)}.\n\n"
            "Allow once: it goes on without asking again until the model asks for another call; allow "
            "always: no more such questions this session; reject: the turn stops here."
        )
    what, lang = ("Edit", "diff") if tool == "file_edit_tool" else ("Run", "sh")
    return f"{what}:\n{fence}{lang}\n{shown}\n{fence}\n\nWhy myrm asks: {reveal(reasons)}"


def _workspace(cwd: str) -> Path:
    path = Path(cwd).expanduser()
    if not path.is_absolute() or not path.is_dir():
        raise RequestError.invalid_params({"cwd": cwd, "reason": "an absolute path of an existing folder"})
    return path.resolve()


def _mode(settings: Any) -> str:
    """The prompt mode in force with ``settings`` (a model that takes no tools gets ``chat``)."""
    return mode_for(settings.prompt_mode, settings.model, settings.api_base)


def _mcp_configs(servers: list[Any] | None) -> list[dict[str, Any]]:
    """The editor's MCP servers in myrm's config shape (stdio: command, args, env; HTTP: url)."""
    out: list[dict[str, Any]] = []
    for srv in servers or ():
        if isinstance(srv, s.McpServerStdio):
            out.append(
                {
                    "name": srv.name,
                    "command": srv.command,
                    "args": list(srv.args),
                    "env": {e.name: e.value for e in srv.env},
                }
            )
        elif isinstance(srv, s.HttpMcpServer):
            out.append({"name": srv.name, "url": srv.url})
    return out


def _iso(ts: float) -> str:
    import datetime

    return datetime.datetime.fromtimestamp(ts, datetime.UTC).isoformat()


# As the SDK's own stdio default: an editor may send a large embedded file or image in one line.
LINE_LIMIT = 50 * 1024 * 1024


async def speak(agent: MyrmAcpAgent, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Serve ``agent`` on one connection until the editor closes it. Lines that are not JSON-RPC objects
    get a JSON-RPC error here: the SDK skips bad JSON silently and ends its connection on valid JSON that
    is not an object."""
    from acp.agent.connection import AgentSideConnection

    screened = asyncio.StreamReader(limit=LINE_LIMIT)
    pump = asyncio.create_task(_screen(reader, screened, writer))
    unanswered = _Unanswered()
    # The SDK's Protocol names every method of the protocol; the router answers "method not found" for
    # those an agent leaves out (fork, resume, config options).
    conn = AgentSideConnection(cast("Any", agent), writer, screened, listening=False, observers=[unanswered])
    try:
        await conn.listen()
        # The input ended, not necessarily the output: a script piping requests in still reads the
        # answers. The SDK would cancel them on close; they are answered first (bounded: a turn is
        # cancelled, and an editor that stopped reading closes the pipe).
        await agent.hang_up()
        # guard: acp-answers-before-exit
        await unanswered.settled(writer, ANSWER_GRACE)
    finally:
        pump.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await pump
        await conn.close()


# How long requests received before the input ended may take to be answered before myrm exits.
ANSWER_GRACE = 10.0


class _Unanswered:
    """The editor's requests not answered yet, read from the raw messages each way."""

    def __init__(self) -> None:
        # id -> requests waiting with it: an editor may reuse an id while a request holding it runs, and
        # the first answer left the other one out of the count (myrm exited without answering it)
        self.ids: collections.Counter[str] = collections.Counter()
        self.changed = asyncio.Event()

    def __call__(self, event: StreamEvent) -> None:
        msg = event.message
        if "id" not in msg:  # a notification
            return
        key = json.dumps(msg["id"], sort_keys=True)
        if event.direction is StreamDirection.INCOMING and "method" in msg:
            self.ids[key] += 1
        elif event.direction is StreamDirection.OUTGOING and "method" not in msg:
            self.ids[key] -= 1
            if self.ids[key] <= 0:
                del self.ids[key]
            self.changed.set()

    async def settled(self, writer: asyncio.StreamWriter, grace: float) -> None:
        """Until every request is answered, the editor stops reading, or ``grace`` seconds pass."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + grace
        while self.ids and not writer.is_closing():
            left = deadline - loop.time()
            if left <= 0:
                log.warning("input ended; %d requests left unanswered after %.0f s", self.ids.total(), grace)
                return
            self.changed.clear()
            # A broken pipe closes the writer without a message to wake on: look again every half second.
            with contextlib.suppress(TimeoutError):
                await within(self.changed.wait(), min(left, 0.5))


async def _screen(src: asyncio.StreamReader, dst: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    def error(code: int, message: str, rid: Any = None) -> None:
        body = {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}}
        writer.write(json.dumps(body).encode() + b"\n")

    try:
        while True:
            try:
                line = await src.readuntil(b"\n")
            except asyncio.IncompleteReadError as end:
                line = end.partial
            except asyncio.LimitOverrunError as over:
                # the id leads the message; what was read of the line is buffered, its newline not yet
                head = await src.read(min(HEAD_BYTES, over.consumed))
                await _skip_line(src, over.consumed - len(head))  # dropped whole, up to the next line
                rid, kind = _head_id(head)
                log.warning(
                    "a line over %s bytes from the editor (%s id %r)", LINE_LIMIT, kind, rid, exc_info=True
                )
                # guard: acp-overlong-answer-fails-its-request
                if kind == "response":
                    # The editor's answer to one of our requests (a file read of 60 MB): that request
                    # fails here, so the turn waiting on it goes on (reading the disk), never hangs.
                    failed = {"code": -32600, "message": f"The editor's answer was over {LINE_LIMIT:,} bytes"}
                    dst.feed_data(json.dumps({"jsonrpc": "2.0", "id": rid, "error": failed}).encode() + b"\n")
                else:
                    error(-32600, f"Invalid request: a line over {LINE_LIMIT:,} bytes", rid)
                continue
            if not line:
                break
            if not line.strip():
                continue
            try:
                msg = json.loads(line)
            # guard: acp-deep-nesting-is-a-parse-error
            except (ValueError, RecursionError):  # RecursionError: arrays nested thousands deep
                log.warning("not JSON from the editor: %r", line[:200], exc_info=True)
                error(-32700, "Parse error")
                continue
            if not isinstance(msg, dict):
                error(-32600, "Invalid request: not a JSON-RPC object")
                continue
            if "method" in msg and not isinstance(msg["method"], str):
                # The SDK takes ``"method": null`` for an answer and drops it: the request was never
                # answered, and myrm waited its whole grace for it at exit.
                log.warning("a method that is not a string from the editor: %r", line[:200])
                error(-32600, "Invalid request: the method is not a string", _valid_id(msg.get("id")))
                continue
            if msg.get("method") in NOTIFICATIONS and "id" in msg:
                # Sent as a request: the SDK routes it to no handler ("method not found") and the turn went
                # on after the user pressed stop. Answered here, then handled as the notification it is.
                rid = msg.pop("id")
                writer.write(json.dumps({"jsonrpc": "2.0", "id": rid, "result": None}).encode() + b"\n")
                line = json.dumps(msg).encode()
            dst.feed_data(line if line.endswith(b"\n") else line + b"\n")
    finally:
        dst.feed_eof()


# The editor's notifications to an agent (ACP v1): one sent with an id is still obeyed.
NOTIFICATIONS = frozenset({"session/cancel"})

# How much of an over-long line is kept to find its id (``{"jsonrpc": "2.0", "id": …`` leads a message).
HEAD_BYTES = 256
_HEAD = re.compile(
    rb'\A\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")\s*,\s*"(\w+)"'
)


def _head_id(head: bytes) -> tuple[Any, str]:
    """The id of a message from its first bytes, and whether it is a request or a response ("" and
    ``None`` when its top-level id does not lead it: then the error goes out with a null id)."""
    m = _HEAD.match(head)
    if m is None:
        return None, ""
    try:
        rid = json.loads(m.group(1))
    except ValueError:
        return None, ""
    key = m.group(2)
    if key == b"method":
        return rid, "request"
    return (rid, "response") if key in (b"result", b"error") else (None, "")


def _valid_id(rid: Any) -> Any:
    """A request's id as JSON-RPC allows it in an answer (a string or a number), else null."""
    return rid if isinstance(rid, str | int | float) and not isinstance(rid, bool) else None


async def _skip_line(src: asyncio.StreamReader, consumed: int) -> None:
    """Drop the rest of an over-long line, however many times the limit it is, through its newline."""
    while True:
        await src.readexactly(consumed)
        try:
            await src.readuntil(b"\n")
            return
        except asyncio.IncompleteReadError:  # the editor closed the connection mid-line
            return
        except asyncio.LimitOverrunError as over:
            consumed = over.consumed


async def serve(db: Path, cli: dict[str, Any]) -> int:
    """Speak ACP on stdin/stdout until the editor closes the connection."""
    from acp.stdio import stdio_streams

    try:
        reader, writer = await stdio_streams(limit=LINE_LIMIT)
    except ValueError:  # a regular file: asyncio reads and writes only pipes, sockets and terminals
        which = "input" if stat.S_ISREG(os.fstat(0).st_mode) else "output"
        log.exception("myrm acp: standard %s is a file", which)
        hint = " (cat FILE | myrm acp)" if which == "input" else ""
        print(
            f"myrm acp: standard {which} must be a pipe, not a file{hint}; an editor starts myrm acp",
            file=sys.stderr,
        )
        return 2
    store = await Store.open(db)
    agent = MyrmAcpAgent(store, cli)
    try:
        await speak(agent, reader, writer)
    finally:
        try:
            await agent.close()
        finally:
            await store.close()
    return 0
