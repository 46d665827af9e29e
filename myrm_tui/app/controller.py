"""``Controller``: the app's connection to the store and the agent — open, create, fork, delete
sessions; run turns; compact. The session it holds is the agent API's ``ChatSession`` (``agent/api.py``),
as ``myrm ask`` and ``myrm acp`` hold theirs. No widgets here, so it is tested without a terminal."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from myrm_tui.app.messages import PanelData, PanelInfo
from myrm_tui.config import Settings
from myrm_tui.context.compaction.record import Compaction, compactions_of
from myrm_tui.context.model_facts import model_kind
from myrm_tui.paths import config_file, files_fingerprint, prompts_dir
from myrm_tui.provider_keys import key_problem
from myrm_tui.store.db import SessionBusy, SessionRow, Store, VaultListing

if TYPE_CHECKING:
    from myrm_tui.agent.agent import Agent
    from myrm_tui.agent.api import ChatSession, Sessions
    from myrm_tui.agent.events import AgentEvent, EventListener
    from myrm_tui.agent.hot_rebuild import ChatAgentExecutionCache
    from myrm_tui.agent.permissions import UserApprover
    from myrm_tui.agent.replay import Replay
    from myrm_tui.agent.undo import UndoOutcome, UndoPlan
    from myrm_tui.context.report.window_use import WindowUse
    from myrm_tui.context.types import ToolCall
    from myrm_tui.llm.client import LLMClient

log = logging.getLogger(__name__)


# The agent package (pipeline, tools, hooks, tiktoken) is imported on first use, in a thread of the
# start-up worker: it is not on the first frame's path.
async def resolve_settings(store: Store, cli: dict[str, Any]) -> Settings:
    from myrm_tui.agent.factory import resolve_settings as resolve

    return await resolve(store, cli)


def window_needs_litellm(settings: Settings) -> bool:
    """A model's window needs litellm imported unless it is set, the model is the embedded one, or
    litellm's registry file gives it (the usual providers' models)."""
    if settings.context_window or model_kind(settings.model) == "local":
        return False
    from myrm_tui.llm.registry import bundled_window

    # guard: the-rings-first-figure-for-a-providers
    return bundled_window(settings.model) is None


def _first_line(text: str, width: int = 70) -> str:
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line if len(line) <= width else line[: width - 1] + "…"


def call_gist(call: ToolCall) -> str:
    """``bash: seq 1 30000``: the tool and its main argument (a command, a path, a query)."""
    from myrm_tui.context.text.call_args import call_args

    args = call_args(call)
    strings = [args.text(k) for k in args.fields if args.text(k).strip()]
    main = args.command or (strings[0] if strings else "")
    return _first_line(f"{call.name}: {main}" if main else call.name)


def _load_agent_runtime() -> None:
    """The agent package and tiktoken's encoding (~0.5 s of CPU): run in a thread by ``ensure_agent``."""
    from myrm_tui.agent.api import Sessions  # noqa: F401
    from myrm_tui.context.tokens import get_encoding

    get_encoding()


class ForkFailed(Exception):
    """A fork that did not complete; ``str()`` tells the user what happened (and whether anything was
    created)."""


