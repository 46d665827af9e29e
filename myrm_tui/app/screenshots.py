"""``make screenshots``: drive the real app headless and save SVG screenshots into ``screenshots/``.

The screens come from a replay of a real corpus session (``../shared/corpus``): real usage climbing,
real compactions, real vaulted outputs. Without the corpus, a scripted session on the provider
emulator is used instead.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path
from typing import Any

from textual.widgets._collapsible import CollapsibleTitle

from myrm_tui.app.app import MyrmApp
from myrm_tui.app.widgets.chat_message import Notice
from myrm_tui.app.widgets.compaction_row import CompactionRow
from myrm_tui.app.widgets.vault_card import VaultArtifactCard
from myrm_tui.app.widgets.vault_pane import VaultPane
from myrm_tui.testing.emulator import ProviderEmulator, Reply

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus" / "swe-dev.jsonl.gz"
REPLAY_ID = "mswea-gemini3pro/astropy__astropy-13579"


async def _wait(pilot: Any, cond: Any, timeout: float = 60.0) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not cond():
        if loop.time() > end:
            raise TimeoutError("screen did not settle")
        await pilot.pause(0.05)


async def replay_shots(out: Path, tmp: Path) -> None:
    app = MyrmApp(
        db_path=tmp / "shots.db", workspace=tmp, replay=f"{CORPUS}#{REPLAY_ID}", replay_speed=0.05
    )  # slow enough for the pause to land right after the 2nd compaction
    async with app.run_test(size=(150, 45)) as pilot:
        await _wait(pilot, lambda: app.replayer is not None and app.controller.chat is not None)
        chat = app.controller.chat
        await _wait(pilot, lambda: chat.figures().compactions >= 2)  # type: ignore[union-attr]
        app.action_toggle_replay()
        await pilot.pause(1.0)
        app.refresh_panels()
        await pilot.pause(0.5)
        app.save_screenshot(str(out / "main.svg"))
        await pilot.press("f3")
        await pilot.pause(0.3)
        app.save_screenshot(str(out / "health.svg"))
        await compaction_and_context_shots(app, pilot, out)
        entries = (await app.controller.panel_data()).vault
        archives = [
            e
            for e in entries
            if e.get("kind") == "archive" and e.get("meta", {}).get("reason") == "pre_compact"
        ]
        cards = list(app.query(VaultArtifactCard))
        if archives:  # an archived view, rendered as numbered messages
            app.load_vault_entry(archives[0]["uri"])
            await pilot.press("f4")
            await _wait(pilot, lambda: app.query_one(VaultPane).current_uri == archives[0]["uri"])
        elif cards:
            cards[-1].focus()
            await pilot.press("enter")
            await pilot.pause(0.8)
        elif entries:
            app.load_vault_entry(entries[-1]["uri"])
            await pilot.press("f4")
            await pilot.pause(0.8)
        await pilot.pause(0.3)
        app.save_screenshot(str(out / "vault.svg"))
        await pilot.press("f1")
        await pilot.pause(0.3)
        app.save_screenshot(str(out / "help.svg"))


async def compaction_and_context_shots(app: MyrmApp, pilot: Any, out: Path) -> None:
    """The newest compaction row expanded (its summary and what left the view), then ``/context``."""
    rows = list(app.query(CompactionRow))
    if rows:
        row = rows[-1]
        row.query_one(CollapsibleTitle).focus()
        await pilot.press("enter")
        await _wait(pilot, lambda: not row.collapsed)
        row.scroll_visible(animate=False, top=True)
        await pilot.pause(0.5)
        app.save_screenshot(str(out / "compaction.svg"))
    app.query_one("#prompt").focus()
    await pilot.press(*"/context")
    await pilot.press("enter")
    await _wait(pilot, lambda: any("Context window now" in str(n.render()) for n in app.query(Notice)))
    await pilot.pause(0.5)
    app.save_screenshot(str(out / "context.svg"))


async def scripted_shots(out: Path, tmp: Path) -> None:
    with ProviderEmulator() as emu:
        ws = tmp / "project"
        ws.mkdir()
        (ws / "app.py").write_text("def add(a, b):\n    return a - b\n")
        emu.enqueue(
            Reply(
                text="Let me look at the file first.", tool_calls=[("file_read_tool", {"paths": ["app.py"]})]
            ),
            Reply(
                tool_calls=[
                    ("file_edit_tool", {"path": "app.py", "old_string": "a - b", "new_string": "a + b"})
                ]
            ),
            Reply(text="Fixed: `add` now adds."),
        )
        app = MyrmApp(
            db_path=tmp / "shots.db",
            workspace=ws,
            cli={
                "model": "openai/gpt-4o-mini",
                "api_base": emu.openai_base,
                "api_key": "sk-demo",
                "approval": "auto",
            },
        )
        async with app.run_test(size=(150, 45)) as pilot:
            await _wait(pilot, app.ready.is_set)
            await pilot.press(*"fix the add function in app.py")
            await pilot.press("enter")
            await _wait(pilot, lambda: not app.busy)
            await pilot.pause(0.3)
            app.save_screenshot(str(out / "main.svg"))


async def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        if CORPUS.is_file():
            await replay_shots(out, Path(tmp))
        else:
            print(f"corpus not found at {CORPUS}; using a scripted session", file=sys.stderr)
            await scripted_shots(out, Path(tmp))
    print(f"screenshots written to {out}/")


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1] if len(sys.argv) > 1 else "screenshots")))
