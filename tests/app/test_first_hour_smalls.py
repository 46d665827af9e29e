"""The smaller things a new user tripped on in the first hour (#45.11), each pressed with real keys: Esc in
an expanded compaction list, a resume that opens at the bottom, the status line while a reply is read and
while it streams, a fork of a replay with a call left unfinished, the ring's line at 80 columns."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from textual.widgets import ListView

from myrm_tui.app.app import MyrmApp
from myrm_tui.app.screens.compact_preview import CompactPreviewScreen
from myrm_tui.app.widgets.chat_log import ChatLog
from myrm_tui.app.widgets.chat_message import AssistantMessage, Notice
from myrm_tui.app.widgets.compaction_row import CompactionRow
from myrm_tui.app.widgets.context_ring import ContextUsageIndicator
from myrm_tui.app.widgets.prompt_input import PromptInput
from myrm_tui.app.widgets.status_line import StatusLine
from myrm_tui.context.types import Message
from myrm_tui.store.db import Store
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.helpers import SMALL_SCREEN, make_app, send_turn, started, type_and_send, wait_until

SMALL = {"context_window": 16_000, "auto_compact": False, "summarizer_model": "extractive"}


def _text(widget: Any) -> str:
    return str(widget.render())


async def _send(pilot: Any, app: MyrmApp, text: str) -> None:
    await send_turn(pilot, app, text, 60)


async def test_esc_in_an_expanded_compaction_list_gives_the_keys_back_to_the_prompt(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    """Esc leaves the list and the transcript at once: a ``/context`` typed next reaches the prompt (it
    fired ``c``, copy, and its Enter collapsed the row)."""
    app = make_app(emulator, tmp_path, workspace, preheat=False, **SMALL)
    for i in range(5):
        emulator.enqueue(
            Reply(tool_calls=[("bash", {"command": f"seq 1 {200 + i}"})]),
            Reply(text=f"Counted {i}. " + " ".join(f"finding{i}x{k} holds" for k in range(150))),
        )
    async with started(app, size=SMALL_SCREEN) as pilot:
        for i in range(5):
            await _send(pilot, app, f"count {i}")
        await pilot.press("ctrl+k")
        await wait_until(pilot, lambda: isinstance(app.screen, CompactPreviewScreen))
        await pilot.press("enter")
        await wait_until(pilot, lambda: bool(app.query(CompactionRow)) and not app.compacting)
        row = app.query(CompactionRow).last()
        chat = app.query_one(ChatLog)
        await pilot.press("shift+tab")  # into the transcript, on the newest item: the row
        await wait_until(pilot, lambda: chat.cursor is not None and chat.cursor.widget is row)
        await pilot.press("enter")  # expands it, the focus in its list of what left the view
        lv = row.query_one(ListView)
        await wait_until(pilot, lambda: not row.collapsed and app.focused is lv)
        copied: list[str] = []
        app.copy_to_clipboard = copied.append  # type: ignore[method-assign,assignment]
        await pilot.press("escape")
        assert isinstance(app.focused, PromptInput)
        await type_and_send(pilot, "/context")
        await wait_until(pilot, lambda: any("Context window now" in _text(n) for n in app.query(Notice)))
        assert not row.collapsed and copied == []


async def test_a_resumed_session_opens_at_the_bottom(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    """Reopened, the transcript shows the newest output and no "more below", even after the transcript
    was walked (which lets the view go) in the session open before."""
    db = tmp_path / "tui.db"
    store = await Store.open(db)
    rows = []
    for title in ("first", "second"):
        row = await store.create_session(title=title)
        await store.append_message(row.id, Message(role="system", content="sys"))
        for i in range(30):
            await store.append_message(row.id, Message(role="user", content=f"{title} question {i}"))
            steps = "\n".join(f"{k}. step {k} of answer {i}" for k in range(1, 6))
            await store.append_message(row.id, Message(role="assistant", content=f"## {i}\n\n{steps}\n"))
        rows.append(row)
    await store.close()
    app = MyrmApp(
        db_path=db,
        workspace=workspace,
        session_id=rows[0].id,
        cli={"model": "openai/gpt-4o-mini", "api_base": emulator.openai_base, "api_key": "sk-test"},
    )
    async with started(app, size=(100, 30)) as pilot:
        chat = app.query_one(ChatLog)
        below = app.query_one("#below")

        def at_bottom() -> bool:
            return chat.max_scroll_y > 0 and chat.scroll_y == chat.max_scroll_y and not below.display

        await wait_until(pilot, at_bottom)
        await pilot.press("shift+tab", "up", "up", "up", "escape")  # walked, then left
        app.switch_session(rows[1].id)
        await wait_until(
            pilot, lambda: any("second question 29" in _text(w) for w in app.query("UserMessage"))
        )
        await wait_until(pilot, at_bottom)
        last = app.query(AssistantMessage).last()
        assert last.region.y < chat.region.bottom  # the newest answer is on screen


async def test_the_status_line_says_what_the_turn_does(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    """Before the first words the status counts the seconds and names the prompt being read (the
    embedded model read a 4.8K-token prompt for 30 s under a bare ``thinking…``); once text streams it
    says ``writing…``."""
    app = make_app(emulator, tmp_path, workspace, preheat=False)
    gate = threading.Event()  # the model answers once the test has seen it wait
    emulator.enqueue(Reply(text="word " * 200, chunk_size=5, chunk_delay=0.01, gate=gate))
    async with started(app, size=(140, 42)) as pilot:
        status = app.query_one(StatusLine)
        await type_and_send(pilot, "hello")
        await wait_until(pilot, lambda: _text(status).startswith("thinking… 1 s, reading "))
        reading = int(_text(status).split("reading ")[1].split()[0].replace(",", ""))
        assert reading == app.live.tokens  # the request being read: the ring's figure
        gate.set()
        await wait_until(pilot, lambda: bool(app.query(AssistantMessage)))
        await wait_until(pilot, lambda: _text(status) == "writing… (esc cancels)")
        await wait_until(pilot, lambda: not app.busy)
        assert _text(status) == "ready"


async def test_the_ring_line_fits_80_columns(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    """At 80 columns the side panel folds into the ring's one line: whole parts only, none cut."""
    app = make_app(emulator, tmp_path, workspace, preheat=False)
    async with started(app, size=(80, 24)) as pilot:
        ring = app.query_one(ContextUsageIndicator)
        await wait_until(pilot, lambda: ring.compact and ring.window > 0)
        line = _text(ring)
        assert "\n" not in line and len(line) <= ring.size.width, line
        assert line.endswith(("ctrl+k compacts", "ctrl+b panel", "tokens")), line
        assert f"{ring.tokens:,} / {ring.window:,} tokens" in line


