"""Untrusted text is never markup (issue 44, item 3): whatever a model, a tool, a file, the database or the
user wrote is shown as given in every widget — ``[/]`` does not end the app, ``[@click=app.quit]`` and
``[link=…]`` stay words, ``[a-z]`` does not vanish — and a stored session holding such text reopens. A
stored item no widget can be built for is shown as plain text, logged, and the session still opens."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from textual.app import App, ComposeResult
from textual.geometry import Region
from textual.widget import Widget
from textual.widgets import Label, OptionList, Static
from textual.widgets._collapsible import CollapsibleTitle
from textual.widgets._toast import Toast

from myrm_tui import plain_words
from myrm_tui.agent.permissions import Assessment, ParsedCommand
from myrm_tui.app.screens.approval import ApprovalScreen
from myrm_tui.app.screens.models import ModelPicker
from myrm_tui.app.screens.sessions import SessionPicker
from myrm_tui.app.widgets.chat_log import ChatLog
from myrm_tui.app.widgets.chat_message import Notice, UserMessage
from myrm_tui.app.widgets.compaction_row import CompactionRow, LeftEntry
from myrm_tui.app.widgets.mention_menu import MentionMenu
from myrm_tui.app.widgets.slash_menu import SlashMenu
from myrm_tui.app.widgets.status_line import StatusLine
from myrm_tui.app.widgets.tool_call import ToolCallView
from myrm_tui.app.widgets.vault_pane import VaultPane
from myrm_tui.context.compaction.record import Compaction, LeftItem
from myrm_tui.context.types import Message, ToolCall
from myrm_tui.safe_text import reveal, sanitize
from myrm_tui.store.db import SessionRow, Store, VaultListing
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.helpers import make_app, started, type_and_send, wait_until

# What Textual's markup reads as tags, actions, links, escapes, plus what a terminal obeys.
HOSTILE = [
    "[/]",
    "[@click=app.quit]quit[/]",
    "[link=https://evil.example]x[/link]",
    "[a-z]",
    "\\[b]",
    "[b]",
    "[/b]",
    "[",
    "]",
    "\\",
    "[on red]",
    "$accent",
    "\x1b[31m",
    "\x07",
    "𝔘🜁",
    "\U0010fffd",
]
fragments = st.one_of(st.sampled_from(HOSTILE), st.text(max_size=6))
hostile = st.lists(fragments, min_size=1, max_size=5).map("".join).filter(lambda s: bool(s.strip()))


def squash(text: str) -> str:
    """Text without its whitespace: what a widget wraps, pads or expands (tabs) is still the same text."""
    return "".join(text.split())


def shown(widget: Widget) -> str:
    """The characters ``widget`` puts on the screen, line after line."""
    size = widget.outer_size  # borders and padding included: the region the widget draws
    return "".join(strip.text for strip in widget.render_lines(Region(0, 0, size.width, size.height)))


def shown_rows(widget: Widget) -> list[str]:
    """The screen lines ``widget`` draws, its margin's blank lines left out."""
    size = widget.outer_size
    lines = [strip.text for strip in widget.render_lines(Region(0, 0, size.width, size.height))]
    return [line for line in lines if line.strip()]


def assert_shown(widget: Widget, given: str) -> None:
    """``given`` (its terminal controls made visible) is on ``widget``'s screen lines, as it is."""
    want, got = squash(sanitize(given)), squash(shown(widget))
    assert want in got, f"{given!r} shown as {shown(widget)!r}"


def session_row(title: str, sid: str = "s1") -> SessionRow:
    return SessionRow(sid, title, "m", "/w", None, None, 0.0, 0.0, 3)


def record(text: str) -> Compaction:
    left = (LeftItem("tool", text, "vault://s/a", "1:3", 120, "m1"),)
    return Compaction("manual", "FULL", "forced", 2000, 900, 5.0, "llm", text, left=left, focus=text)


class Harness(App[None]):
    """Every widget that shows text from outside, each given ``texts``."""

    def __init__(self, texts: list[str]) -> None:
        super().__init__()
        self.texts = texts

    def compose(self) -> ComposeResult:
        for i, t in enumerate(self.texts):
            call = ToolCall(f"c{i}", "bash", json.dumps({"command": t}))
            yield ToolCallView(call)
            yield ToolCallView(ToolCall(f"m{i}", f"mcp_{i}", t))
            yield CompactionRow(record(t))
            yield Notice(t, "error")
            yield UserMessage(t)
        yield StatusLine(id="status")
        yield VaultPane(id="vault")
        yield MentionMenu(id="mentions")


