"""What a new user trips over in the first hour (issue 25), driven by Pilot with real key presses:
bad slash commands, the side panel at narrow widths, the slash menu and Tab, following and searching
the conversation, the vault pane, the model picker, help and settings."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input, OptionList, Static, TextArea

from myrm_tui.app.app import MyrmApp
from myrm_tui.app.screens.settings import SettingsScreen
from myrm_tui.app.widgets.chat_log import ChatLog
from myrm_tui.app.widgets.chat_message import AssistantMessage, Notice
from myrm_tui.app.widgets.context_ring import ContextUsageIndicator
from myrm_tui.app.widgets.prompt_input import PromptInput
from myrm_tui.app.widgets.side_panel import SidePanel
from myrm_tui.store.db import Store
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.helpers import (
    SMALL_SCREEN,
    help_sections_drawn,
    make_app,
    run_from_palette,
    send_turn,
    started,
    type_and_send,
    wait_until,
)


def _picker() -> type:
    from myrm_tui.app.screens.models import ModelPicker

    return ModelPicker


def _text(widget: Any) -> str:
    return str(widget.render())


def _notices(app: MyrmApp) -> list[str]:
    return [_text(n) for n in app.query(Notice)]


def _toasts(app: MyrmApp) -> list[str]:
    return [str(n.message) for n in app._notifications]


# -- 1: /mode with a bad value ---------------------------------------------------------------------------
async def test_a_bad_mode_is_one_line_naming_the_modes_and_nothing_is_saved(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    app = make_app(emulator, tmp_path, workspace, preheat=False)
    async with started(app, size=SMALL_SCREEN) as pilot:
        await type_and_send(pilot, "/mode banana")
        await wait_until(pilot, lambda: any("banana" in t for t in _notices(app)))
        line = next(t for t in _notices(app) if "banana" in t)
        assert line.startswith("/mode: prompt_mode: expected one of")
        assert all(m in line for m in ("full", "lean", "naked", "search")) and "\n" not in line
        assert any("banana" in t for t in _toasts(app))
        assert app.is_running and app.controller.settings.prompt_mode == "full"  # type: ignore[union-attr]
        assert await app.controller.store.get_setting("prompt_mode") is None  # type: ignore[union-attr]
        await type_and_send(pilot, "/mode lean")  # a good value still goes through
        await wait_until(pilot, lambda: app.controller.settings.prompt_mode == "lean")  # type: ignore[union-attr]
        assert await app.controller.store.get_setting("prompt_mode") == "lean"  # type: ignore[union-attr]
        assert not emulator.accepted


async def test_a_bad_value_already_in_the_database_does_not_break_start_up(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    store = await Store.open(tmp_path / "tui.db")
    await store.set_setting("prompt_mode", "banana")  # what the old /mode saved
    await store.close()
    app = make_app(emulator, tmp_path, workspace, preheat=False)
    async with app.run_test(size=SMALL_SCREEN) as pilot:
        await wait_until(pilot, lambda: app.ready.is_set() and app.status == "ready")
        assert app.controller.agent is not None and app.controller.settings.prompt_mode == "full"  # type: ignore[union-attr]


# -- 2: the side panel -----------------------------------------------------------------------------------
async def test_at_90_columns_the_chat_gets_the_width_and_ctrl_b_and_the_palette_toggle_the_panel(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    app = make_app(emulator, tmp_path, workspace, preheat=False)
    async with started(app, size=(90, 30)) as pilot:
        chat, panel = app.query_one(ChatLog), app.query_one(SidePanel)
        ring = app.query_one(ContextUsageIndicator)
        await wait_until(pilot, lambda: ring.window > 0)
        await pilot.pause()
        assert chat.size.width >= 85 and panel.size.height == 1  # the panel is the ring's line
        assert _text(ring).count("\n") == 0 and "context green" in _text(ring)
        await pilot.press("ctrl+b")
        # the panel and the chat are resized by one layout, seen in a frame or two
        await wait_until(pilot, lambda: panel.outer_size.width >= 50 and chat.size.width < 40)
        await pilot.press("ctrl+b")
        await wait_until(pilot, lambda: chat.size.width >= 85)
        await run_from_palette(pilot, "Toggle side panel")  # the palette's entry does the same
        await wait_until(pilot, lambda: panel.outer_size.width >= 50)


async def test_at_140_columns_the_panel_is_a_column_and_ctrl_b_collapses_it(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    app = make_app(emulator, tmp_path, workspace, preheat=False)
    async with started(app, size=(140, 42)) as pilot:
        chat, panel = app.query_one(ChatLog), app.query_one(SidePanel)
        await pilot.pause()
        assert panel.outer_size.width >= 50 and panel.size.height > 20
        await pilot.press("ctrl+b")
        await wait_until(pilot, lambda: chat.size.width >= 135 and panel.size.height == 1)


# -- 3, 4: mistyped commands, the slash menu, Tab ------------------------------------------------------
async def test_a_mistyped_slash_command_is_not_sent_and_suggests_the_right_one(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    app = make_app(emulator, tmp_path, workspace, preheat=False)
    async with started(app, size=SMALL_SCREEN) as pilot:
        prompt = app.query_one(PromptInput)
        await type_and_send(pilot, "/modle gpt-4o")
        await wait_until(pilot, lambda: any("unknown command /modle" in t for t in _notices(app)))
        assert any("did you mean /model?" in t for t in _notices(app))
        assert prompt.text == "/modle gpt-4o"  # kept to fix
        prompt.load_text("")
        await type_and_send(pilot, "/mox")
        await wait_until(pilot, lambda: any("unknown command /mox" in t for t in _notices(app)))
        assert not emulator.accepted and not app.busy


@pytest.mark.parametrize("typed", ["/exit", "/quit"])
async def test_slash_exit_and_quit_leave_myrm_as_in_claude_code_and_codex(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path, typed: str
) -> None:
    """They were "unknown command /exit": the first thing a Claude Code or Codex user types to leave."""
    app = make_app(emulator, tmp_path, workspace, preheat=False)
    async with started(app, size=SMALL_SCREEN) as pilot:
        await type_and_send(pilot, typed)
        await wait_until(pilot, lambda: app._exit or not app.is_running)
        assert not any("unknown command" in t for t in _notices(app))
    assert app.return_code == 0 and not emulator.accepted


async def test_slash_resume_opens_the_session_picker(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    from myrm_tui.app.screens.sessions import SessionPicker

    app = make_app(emulator, tmp_path, workspace, preheat=False)
    async with started(app, size=SMALL_SCREEN) as pilot:
        await type_and_send(pilot, "/resume")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionPicker))
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, SessionPicker))
        assert app.query_one(PromptInput).text == "" and not emulator.accepted


async def test_typing_a_slash_opens_the_command_menu_and_tab_or_enter_picks(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    app = make_app(emulator, tmp_path, workspace, preheat=False)
    async with started(app, size=SMALL_SCREEN) as pilot:
        from myrm_tui.app.widgets.slash_menu import SlashMenu

        prompt, menu = app.query_one(PromptInput), app.query_one(SlashMenu)
        await pilot.press("slash")
        await wait_until(pilot, lambda: menu.display and menu.option_count > 5)
        await pilot.press("m", "o")
        await wait_until(pilot, lambda: menu.option_count == 2)  # /model, /mode
        labels = [str(menu.get_option_at_index(i).prompt) for i in range(2)]
        assert labels[0].startswith("/model") and labels[1].startswith("/mode ")
        await pilot.press("down", "tab")
        assert prompt.text == "/mode " and not menu.display and app.focused is prompt
        prompt.load_text("")
        await pilot.press("slash", "v", "a")
        await wait_until(pilot, lambda: menu.option_count == 1)
        await pilot.press("enter")  # runs /vault
        await wait_until(pilot, lambda: app.query_one("#tabs").active == "vault-tab")  # type: ignore[attr-defined]
        assert prompt.text == "" and not emulator.accepted


async def test_tab_keeps_the_focus_in_the_prompt_and_slash_model_then_works(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    app = make_app(emulator, tmp_path, workspace, preheat=False)
    async with started(app, size=SMALL_SCREEN) as pilot:
        prompt = app.query_one(PromptInput)
        await pilot.press("tab", "tab")
        assert app.focused is prompt
        await type_and_send(pilot, "/model")
        await wait_until(pilot, lambda: isinstance(app.screen, _picker()))


# -- 5: following, scrolling and searching the conversation --------------------------------------------
async def test_the_conversation_follows_unless_scrolled_up_and_pages_searches_and_jumps(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    # No LLM title: it would take one of the replies.
    app = make_app(emulator, tmp_path, workspace, preheat=False, summarizer_model="extractive")
    long = "\n\n".join(f"paragraph {i} of the answer" for i in range(40))
    emulator.enqueue(
        Reply(text="the needle is here\n\n" + long),
        Reply(text=long),
        Reply(text="a late answer, needle again"),
    )
    async with started(app, size=(120, 36)) as pilot:
        chat, below = app.query_one(ChatLog), app.query_one("#below")
        for text in ("first", "second"):
            await send_turn(pilot, app, text)
        await pilot.pause()
        assert chat.max_scroll_y > 0 and chat.scroll_y == chat.max_scroll_y  # followed the answers
        assert not below.display
        await pilot.press("pageup")  # from the prompt box
        await wait_until(pilot, lambda: chat.scroll_y < chat.max_scroll_y)
        assert below.display and "ctrl+end" in _text(below)
        await pilot.press("pagedown")
        await wait_until(pilot, lambda: chat.scroll_y == chat.max_scroll_y and not below.display)
        # Two pages up, each seen applied (a page scroll lands after the next refresh): then it stays put.
        await pilot.press("pageup")
        await wait_until(pilot, lambda: below.display and chat.scroll_y < chat.max_scroll_y)
        one_up = chat.scroll_y
        await pilot.press("pageup")
        await wait_until(pilot, lambda: chat.scroll_y < one_up)
        kept = chat.scroll_y
        await type_and_send(pilot, "third")
        await wait_until(pilot, lambda: not app.busy and len(app.query(AssistantMessage)) == 3)
        await pilot.pause()
        assert chat.scroll_y == kept  # scrolled up: the new answer does not pull the view down
        await pilot.press("ctrl+end")
        await wait_until(pilot, lambda: chat.scroll_y == chat.max_scroll_y and not below.display)
        await pilot.press("ctrl+g")
        search = app.query_one("#search")
        await wait_until(pilot, lambda: search.display and isinstance(app.focused, Input))
        await pilot.press(*"needle")
        count = search.query_one("#search-count", Static)
        await wait_until(pilot, lambda: _text(count) == "2 of 2")
        answers = list(app.query(AssistantMessage))
        assert answers[2].has_class("-match-current") and answers[0].has_class("-match")
        await pilot.press("enter")  # the older match
        await wait_until(pilot, lambda: _text(count) == "1 of 2")
        assert answers[0].has_class("-match-current") and not answers[2].has_class("-match-current")
        # scrolled to it (the scroll to a widget comes after the refresh that placed it)
        await wait_until(pilot, lambda: chat.scroll_y < chat.max_scroll_y and below.display)
        await pilot.press("escape")
        await wait_until(pilot, lambda: not search.display)
        assert not answers[0].has_class("-match") and app.focused is app.query_one(PromptInput)


# -- 6: the vault pane -----------------------------------------------------------------------------------
async def test_the_vault_pane_names_the_command_finds_every_match_and_f4_focuses_the_list(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    from myrm_tui.app.widgets.vault_pane import VaultPane

    app = make_app(emulator, tmp_path, workspace, preheat=False)
    emulator.enqueue(Reply(tool_calls=[("bash", {"command": "seq 1 30000"})]), Reply(text="Printed."))
    async with started(app, size=(140, 44)) as pilot:
        await type_and_send(pilot, "count")
        pane = app.query_one(VaultPane)
        ol = pane.query_one(OptionList)
        await wait_until(pilot, lambda: not app.busy and ol.option_count > 0)
        await pilot.press("f4")
        await wait_until(pilot, lambda: app.focused is ol)
        labels = [str(ol.get_option_at_index(i).prompt) for i in range(ol.option_count)]
        assert any(label.startswith("bash: seq 1 30000") for label in labels), labels
        # the vault tab takes more room (once the layout after the focus change is drawn)
        await wait_until(pilot, lambda: app.query_one(SidePanel).outer_size.width >= 60)
        await pilot.press("enter")
        await wait_until(pilot, lambda: bool(pane.current_uri))
        area = pane.query_one(TextArea)
        search = pane.query_one("#vault-search", Input)
        search.focus()
        await pilot.press(*"2999", "enter")
        info = pane.query_one("#vault-info", Static)
        await wait_until(pilot, lambda: "match 1 of" in _text(info))
        first = area.selection.start
        assert area.get_text_range(*area.selection) == "2999"
        await pilot.press("enter")
        await wait_until(pilot, lambda: "match 2 of" in _text(info))
        second = area.selection.start
        assert second[0] > first[0] and area.get_text_range(*area.selection) == "2999"
        assert (
            area.scroll_offset.y <= second[0] < area.scroll_offset.y + area.scrollable_content_region.height
        )
        await pilot.press("escape")  # back to the prompt box
        await wait_until(pilot, lambda: app.focused is app.query_one(PromptInput))


# -- 7: /model -------------------------------------------------------------------------------------------
async def test_model_switch_shows_in_the_header_and_the_picker_offers_the_models(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from myrm_tui.llm.local import DEFAULT_LOCAL_MODEL

    monkeypatch.setenv("GEMINI_API_KEY", "g-test")
    app = make_app(emulator, tmp_path, workspace, preheat=False)
    async with started(app, size=(140, 42)) as pilot:
        assert "openai/gpt-4o-mini" in str(app.sub_title)
        await type_and_send(pilot, "/model openai/gpt-4o")
        await wait_until(pilot, lambda: str(app.sub_title).endswith("· openai/gpt-4o"))
        assert _text(app.query_one("#model", Static)).startswith("model: openai/gpt-4o\n")
        await run_from_palette(pilot, "Switch model")
        await wait_until(pilot, lambda: isinstance(app.screen, _picker()))
        ol = app.screen.query_one(OptionList)
        models = [ol.get_option_at_index(i).id for i in range(ol.option_count)]
        assert models[0] == "openai/gpt-4o" and "gemini/gemini-2.5-flash" in models
        assert models[-1] == DEFAULT_LOCAL_MODEL and not any("anthropic" in str(m) for m in models)
        await pilot.press("down", "enter")  # the gemini model
        await wait_until(pilot, lambda: str(app.sub_title).endswith("· gemini/gemini-2.5-flash"))
        assert await app.controller.store.get_setting("model") == "gemini/gemini-2.5-flash"  # type: ignore[union-attr]


async def test_a_model_without_its_key_is_refused_naming_the_variable(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    # No api key or api base in the settings: the provider's key is looked up in the environment.
    app = make_app(emulator, tmp_path, workspace, preheat=False, api_key=None, api_base=None)
    async with started(app, size=SMALL_SCREEN) as pilot:
        await type_and_send(pilot, "/model anthropic/claude-sonnet-4-5")
        await wait_until(pilot, lambda: any("ANTHROPIC_API_KEY" in t for t in _notices(app)), timeout=60)
        assert app.controller.settings.model == "openai/gpt-4o-mini"  # type: ignore[union-attr]
        assert await app.controller.store.get_setting("model") is None  # type: ignore[union-attr]
        assert "openai/gpt-4o-mini" in str(app.sub_title)


# -- 9: help ---------------------------------------------------------------------------------------------
async def test_help_shows_the_mode_row_whole(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    from myrm_tui.app.screens.help import HelpScreen

    app = make_app(emulator, tmp_path, workspace, preheat=False)
    async with started(app, size=(140, 42)) as pilot:
        await pilot.press("f1")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        await wait_until(pilot, lambda: all(s.content_region.width for s in app.screen.query(Static)))
        rows = help_sections_drawn(app)["Slash commands"]
    row = next(r for r in rows if r.startswith("/mode "))
    assert "/mode [full|lean|naked|search|chat]" in row and "full, lean, naked" in row


# -- 10: settings ----------------------------------------------------------------------------------------
async def test_settings_errors_are_visible_the_summarizer_is_checked_and_the_header_follows_a_save(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Also ``shell_env_keep`` and ``undo_backups_mb`` (leftovers8): F2 shows what their environment form
    set, refuses a bad value in one line with nothing stored, and a save stores them and wins for the run."""
    monkeypatch.setenv("MYRM_SHELL_ENV_KEEP", '["GH_TOKEN"]')
    monkeypatch.setenv("MYRM_UNDO_BACKUPS_MB", "7")
    app = make_app(emulator, tmp_path, workspace, preheat=False)
    async with started(app, size=(90, 30)) as pilot:
        await pilot.press("f2")
        await wait_until(pilot, lambda: isinstance(app.screen, SettingsScreen))
        screen = app.screen
        keep, undo_mb = (
            screen.query_one("#f-shell_env_keep", Input),
            screen.query_one("#f-undo_backups_mb", Input),
        )
        assert (keep.value, undo_mb.value) == ("GH_TOKEN", "7")
        shown = {b.binding.description for b in screen.active_bindings.values()}
        assert "Cancel" not in shown and "Close" in shown
        screen.query_one("#f-light_ratio", Input).value = "0.95"
        screen.query_one("#f-full_ratio", Input).value = "0.7"
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: any("light ≤ full" in t for t in _toasts(app)))
        assert isinstance(app.screen, SettingsScreen)
        error = screen.query_one("#error")
        scroll = screen.query_one("VerticalScroll")
        await wait_until(pilot, lambda: scroll.region.contains_region(error.region))  # scrolled into view
        screen.query_one("#f-light_ratio", Input).value = "0.5"
        screen.query_one("#f-summarizer_model", Input).value = "abc"
        await pilot.press("ctrl+s")
        await wait_until(
            pilot, lambda: any('summarizer_model: litellm does not know "abc"' in t for t in _toasts(app))
        )
        assert isinstance(app.screen, SettingsScreen)
        assert await app.controller.store.get_setting("summarizer_model") is None  # type: ignore[union-attr]
        screen.query_one("#f-summarizer_model", Input).value = "extractive"
        for field, bad, line in (
            (undo_mb, "-1", "undo_backups_mb: expected an integer >= 0 and <= 16777216, got -1"),
            (keep, "GH_TOKEN, GH_TOKEN=x", "shell_env_keep[1]: expected an environment variable's name"),
        ):
            before = field.value
            field.value = bad
            await pilot.press("ctrl+s")

            def toast_shown(line: str = line) -> bool:
                return any(t.startswith(line) for t in _toasts(app))

            await wait_until(pilot, toast_shown)
            assert isinstance(app.screen, SettingsScreen)
            field.value = before
        assert await app.controller.store.get_setting("undo_backups_mb") is None  # type: ignore[union-attr]
        assert await app.controller.store.get_setting("shell_env_keep") is None  # type: ignore[union-attr]
        keep.value, undo_mb.value = "GH_TOKEN,  HF_TOKEN ,", "50"
        screen.query_one("#f-model", Input).value = "openai/gpt-4o"
        await pilot.press("ctrl+s")  # saved: the header names the new model
        await wait_until(pilot, lambda: not isinstance(app.screen, SettingsScreen))
        # The header follows once the saved settings are applied (a step after the screen closes).
        await wait_until(pilot, lambda: str(app.sub_title).endswith("· openai/gpt-4o"))
        settings = app.controller.settings
        assert settings is not None  # F2's values win over MYRM_* for this run, and are stored
        assert (settings.shell_env_keep, settings.undo_backups_mb) == (("GH_TOKEN", "HF_TOKEN"), 50)
        assert await app.controller.store.get_setting("shell_env_keep") == ["GH_TOKEN", "HF_TOKEN"]  # type: ignore[union-attr]
        assert await app.controller.store.get_setting("undo_backups_mb") == 50  # type: ignore[union-attr]


def test_the_readme_keys_table_lists_every_key_of_the_command_table() -> None:
    from myrm_tui.app.commands import COMMANDS, key_label

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    keys = readme.split("### Keys", 1)[1].split("\n\n", 2)[1]
    missing = [c.key for c in COMMANDS if c.key and key_label(c.key) not in keys]
    assert not missing, missing
