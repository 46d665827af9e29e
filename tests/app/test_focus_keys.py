"""Issue 49: the keys typed right after a key that opens something (Ctrl+G, ``/``, ``@``, F2, Ctrl+S, Ctrl+K,
Shift+Tab) go to what it opened, in order, however soon they follow; and the keys after the key that
closes it go back. Each opener is driven by real key events, as the terminal driver posts them: all in
one burst, and at short gaps, against an empty session and one of thousands of items; the test then
looks where every key landed."""

from __future__ import annotations

import asyncio
import shutil
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from textual import events
from textual.app import REPLACED_KEYS, _character_to_key, _get_unicode_name_from_key
from textual.widgets import Input, OptionList

from myrm_tui.app import app as app_module
from myrm_tui.app.app import MyrmApp
from myrm_tui.app.commands import completions
from myrm_tui.app.mentions import fuzzy, list_files
from myrm_tui.app.screens.compact_preview import CompactPreviewScreen
from myrm_tui.app.screens.main import MainScreen
from myrm_tui.app.screens.sessions import SessionPicker
from myrm_tui.app.screens.settings import SettingsScreen
from myrm_tui.app.widgets.chat_log import ChatLog
from myrm_tui.app.widgets.chat_message import UserMessage
from myrm_tui.app.widgets.prompt_input import PromptInput
from myrm_tui.app.widgets.transcript_search import TranscriptSearch
from myrm_tui.context.types import Message
from myrm_tui.store.db import Store
from myrm_tui.testing.emulator import ProviderEmulator
from tests.helpers import SMALL_SCREEN, long_session_once, wait_until

ROUNDS = 800  # a user message, a tool call and its result, an answer: 3 items a round (2,400 items)


def key_event(key: str) -> events.Key:
    """A key as ``Pilot.press`` makes it (``"a"``, ``"@"``, ``"ctrl+g"``)."""
    if len(key) == 1 and not key.isalnum():
        key = _character_to_key(key)
    try:
        char: str | None = unicodedata.lookup(_get_unicode_name_from_key(REPLACED_KEYS.get(key, key)))
    except KeyError:
        char = key if len(key) == 1 else None
    return events.Key(key, char)


async def send(app: MyrmApp, keys: list[str], gap: float) -> None:
    """``keys`` as the driver posts what it reads: all at once (``gap`` 0) or ``gap`` seconds apart (a
    fast typist; the gap is the user's, not a wait for the app)."""
    driver = app._driver
    assert driver is not None
    for i, key in enumerate(keys):
        if gap and i:
            await asyncio.sleep(gap)
        driver.send_message(key_event(key))


async def other_session(path: Path) -> None:
    """A second session in the list (the picker's Down has somewhere to go)."""
    store = await Store.open(path)
    row = await store.create_session(title="another one")
    await store.append_message(row.id, Message(role="user", content="hello"))
    await store.close()