async def test_a_call_left_without_result_is_shown_interrupted_not_pending(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    """A fork of a replay copies a ``bash`` call whose output was never recorded: opened (and reopened),
    its card says it was interrupted instead of running forever; the session goes on."""
    from myrm_tui.app.widgets.tool_call import ToolCallView
    from myrm_tui.context.types import ToolCall

    db = tmp_path / "tui.db"
    store = await Store.open(db)
    row = await store.create_session(title="forked replay")
    await store.append_message(row.id, Message(role="system", content="sys"))
    await store.append_message(row.id, Message(role="user", content="run the tests"))
    call = ToolCall("c1", "bash", '{"command": "pytest -q"}')
    await store.append_message(row.id, Message(role="assistant", content="", tool_calls=(call,)))
    await store.close()
    emulator.enqueue(Reply(text="went on"))
    app = MyrmApp(
        db_path=db,
        workspace=workspace,
        session_id=row.id,
        cli={"model": "openai/gpt-4o-mini", "api_base": emulator.openai_base, "api_key": "sk-test"},
    )
    async with started(app, size=SMALL_SCREEN) as pilot:
        await wait_until(pilot, lambda: bool(app.query(ToolCallView)))
        card = app.query_one(ToolCallView)
        await wait_until(pilot, lambda: card.state == "cancelled")
        assert "▶" not in str(card.title) and "cancelled" in str(card.title)
        await _send(pilot, app, "go on")
        assert any("went on" in m.markdown.source for m in app.query(AssistantMessage))  # type: ignore[attr-defined]
        assert card.state == "cancelled"


async def test_a_compaction_before_the_request_is_said_on_the_status_line(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    """A history over the window is compacted before the request: the status line says so, with the
    tokens and the seconds, instead of a bare ``thinking…`` (75 s of it at 2.3M tokens)."""
    from myrm_tui.agent.events import CompactionStarted

    app = make_app(emulator, tmp_path, workspace, preheat=False)
    async with started(app, size=(140, 42)) as pilot:
        status = app.query_one(StatusLine)
        app.busy = True  # as in a turn: the event comes from the agent's first step
        app._event(CompactionStarted(2_400_000, 12_000))
        await wait_until(
            pilot,
            lambda: _text(status).startswith("compacting 2,400,000 tokens of history to fit the window… "),
        )
        app.busy = False
        app._status()
        await wait_until(pilot, lambda: _text(status) == "ready")
