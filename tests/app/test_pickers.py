"""The pickers and the help screen, driven by real keys: the session picker counts what a session shows,
/model and /mode filter as you type and Enter picks, F1 lists every key of every binding, one row each."""

from __future__ import annotations

import re
from pathlib import Path

from textual.binding import Binding
from textual.widgets import OptionList, Static

from myrm_tui.app.app import MyrmApp
from myrm_tui.app.commands import COMMANDS, EDITING_KEYS, key_label
from myrm_tui.app.screens.help import HelpScreen
from myrm_tui.app.screens.main import MainScreen
from myrm_tui.app.screens.models import ModelPicker, ModePicker
from myrm_tui.app.screens.sessions import TITLE_WIDTH, SessionPicker
from myrm_tui.app.widgets.chat_log import ChatLog
from myrm_tui.app.widgets.chat_message import AssistantMessage
from myrm_tui.app.widgets.compaction_row import CompactionRow
from myrm_tui.app.widgets.prompt_input import PromptInput
from myrm_tui.app.widgets.transcript_search import TranscriptSearch
from myrm_tui.app.widgets.vault_pane import VaultPane
from myrm_tui.safe_text import one_line
from myrm_tui.store.db import Store
from myrm_tui.testing.emulator import ProviderEmulator
from tests.helpers import (
    SMALL_SCREEN,
    help_sections_drawn,
    make_app,
    started,
    type_and_send,
    type_text,
    wait_until,
)


def _rows(app: MyrmApp) -> list[str]:
    ol = app.screen.query_one(OptionList)
    return [str(ol.get_option_at_index(i).prompt) for i in range(ol.option_count)]


def _count(app: MyrmApp) -> int:
    """The message count the picker shows for the open session (marked ▶)."""
    row = next(r for r in _rows(app) if r.startswith("▶"))
    found = re.search(r" (\d+) msgs ", row)
    assert found, row
    return int(found.group(1))


def _highlighted(app: MyrmApp) -> str:
    ol = app.screen.query_one(OptionList)
    assert ol.highlighted is not None
    return str(ol.get_option_at_index(ol.highlighted).prompt).strip()


async def test_the_session_picker_counts_the_messages_a_session_shows(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    app = make_app(emulator, tmp_path, workspace, preheat=False)
    async with started(app, size=SMALL_SCREEN) as pilot:
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionPicker))
        assert _count(app) == 0
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, SessionPicker))
        await type_and_send(pilot, "hi")
        await wait_until(pilot, lambda: not app.busy and bool(app.query(AssistantMessage)))
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionPicker))
        # the system prompt and the environment block are stored too, and never shown: not counted
        assert _count(app) == 2


async def test_the_model_picker_filters_as_you_type_and_takes_a_typed_model(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    app = make_app(emulator, tmp_path, workspace, preheat=False)
    async with started(app, size=SMALL_SCREEN) as pilot:
        await type_and_send(pilot, "/model")
        await wait_until(pilot, lambda: isinstance(app.screen, ModelPicker))
        assert _highlighted(app) == "▶ openai/gpt-4o-mini"  # the current model, first
        await type_text(pilot, "smol")  # the matches first, then the text itself
        await wait_until(pilot, lambda: _rows(app) == ["  local/smollm2-135m", "  smol  (as typed)"])
        assert _highlighted(app) == "local/smollm2-135m"
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.controller.settings.model == "local/smollm2-135m")  # type: ignore[union-attr]
        await type_and_send(pilot, "/model")
        await wait_until(pilot, lambda: isinstance(app.screen, ModelPicker))
        await type_text(pilot, "openai/gpt-4.1")  # in no row: offered as typed
        await wait_until(pilot, lambda: _rows(app) == ["  openai/gpt-4.1  (as typed)"])
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.controller.settings.model == "openai/gpt-4.1")  # type: ignore[union-attr]
        await type_and_send(pilot, "/model")
        await wait_until(pilot, lambda: isinstance(app.screen, ModelPicker))
        await type_text(pilot, "o")  # Down moves the list while the typing stays in the filter
        await wait_until(pilot, lambda: _rows(app)[-1] == "  o  (as typed)")
        first = _highlighted(app)
        await pilot.press("down")
        assert _highlighted(app) != first
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, ModelPicker))
        assert app.controller.settings.model == "openai/gpt-4.1"  # type: ignore[union-attr]


async def test_mode_without_an_argument_opens_a_picker(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    app = make_app(emulator, tmp_path, workspace, preheat=False)
    async with started(app, size=SMALL_SCREEN) as pilot:
        await type_and_send(pilot, "/mode")
        await wait_until(pilot, lambda: isinstance(app.screen, ModePicker))
        assert _highlighted(app) == f"▶ {app.controller.settings.prompt_mode}"  # type: ignore[union-attr]
        await type_text(pilot, "lea")  # no free text: only the modes
        await wait_until(pilot, lambda: _rows(app) == ["  lean"])
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.controller.settings.prompt_mode == "lean")  # type: ignore[union-attr]
        assert not emulator.accepted  # nothing was sent to the model


async def test_help_says_how_to_close_it_and_esc_does(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    """F1 showed the keys in a box, and the footer under it "^q Quit  f1 Help": nothing said how to
    leave it but quitting."""
    from textual.containers import VerticalScroll

    app = make_app(emulator, tmp_path, workspace, preheat=False)
    async with started(app, size=(60, 20)) as pilot:
        await pilot.press("f1")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        assert "Esc closes" in str(app.screen.query_one(VerticalScroll).border_subtitle)
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, HelpScreen))


async def test_help_lists_every_key_of_every_binding_one_row_each(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    app = make_app(emulator, tmp_path, workspace, preheat=False)
    async with started(app, size=(100, 40)) as pilot:
        await pilot.press("f1")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        await wait_until(pilot, lambda: all(s.content_region.width for s in app.screen.query(Static)))
        sections = help_sections_drawn(app)
    keys = [line for title, lines in sections.items() if title != "Slash commands" for line in lines]
    # one row a key: no line is the wrapped rest of another (it would start under the key column)
    assert all(line and not line[0].isspace() for line in keys), keys
    rows = [(line.partition("  ")[0].split(" / "), line.partition("  ")[2].strip()) for line in keys]
    expected = [(key_label(c.key), c.title) for c in COMMANDS if c.key] + [
        (k, text) for label, text in EDITING_KEYS for k in label.split(" / ")
    ]
    for cls in (PromptInput, MainScreen, ChatLog, CompactionRow, TranscriptSearch, VaultPane):
        for b in cls.BINDINGS:
            assert isinstance(b, Binding)
            expected += [(key_label(k), b.description) for k in b.key.split(",")]
    assert ("Shift+Tab", "Transcript") in expected and any(k == "@" for k, _ in expected)
    for key, text in expected:
        assert any(key in shown and what == text for shown, what in rows), (key, text, keys)


async def test_the_session_picker_shows_a_long_title_on_one_line_cut_with_an_ellipsis(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    """A title over the list's width ends with … (as in ``myrm sessions``), not cut mid-word without a
    sign; its line breaks are spaces."""
    store = await Store.open(tmp_path / "tui.db")
    long = "fix the\nflaky login test " + "and then the retries " * 5
    await store.create_session(title=long)
    await store.close()
    app = make_app(emulator, tmp_path, workspace, preheat=False)
    async with started(app, size=(140, 30)) as pilot:
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionPicker))
        row = next(r for r in _rows(app) if "flaky" in r)
        shown = row[2 : 2 + TITLE_WIDTH]
        assert shown == one_line(long, TITLE_WIDTH) and shown.endswith("…"), row
