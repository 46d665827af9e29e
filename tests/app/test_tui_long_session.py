"""Long sessions in the TUI (issue 32) and the transcript's keyboard reach (issue 33): the transcript mounts
a bounded window of a long session, builds older items as the view scrolls up, searches every item
(mounted or not) and jumps to a match it has to mount; ctrl+g's keys go to the search field however fast
they come; shift+tab enters the transcript, Up/Down move item by item, Enter expands, c copies, Esc
returns to the prompt."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from textual import events
from textual.widgets import Input

from myrm_tui.app.app import MyrmApp
from myrm_tui.app.widgets import chat_window
from myrm_tui.app.widgets.chat_log import ChatLog
from myrm_tui.app.widgets.chat_message import AssistantMessage, UserMessage
from myrm_tui.app.widgets.chat_window import PAGE, SLACK, WINDOW
from myrm_tui.app.widgets.prompt_input import PromptInput
from myrm_tui.app.widgets.tool_call import ToolCallView
from myrm_tui.context.types import Message, ToolCall
from myrm_tui.store.db import Store
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.helpers import long_session_once, make_app, send_turn, started, wait_until, write_long_session

ROUNDS = 400  # a user message, a tool call and its result, an answer: 4 messages (3 items) a round


@pytest.fixture(scope="session")
def long_template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The long session, written once a run (1,600 messages: over a second of CPU): (database, id)."""
    return long_session_once(tmp_path_factory, "zebrafish", ROUNDS, {3: "zebrafish"})


@pytest.fixture
def long_copy(long_template: tuple[Path, str], tmp_path: Path) -> tuple[Path, str]:
    """A copy of the long session's database for one test (its own file: what a test writes stays its)."""
    db = tmp_path / "tui.db"
    shutil.copy(long_template[0], db)
    return db, long_template[1]


def reopen(emulator: ProviderEmulator, db: Path, workspace: Path, session_id: str) -> MyrmApp:
    return MyrmApp(
        db_path=db,
        workspace=workspace,
        session_id=session_id,
        cli={
            "model": "openai/gpt-4o-mini",
            "api_base": emulator.openai_base,
            "api_key": "sk-test",
            "preheat": False,
        },
    )


def users(app: MyrmApp) -> list[str]:
    return [str(w.render()) for w in app.query(UserMessage)]


async def test_a_long_session_mounts_a_window_and_builds_older_items_scrolling_up(
    emulator: ProviderEmulator, long_copy: tuple[Path, str], workspace: Path
) -> None:
    db, sid = long_copy
    app = reopen(emulator, db, workspace, sid)
    async with app.run_test(size=(120, 40)) as pilot:
        chat = app.query_one(ChatLog)
        await wait_until(pilot, lambda: app.ready.is_set() and bool(app.query(UserMessage)), 60)
        assert len(chat.items) == 3 * ROUNDS  # every item is listed...
        assert len(chat.children) <= WINDOW + 1  # ...only the newest are built (+ the "earlier" line)
        assert users(app)[-1] == f"question {ROUNDS - 1}"
        oldest = users(app)[0]
        for _ in range(40):  # PageUp from the prompt until the top builds the page before it
            await pilot.press("pageup")
            if users(app)[0] != oldest:
                break
        await wait_until(pilot, lambda: users(app)[0] != oldest)
        before = int(oldest.split()[-1])
        assert int(users(app)[0].split()[-1]) == before - PAGE // 3
        assert len(chat.children) <= WINDOW + PAGE + 1


async def test_ctrl_g_keys_reach_the_search_field_and_a_match_outside_the_window_is_shown(
    emulator: ProviderEmulator, long_copy: tuple[Path, str], workspace: Path
) -> None:
    db, sid = long_copy
    app = reopen(emulator, db, workspace, sid)
    async with app.run_test(size=(120, 40)) as pilot:
        chat = app.query_one(ChatLog)
        prompt = app.query_one(PromptInput)
        await wait_until(pilot, lambda: app.ready.is_set() and bool(app.query(UserMessage)), 60)
        assert "zebrafish question 3" not in users(app)
        # All at once, as a fast typist's keys arrive: none may land in the prompt.
        app.post_message(events.Key("ctrl+g", None))
        for ch in "zebrafish":
            app.post_message(events.Key(ch, ch))
        field = app.query_one("#search").query_one(Input)
        count = app.query_one("#search-count")
        await wait_until(pilot, lambda: field.value == "zebrafish" and str(count.render()) == "1 of 1")
        assert prompt.text == "" and app.focused is field
        await wait_until(pilot, lambda: "zebrafish question 3" in users(app))
        match = next(w for w in app.query(UserMessage) if "zebrafish" in str(w.render()))
        await wait_until(pilot, lambda: match.has_class("-match-current"))  # once its window is mounted
        assert len(chat.children) <= WINDOW + 2  # the window around the match, not everything before it
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.focused is prompt)
        # Words on screen in the newest part are found too, with the newest match first.
        await pilot.press("ctrl+g", "ctrl+u", *"answer 39")  # the field keeps its text: cleared first
        await wait_until(pilot, lambda: str(count.render()) == "11 of 11")  # answer 39, 390 … 399
        newest = next(w for w in app.query(".-match-current"))
        assert f"answer {ROUNDS - 1}" in newest.markdown.source  # type: ignore[attr-defined]