async def render_everywhere(texts: list[str]) -> None:
    app = Harness(texts)
    async with app.run_test(size=(220, 200)) as pilot:
        for view in app.query(ToolCallView):
            view.set_result(view.call.arguments, True, {})
            view.collapsed = False
        for row in app.query(CompactionRow):
            row.collapsed = False
        app.query_one(VaultPane).show_entries(
            [
                VaultListing(uri=f"vault://s/{i}", kind="raw", tool_name=t, size=1, created_at=0.0, meta={})
                for i, t in enumerate(texts)
            ],
            {f"vault://s/{i}": t for i, t in enumerate(texts)},
        )
        menu = app.query_one(MentionMenu)
        menu.show(texts)
        await pilot.pause()
        views = list(app.query(ToolCallView))
        for i, t in enumerate(texts):
            bash, mcp = views[2 * i], views[2 * i + 1]
            assert_shown(bash.query_one(CollapsibleTitle), t.strip().splitlines()[0][:80])
            assert_shown(mcp.query_one(CollapsibleTitle), t[:80] if len(t) < 90 else t[:87])
            assert_shown(mcp.query_one(".output", Static), t)
        for row, t in zip(app.query(CompactionRow), texts, strict=True):
            assert_shown(row.query_one(CollapsibleTitle), f"manual: {t}")
            assert_shown(row.query_one(".summary", Static), plain_words.text(t))
        for entry, t in zip(app.query(LeftEntry), texts, strict=True):  # the rows' lists, filled when opened
            assert_shown(entry.query_one(Label), plain_words.text(t))
        for notice, user, t in zip(app.query(Notice), app.query(UserMessage), texts, strict=True):
            assert squash(shown(notice)) == squash(sanitize(t))
            rows = shown_rows(user)  # each row after the message's left border (a newline in it is a row)
            assert rows and all(r.startswith("█") for r in rows), rows
            assert squash("".join(r[1:] for r in rows)) == squash(sanitize(t)), rows
        for t in texts:
            app.query_one(StatusLine).status = t
            await pilot.pause()
            assert squash(shown(app.query_one(StatusLine))) == squash(sanitize(t))
        lists = " ".join(shown(ol) for ol in app.query(OptionList))
        for t in texts:
            assert squash(sanitize(t)) in squash(lists)
        assert app.is_running


