"""Whatever text from outside a widget shows is inert: no character a terminal obeys (C0/C1 controls, so
no escape sequence: OSC 52 clipboard, OSC 8 links, title sets, cursor moves), no bidirectional override
that makes a command read as another one, no lone surrogate (which a UTF-8 terminal cannot take: the
write raises), and no exception however it mixes them with markup, zero-width and very wide or long
text. ``tests/app/test_untrusted_text.py`` checks that the text is shown as given; this checks, over a
wider alphabet, that nothing dangerous reaches the screen."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from textual import events
from textual.app import App, ComposeResult
from textual.screen import Screen
from textual.widget import Widget

from myrm_tui.agent.permissions import Assessment, ParsedCommand
from myrm_tui.app.screens.approval import ApprovalScreen
from myrm_tui.app.screens.models import ModelPicker
from myrm_tui.app.screens.sessions import SessionPicker
from myrm_tui.app.widgets.chat_message import AssistantMessage, Notice, UserMessage
from myrm_tui.app.widgets.compaction_row import CompactionRow
from myrm_tui.app.widgets.mention_menu import MentionMenu
from myrm_tui.app.widgets.prompt_input import PromptInput
from myrm_tui.app.widgets.status_line import StatusLine
from myrm_tui.app.widgets.tool_call import ToolCallView
from myrm_tui.app.widgets.vault_pane import VaultPane
from myrm_tui.context.types import ToolCall
from myrm_tui.safe_text import sanitize
from myrm_tui.store.db import VaultListing
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.app.test_untrusted_text import (
    HOSTILE,
    THREE_APPS,
    record,
    reopen,
    session_row,
    shown,
    stored_session,
)
from tests.helpers import make_app, started, type_and_send, wait_until

# What a terminal obeys or cannot take, as one character each.
BIDI = [chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))]
SURROGATES = ["\ud800", "\udbff", "\udc00", "\udcff", "\udfff"]
CONTROLS = [chr(c) for c in (*range(0x20), 0x7F, *range(0x80, 0xA0)) if c not in (0x09, 0x0A)]
# Every surrogate is replaced, not only those sampled above (a generated text holds others).
DANGEROUS = frozenset(BIDI + CONTROLS + [chr(c) for c in range(0xD800, 0xE000)])
# Whole sequences an attacker writes, and text that is hard to lay out.
SEQUENCES = [
    "\x1b]52;c;cHduZWQ=\x07",  # OSC 52: write the clipboard
    "\x1b]8;;https://evil.example\x1b\\link\x1b]8;;\x1b\\",  # OSC 8: a hidden link
    "\x1b]0;new title\x07",  # retitle the window
    "\x1b[2J\x1b[H",  # clear the screen, cursor home
    "\x1b[1A\x1b[2K",  # up one line and erase it: rewrite what was shown
    "\x9b31m",  # 8-bit CSI
    "\x1bP+q\x1b\\",  # DCS
    "\r\n",
    "rm -rf ~ \u202e#sl\u202c",  # Trojan Source: reads as a comment
    "\u200b\u200c\u200d\u2060\ufeff",  # zero-width
    "\u0301\u0301\u0301",  # combining marks with nothing to combine with
    "字" * 70,  # wide
    "x" * 400,  # long
    "\U0001f468\u200d\U0001f469\u200d\U0001f467",  # a joined emoji
]
pieces = st.one_of(
    st.sampled_from(HOSTILE + SEQUENCES + BIDI + SURROGATES + CONTROLS),
    st.text(st.characters(codec=None, exclude_categories=()), max_size=8),  # surrogates included
)
attacking = st.lists(pieces, min_size=1, max_size=6).map("".join).filter(lambda s: bool(s.strip()))


@settings(max_examples=300, deadline=None)
@given(text=st.lists(pieces, max_size=12).map("".join))
@example(text="a\ud800b\u202ec\x1b]52;c;eA==\x07d\x9b2J")
def test_sanitize_leaves_nothing_a_terminal_obeys_and_keeps_the_rest(text: str) -> None:
    """Every dangerous character is replaced one for one (a CRLF becomes a newline); every other
    character is kept in place; the result is UTF-8 and sanitizing it again changes nothing."""
    out = sanitize(text)
    assert not DANGEROUS & set(out)
    out.encode("utf-8")  # a lone surrogate would raise here, as a terminal write does
    assert sanitize(out) == out
    lf = text.replace("\r\n", "\n")
    assert len(out) == len(lf)
    for given_char, shown_char in zip(lf, out, strict=True):
        assert shown_char == given_char or given_char in DANGEROUS


def dangerous_on(widgets: list[Widget]) -> dict[str, str]:
    """Each widget (by its type and id) whose screen lines hold a dangerous character, with them."""
    found = {}
    for w in widgets:
        if w.display and w.outer_size.area:
            bad = DANGEROUS & set(shown(w))
            if bad:
                found[f"{type(w).__name__}#{w.id}"] = "".join(sorted(bad))
    return found


class Everything(App[None]):
    """Every widget that shows text from outside, each given ``texts``."""

    def __init__(self, texts: list[str]) -> None:
        super().__init__()
        self.texts = texts

    def compose(self) -> ComposeResult:
        for i, t in enumerate(self.texts):
            yield ToolCallView(ToolCall(f"c{i}", "bash", json.dumps({"command": t})))
            yield ToolCallView(ToolCall(f"m{i}", t or "x", t))  # an MCP tool's own name and raw arguments
            yield CompactionRow(record(t))
            yield Notice(t, "error")
            yield UserMessage(t)
            yield AssistantMessage(t)
        yield StatusLine(id="status")
        yield VaultPane(id="vault")
        yield MentionMenu(id="mentions")


async def _render_everything(texts: list[str]) -> dict[str, str]:
    app = Everything(texts)
    async with app.run_test(size=(160, 300)) as pilot:
        for i, view in enumerate(app.query(ToolCallView)):
            view.set_result(texts[i // 2], True, {})
            view.collapsed = False
        for row in app.query(CompactionRow):
            row.collapsed = False
        for message in app.query(AssistantMessage):
            await message.append(texts[0])
            message.append_reasoning(texts[-1])
        app.query_one(VaultPane).show_entries(
            [
                VaultListing(uri=f"vault://s/{i}", kind="raw", tool_name=t, size=1, created_at=0.0, meta={})
                for i, t in enumerate(texts)
            ],
            {f"vault://s/{i}": t for i, t in enumerate(texts)},
        )
        app.query_one(MentionMenu).show(texts)
        app.query_one(StatusLine).status = texts[0]
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        found = dangerous_on(list(app.screen.query("*")))
        assert app.is_running
        return found


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.lists(attacking, min_size=1, max_size=3))
@example(texts=["rm -rf ~ \u202e#sl\u202c", "name\udcff.txt", "\x1b]52;c;cHduZWQ=\x07 \x9b2J"])
def test_no_widget_puts_a_control_a_bidi_override_or_a_surrogate_on_the_screen(texts: list[str]) -> None:
    """Tool cards (name, heading, arguments, output), compaction rows, notices, user and assistant
    messages (Markdown, streamed, reasoning), the status line, the vault list and the @ list."""
    assert asyncio.run(_render_everything(texts)) == {}


@pytest.mark.long
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.lists(attacking, min_size=1, max_size=3))
def test_long_no_widget_puts_a_control_a_bidi_override_or_a_surrogate_on_the_screen(texts: list[str]) -> None:
    """The same property over more generated texts (``make test-long``; each is a whole app, 0.3 s)."""
    assert asyncio.run(_render_everything(texts)) == {}


class _Modal(App[None]):
    def __init__(self, screen: Screen[Any]) -> None:
        super().__init__()
        self.modal = screen

    def on_mount(self) -> None:
        self.push_screen(self.modal)


async def _render_modal(screen: Screen[Any]) -> dict[str, str]:
    app = _Modal(screen)
    async with app.run_test(size=(200, 60)) as pilot:
        await pilot.pause()
        assert app.is_running
        return dangerous_on(list(app.screen.query("*")))


# Each example renders three dialogs, each in an app of its own: make test runs the named texts and a fixed
# 4 generated lists, the long twin 10.
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.lists(attacking, min_size=1, max_size=3))
@example(texts=["rm -rf ~ \u202e#sl\u202c", "\ud800", "\x1b]0;title\x07"])
def test_no_dialog_puts_a_control_a_bidi_override_or_a_surrogate_on_the_screen(texts: list[str]) -> None:
    """The approval dialog (the command the user is asked to run, its parts, the reasons), the session
    picker (titles) and the model picker."""
    no_dialog_shows_them(texts)


@pytest.mark.long
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.lists(attacking, min_size=1, max_size=3))
def test_long_no_dialog_puts_a_control_a_bidi_override_or_a_surrogate_on_the_screen(texts: list[str]) -> None:
    """The same property over 10 generated lists (``make test-long``)."""
    no_dialog_shows_them(texts)


def no_dialog_shows_them(texts: list[str]) -> None:
    command = " ".join(texts)
    checks = tuple(ParsedCommand(t, (t,), problems=(t,), rememberable=True) for t in texts)
    approval = ApprovalScreen(texts[0], command, Assessment(command, checks, problems=tuple(texts)))
    assert asyncio.run(_render_modal(approval)) == {}
    sessions = SessionPicker([session_row(t, f"s{i}") for i, t in enumerate(texts)], "s0")
    assert asyncio.run(_render_modal(sessions)) == {}
    assert asyncio.run(_render_modal(ModelPicker(texts, texts[0]))) == {}


async def _header_after_a_model_switch(
    tmp: Path, workspace: Path, emulator: ProviderEmulator, title: str
) -> None:
    sid = await stored_session(tmp / "tui.db", title)
    app = reopen(emulator, tmp, workspace, sid)
    async with started(app, size=(160, 40)) as pilot:
        await type_and_send(pilot, "/model openai/gpt-4o")
        await wait_until(pilot, lambda: str(app.sub_title).endswith("· openai/gpt-4o"))
        await pilot.pause()
        assert dangerous_on(list(app.screen.query("*"))) == {}
        # a model name pasted into /model holds whatever was copied (a model string has no spaces)
        model = "openai/" + ("".join(ch for ch in title if not ch.isspace())[:40] or "x")
        box = app.query_one(PromptInput)
        app.post_message(events.Paste(f"/model {model}"))  # as the terminal driver posts it
        await wait_until(pilot, lambda: bool(box.text))
        await pilot.press("enter")
        await wait_until(pilot, lambda: str(app.sub_title).endswith(f"· {model}"))
        await pilot.pause()
        assert dangerous_on(list(app.screen.query("*"))) == {}


@THREE_APPS
@given(title=attacking)
@example(title="\x1b]0;pwned\x07 \x1b[2J\u202eevil")
def test_the_header_shows_a_stored_title_inert_after_a_model_switch(
    emulator: ProviderEmulator, tmp_path_factory: pytest.TempPathFactory, workspace: Path, title: str
) -> None:
    """A session's title (an imported file's, a model's, the first message's) in the header, once the
    header is drawn again because the model changed (``/model``), a compaction's focus in the health
    panel's card, and a model name pasted into ``/model``: nothing on the screen a terminal obeys."""
    asyncio.run(_header_after_a_model_switch(tmp_path_factory.mktemp("title"), workspace, emulator, title))