async def test_the_transcript_is_reached_and_walked_by_keys(
    emulator: ProviderEmulator, long_copy: tuple[Path, str], workspace: Path
) -> None:
    db, sid = long_copy
    app = reopen(emulator, db, workspace, sid)
    async with app.run_test(size=(120, 40)) as pilot:
        chat = app.query_one(ChatLog)
        prompt = app.query_one(PromptInput)
        await wait_until(pilot, lambda: app.ready.is_set() and bool(app.query(UserMessage)), 60)
        await pilot.press("shift+tab")
        await wait_until(pilot, lambda: app.focused is chat)
        assert chat.cursor is chat.items[-1] and chat.cursor.widget is not None
        assert chat.cursor.widget.has_class("-cursor")
        await pilot.press("up")  # the answer's tool card
        card = chat.cursor.widget if chat.cursor else None
        assert isinstance(card, ToolCallView) and card.has_class("-cursor")
        assert not chat.items[-1].widget.has_class("-cursor")  # type: ignore[union-attr]
        assert card.collapsed
        await pilot.press("enter")
        await wait_until(pilot, lambda: not card.collapsed)
        await pilot.press("c")
        await wait_until(pilot, lambda: f"ls dir{ROUNDS - 1}" in app.clipboard)
        await pilot.press("up")
        assert isinstance(chat.cursor.widget, UserMessage)  # type: ignore[union-attr]
        await pilot.press("home")  # the session's first item, built on the way
        await wait_until(pilot, lambda: "zebrafish question 3" in users(app))
        assert users(app)[0] == "question 0" and chat.cursor is chat.items[0]
        await pilot.press("down")
        assert chat.cursor is chat.items[1]
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.focused is prompt)
        await pilot.press("tab")  # Tab stays in the prompt (completion), it does not enter the transcript
        assert app.focused is prompt


async def test_each_older_page_adds_one_page_of_widgets(
    emulator: ProviderEmulator, long_copy: tuple[Path, str], workspace: Path
) -> None:
    db, sid = long_copy
    app = reopen(emulator, db, workspace, sid)
    async with app.run_test(size=(120, 40)) as pilot:
        chat = app.query_one(ChatLog)
        await wait_until(pilot, lambda: app.ready.is_set() and bool(app.query(UserMessage)), 60)
        await chat.build_older()
        await chat.build_older()
        assert len(chat.children) == WINDOW + 2 * PAGE + 1


