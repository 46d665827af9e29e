"""Ctrl+q exits with code 0 whatever the app is doing, and an error while quitting is logged, not turned
into exit code 1 (``tests/app/test_hangup.py``'s explicit case failed once: the reopened myrm exited 1
on ctrl+q).

The cause found: a reopened session shows its stored answers plain and formats their markdown one at a
time, after "ready" (``ChatLog.format_answers``, a worker that exits the app on error). Once ctrl+q has
asked the app to exit, Textual counts no widget as attached, and the next answer's ``mount`` raised
``MountError``: exit code 1 and a traceback on the terminal, in the log nothing."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from pathlib import Path

import pytest
from textual.app import App, ComposeResult
from textual.widgets import Static
from textual.worker import WorkerFailed, WorkerState

from myrm_tui.app.app import MyrmApp
from myrm_tui.app.widgets.chat_message import AssistantMessage
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.app.test_focus_keys import app_for, key_event
from tests.helpers import make_app, send_turn, started, type_and_send, wait_until


class PlainAnswers(App[None]):
    """Stored answers shown plain, as a reopened session shows them before their markdown."""

    def compose(self) -> ComposeResult:
        for i in range(3):
            yield AssistantMessage(f"answer {i} with **markdown**", plain_first=True)


async def test_an_answer_reached_after_ctrl_q_is_left_plain_without_raising() -> None:
    """The formatting's next answer comes after ctrl+q's exit began and before the exit's message is
    handled (the race, built directly: the quit action, then the next answer in the same step)."""
    app = PlainAnswers()
    async with app.run_test() as pilot:
        first, second, _ = app.query(AssistantMessage)
        await first.format()
        assert first.formatted  # formats while the app runs
        await app.run_action("quit")  # what ctrl+q runs
        await second.format()  # raised MountError
        assert not second.formatted
        await pilot.pause()
    assert app.return_code == 0


def formatting(app: MyrmApp) -> bool:
    return any(w.group == "chat-format" and w.state == WorkerState.RUNNING for w in app.workers)


# Loop turns between the formatting's start and the key: ctrl+q lands on different answers of it.
@pytest.mark.parametrize("turns", [0, 4, 9, 15, 24])
async def test_ctrl_q_while_a_reopened_sessions_answers_are_formatted_exits_0(
    turns: int,
    long_db: tuple[Path, str],
    tmp_path: Path,
    emulator: ProviderEmulator,
    caplog: pytest.LogCaptureFixture,
) -> None:
    app = app_for(emulator, tmp_path, tmp_path, long_db)
    with caplog.at_level(logging.ERROR, logger="myrm_tui"):
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_until(pilot, lambda: formatting(app), 60)
            for _ in range(turns):
                await asyncio.sleep(0)  # not a wait for the app: the key's moment
            driver = app._driver
            assert driver is not None
            quit_key = key_event("ctrl+q")
            quit_key.set_sender(app)
            driver.send_message(quit_key)  # as the terminal's driver posts a key it read
            await wait_until(pilot, lambda: not app.is_running, 30)
    assert app.return_code == 0
    assert not [r for r in caplog.records if r.exc_info], [r.getMessage() for r in caplog.records]


async def test_an_error_while_quitting_is_logged_and_the_quit_exits_0(
    tmp_path: Path, emulator: ProviderEmulator, caplog: pytest.LogCaptureFixture
) -> None:
    """Any error Textual catches once the quit began (a worker torn down by it, one that exits on error)
    is logged with its traceback; the exit code stays the quit's."""
    app = make_app(emulator, tmp_path, tmp_path)
    with caplog.at_level(logging.ERROR, logger="myrm_tui"):
        async with started(app):
            await app.run_action("quit")  # what ctrl+q runs
            try:
                app.screen.mount(Static("late"))  # what a worker still running after the quit does
            except Exception as exc:
                error = exc
                app._handle_exception(WorkerFailed(exc))  # as Textual reports a worker's error
            else:
                raise AssertionError("mounting after the quit raised nothing")
    assert app.return_code == 0
    logged = [r for r in caplog.records if "while quitting" in r.getMessage()]
    assert logged and logged[0].exc_info is not None and logged[0].exc_info[1] is error


async def test_an_error_before_any_quit_is_logged_and_still_ends_the_app_with_1(
    tmp_path: Path, emulator: ProviderEmulator, caplog: pytest.LogCaptureFixture
) -> None:
    app = make_app(emulator, tmp_path, tmp_path)
    with caplog.at_level(logging.ERROR, logger="myrm_tui"), pytest.raises(RuntimeError) as raised:
        async with started(app):
            try:
                raise RuntimeError("a handler failed")
            except RuntimeError as exc:
                app._handle_exception(exc)  # as Textual does with what a handler raised
    error = raised.value
    assert app.return_code == 1
    logged = [r for r in caplog.records if "stopped on an error" in r.getMessage()]
    assert logged and logged[0].exc_info is not None and logged[0].exc_info[1] is error


async def test_an_error_closing_the_session_at_exit_is_logged_the_store_still_closes_and_the_quit_exits_0(
    tmp_path: Path,
    emulator: ProviderEmulator,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``on_unmount`` runs inside Textual's shutdown, before it gives the terminal back: an error closing
    the agent (a full disk, a broken database) raised out of ``App.run`` (exit code 1, a traceback, the
    terminal left raw) and kept the store from closing, its lease held."""
    app = make_app(emulator, tmp_path, tmp_path)
    with caplog.at_level(logging.ERROR, logger="myrm_tui"):
        async with started(app) as pilot:
            await send_turn(pilot, app, "hello")
            chat = app.controller.chat
            assert chat is not None

            async def broken(*, release: bool = True) -> None:
                raise OSError(28, "No space left on device")

            monkeypatch.setattr(chat, "close", broken)
            await pilot.press("ctrl+q")
    left_open = app.controller.store
    if left_open is not None:
        await left_open.close()  # its thread would keep this process from exiting: a hang, not a failure
    assert left_open is None  # closed, its lease released
    assert app.return_code == 0
    logged = [r for r in caplog.records if "closing the session at exit" in r.getMessage()]
    assert logged and isinstance(logged[0].exc_info and logged[0].exc_info[1], OSError)
    with sqlite3.connect(tmp_path / "tui.db") as conn:
        assert conn.execute("SELECT session_id FROM session_leases").fetchall() == []
    assert app.resume_hint  # the session is there to resume


async def test_a_quit_during_the_first_turn_leaves_the_session_titled_from_its_first_message(
    tmp_path: Path, emulator: ProviderEmulator
) -> None:
    """The title is written after the first turn: a quit (or a closed terminal) during it left the
    session listed as "New session" by ``myrm sessions`` and the picker."""
    from myrm_tui.agent.title import local_title

    app = make_app(emulator, tmp_path, tmp_path, preheat=False)
    emulator.enqueue(Reply(text="slow " * 400, chunk_size=2, chunk_delay=0.02))
    first = "please fix the flaky parser test in the tokenizer module"
    async with started(app) as pilot:
        await type_and_send(pilot, first)
        await wait_until(pilot, lambda: bool(app.query(AssistantMessage)))
        assert app.busy
        await pilot.press("ctrl+q")
    with sqlite3.connect(tmp_path / "tui.db") as conn:
        titles = [t for (t,) in conn.execute("SELECT title FROM sessions")]
    assert titles == [local_title(first)]
