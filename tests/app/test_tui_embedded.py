"""The TUI on the embedded model: the child crashing mid-reply costs one turn, never the app."""

from __future__ import annotations

import asyncio
import re
import signal
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import pytest
import pytest_asyncio

from myrm_tui.app.app import MyrmApp
from myrm_tui.app.widgets.chat_message import AssistantMessage, Notice, UserMessage
from myrm_tui.app.widgets.prompt_input import PromptInput
from myrm_tui.llm import local
from myrm_tui.llm.local import DEFAULT_LOCAL_MODEL, EmbeddedServer, runtime_available
from tests.helpers import SMALL_SCREEN, started, type_and_send, wait_until
from tests.llm.test_local import CRASH_REPLY_TOKENS, NEXT_REPLY_TOKENS, STORY, _crash

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not runtime_available(), reason="embedded model not installed (make install)"),
]

_CONTENT = re.compile(rb'"content":\s*"[^"]')  # a streamed chunk that carries words


class HeldServer(EmbeddedServer):
    """The embedded server, reached through a proxy that holds the first reply after its first words:
    that reply cannot end before the test crashes the child, however fast the model or slow the app."""

    def __init__(self) -> None:
        super().__init__()
        self.proxy: asyncio.Server | None = None
        self.held = asyncio.Event()  # the first words were forwarded, the rest is held
        self.release = asyncio.Event()  # end the held reply's connection (as the dead child's would)
        self._armed = True

    async def start_proxy(self) -> None:
        self.proxy = await asyncio.start_server(self._connection, "127.0.0.1", 0)

    async def ensure(self) -> str:
        await super().ensure()
        assert self.proxy is not None
        return f"http://127.0.0.1:{self.proxy.sockets[0].getsockname()[1]}/v1"

    async def _connection(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        up_r, up_w = await asyncio.open_connection("127.0.0.1", self.port)

        async def upstream() -> None:
            while data := await client_r.read(65536):
                up_w.write(data)
                await up_w.drain()

        sending = asyncio.ensure_future(upstream())
        pending = b""
        try:
            while data := await up_r.read(65536):
                if not self._armed:
                    client_w.write(data)
                    await client_w.drain()
                    continue
                pending += data
                words = _CONTENT.search(pending)
                # The event with the first words goes whole (up to where the next event starts), so the
                # client can parse it; everything after is held.
                cut = pending.find(b"data:", words.end()) if words else len(pending)
                if cut < 0:
                    continue
                client_w.write(pending[:cut])
                await client_w.drain()
                pending = pending[cut:]
                if words:
                    self._armed = False
                    self.held.set()
                    await self.release.wait()
                    break
        except ConnectionError:
            pass
        finally:
            sending.cancel()
            for w in (client_w, up_w):
                w.close()


@pytest_asyncio.fixture
async def embedded(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[HeldServer]:
    srv = HeldServer()
    await srv.start_proxy()
    monkeypatch.setattr(local, "_server", srv)
    yield srv
    srv.release.set()
    srv.stop()
    assert srv.proxy is not None
    srv.proxy.close()


async def test_a_crashing_embedded_model_ends_one_turn_and_the_next_message_restarts_it(
    tmp_path: Path,
    workspace: Path,
    embedded: HeldServer,
) -> None:
    app = MyrmApp(
        db_path=tmp_path / "tui.db",
        workspace=workspace,
        cli={"model": DEFAULT_LOCAL_MODEL, "max_output_tokens": CRASH_REPLY_TOKENS, "approval": "auto"},
    )
    async with started(app, size=SMALL_SCREEN) as pilot:
        await type_and_send(pilot, STORY)
        await wait_until(pilot, embedded.held.is_set, timeout=90)
        await wait_until(pilot, lambda: bool(app.query(AssistantMessage)), timeout=30)  # words shown
        dead, proc = embedded.pid(), embedded.proc
        assert dead is not None and proc is not None
        _crash(dead, signal.SIGSEGV)
        await wait_until(pilot, lambda: proc.poll() is not None, timeout=30)
        embedded.release.set()  # the connection ends as the dead child's did
        await pilot.press(*"half-typed")  # what the user is typing while the reply dies stays in the box
        await wait_until(pilot, lambda: not app.busy, timeout=60)
        errors = [str(n.render()) for n in app.query(Notice) if n.has_class("-error")]
        assert errors == [
            "the embedded model stopped (signal 11, SIGSEGV); restarting — your message is kept"
        ]
        assert app.query_one(PromptInput).text == "half-typed"
        assert any(STORY in str(u.render()) for u in app.query(UserMessage))  # the conversation is intact

        app.query_one(PromptInput).clear()
        agent = app.controller.agent
        assert agent is not None
        agent.session.settings = replace(agent.session.settings, max_output_tokens=NEXT_REPLY_TOKENS)
        before = len(app.query(AssistantMessage))
        await type_and_send(pilot, "Say hello.")
        await wait_until(
            pilot, lambda: not app.busy and len(app.query(AssistantMessage)) > before, timeout=90
        )
        assert app.query(AssistantMessage).last().markdown.source.strip()
        assert embedded.starts == 2 and embedded.pid() != dead
        assert app.is_running