def make_long_db(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A stored session of ``ROUNDS`` rounds, made once a run: (its database, its id)."""
    return long_session_once(tmp_path_factory, "long", ROUNDS)


def app_for(
    emulator: ProviderEmulator, tmp: Path, workspace: Path, long_db: tuple[Path, str] | None
) -> MyrmApp:
    session = None
    db = tmp / "tui.db"
    if long_db is not None:
        shutil.copy(long_db[0], db)
        session = long_db[1]
    cli = {"model": "openai/gpt-4o-mini", "api_base": emulator.openai_base, "api_key": "sk-test"}
    return MyrmApp(db_path=db, workspace=workspace, session_id=session, cli={**cli, "preheat": False})


def main(app: MyrmApp) -> MainScreen:
    return app.main


def prompt(app: MyrmApp) -> PromptInput:
    return app.main.prompt


@dataclass(frozen=True)
class Case:
    keys: list[str]
    landed: Callable[[MyrmApp], bool]  # every key where it belongs (waited for, then asserted)


def slash_pick() -> str:
    name, command = completions("")[2]  # the menu's third line: two Downs from the first
    return (f"/{name} " if command.usage else f"/{name}") + "3"


def search_field(app: MyrmApp) -> Input:
    return app.main.query_one(TranscriptSearch).query_one(Input)


def in_chat(app: MyrmApp, back: int) -> bool:
    chat = app.main.chat
    if not chat.items:  # nothing to walk: the transcript has the focus, and the keys
        return app.focused is chat
    return app.focused is chat and chat.cursor is chat.items[max(0, len(chat.items) - 1 - back)]


def second_file(app: MyrmApp) -> str:
    workspace = app.controller.workspace
    return fuzzy("hel", list_files(workspace))[1]


CASES = {
    # Ctrl+G: the word goes to the search field, Esc closes it, the keys after Esc go to the prompt.
    "ctrl+g": Case(
        ["ctrl+g", *"question", "escape", *"hi"],
        lambda app: (
            search_field(app).value == "question"
            and not app.main.query_one(TranscriptSearch).is_open
            and prompt(app).text == "hi"
            and app.focused is prompt(app)
        ),
    ),
    "ctrl+g up": Case(
        ["ctrl+g", *"answer 79", "up", "up", "escape"],  # answer 79, 790 … 799: the third newest match
        lambda app: (
            app.focused is prompt(app) and prompt(app).text == "" and search_field(app).value == "answer 79"
        ),
    ),
    # "/" then Down Down Tab: the third command of the menu completed, then its argument typed.
    "/": Case(
        ["/", "down", "down", "tab", "3"],
        lambda app: prompt(app).text == slash_pick() and not app.main.query_one("#slash-menu").display,
    ),
    # "@hel" then Down Tab: the second file of the menu, then what is typed after it.
    "@": Case(
        ["@", *"hel", "down", "tab", *"ok"],
        lambda app: prompt(app).text == f"@{second_file(app)} ok" and not prompt(app).mention_active,
    ),
    # F2: the keys go to the settings screen (Tab: its first field, selected at focus: typing replaces it).
    "f2": Case(
        ["f2", "tab", *"zz"],
        lambda app: (
            isinstance(app.screen, SettingsScreen)
            and isinstance(app.focused, Input)
            and app.focused.value == "zz"
            and prompt(app).text == ""
        ),
    ),
    "f2 esc": Case(
        ["f2", "escape", *"hi"],
        lambda app: isinstance(app.screen, MainScreen) and prompt(app).text == "hi",
    ),
    # Ctrl+S: Down moves in the picker; Esc closes it and the keys after go to the prompt.
    "ctrl+s": Case(
        ["ctrl+s", "down"],
        lambda app: (
            isinstance(app.screen, SessionPicker)
            and [o.highlighted for o in app.screen.query(OptionList)] == [1]
            and prompt(app).text == ""
        ),
    ),
    "ctrl+s esc": Case(
        ["ctrl+s", "escape", *"hi"],
        lambda app: isinstance(app.screen, MainScreen) and prompt(app).text == "hi",
    ),
    # Ctrl+K: Esc cancels the preview (nothing compacted), the keys after go to the prompt; with nothing to
    # compact there is no preview and every key goes to the prompt.
    "ctrl+k esc": Case(
        ["ctrl+k", "escape", *"hi"],
        lambda app: isinstance(app.screen, MainScreen) and prompt(app).text == "hi" and not app.compacting,
    ),
    # Shift+Tab: Up Up walk the transcript from the newest item; Esc returns to the prompt.
    "shift+tab": Case(["shift+tab", "up", "up"], lambda app: in_chat(app, 2) and prompt(app).text == ""),
    "shift+tab esc": Case(
        ["shift+tab", "up", "escape", *"hi"],
        lambda app: app.focused is prompt(app) and prompt(app).text == "hi",
    ),
    # A message typed in the transcript (none of its keys: v, b, c) goes to the prompt, the focus with it.
    "shift+tab typed": Case(
        ["shift+tab", "up", *"hi 日本 là"],
        lambda app: app.focused is prompt(app) and prompt(app).text == "hi 日本 là",
    ),
}


@pytest.mark.parametrize("gap", [0.0, 0.004, 0.03], ids=["burst", "4ms", "30ms"])
@pytest.mark.parametrize("size", ["empty", "long"])
@pytest.mark.parametrize("opener", list(CASES))
async def test_keys_after_an_opener_land_in_what_it_opened(
    emulator: ProviderEmulator,
    tmp_path: Path,
    workspace: Path,
    long_db: tuple[Path, str],
    monkeypatch: pytest.MonkeyPatch,
    opener: str,
    size: str,
    gap: float,
) -> None:
    (workspace / "help.md").write_text("# help\n")
    (workspace / "shell.sh").write_text("echo hi\n")
    previews: list[bool] = []
    cancel = CompactPreviewScreen.action_cancel

    def cancelled(self: CompactPreviewScreen) -> None:
        previews.append(True)
        cancel(self)

    monkeypatch.setattr(CompactPreviewScreen, "action_cancel", cancelled)
    case = CASES[opener]
    app = app_for(emulator, tmp_path, workspace, long_db if size == "long" else None)
    await other_session(tmp_path / "tui.db")
    # Where the keys land does not depend on the screen's size; a small one also mounts fewer transcript
    # items than 120x40 (the 66 cases' CPU -29 %).
    async with app.run_test(size=SMALL_SCREEN) as pilot:
        await wait_until(pilot, app.ready.is_set, 60)
        if size == "long":
            await wait_until(pilot, lambda: bool(app.query(UserMessage)), 60)
        await send(app, case.keys, gap)
        try:
            await wait_until(pilot, lambda: case.landed(app) and not app.key_router.keys_waiting, 30)
        except AssertionError:
            raise AssertionError(
                f"screen {type(app.screen).__name__}, focus {app.focused!r}, prompt {prompt(app).text!r}, "
                f"search {search_field(app).value!r}"
            ) from None
        if opener == "ctrl+k esc" and size == "long":
            assert previews == [True]  # the preview opened and took the Esc
        if opener == "shift+tab" and size == "long":
            assert isinstance(app.focused, ChatLog)
    assert_nothing_sent = [r for r in emulator.requests if r.body.get("tools")]
    assert assert_nothing_sent == []  # no key sent a message


async def test_a_search_shows_only_the_match_of_what_the_field_holds_now(
    emulator: ProviderEmulator,
    tmp_path: Path,
    workspace: Path,
    long_db: tuple[Path, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each key of the word posts a search; the ones the field has already typed past are skipped. Each
    mounted the window around its own match (a second each in a long session) while the screen stood
    still: the word showed in the field 3-7 s after it was typed, and looked lost."""
    shown: list[str] = []
    show_match = ChatLog.show_match

    async def counted(self: ChatLog) -> None:
        shown.append(self.needle)
        await show_match(self)

    monkeypatch.setattr(ChatLog, "show_match", counted)
    app = app_for(emulator, tmp_path, workspace, long_db)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.ready.is_set() and bool(app.query(UserMessage)), 60)
        search = app.main.query_one(TranscriptSearch)
        await send(app, ["ctrl+g"], 0)
        await wait_until(pilot, lambda: app.focused is search_field(app))
        search_field(app).value = "question 7"  # as typed, key by key, faster than the searches run
        for needle in ("q", "qu", "question", "question 7"):
            search.post_message(TranscriptSearch.Find(needle))
        count = search.query_one("#search-count")
        await wait_until(pilot, lambda: str(count.render()) == "111 of 111")  # 7, 70-79, 700-799
        await pilot.pause()
        assert shown == ["question 7"]