class Controller:
    """``approver`` asks the user about a command or an edit (the approval dialog); ``on_event`` gets the
    events that are no turn's own (the background summary's progress, notices between turns)."""

    def __init__(
        self,
        db_path: Path,
        workspace: Path,
        cli: dict[str, Any],
        llm: LLMClient | None = None,
        approver: UserApprover | None = None,
        on_event: EventListener | None = None,
    ) -> None:
        self.db_path = db_path
        self.workspace = workspace
        self.cli = cli
        self.llm = llm
        self.store: Store | None = None
        self.settings: Settings | None = None
        self.session: SessionRow | None = None
        self.chat: ChatSession | None = None  # the open session's, once its agent is wanted
        self._approver = approver
        self._on_event = on_event
        self._sessions: Sessions | None = None
        self.replaying = False
        self.fork_notice = ""  # what the last fork did, for the user
        self._created: set[str] = set()  # sessions this run created: removed again if left empty

    async def open(self) -> None:
        self.store = await Store.open(self.db_path)
        self.settings = await resolve_settings(self.store, self.cli)

    async def start_replay(self, target: str, delay: float) -> Replay:
        """Create a replay session of a recorded conversation; returns the ``Replay`` driver."""
        from myrm_tui.agent.replay import Replay, load_recording

        await self.warm_up()
        assert self.settings is not None
        rep = Replay(load_recording(target), delay)
        agent = await rep.start(self._store(), self.settings, self.workspace)
        self.chat = self._door().replay(agent)
        self.replaying = True
        self.session = await self._store().get_session(agent.session_id)
        return rep

    @property
    def agent(self) -> Agent | None:
        """The open session's agent as built now (None before it is wanted)."""
        return self.chat.agent if self.chat is not None else None

    @property
    def cache(self) -> ChatAgentExecutionCache:
        """The open session's agent builds (rebuilt when the fingerprint changes)."""
        assert self.chat is not None, "ensure_agent() first"
        return self.chat.cache

    def _door(self) -> Sessions:
        """The agent API's door to this store's sessions (a light import: the agent package loads with the
        first agent, in a thread of ``ensure_agent``)."""
        if self._sessions is None:
            from myrm_tui.agent.api import Sessions

            self._sessions = Sessions(
                self._store(),
                self.workspace,
                self._approver,
                llm=self.llm,
                on_event=self._on_event,
                keep_warm=True,
                extra=self.files_version,
                mcp_late=True,
            )
        return self._sessions

    async def warm_up(self) -> None:
        """Import litellm (seconds, ~150 MB) in a thread: before the first model call or a registry lookup,
        never on the first frame's path. The app calls it when the user starts typing."""
        from myrm_tui.llm.client import litellm_module

        await litellm_module()

    def _store(self) -> Store:
        assert self.store is not None, "Controller.open() first"
        return self.store

    async def open_session(self, session_id: str | None) -> SessionRow:
        store = self._store()
        assert self.settings is not None
        row = await store.find_session(session_id) if session_id else None
        if session_id and row is None:
            raise KeyError(f"no session {session_id!r}")
        # One writer per session: SessionBusy (another myrm has it) leaves the current session open.
        if row is None:
            chat = await self._door().start(self.settings)
            self._created.add(chat.id)
            row = await store.get_session(chat.id)
            assert row is not None
        else:
            chat = await self._door().open(row.id, self.settings)
        await self._switch(row, chat)
        return row

    async def _switch(self, row: SessionRow, chat: ChatSession) -> None:
        """``row`` is the open session now, ``chat`` its API session; the previous one's agent is closed
        and its lease released."""
        previous, old = self.session, self.chat
        self.session, self.chat = row, chat
        if old is not None:  # the same session reopened keeps the lease its new ChatSession took again
            await old.close(release=previous is not None and previous.id != row.id)

    async def has_conversation(self, session_id: str | None = None) -> bool:
        """Whether the session (the open one by default) holds a message of the user's: what makes it
        worth resuming."""
        sid = session_id or (self.session.id if self.session else None)
        if sid is None or self.store is None:
            return False
        from myrm_tui.store.transcript import has_user_message

        return await has_user_message(self.store, sid)  # one indexed query, not every message loaded

    async def _drop_empty(self) -> None:
        """Sessions this run created and the user never wrote in are deleted at exit (no "New session"
        rows from launches that only looked); within the run they stay in the list."""
        for sid in list(self._created):
            try:
                if not await self.has_conversation(sid):
                    await self._store().delete_session(sid)
            except SessionBusy:  # left earlier and now another myrm's: it is theirs to keep
                pass
            self._created.discard(sid)

    async def drop_agent(self) -> None:
        """Close the open session's agent (its lease stays: the session is still open)."""
        chat, self.chat = self.chat, None
        if chat is not None:
            await chat.close(release=False)

    async def user_typing(self) -> None:
        """The user started a message: get the model ready while they type (the embedded model's child
        starts and its prompt is prefilled by a preheat; litellm is imported in a thread)."""
        agent = self.agent
        if agent is not None and not self.replaying and model_kind(agent.session.settings.model) == "local":
            agent.warmer.schedule_preheat()
        await self.warm_up()

    def files_version(self) -> str:
        return files_fingerprint(prompts_dir(), config_file())

    async def ensure_agent(self) -> Agent:
        """The session's agent, rebuilt first if its execution fingerprint changed (settings, prompts,
        config)."""
        if self.replaying and self.agent is not None:
            return self.agent
        assert self.session is not None and self.settings is not None
        if window_needs_litellm(self.settings):
            await self.warm_up()  # window_for reads litellm's registry: imported in a thread, not on the loop
        await asyncio.to_thread(_load_agent_runtime)
        if self.chat is None:
            self.chat = await self._door().open(self.session.id, self.settings)
        return await self.chat.ready(self.settings)

    async def send(self, text: str) -> AsyncIterator[AgentEvent]:
        """One turn of the open session: its events, ``TurnDone`` last."""
        await self.ensure_agent()
        assert self.chat is not None
        async for ev in self.chat.send(text):
            yield ev

    async def baseline(self) -> WindowUse | None:
        """What the ring shows before anything is sent (None without an agent): the agent's
        ``window_use()``, the breakdown ``/context`` and the panel show too."""
        return self.chat.window_use() if self.chat is not None else None

    def schema_tokens(self) -> int:
        """Tokens of the tool schemas sent with every request (none for the embedded model)."""
        return self.agent.session.schema_tokens() if self.agent is not None else 0

    async def reload_settings(self) -> None:
        self.settings = await resolve_settings(self._store(), self.cli)

    async def save_settings(self, values: dict[str, Any]) -> None:
        """Store settings in the database; the next message runs with them (fingerprint rebuild)."""
        for key, value in values.items():
            await self._store().set_setting(key, value)
            self.cli[key] = value  # what the user just chose wins for this run, over flags and MYRM_* too
        await self.reload_settings()

    async def watch_files(
        self, on_change: Callable[[list[str]], Awaitable[None]], stop: asyncio.Event | None = None
    ) -> None:
        """Watch ``prompts/`` and the config file; a change rebuilds the agent for the next message."""
        from watchfiles import awatch

        paths = [p for p in (prompts_dir(), config_file().parent) if p.exists()]
        if not paths:
            return
        async for changes in awatch(*paths, stop_event=stop, debounce=200, step=50):
            relevant = [
                c[1] for c in changes if c[1].startswith(str(prompts_dir())) or c[1] == str(config_file())
            ]
            if relevant:
                await self.reload_settings()
                await on_change(relevant)

    async def messages(self) -> list[Any]:
        assert self.session is not None
        return await self._store().load_messages(self.session.id)

    async def sessions(self) -> list[SessionRow]:
        return await self._store().list_sessions()

    async def new_session(self) -> SessionRow:
        return await self.open_session(None)

    async def undo_plan(self) -> UndoPlan | None:
        """The open session's newest file edits ``/undo`` would take back (None: none left)."""
        await self.ensure_agent()
        assert self.chat is not None
        return await self.chat.undo_plan()

    async def undo(self, plan: UndoPlan, overwrite_changed: bool) -> UndoOutcome:
        assert self.chat is not None
        return await self.chat.undo(plan, overwrite_changed)

    async def delete_session(self, session_id: str) -> None:
        await self._store().delete_session(session_id)

    async def fork(self, upto_seq: int | None = None, at_user_message: int | None = None) -> SessionRow:
        """Fork into a new session whose context starts compacted (a summary of the parent): at the
        current point, at a stored sequence number, or after the N-th user message and its answer.

        Atomic: the session row, the message copy, the context state and the fork's first compaction
        commit are one store transaction. The fork's agent is built and compacted inside it before the
        app switches over, so on :class:`ForkFailed` nothing was created and the parent stays open."""
        assert self.session is not None and self.settings is not None
        store = self._store()
        parent = self.session
        try:
            if at_user_message is not None:
                msgs = await store.load_messages(parent.id)
                users = [i for i, m in enumerate(msgs) if m.role == "user" and not m.synthetic]
                if not 1 <= at_user_message <= len(users):
                    raise ValueError(
                        f"there is no user message {at_user_message} (this session has {len(users)})"
                    )
                end = users[at_user_message] if at_user_message < len(users) else len(msgs)
                upto_seq = int(msgs[end - 1].id[1:])
            await self.warm_up()  # litellm's import, before the transaction holds the store
            await asyncio.to_thread(_load_agent_runtime)
        except Exception as exc:
            raise ForkFailed(f"Fork failed, nothing was created: {exc}") from exc
        try:
            # One transaction (cancelled by a second ctrl+f or quitting, it rolls back whole).
            forked = await self._door().fork(parent.id, self.settings, upto_seq)
        except Exception as exc:
            raise ForkFailed(
                f"Fork failed, nothing was created ({type(exc).__name__}: {exc}); "
                f"still in session {parent.id}"
            ) from exc
        row, chat, report = forked.row, forked.chat, forked.report
        assert chat is not None and report is not None
        try:
            await self._switch(row, chat)
            await self.ensure_agent()
        except Exception as exc:
            if self.chat is not chat:
                await chat.close()
            raise ForkFailed(
                f"Forked into session {row.id}, but opening it failed ({type(exc).__name__}: {exc}); "
                "open it from the session list (ctrl+s)"
            ) from exc
        record = report.metrics.compaction
        how = (
            f"it starts compacted ({record.headline()})"
            if record is not None and record.changed
            else f"it starts with the parent's context, {report.tokens:,} tokens (nothing to compact)"
        )
        self.fork_notice = f"Forked into session {row.id} “{row.title}”: {how}"
        return row

    async def maybe_title(self, first_message: str) -> str | None:
        """Title a new session from its first message (background; local fallback costs no tokens)."""
        if self.session is None or self.session.title != "New session" or self.agent is None:
            return None
        from myrm_tui.agent.model_target import model_spec
        from myrm_tui.agent.title import make_title
        from myrm_tui.config import summarizer_model

        s = self.agent.session
        spec = (
            model_spec(s.settings, summarizer_model(s.settings))
            if s.settings.summarizer_model != "extractive"
            else None
        )
        sid = self.session.id  # a fork may switch sessions while the title is written: it is not renamed
        title, _ = await make_title(first_message, s.llm, spec, s.prompts.read("title.md"))
        await self._store().rename_session(sid, title)
        row = await self._store().get_session(sid)
        if self.session is None or self.session.id != sid:
            return None
        self.session = row
        return title

    async def title_untitled(self, first_message: str) -> None:
        """At exit: a session still "New session" whose first message was saved (a quit or a closed
        terminal during its first turn, or before the model's title came back) takes the local title
        of that message, no tokens spent; ``myrm sessions`` listed it as "New session"."""
        if not first_message or self.session is None or self.session.title != "New session":
            return
        from myrm_tui.agent.title import local_title

        await self._store().rename_session(self.session.id, local_title(first_message))

    async def panel_data(self) -> PanelData:
        """Everything the health panel and vault pane show, read from the store and the agent."""
        assert self.session is not None
        store = self._store()
        # The panel counts compactions; what each one left (a list as long as the messages it folded: 10,000
        # in a long session's) is the transcript's row to show, not the panel's to hold a second copy of.
        rows = [_without_left(r) for r in await store.metrics(self.session.id)]
        vault = await store.vault_list(self.session.id)
        agent = self.agent
        info: PanelInfo = {"vault_entries": len(vault), "vault_bytes": sum(v["size"] for v in vault)}
        vaulted: dict[str, str] = {}
        if agent is not None:
            sess = agent.session
            st = sess.state
            times = sorted(r.get("total_ms", 0.0) for r in rows if "total_ms" in r)
            info.update(
                PanelInfo(
                    window=sess.window,
                    notes=len(st.notes),
                    cache_breaks=st.cache_breaks,
                    handovers=st.handovers,
                    note_texts=list(st.notes),
                    keepalive=agent.warmer.keepalive.state if agent.warmer.keepalive else "off",
                    breaker=sess.breaker.state,
                    backoff=st.backoff_level,
                    low_yield=st.low_yield_streak,
                    summarizer=sess.aux.last_model
                    if sess.aux and sess.aux.last_model
                    else ("extractive" if sess.extractive_summaries else "lite model"),
                    summarizer_bill=sess.preparer.status(),
                    last_duration_ms=float(st.last_compaction.get("duration_ms", 0.0)),
                    pipeline_p50=times[len(times) // 2] if times else None,
                    auto_compact=sess.config.auto_compact,
                    schema_tokens=self.schema_tokens(),
                )
            )
            for m in [*st.base, *st.decisions.values()]:
                uri = m.meta.get("vault_uri")
                if m.role == "tool" and uri and m.tool_call_id:
                    vaulted[m.tool_call_id] = uri
        return PanelData(rows, info, vault, vaulted, await self._vault_gists(vault))

    async def _vault_gists(self, vault: list[VaultListing]) -> dict[str, str]:
        """What each vault entry came from, in a few words: the command or call whose output it is, the
        reply whose reasoning it holds, the conversation a compaction archived."""
        out: dict[str, str] = {}
        for v in vault:
            meta = v.get("meta", {})
            if meta.get("command"):
                out[v["uri"]] = str(meta["command"])
            elif meta.get("reason") == "pre_compact":
                out[v["uri"]] = "the conversation before a compaction"
        # The agent holds the history already: reading the whole session again on every panel refresh
        # (after each reply) grew with its length.
        agent = self.agent
        history = agent.session.history if agent is not None else await self.messages()
        messages = [m for m in history if m.meta.get("vault_uri") or m.tool_calls]
        if agent is not None:
            messages += [*agent.session.state.base, *agent.session.state.decisions.values()]
        calls = {c.id: c for m in messages for c in m.tool_calls}
        for m in messages:
            uri = m.meta.get("vault_uri")
            if not uri or uri in out:
                continue
            if m.role == "tool":
                call = calls.get(m.tool_call_id or "")
                out[uri] = call_gist(call) if call else m.name or "tool output"
            elif m.role == "assistant":
                about = call_gist(m.tool_calls[0]) if m.tool_calls else _first_line(m.text)
                out[uri] = f"reasoning: {about}"
            else:
                out[uri] = _first_line(m.text)
        return out

    async def compactions(self) -> list[Compaction]:
        """The session's compaction records, oldest first."""
        assert self.session is not None
        return compactions_of(await self._store().metrics(self.session.id))

    async def preview_compaction(self, focus: str = "") -> tuple[Compaction | None, str]:
        await self.ensure_agent()
        assert self.chat is not None
        return await self.chat.preview_compaction(focus)

    async def pin(self, uri: str, line_range: str, gist: str, pin: bool) -> int:
        """Bring an item back into the next requests (its tokens), or unpin it (0)."""
        agent = await self.ensure_agent()
        if pin:
            return await agent.pin(uri, line_range, gist)
        await agent.unpin(uri, line_range)
        return 0

    async def vault_entry(self, uri: str) -> Any:
        assert self.session is not None
        return await self._door().vault_entry(self.session.id, uri)

    async def compact(self, focus: str = "") -> Any:
        await self.ensure_agent()
        assert self.chat is not None
        return await self.chat.compact(focus)

    async def set_setting(self, key: str, value: Any) -> None:
        await self.save_settings({key: value})

    async def setting_problem(self, key: str, value: Any, source: str) -> str | None:
        """Why ``value`` cannot be stored for ``key`` (one line naming ``source``), or None. Checked before
        anything is saved: a bad value never reaches the database."""
        from myrm_tui.config import validate_values

        _, problems = validate_values({key: value}, source)
        if problems:
            return str(problems[0])
        if key in ("model", "summarizer_model") and value not in ("", "extractive"):
            return await self.model_refusal(str(value), source)
        return None

    async def model_refusal(self, model: str, source: str = "/model") -> str | None:
        """Why ``model`` cannot answer with this configuration: a model string litellm refuses, or the
        provider's key missing from the environment (an api base or api key in the settings skips that)."""
        from myrm_tui.config import model_problem

        s = self.settings
        api_base = s.api_base if s else None
        if problem := model_problem(model, api_base):
            return f"{source}: {problem}"
        return await key_problem(model, source, api_base, s.api_key if s else None)

    def model_choices(self) -> list[str]:
        """What the /model picker offers (``model_target.model_choices``)."""
        from myrm_tui.agent.model_target import model_choices

        return model_choices(self.settings.model if self.settings else None)

    async def close(self) -> None:
        """The agent, then the store: the store closes (its leases released) whatever failed before."""
        # guard: quit-the-store-closes-after-a-failed-agent-close
        try:
            await self.drop_agent()
            if self.store is not None:
                await self._drop_empty()
        finally:
            if self.store is not None:
                await asyncio.shield(self.store.close())
                self.store = None


def _without_left(row: dict[str, Any]) -> dict[str, Any]:
    comp = row.get("compaction")
    if not isinstance(comp, dict) or not comp.get("left"):
        return row
    return {**row, "compaction": {**comp, "left": []}}
