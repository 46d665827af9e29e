"""A reply's approval dialogs, pressed as a user does: the first call's dialog comes first, and "a" (always)
on an edit leaves no dialog for the reply's other edit (found by the coordinator: new.py was asked
first, then hello.py again after "always"). The model's reply comes from the provider emulator."""

from __future__ import annotations

from pathlib import Path

from myrm_tui.app.screens.approval import ApprovalScreen
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.helpers import SMALL_SCREEN, approval_open, make_app, started, type_and_send, wait_until


async def test_always_on_the_first_edit_leaves_no_second_dialog(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    app = make_app(emulator, tmp_path, workspace, approval="ask", preheat=False)
    emulator.enqueue(
        Reply(
            tool_calls=[
                ("file_edit_tool", {"path": "hello.py", "old_string": "'hello'", "new_string": "'hi'"}),
                ("file_edit_tool", {"path": "new.py", "new_string": "x = 1\n", "create": True}),
            ]
        ),
        Reply(text="Done."),
    )
    async with started(app, size=SMALL_SCREEN) as pilot:
        await type_and_send(pilot, "change the files")
        await wait_until(pilot, lambda: approval_open(app), 60)
        screen = app.screen
        assert isinstance(screen, ApprovalScreen)
        assert "hello.py" in screen.command and "new.py" not in screen.command  # the first call's
        await pilot.press("a")
        # either the turn ends, or a second dialog opens (the defect): whichever comes first
        await wait_until(pilot, lambda: not app.busy or (approval_open(app) and app.screen is not screen), 60)
        assert not isinstance(app.screen, ApprovalScreen)
        assert not app.busy
        assert (workspace / "hello.py").read_text() == "def greet():\n    return 'hi'\n"
        assert (workspace / "new.py").read_text() == "x = 1\n"
