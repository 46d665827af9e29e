"""The TUI on the embedded model: the child crashing mid-reply costs one turn, never the app."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from myrm_tui.app.app import MyrmApp
from myrm_tui.app.widgets.chat_message import AssistantMessage, Notice, UserMessage
from myrm_tui.app.widgets.prompt_input import PromptInput
from myrm_tui.llm import local
from myrm_tui.llm.local import DEFAULT_LOCAL_MODEL, EmbeddedServer, runtime_available
from tests.test_local_model import STORY, _crash, _wait_gone
from tests.test_tui import type_and_send, wait_until

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not runtime_available(), reason="embedded model not installed (make install)"),
]


@pytest.fixture
def embedded(monkeypatch: pytest.MonkeyPatch) -> Iterator[EmbeddedServer]:
    srv = EmbeddedServer()
    monkeypatch.setattr(local, "_server", srv)
    yield srv
    srv.stop()


async def test_a_crashing_embedded_model_ends_one_turn_and_the_next_message_restarts_it(
    tmp_path: Path,
    workspace: Path,
    embedded: EmbeddedServer,
) -> None:
    app = MyrmApp(
        db_path=tmp_path / "tui.db",
        workspace=workspace,
        cli={"model": DEFAULT_LOCAL_MODEL, "max_output_tokens": 400, "approval": "auto"},
    )
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, app.ready.is_set, timeout=60)
        # The child is frozen the moment the first words of the reply reach the app, so the reply
        # cannot end on its own before the fatal signal; a reply too short to be caught mid-way (it
        # ended before the app saw its first words) is asked for again.
        for _attempt in range(3):
            before, asked = len(app.query(AssistantMessage)), len(app.query(UserMessage))

            def sent(n: int = asked) -> bool:
                return len(app.query(UserMessage)) > n

            def replying_or_done(n: int = before) -> bool:
                return len(app.query(AssistantMessage)) > n or not app.busy

            await type_and_send(pilot, STORY)
            await wait_until(pilot, sent, timeout=30)
            await wait_until(pilot, replying_or_done, timeout=90)
            dead = embedded.pid()
            assert dead is not None
            os.kill(dead, signal.SIGSTOP)
            if app.busy:
                break
            os.kill(dead, signal.SIGCONT)
        else:
            pytest.fail("the embedded model finished three replies before their first words were shown")
        _crash(dead, signal.SIGSEGV)
        await pilot.press(*"half-typed")  # what the user is typing while the reply dies stays in the box
        await wait_until(pilot, lambda: not app.busy, timeout=60)
        errors = [str(n.render()) for n in app.query(Notice) if n.has_class("-error")]
        assert errors == [
            "the embedded model stopped (signal 11, SIGSEGV); restarting — your message is kept"
        ]
        assert app.query_one(PromptInput).text == "half-typed"
        assert any(STORY in str(u.render()) for u in app.query(UserMessage))  # the conversation is intact
        assert _wait_gone(dead)

        app.query_one(PromptInput).clear()
        before = len(app.query(AssistantMessage))
        await type_and_send(pilot, "Say hello.")
        await wait_until(
            pilot, lambda: not app.busy and len(app.query(AssistantMessage)) > before, timeout=90
        )
        assert app.query(AssistantMessage).last().markdown.source.strip()
        assert embedded.starts == 2 and embedded.pid() != dead
        assert app.is_running
