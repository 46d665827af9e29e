"""``/undo`` in the TUI, pressed as a user does: the agent edits real files (its calls come from the
provider emulator), ``/undo`` Enter shows the files and asks, ``y`` restores, ``a`` also overwrites a file
changed since, a second ``/undo`` goes a turn further back, and a resumed session undoes from the database."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual import _time
from textual.widgets import Static

from myrm_tui.app.app import MyrmApp
from myrm_tui.app.screens.help import HelpScreen
from myrm_tui.app.screens.undo import UndoScreen
from myrm_tui.app.widgets.chat_message import Notice
from myrm_tui.app.widgets.slash_menu import SlashMenu
from myrm_tui.store.db import Store
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.helpers import (
    SMALL_SCREEN,
    help_sections_drawn,
    make_app,
    send_turn,
    started,
    type_and_send,
    type_text,
    wait_until,
)

ORIGINAL = "def greet():\n    return 'hello'\n"


@pytest.fixture(autouse=True)
def _undo_dialog_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """The question counts as read once it is on screen (``ReadFirst``'s own tests set their clock)."""
    monkeypatch.setattr(UndoScreen, "clock", staticmethod(lambda: _time.get_time() - 1.0))


def edit(old: str, new: str) -> tuple[str, dict[str, Any]]:
    return ("file_edit_tool", {"path": "hello.py", "old_string": old, "new_string": new})


def script_two_turns(emulator: ProviderEmulator) -> None:
    emulator.enqueue(
        Reply(
            tool_calls=[
                edit("'hello'", "'hi'"),
                ("file_edit_tool", {"path": "new.py", "new_string": "x = 1\n", "create": True}),
            ]
        ),
        Reply(text="Done one."),
        Reply(tool_calls=[edit("'hi'", "'hey'")]),
        Reply(text="Done two."),
    )


def notices(app: MyrmApp) -> list[str]:
    return [str(n.render()) for n in app.query(Notice)]


async def undo(pilot: Any, app: MyrmApp, answer: str) -> UndoScreen:
    """Type ``/undo`` Enter, wait for the question, press ``answer``; the question it showed."""
    await type_and_send(pilot, "/undo")
    await wait_until(pilot, lambda: isinstance(app.screen, UndoScreen), 30)
    screen = app.screen
    assert isinstance(screen, UndoScreen)
    done = len(notices(app))
    await pilot.press(answer)
    await wait_until(pilot, lambda: not isinstance(app.screen, UndoScreen) and len(notices(app)) > done, 30)
    return screen


async def test_undo_restores_the_last_turn_then_the_one_before(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    script_two_turns(emulator)
    app = make_app(emulator, tmp_path, workspace, preheat=False, summarizer_model="extractive")
    async with started(app, size=SMALL_SCREEN) as pilot:
        await send_turn(pilot, app, "first change", 60)
        await send_turn(pilot, app, "second change", 60)
        assert (workspace / "hello.py").read_text() == "def greet():\n    return 'hey'\n"

        shown = await undo(pilot, app, "y")
        assert "hello.py: will be restored" in shown.plan.question()
        assert "shell commands are not tracked" in shown.plan.question().lower()
        assert (workspace / "hello.py").read_text() == "def greet():\n    return 'hi'\n"
        assert "restored hello.py" in notices(app)[-1]

        shown = await undo(pilot, app, "y")  # the second /undo: the turn before
        assert "new.py: will be removed" in shown.plan.question()
        assert (workspace / "hello.py").read_text() == ORIGINAL
        assert not (workspace / "new.py").exists()
        assert "removed new.py" in notices(app)[-1] and "restored hello.py" in notices(app)[-1]
        assert "restored new.py" not in notices(app)[-1]  # the dialog said "removed": the result says so too

        done = len(notices(app))
        await type_and_send(pilot, "/undo")
        await wait_until(pilot, lambda: len(notices(app)) > done, 30)
        assert "no file edits of the agent left to undo" in notices(app)[-1]
        assert not isinstance(app.screen, UndoScreen)


async def test_n_keeps_everything_and_a_changed_file_needs_a(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    script_two_turns(emulator)
    app = make_app(emulator, tmp_path, workspace, preheat=False, summarizer_model="extractive")
    async with started(app, size=SMALL_SCREEN) as pilot:
        await send_turn(pilot, app, "first change", 60)
        await send_turn(pilot, app, "second change", 60)
        (workspace / "hello.py").write_text("mine\n")  # the user edits the file in between

        await undo(pilot, app, "n")
        assert (workspace / "hello.py").read_text() == "mine\n"
        assert "nothing changed" in notices(app)[-1]

        shown = await undo(pilot, app, "y")  # y: the changed file is named and left as it is
        assert "hello.py: CHANGED SINCE" in shown.plan.question()
        assert (workspace / "hello.py").read_text() == "mine\n"
        assert "not restored: hello.py (changed since" in notices(app)[-1]

        (workspace / "hello.py").unlink()  # now deleted: restored only when the user says so
        shown = await undo(pilot, app, "a")
        assert "hello.py: CHANGED SINCE" in shown.plan.question()
        assert (workspace / "hello.py").read_text() == ORIGINAL
        assert not (workspace / "new.py").exists()


async def test_a_resumed_session_undoes_from_the_database(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    script_two_turns(emulator)
    app = make_app(emulator, tmp_path, workspace, preheat=False, summarizer_model="extractive")
    async with started(app, size=SMALL_SCREEN) as pilot:
        await send_turn(pilot, app, "first change", 60)
        await send_turn(pilot, app, "second change", 60)
        await undo(pilot, app, "y")
        sid = app.controller.session.id if app.controller.session else ""
    assert sid

    resumed = make_app(emulator, tmp_path, workspace, preheat=False, summarizer_model="extractive")
    resumed.initial_session = sid
    async with started(resumed, size=SMALL_SCREEN) as pilot:
        shown = await undo(pilot, resumed, "y")  # the turn before the one undone in the first run
        assert shown.plan.prompt == "first change"
        assert (workspace / "hello.py").read_text() == ORIGINAL
        assert not (workspace / "new.py").exists()
    store = await Store.open(tmp_path / "tui.db")
    try:
        notes = [m.text for m in await store.load_messages(sid) if m.synthetic and "undid" in m.text]
        assert len(notes) == 2 and "'second change'" in notes[0] and "'first change'" in notes[1]
    finally:
        await store.close()


async def test_f1_help_and_the_slash_menu_list_undo(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    app = make_app(emulator, tmp_path, workspace, preheat=False)
    async with started(app, size=(100, 40)) as pilot:
        await type_text(pilot, "/und")
        menu = app.query_one(SlashMenu)
        await wait_until(pilot, lambda: menu.is_open)
        assert menu.chosen() is not None and menu.chosen()[0] == "undo"  # type: ignore[index]
        await pilot.press("escape")
        await pilot.press("f1")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        await wait_until(pilot, lambda: all(s.content_region.width for s in app.screen.query(Static)))
        slash = help_sections_drawn(app)["Slash commands"]
    assert any(line.startswith("/undo") and "Take back" in line for line in slash), slash