async def test_a_reopened_session_counts_its_history_from_the_stored_counts(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    """Each message is stored with its token count; a reopened session's agent takes them, so its first
    request does not tokenize the whole history again (2.2 s at 10,000 messages), and the counts are the
    ones a fresh count gives."""
    from myrm_tui.agent.factory import build_agent
    from myrm_tui.context.tokens import TokenCounter
    from tests.helpers import collect, make_agent, openai_settings

    agent = await make_agent(store, workspace, openai_settings(emulator))
    emulator.enqueue(Reply(text="first answer " * 200))
    await collect(agent, "first question " * 200)
    again = await build_agent(store, agent.session_id, agent.session.settings, workspace)
    fresh = TokenCounter()
    encoded: list[str] = []
    encoder = again.session.counter._enc

    class Spy:
        def encode_ordinary(self, text: str) -> list[int]:
            encoded.append(text)
            return encoder.encode_ordinary(text)

    again.session.counter._enc = Spy()  # type: ignore[assignment]
    again.session.counter._texts.clear()
    assert [again.session.counter.message(m) for m in again.session.history] == [
        fresh.message(m) for m in again.session.history
    ]
    assert not any("first question" in t or "first answer" in t for t in encoded)


async def test_a_compaction_row_builds_its_list_when_opened_and_b_in_the_transcript_pins() -> None:
    """A long session's compaction lists thousands of items: its row is built closed without them (they
    held 400 MB at 10,000 messages); opening it builds the list, and ``b`` on the row in the transcript
    brings the first item back through the row's own pin logic."""
    from textual.app import App, ComposeResult
    from textual.widgets import ListView

    from myrm_tui.app.widgets.compaction_row import CompactionRow, LeftEntry
    from myrm_tui.context.compaction.record import Compaction, LeftItem

    left = tuple(
        LeftItem(role="tool", gist=f"item {i}", uri=f"vault://s/{i}", line_range="1:2", tokens=10)
        for i in range(300)
    )
    record = Compaction("manual", "FULL", "manual", 9000, 100, 5.0, left=left, seq=1)
    asked: list[CompactionRow.PinRequested] = []

    class LogApp(App[None]):
        def compose(self) -> ComposeResult:
            yield ChatLog()

        def on_compaction_row_pin_requested(self, event: CompactionRow.PinRequested) -> None:
            asked.append(event)

    app = LogApp()
    async with app.run_test(size=(100, 30)) as pilot:
        chat = app.query_one(ChatLog)
        await chat.load([Message(role="user", content="hi", id="m1")], [record])
        row = app.query_one(CompactionRow)
        assert not row.query(LeftEntry)
        chat.enter()
        await pilot.pause()
        assert chat.cursor is not None and chat.cursor.widget is row
        await pilot.press("b")
        await wait_until(pilot, lambda: bool(asked))
        assert asked[0].item == left[0] and asked[0].pin
        assert len(row.query_one(ListView).children) == len(left)


async def test_only_the_user_scrolling_to_an_edge_builds_a_page(
    emulator: ProviderEmulator, long_copy: tuple[Path, str], workspace: Path
) -> None:
    """The view moving by itself (a match or the cursor placed at the window's edge) builds nothing; the
    scroll bar dragged to the top builds the page before the window."""
    from textual.scrollbar import ScrollTo

    db, sid = long_copy
    app = reopen(emulator, db, workspace, sid)
    async with app.run_test(size=(120, 40)) as pilot:
        chat = app.query_one(ChatLog)
        await wait_until(pilot, lambda: app.ready.is_set() and bool(app.query(UserMessage)))
        await chat.show_item(600)  # a window in the middle of the session, far from both ends
        await pilot.pause()
        mounted = chat.window.span
        assert mounted[0] > 0 and mounted[1] < len(chat.items)
        chat.scroll_end(animate=False, immediate=True)  # the edge, reached by the program
        await pilot.pause()
        chat.scroll_home(animate=False, immediate=True)
        await pilot.pause()
        await pilot.pause()
        assert chat.window.span == mounted
        chat.post_message(ScrollTo(y=0, animate=False))  # what dragging the scroll bar sends
        await wait_until(pilot, lambda: chat.window.lo < mounted[0])
        assert chat.window.span == (mounted[0] - PAGE, mounted[1])


async def _with_last_answer(path: Path, rounds: int, answer: str) -> str:
    """A long session (``write_long_session``, "zebrafish" before round 2's question) whose newest
    exchange ends in ``answer``."""
    sid = await write_long_session(path, rounds, {2: "zebrafish"})
    store = await Store.open(path)
    try:
        await store.append_message(sid, Message(role="user", content="the last question"))
        await store.append_message(sid, Message(role="assistant", content=answer))
    finally:
        await store.close()
    return sid


def drawn(chat: ChatLog) -> int:
    """Rows the transcript's built items take (its virtual size is never less than the view's)."""
    return max((w.virtual_region_with_margin.bottom for w in chat.children), default=0)


def _ring_figure(app: MyrmApp) -> int | None:
    from myrm_tui.app.widgets.context_ring import ContextUsageIndicator

    m = re.search(r"([\d,]+) / [\d,]+ tokens", str(app.query_one(ContextUsageIndicator).render()))
    return int(m.group(1).replace(",", "")) if m else None


async def test_a_reopened_session_builds_only_what_fills_the_view_and_reaches_the_rest(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    """Reopening builds the newest items that fill the view, not a fixed 40 (a long answer's markdown
    was most of a reopen's time): here the last answer alone fills two screens. Its newest words are on
    screen, scrolling up builds the items before it, search finds the oldest text, and the ring's figure
    is the agent's count of the stored view."""
    db = tmp_path / "tui.db"
    answer = "\n".join(f"line {i} of the last answer" for i in range(150))
    sid = await _with_last_answer(db, 60, answer)
    app = reopen(emulator, db, workspace, sid)
    async with app.run_test(size=(120, 40)) as pilot:
        chat = app.query_one(ChatLog)
        await wait_until(pilot, lambda: app.ready.is_set() and bool(app.query(AssistantMessage)), 60)
        assert len(chat.items) == 3 * 60 + 2
        last = chat.items[-1].widget
        assert isinstance(last, AssistantMessage)
        assert chat.mounted_items == chat.items[-1:]  # not the 40 newest
        await wait_until(pilot, lambda: last.formatted)  # shown plain first, its markdown once ready
        await wait_until(pilot, lambda: "line 149 of the last answer" in last.markdown.source)
        await wait_until(pilot, lambda: chat.max_scroll_y > 0 and chat.scroll_y == chat.max_scroll_y)
        figure = app.controller.chat.window_use().used  # type: ignore[union-attr]
        await wait_until(pilot, lambda: _ring_figure(app) == figure)
        for _ in range(40):  # PageUp from the prompt until the top builds the items before
            await pilot.press("pageup")
            if chat.window.lo < len(chat.items) - 1:
                break
        await wait_until(pilot, lambda: users(app)[-1:] == ["the last question"])
        assert users(app)[0].startswith("question") and chat.items[-1].widget is last
        await pilot.press("ctrl+g", *"zebrafish")
        count = app.query_one("#search-count")
        await wait_until(pilot, lambda: str(count.render()) == "1 of 1")
        await wait_until(pilot, lambda: "zebrafish question 2" in users(app))


async def test_items_drawn_shorter_than_their_estimate_are_topped_up_until_the_view_is_full(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    """An answer of link definitions takes no row once its markdown is rendered, though its lines count
    as rows when the opening items are chosen (and fill the view while it is shown plain): older items
    are built until the view is full."""
    db = tmp_path / "tui.db"
    answer = "\n".join(f"[ref{i}]: https://example.com/{i}" for i in range(100))
    sid = await _with_last_answer(db, 60, answer)
    app = reopen(emulator, db, workspace, sid)
    async with app.run_test(size=(120, 40)) as pilot:
        chat = app.query_one(ChatLog)
        await wait_until(pilot, lambda: app.ready.is_set() and bool(app.query(AssistantMessage)), 60)
        last = chat.items[-1].widget
        assert isinstance(last, AssistantMessage)
        await wait_until(pilot, lambda: last.formatted)  # its 100 lines shown plain, then no row
        await wait_until(pilot, lambda: drawn(chat) >= chat.scrollable_content_region.height)
        assert chat.window.span[1] == len(chat.items) and chat.window.lo < len(chat.items) - 1
        assert "question 59" in users(app)


async def test_a_loaded_answer_shows_its_text_plain_until_its_markdown_is_rendered() -> None:
    """A stored answer is on screen as its text at once; ``format_answers`` (once the session is ready)
    puts its markdown in place of the plain text. An answer that streams in is markdown from the start."""
    from textual.app import App, ComposeResult
    from textual.widgets import Markdown

    class LogApp(App[None]):
        def compose(self) -> ComposeResult:
            yield ChatLog()

    text = "## Plan\n\n- **one** step\n- `two` steps"
    app = LogApp()
    async with app.run_test(size=(100, 30)) as pilot:
        chat = app.query_one(ChatLog)
        stored = [Message(role="user", content="hi", id="m1"), Message(role="assistant", content=text)]
        await chat.load(stored)
        answer = chat.items[-1].widget
        assert isinstance(answer, AssistantMessage) and not answer.formatted
        assert not answer.query(Markdown) and str(answer.query_one(".plain-first").render()) == text
        await chat.format_answers()
        assert answer.formatted and not answer.query(".plain-first")
        await wait_until(pilot, lambda: answer.markdown.source == text)
        live = await chat.start_assistant()
        assert live.formatted and live.query(Markdown)


async def test_a_fill_that_found_another_page_being_built_still_fills_the_view() -> None:
    """The fill's page build can find another build (a scroll to the top) in progress and build nothing:
    the other build, when it ends, looks at the view again, so the view is still filled."""
    from textual.app import App, ComposeResult

    class LogApp(App[None]):
        def compose(self) -> ComposeResult:
            yield ChatLog()

    stored: list[Message] = []
    for i in range(60):
        stored += [
            Message(role="user", content=f"question {i}", id=f"u{i}"),
            Message(role="assistant", content=f"answer {i}", id=f"a{i}"),
        ]
    links = "\n".join(f"[ref{i}]: https://example.com/{i}" for i in range(100))  # no row once rendered
    stored[-1] = Message(role="assistant", content=links, id="a59")
    app = LogApp()
    async with app.run_test(size=(100, 30)) as pilot:
        chat = app.query_one(ChatLog)
        await chat.load(stored)
        await pilot.pause()
        held: list[object] = []
        run_worker = chat.run_worker
        chat.run_worker = lambda work, **kw: held.append(work)  # type: ignore[method-assign,assignment,return-value]
        await chat.format_answers()  # the answer now takes no row: the fill is due
        await wait_until(pilot, lambda: bool(held))
        chat.run_worker = run_worker  # type: ignore[method-assign]
        await chat._pages.acquire()  # another page is being built when the fill's build runs ...
        assert await held[0] == 0  # type: ignore[misc]
        chat._pages.release()
        await chat.build_older(1)  # ... and that one ends, one item older
        await wait_until(pilot, lambda: drawn(chat) >= chat.scrollable_content_region.height)
        assert chat.window.span[1] == len(chat.items)


async def test_a_live_session_keeps_a_bounded_window_mounted_and_reaches_what_it_unmounted(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    """Output that arrives while the view follows it unmounts the oldest items past ``WINDOW`` (a live
    session kept every widget it ever built: 147 at turn 40, ~1 MB a turn); scrolled up, nothing the user
    reads is taken; what was unmounted is still listed, found and built again scrolling up."""
    for i in range(WINDOW + SLACK):
        (workspace / f"f{i}.py").write_text(f"x = {i}\n")
    calls = [("file_read_tool", {"paths": [f"f{i}.py"]}) for i in range(WINDOW + SLACK)]
    emulator.enqueue(Reply(text="the first answer"))
    emulator.enqueue(Reply(tool_calls=calls, calls_per_chunk=20), Reply(text="read them all"))
    # no background request (title, preheat, keep-alive) takes a scripted reply
    quiet = {"preheat": False, "keepalive": False, "summarizer_model": "extractive"}
    app = make_app(emulator, tmp_path, workspace, **quiet)
    async with started(app, size=(120, 40)) as pilot:
        chat = app.query_one(ChatLog)
        await send_turn(pilot, app, "zebrafish first")
        await send_turn(pilot, app, "read every file", timeout=60)
        assert len(chat.items) == WINDOW + SLACK + 4  # two users, two answers, every call
        assert len(chat.mounted_items) <= WINDOW + SLACK
        assert chat.window.lo > 0 and "zebrafish first" not in users(app)
        assert "earlier items" in str(chat.query_one("#earlier").render())
        await wait_until(pilot, lambda: "read them all" in chat.items[-1].text)
        await pilot.press("ctrl+g", *"zebrafish")
        count = app.query_one("#search-count")
        await wait_until(pilot, lambda: str(count.render()) == "1 of 1")
        await wait_until(pilot, lambda: "zebrafish first" in users(app))


# -- the property: any appends and scrolls, the mounted items a contiguous run, the newest while followed ---

_APPEND = st.tuples(
    st.just("append"), st.sampled_from(["user", "answer", "tool", "notice"]), st.integers(3, 14)
)
_LIVE_OP = st.one_of(
    _APPEND,
    _APPEND,
    st.tuples(st.just("pageup"), st.integers(1, 4)),
    st.tuples(st.just("pagedown"), st.integers(1, 3)),
    st.tuples(st.just("ctrl+end"), st.just(1)),
)


class _LiveLog:
    """The transcript alone, its keys bound as the main screen binds them (PageUp/PageDown from the prompt
    box, ctrl+end to the newest output)."""

    @staticmethod
    def app() -> Any:
        from textual.app import App, ComposeResult
        from textual.binding import Binding

        class LogApp(App[None]):
            # priority: the prompt box has the focus in the app, and takes these keys before the transcript
            BINDINGS = [
                Binding("pageup", "page(-1)", priority=True),
                Binding("pagedown", "page(1)", priority=True),
                Binding("ctrl+end", "bottom", priority=True),
            ]

            def compose(self) -> ComposeResult:
                yield ChatLog()

            def action_page(self, pages: int) -> None:
                self.query_one(ChatLog).page(pages)

            def action_bottom(self) -> None:
                self.query_one(ChatLog).jump_to_bottom()

        return LogApp()


def _settled(app: Any, chat: ChatLog) -> bool:
    return not chat._building and not [w for w in app.workers if w.group == "chat-pages" and w.is_running]


def _check_mounted(chat: ChatLog, texts: list[str]) -> None:
    """The mounted widgets are ``items[lo:hi]``, in order, between the lines for what is not mounted."""
    lo, hi = chat.window.span
    assert [it.text or (it.call.arguments if it.call else "") for it in chat.items] == texts
    shown = [w for w in chat.children if w.id not in ("earlier", "newer")]
    assert shown == [it.widget for it in chat.items[lo:hi]]
    assert all(it.widget is None for it in chat.items[:lo] + chat.items[hi:])
    assert bool(chat.query("#earlier")) == (lo > 0) and bool(chat.query("#newer")) == (hi < len(chat.items))


async def _live(ops: list[tuple[Any, ...]]) -> None:
    app = _LiveLog.app()
    async with app.run_test(size=(80, 24)) as pilot:
        chat = app.query_one(ChatLog)
        texts: list[str] = []
        for n, op in enumerate(ops):
            if op[0] == "append":  # output arriving from the agent
                for k in range(op[2]):
                    text = f"{op[1]} {n}.{k}"
                    if op[1] == "user":
                        await chat.add_user(text)
                    elif op[1] == "answer":
                        await chat.start_assistant()
                        await chat.append_text(text)
                        await chat.end_assistant()
                    elif op[1] == "tool":
                        text = json.dumps({"pattern": text})
                        await chat.add_tool_call(ToolCall(f"c{n}.{k}", "glob", text))
                        chat.set_tool_result(f"c{n}.{k}", "no match", False)
                    else:
                        await chat.add_notice(text)
                    texts.append(text)
                lo, hi = chat.window.span
                assert hi == len(chat.items)  # the newest output is mounted
                if not chat._scrolled_up:  # followed: a bounded newest run
                    assert hi - lo <= chat_window.WINDOW + chat_window.SLACK
            else:
                for _ in range(op[1]):
                    await pilot.press(op[0])
                    await pilot.pause()
                    await wait_until(pilot, lambda: _settled(app, chat))
            await pilot.pause()
            await wait_until(pilot, lambda: _settled(app, chat))
            _check_mounted(chat, texts)
        for _ in range(4 * len(texts) + 4):  # scrolling up brings every older item back, in order
            if chat.window.span[0] == 0:
                break
            await pilot.press("pageup")
            await pilot.pause()
            await wait_until(pilot, lambda: _settled(app, chat))
        _check_mounted(chat, texts)
        assert chat.window.span == (0, len(texts))


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
# followed past the bound, then scrolled up while output arrives, then back to the newest and on
@example(
    ops=[
        ("append", "tool", 14),
        ("pageup", 2),
        ("append", "answer", 9),
        ("ctrl+end", 1),
        ("append", "user", 5),
    ]
)
@given(ops=st.lists(_LIVE_OP, min_size=2, max_size=8))
def test_any_appends_and_scrolls_keep_a_contiguous_run_mounted_and_bring_older_items_back_in_order(
    ops: list[tuple[Any, ...]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """For any output appended while followed or scrolled up, PageUp/PageDown and ctrl+end between: the
    mounted items are always one contiguous run in order, the newest output always in it, at most WINDOW +
    SLACK while the view follows; scrolling up builds every unmounted item again, in order. The window is
    made small (8 + 4 items, the rule is the same at 40 + 25) so a few appends pass it."""
    monkeypatch.setattr(chat_window, "WINDOW", 8)
    monkeypatch.setattr(chat_window, "SLACK", 4)
    asyncio.run(_live(ops))


@pytest.mark.long
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=st.lists(_LIVE_OP, min_size=2, max_size=16))
def test_long_any_appends_and_scrolls_keep_a_contiguous_run_mounted(
    ops: list[tuple[Any, ...]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(chat_window, "WINDOW", 8)
    monkeypatch.setattr(chat_window, "SLACK", 4)
    asyncio.run(_live(ops))