SCREENS = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
# A property whose every example starts the whole app on a fixture's emulator (seconds each).
THREE_APPS = settings(
    max_examples=3,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


# Each example starts an app (or three dialogs): make test runs a fixed 5 beside the named ones, the long
# twin 12 new ones.
@settings(SCREENS, max_examples=5)
@given(texts=st.lists(hostile, min_size=1, max_size=4))
@example(texts=["grep -c '[/]' a.txt", "[@click=app.quit]x[/]", "[link=https://e.x]y[/link] [a-z]"])
@example(texts=["0\n", "\U000f0000x"])  # a user message of two rows (found by random search)
def test_every_widget_shows_untrusted_text_as_given(texts: list[str]) -> None:
    """Tool card headings and outputs, compaction rows and their items, notices, user messages,
    the status line, the vault list and the @ list: no exception, and each shows the text
    it was given, character for character (controls as their visible stand-ins)."""
    asyncio.run(render_everywhere(texts))


@pytest.mark.long
@settings(SCREENS, max_examples=12)
@given(texts=st.lists(hostile, min_size=1, max_size=4))
def test_long_every_widget_shows_untrusted_text_as_given(texts: list[str]) -> None:
    """The same property over 12 lists of texts (``make test-long``)."""
    asyncio.run(render_everywhere(texts))


class Modal(App[None]):
    def __init__(self, screen: Any) -> None:
        super().__init__()
        self.modal = screen

    def on_mount(self) -> None:
        self.push_screen(self.modal)


async def render_modal(screen: Any) -> str:
    app = Modal(screen)
    async with app.run_test(size=(200, 60)) as pilot:
        await pilot.pause()
        return " ".join(shown(w) for w in app.screen.query("Label, Static, OptionList"))


@settings(SCREENS, max_examples=4)
@given(texts=st.lists(hostile, min_size=1, max_size=3))
@example(texts=["[/]", "[@click=app.quit]q[/]", "[a-z] [link=x]l[/link]"])
def test_the_dialogs_show_untrusted_text_as_given(texts: list[str]) -> None:
    """The approval dialog (the command, its parsed parts, the reasons), the session picker (titles)
    and the model picker (names typed by the user)."""
    dialogs_show_as_given(texts)


@pytest.mark.long
@settings(SCREENS, max_examples=10)
@given(texts=st.lists(hostile, min_size=1, max_size=3))
def test_long_the_dialogs_show_untrusted_text_as_given(texts: list[str]) -> None:
    """The same property over 10 lists of texts (``make test-long``)."""
    dialogs_show_as_given(texts)


def dialogs_show_as_given(texts: list[str]) -> None:
    command = " ".join(texts)
    checks = tuple(ParsedCommand(t, (t,), problems=(t,), rememberable=True) for t in texts)
    assessment = Assessment(command, checks, problems=tuple(texts))
    screen = asyncio.run(render_modal(ApprovalScreen(texts[0], command, assessment)))
    for t in texts:  # as given, with its invisible characters written as ⟨U+…⟩ (test_invisible_marked.py)
        assert squash(reveal(t)) in squash(screen)
    picker = asyncio.run(
        render_modal(SessionPicker([session_row(t, f"s{i}") for i, t in enumerate(texts)], "s0"))
    )
    for t in texts:
        assert squash(sanitize(t))[:50] in squash(picker)
    models = asyncio.run(render_modal(ModelPicker(texts, texts[0])))
    for t in texts:
        assert squash(sanitize(t)) in squash(models)


async def test_the_slash_menu_shows_a_usage_in_brackets() -> None:
    """``/session [NAME]`` kept its ``[NAME]`` (it was read as a style tag and vanished)."""

    class Menu(App[None]):
        def compose(self) -> ComposeResult:
            yield SlashMenu()

    app = Menu()
    async with app.run_test(size=(120, 20)) as pilot:
        menu = app.query_one(SlashMenu)
        menu.update_for("/")
        bracketed = [(name, c.usage) for name, c in menu._items if "[" in c.usage]
        assert bracketed
        for name, usage in bracketed:
            menu.update_for(f"/{name}")
            await pilot.pause()
            assert f"/{name} {usage}" in shown(menu)


def hostile_session_messages(text: str) -> list[Message]:
    calls = (
        ToolCall("c1", "bash", '{"command": "grep -c \'[/]\' a.txt"}'),
        ToolCall("c2", "bash", json.dumps({"command": text})),
    )
    return [
        Message(role="system", content="sys"),
        Message(role="user", content=text),
        Message(role="assistant", content=f"# {text}\n\n{text}", tool_calls=calls),
        Message(
            role="tool",
            content=f"<returncode>0</returncode>\n<output>\n{text}\n</output>",
            tool_call_id="c1",
            name="bash",
        ),
        Message(role="tool", content=text, tool_call_id="c2", name="bash", meta={"is_error": True}),
        Message(role="assistant", content=text),
    ]


async def stored_session(db: Path, text: str) -> str:
    store = await Store.open(db)
    row = await store.create_session(title=text)
    async with store.transaction():
        for m in hostile_session_messages(text):
            await store.append_message(row.id, m)
    await store.add_metrics(
        row.id, 1, {"kind": "compaction", "compaction": record(text).to_dict() | {"seq": 2}}
    )
    await store.close()
    return row.id


def reopen(emulator: ProviderEmulator, tmp: Path, workspace: Path, sid: str) -> Any:
    app = make_app(emulator, tmp, workspace, preheat=False)
    app.initial_session = sid
    return app


async def open_stored(emulator: ProviderEmulator, tmp: Path, workspace: Path, text: str) -> None:
    sid = await stored_session(tmp / "tui.db", text)
    app = reopen(emulator, tmp, workspace, sid)
    async with started(app, size=(200, 60), notifications=True) as pilot:
        chat = app.query_one(ChatLog)
        await wait_until(pilot, lambda: len(list(app.query(ToolCallView))) == 2)
        await pilot.pause()
        first, second = app.query(ToolCallView)
        assert_shown(first.query_one(CollapsibleTitle), "grep -c '[/]' a.txt")
        assert_shown(second.query_one(CollapsibleTitle), text.strip().splitlines()[0][:80])
        assert squash(shown(app.query_one(UserMessage))) == "█" + squash(sanitize(text))
        row = app.query_one(CompactionRow)
        assert_shown(row.query_one(CollapsibleTitle), f"manual: {text}")
        assert not chat.query(".-plain")  # every item had its own widget
        await pilot.press("ctrl+s")  # the session picker lists the title as it is
        await wait_until(pilot, lambda: isinstance(app.screen, SessionPicker))
        await pilot.pause()
        assert squash(sanitize(text))[:50] in squash(shown(app.screen.query_one(OptionList)))
        await pilot.press("escape")
        app.notify(f"Unpinned: {text}")
        chat.notify(text)  # a widget's notify asks for markup: the app's toasts are plain all the same
        await wait_until(pilot, lambda: len(app.screen.query(Toast)) == 2)
        await pilot.pause()
        toasts = [squash(shown(toast)).replace("▌", "") for toast in app.screen.query(Toast)]  # its border
        assert toasts == [squash(sanitize(f"Unpinned: {text}")), squash(sanitize(text))]
        assert app.is_running and app.return_code is None


@THREE_APPS
@given(text=hostile)
@example(text="[@click=app.quit]quit[/] [link=https://e.x]l[/link] [a-z] \\[b] [/]")
def test_a_stored_session_with_markup_in_every_field_reopens(
    emulator: ProviderEmulator, tmp_path_factory: pytest.TempPathFactory, workspace: Path, text: str
) -> None:
    """The crash that kept a session from ever opening again: ``[/]`` in a stored call's arguments, in
    its title, its messages, its results and its compaction record. It opens, and shows them as given."""
    asyncio.run(open_stored(emulator, tmp_path_factory.mktemp("reopen"), workspace, text))


async def test_a_stored_item_that_cannot_be_shown_is_plain_text_and_the_session_opens(
    emulator: ProviderEmulator,
    tmp_path: Path,
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A widget that raises on one stored item (a bug, a record from another version): the item is its
    text in a plain line, the failure is logged with its traceback, every other item is built."""
    built = UserMessage.__init__

    def broken(self: UserMessage, text: str) -> None:
        if "poison" in text:
            raise ValueError("cannot show this one")
        built(self, text)

    monkeypatch.setattr(UserMessage, "__init__", broken)
    sid = await stored_session(tmp_path / "tui.db", "poison [/] pill")
    app = reopen(emulator, tmp_path, workspace, sid)
    with caplog.at_level(logging.ERROR, logger="myrm_tui"):
        async with started(app, size=(200, 60)) as pilot:
            await wait_until(pilot, lambda: bool(app.query(ToolCallView)))
            chat = app.query_one(ChatLog)
            fallback = chat.query_one(".-plain", Static)
            assert squash(shown(fallback)) == squash("poison [/] pill")
            assert len(app.query(ToolCallView)) == 2 and app.query(CompactionRow)
            assert app.is_running
    failures = [r for r in caplog.records if "could not be shown" in r.getMessage()]
    assert failures and failures[0].exc_info is not None


async def test_a_stored_result_that_cannot_be_shown_is_plain_text(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A card whose stored result raises when shown: the output is its text, plain; logged."""

    def broken(self: ToolCallView, text: str, is_error: bool, meta: dict[str, Any] | None = None) -> None:
        raise KeyError("meta from another version")

    monkeypatch.setattr(ToolCallView, "set_result", broken)

    class Log(App[None]):
        def compose(self) -> ComposeResult:
            yield ChatLog()

    app = Log()
    with caplog.at_level(logging.ERROR, logger="myrm_tui"):
        async with app.run_test(size=(120, 30)) as pilot:
            chat = app.query_one(ChatLog)
            await chat.load(hostile_session_messages("[/] out"))
            await pilot.pause()
            for view in app.query(ToolCallView):
                view.collapsed = False
            await pilot.pause()
            outputs = [shown(v.query_one(".output", Static)) for v in app.query(ToolCallView)]
            assert any("[/] out" in o for o in outputs)
    assert any(r.exc_info for r in caplog.records if "could not be shown" in r.getMessage())


async def test_a_live_call_with_brackets_in_its_arguments_keeps_the_app_running(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    """The reported crash, live: ``grep -c '[/]' a.txt`` (read-only: it runs unasked) and ``tr '[/]' _``
    in a reply; the app shows both headings as written and keeps running."""
    (workspace / "a.txt").write_text("a/b\n")
    emulator.enqueue(
        Reply(
            tool_calls=[
                ("bash", {"command": "grep -c '[/]' a.txt"}),
                ("bash", {"command": "tr '[/]' _ < a.txt"}),
            ]
        ),
        Reply(text="Counted [/] and [@click=app.quit]done[/]."),
    )
    app = make_app(emulator, tmp_path, workspace, preheat=False)
    async with started(app, size=(200, 60)) as pilot:
        await type_and_send(pilot, "count the slashes")
        await wait_until(pilot, lambda: not app.busy and len(app.query(ToolCallView)) == 2, 60)
        headings = [shown(v.query_one(CollapsibleTitle)) for v in app.query(ToolCallView)]
        assert "grep -c '[/]' a.txt" in headings[0] and "tr '[/]' _ < a.txt" in headings[1]
        assert app.is_running and app.return_code is None