class KeysBeforeTheScreen(MyrmApp):
    """Keys the terminal had before the first screen was mounted (typed while ``myrm`` starts): the
    driver reads them at once and posts them ahead of everything the screen's mount queues."""

    typed = "hi [/] there"
    CSS_PATH = [str(Path(app_module.__file__).parent / css) for css in MyrmApp.CSS_PATH]

    def on_load(self) -> None:
        for key in self.typed:
            self.post_message(key_event(key))


async def test_keys_typed_while_the_app_starts_all_reach_the_prompt(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    """Found typing into ``myrm`` in tmux as it started: the first key went to the screen before the
    screen was mounted (no focus yet) and was lost; the rest reached the prompt."""
    cli = {
        "model": "openai/gpt-4o-mini",
        "api_base": emulator.openai_base,
        "api_key": "sk-test",
        "preheat": False,
    }
    app = KeysBeforeTheScreen(db_path=tmp_path / "tui.db", workspace=workspace, cli=cli)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: not app.key_router.keys_waiting and prompt(app).text != "", 30)
        assert prompt(app).text == KeysBeforeTheScreen.typed
        assert app.focused is prompt(app)


async def test_keys_left_waiting_when_the_screens_are_gone_are_dropped() -> None:
    """Quitting: a release that comes after the last screen went (a screen's mount, a marker) passed the
    waiting keys to ``app.screen``, which raises with no screen, and myrm ended with exit code 1."""
    from textual.app import App

    from myrm_tui.app.key_router import KeyRouter

    async def route(_: events.Event) -> None:
        raise AssertionError("no key is passed on with no screen")

    router = KeyRouter(App(), route)
    router.waiting.extend([key_event("a"), key_event("ctrl+q")])
    await router.drain()
    assert not router.waiting
