"""What the side panel shows: the ring's baseline before the first message, live values that agree
with the lines under the ring, an honest usage chart; the command table; the header; the picker."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from textual.widgets import Static

from myrm_tui.app.commands import COMMANDS
from myrm_tui.app.screens.help import HelpScreen, help_sections
from myrm_tui.app.screens.sessions import SessionPicker
from myrm_tui.app.widgets.context_ring import ContextUsageIndicator
from myrm_tui.app.widgets.health_panel import SessionContextHealthPanel, UsageChart
from myrm_tui.context.report.window_use import Levels
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.helpers import make_app, send_turn, started, type_and_send, wait_until


def _text(widget: Any) -> str:
    return str(widget.render())


async def test_the_ring_shows_the_baseline_before_the_first_message(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    app = make_app(emulator, tmp_path, workspace, preheat=False)
    emulator.enqueue(Reply(text="hello"))
    async with app.run_test(size=(140, 42)) as pilot:
        ring = app.query_one(ContextUsageIndicator)
        assert "counting tokens…" in _text(ring)  # before the agent exists: no made-up "0 / 0"
        await wait_until(pilot, lambda: app.ready.is_set() and ring.window > 0)
        agent = app.controller.agent
        assert agent is not None and ring.window == agent.session.window
        history = agent.session.counter.messages(agent.session.history)
        schemas = app.controller.schema_tokens()
        assert (
            schemas > 500 and ring.tokens == history + schemas
        )  # system prompt, environment and tool schemas
        assert f"{ring.tokens:,} / {ring.window:,} tokens" in _text(ring)
        assert "no requests yet" in _text(app.query_one(UsageChart))
        await send_turn(pilot, app, "hi")
        sent = app.controller.agent.session.last_report  # type: ignore[union-attr]
        assert sent is not None and sent.usage is not None
        # The provider's count of the first request is the baseline plus the user's message.
        assert 0 < sent.usage.prompt_tokens - (history + schemas) < 30, (
            sent.usage.prompt_tokens,
            history + schemas,
        )


async def test_panel_live_values_agree_with_the_lines_under_the_ring(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    app = make_app(emulator, tmp_path, workspace, preheat=False)
    emulator.enqueue(
        Reply(tool_calls=[("bash", {"command": "seq 1 2000"})]), Reply(text="counted"), Reply(text="ok")
    )
    async with started(app, size=(140, 42)) as pilot:
        for text in ("count", "thanks"):
            await send_turn(pilot, app, text)
        panel = app.query_one(SessionContextHealthPanel)
        chart = app.query_one(UsageChart)
        rows = [r for r in await app.controller.store.metrics(app.controller.session.id) if "tokens_out" in r]  # type: ignore[union-attr]
        await wait_until(
            pilot, lambda: len(chart.values) == len(rows) == 3
        )  # one bar per request, none invented
        header = _text(app.query_one("#stats", Static))
        level = re.search(r"threshold level: (\w+)", header)
        ms = re.search(r"pipeline: ([\d.]+) ms", header)
        assert level and ms
        compaction, pruning = _text(panel.query_one("#compaction")), _text(panel.query_one("#pruning"))
        assert re.search(rf"level now\s+{level.group(1)}\b", compaction)
        assert re.search(r"per 100 requests\s+0\.0\b", compaction)  # 3 requests, none compacted
        last = re.search(r"pipeline last\s+([\d.]+) ms", pruning)
        # One value printed alike (re-rounding the panel's 0.25 gave 0.2 against the line's 0.3).
        assert last and last.group(1) == ms.group(1)
        assert "pipeline p50       -" not in pruning
        assert all(
            0 < v < 0.1 for v in chart.values
        )  # a few percent of 128K each: low bars, not a solid block
        bars = _text(chart).splitlines()
        assert bars[0].strip() == "" and len(bars[-1].strip()) == 3


async def test_slash_commands_and_help_come_from_the_command_table(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    app = make_app(emulator, tmp_path, workspace, preheat=False)
    keys = {b.key for b in app.BINDINGS if not isinstance(b, tuple)}
    assert {c.key for c in COMMANDS if c.key} <= keys
    help_text = "\n".join(key for _, rows in help_sections() for key, _ in rows)
    assert all(f"/{c.slash[0]}" in help_text for c in COMMANDS if c.slash)
    async with started(app, size=(140, 42)) as pilot:
        palette = {c.title for c in app.get_system_commands(app.screen)}
        assert {c.title for c in COMMANDS if c.palette} <= palette
        keys_command = next(c for c in app.get_system_commands(app.screen) if c.title == "Keys")
        keys_command.callback()  # Textual's opened its key panel beside the chat: this one is F1's help
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, HelpScreen))
        tabs = app.query_one("#tabs")
        await type_and_send(pilot, "/vault")
        await wait_until(pilot, lambda: tabs.active == "vault-tab")  # type: ignore[attr-defined]
        await type_and_send(pilot, "/health")
        await wait_until(pilot, lambda: tabs.active == "health-tab")  # type: ignore[attr-defined]
        await type_and_send(pilot, "/model")  # no name: the model picker, nothing sent to the model
        from myrm_tui.app.screens.models import ModelPicker

        await wait_until(pilot, lambda: isinstance(app.screen, ModelPicker))
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, ModelPicker))
        await type_and_send(pilot, "/mode")  # no name: the mode picker (tests/app/test_pickers.py)
        from myrm_tui.app.screens.models import ModePicker

        await wait_until(pilot, lambda: isinstance(app.screen, ModePicker))
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, ModePicker))
        assert not emulator.accepted


async def test_the_session_picker_deletes_the_highlighted_session(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    app = make_app(emulator, tmp_path, workspace, preheat=False)
    async with started(app, size=(140, 42)) as pilot:
        first = app.controller.session.id  # type: ignore[union-attr]
        await pilot.press("ctrl+n")
        await wait_until(
            pilot, lambda: app.controller.session is not None and app.controller.session.id != first
        )
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionPicker))
        ids = [s.id for s in app.screen.sessions]  # type: ignore[attr-defined]
        await pilot.press(*["down"] * ids.index(first), "d")
        await wait_until(
            pilot,
            lambda: (
                isinstance(app.screen, SessionPicker) and first not in [s.id for s in app.screen.sessions]
            ),
        )
        assert await app.controller.store.find_session(first) is None  # type: ignore[union-attr]
        await pilot.press("escape")


def test_the_header_separates_title_and_session() -> None:
    from pathlib import Path as P

    from myrm_tui.app.app import MyrmApp

    title = MyrmApp(db_path=P("/nonexistent.db"), workspace=P(".")).format_title(
        "myrm", "REPLAY · astropy-13579"
    )
    assert title.plain == "myrm  │  REPLAY · astropy-13579"


async def test_the_screen_shows_the_panel_data_and_the_vault_entry_workers_post_to_it(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    """refresh_panels and load_vault_entry post to the chat screen, which updates its own widgets."""
    from textual.widgets import OptionList, TextArea

    from myrm_tui.app.widgets.vault_pane import VaultPane
    from myrm_tui.context.vault import VaultEntry

    app = make_app(emulator, tmp_path, workspace, preheat=False)
    async with started(app, size=(140, 42)) as pilot:
        store, sid = app.controller.store, app.controller.session.id  # type: ignore[union-attr]
        assert store is not None
        uri = f"vault://{sid}/pasted"
        await store.vault_put(sid, [VaultEntry(uri, "alpha\nbeta\ngamma", "tool_output", "bash", 1.0)])
        await store.add_metrics(sid, 1, {"tokens_in": 9000, "tokens_out": 6400, "window": 128000})
        pane, chart = app.query_one(VaultPane), app.query_one(UsageChart)
        app.refresh_panels()
        await wait_until(pilot, lambda: pane.query_one(OptionList).option_count == 1)
        schemas = app.controller.schema_tokens()  # a bar counts as the ring: the view + the tool schemas
        await wait_until(pilot, lambda: chart.values == [(6400 + schemas) / 128000])  # the panel's PanelData
        await pilot.press("ctrl+b")
        await wait_until(pilot, lambda: app.main.has_class("-hide-panel"))
        app.load_vault_entry(f"vault://{sid}/missing")
        await wait_until(
            pilot, lambda: any("is not in this session's vault" in n.message for n in app._notifications)
        )
        assert app.main.has_class("-hide-panel") and not pane.current_uri  # nothing opened
        app.load_vault_entry(uri)
        await wait_until(pilot, lambda: pane.current_uri == uri)
        assert not app.main.has_class("-hide-panel")  # an opened entry brings the panel back
        assert app.query_one("#tabs").active == "vault-tab"  # type: ignore[attr-defined]
        assert pane.query_one(TextArea).text == "alpha\nbeta\ngamma"


async def test_the_app_state_is_bound_down_to_the_widgets_that_show_it(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    """Status line, compaction flag, thresholds and model line follow the app's state (the flag at once,
    no message in between: a test that waits for the ring to stop compacting then reads its numbers
    relies on it); /notes and /model show in the conversation and under the ring."""
    from myrm_tui.app.widgets.chat_message import Notice
    from myrm_tui.app.widgets.status_line import StatusLine

    app = make_app(emulator, tmp_path, workspace, preheat=False)
    emulator.enqueue(Reply(text="slow " * 40, chunk_size=2, chunk_delay=0.02))
    async with app.run_test(size=(140, 42)) as pilot:
        status, ring = app.query_one(StatusLine), app.query_one(ContextUsageIndicator)
        model = app.query_one("#model", Static)
        await wait_until(pilot, lambda: app.ready.is_set() and _text(status) == "ready")
        assert _text(model).startswith("model: openai/gpt-4o-mini\nsession: ")
        config = app.controller.agent.session.config  # type: ignore[union-attr]
        await wait_until(pilot, lambda: ring.window > 0)  # the baseline reached the app
        # The ring's colours are the pipeline's levels, in its own tokens (shares of the input budget).
        levels = Levels.of(config, app.controller.schema_tokens())
        assert app.live.use is not None and app.live.use.levels == levels
        assert ring.level() == levels.colour(ring.tokens) == "green" and levels.light < ring.window // 2
        app.compacting = True
        assert ring.busy and "compacting…" in _text(ring)
        app.compacting = False
        assert not ring.busy
        await type_and_send(pilot, "talk")
        # While the reply's text streams the status says so (it said "thinking…" all along).
        await wait_until(pilot, lambda: _text(status) == "writing… (esc cancels)")
        await wait_until(pilot, lambda: not app.busy)
        assert _text(status) == "ready"
        await type_and_send(pilot, "/notes")  # a slash command's notice goes to the conversation
        await wait_until(pilot, lambda: any("Session notes:" in _text(n) for n in app.query(Notice)))
        assert "(none)" in _text(app.query(Notice).last())
        await type_and_send(pilot, "/model openai/gpt-4o")
        await wait_until(pilot, lambda: _text(model).startswith("model: openai/gpt-4o\nsession: "))
