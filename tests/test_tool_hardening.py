"""Tools that never lose or leak work: parallel edits of one file, ripgrep-backed search, tool processes
that end with myrm (even on kill -9), terminal escape codes neutralised."""

from __future__ import annotations

from pathlib import Path

from myrm_tui.agent.events import ToolFinished, TurnDone
from myrm_tui.store.db import Store
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.helpers import collect, make_agent, openai_settings


async def _parallel_edits(emulator: ProviderEmulator, store: Store, workspace: Path, n: int) -> None:
    """``n`` edits of one file in one assistant message, through the agent's real tool runner."""
    target = workspace / "many.txt"
    target.write_text("".join(f"line {i} = old\n" for i in range(n)))
    target.chmod(0o640)
    agent = await make_agent(store, workspace, openai_settings(emulator))
    edits = [
        (
            "file_edit_tool",
            {"path": "many.txt", "old_string": f"line {i} = old", "new_string": f"line {i} = new"},
        )
        for i in range(n)
    ]
    emulator.enqueue(Reply(tool_calls=edits), Reply(text="done"))
    events = await collect(agent, "edit them all")
    await agent.close()
    assert isinstance(events[-1], TurnDone)
    finished = [e for e in events if isinstance(e, ToolFinished)]
    assert len(finished) == n
    assert all(e.message.content.startswith("edited many.txt") for e in finished)
    # Every edit reported "edited" is in the file: none lost (before the fix one of n survived).
    assert target.read_text() == "".join(f"line {i} = new\n" for i in range(n))
    assert target.stat().st_mode & 0o777 == 0o640  # the atomic rename keeps the file's mode
    assert [p.name for p in workspace.iterdir() if p.name.startswith(".many")] == []  # no temp file left


async def test_two_parallel_edits_of_one_file_both_land(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    await _parallel_edits(emulator, store, workspace, 2)


async def test_twenty_parallel_edits_of_one_file_all_land(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    await _parallel_edits(emulator, store, workspace, 20)