async def _pasted_and_queued(tmp: Path, workspace: Path, emulator: ProviderEmulator, text: str) -> None:
    gate = threading.Event()  # the first turn waits, so the paste is queued behind it
    emulator.enqueue(Reply(text="done", gate=gate), Reply(text="done too"))
    app = make_app(emulator, tmp, workspace, preheat=False)
    try:
        async with started(app, size=(160, 40)) as pilot:
            box = app.query_one(PromptInput)
            await type_and_send(pilot, "first")
            await wait_until(pilot, lambda: app.busy)
            app.post_message(events.Paste(text))  # as the terminal driver posts it
            await wait_until(pilot, lambda: bool(box.text))
            await pilot.pause()
            assert dangerous_on(list(app.screen.query("*"))) == {}  # the box as the paste left it
            await pilot.press("enter")
            await wait_until(pilot, lambda: app.query_one("#queued").display)
            await pilot.pause()
            assert dangerous_on(list(app.screen.query("*"))) == {}  # the queued line
            gate.set()
            await wait_until(pilot, lambda: not app.busy and not box.queued, 30)
    finally:
        gate.set()


@THREE_APPS
@given(text=attacking)
@example(text="\x1b]52;c;cHduZWQ=\x07 rm -rf ~ \u202e#sl\u202c")
def test_a_paste_shows_inert_in_the_prompt_box_and_in_the_queue(
    emulator: ProviderEmulator, tmp_path_factory: pytest.TempPathFactory, workspace: Path, text: str
) -> None:
    """A paste is text copied from anywhere (a terminal's output, a web page): in the box, and in the
    line that shows it queued behind a running turn, nothing a terminal obeys."""
    asyncio.run(_pasted_and_queued(tmp_path_factory.mktemp("paste"), workspace, emulator, text))
