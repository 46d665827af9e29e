"""The full screen stays responsive while a model's command runs into its resource limits (agent/limits.py):
a fork bomb and a runaway allocation are stopped in the command, Esc still cancels it, nothing it started
is left, and the next turn works. Driven by Pilot with real key presses."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Static

from myrm_tui.agent.limits import pid_cgroup_parent
from myrm_tui.app.widgets.chat_message import AssistantMessage
from myrm_tui.app.widgets.tool_call import ToolCallView
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.agent.test_limits import FORKS, PY, no_process_limit
from tests.helpers import SMALL_SCREEN, make_app, send_turn, started, type_and_send, wait_until


def _leftover_cgroups() -> list[Path]:
    parent = pid_cgroup_parent()
    return sorted(parent.glob("myrm-*")) if parent is not None else []


@no_process_limit
async def test_a_fork_bomb_and_a_memory_hog_leave_the_screen_responsive(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    before = _leftover_cgroups()
    grab = f"{PY} -c 'x = [bytearray(1 << 20) for _ in range(1024)]'"
    command = f"{FORKS}; {grab}; echo both-stopped; sleep 60"
    emulator.enqueue(Reply(tool_calls=[("bash", {"command": command})]), Reply(text="never"))
    app = make_app(emulator, tmp_path, workspace, limit_processes=32, limit_memory_mb=128)
    async with started(app, size=SMALL_SCREEN) as pilot:
        await type_and_send(pilot, "try it")
        await wait_until(pilot, lambda: bool(app.query(ToolCallView)), 60)
        view = app.query_one(ToolCallView)

        def live() -> str:
            return str(view.query_one(".live", Static).render())

        await wait_until(pilot, lambda: "both-stopped" in live(), 60)
        assert "refused after" in live() and "MemoryError" in live()
        await pilot.press("escape")  # the app still answers a key while the command runs
        await wait_until(pilot, lambda: not app.busy, 30)
        assert _leftover_cgroups() == before  # the sleeping children went with the command
        emulator.enqueue(Reply(text="still here"))
        await send_turn(pilot, app, "and now?", timeout=60)
        assert app.query(AssistantMessage).last().markdown.source == "still here"


pytestmark = pytest.mark.skipif(not Path("/proc").is_dir(), reason="spawns real processes and reads /proc")
