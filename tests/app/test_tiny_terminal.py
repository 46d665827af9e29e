"""A terminal made a few columns wide (a tmux pane split to nothing, a resize storm) never ends myrm: found
resizing a tmux window to 2x80, the app exited with 'ValueError: range() arg 3 must not be zero' (Textual's
TextArea wraps the prompt's placeholder to the box's text width, and Rich cannot wrap to 0 columns). The
prompt keeps a minimum width; the screen crops it instead."""

from __future__ import annotations

import functools
from pathlib import Path

from myrm_tui.app.widgets.chat_message import AssistantMessage
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.helpers import make_app, send_turn, started, wait_until

# Every width from 1 to 8 columns at heights where the prompt has rows to draw, then a storm back and forth.
SIZES = [(w, h) for w in range(1, 9) for h in (4, 6, 10, 40)] + [(120, 2), (2, 80), (200, 60), (3, 6)]


async def test_any_tiny_size_keeps_the_app_running(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    emulator.script.append(Reply(text="still here"))
    app = make_app(emulator, tmp_path, workspace)
    async with started(app, size=(120, 35)) as pilot:
        for size in SIZES:
            await pilot.resize_terminal(*size)
            await wait_until(pilot, functools.partial(lambda s: tuple(app.size) == s, size))
            assert app.return_code is None, size
        await pilot.resize_terminal(120, 35)
        await send_turn(pilot, app, "hi")
        await wait_until(pilot, lambda: bool(app.query(AssistantMessage)))
        assert app.query(AssistantMessage).last().markdown.source == "still here"


async def test_the_command_palette_at_any_tiny_size_keeps_the_app_running(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    """Found the same way with ctrl+p open: the palette's list (an OptionList) wraps its options to 0
    columns at 11 columns wide. Lists keep a minimum width too."""
    from textual.command import CommandPalette

    app = make_app(emulator, tmp_path, workspace)
    async with started(app, size=(120, 35)) as pilot:
        await pilot.press("ctrl+p")
        await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette))
        for size in [(w, h) for w in range(1, 16) for h in (6, 40)]:
            await pilot.resize_terminal(*size)
            await wait_until(pilot, functools.partial(lambda s: tuple(app.size) == s, size))
            assert app.return_code is None, size
        await pilot.resize_terminal(120, 35)
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, CommandPalette))
