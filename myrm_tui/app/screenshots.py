"""``make screenshots``: drive the real app headless and save SVG screenshots into ``screenshots/``.

The model is the provider emulator (scripted replies through the real litellm path), so the
screens show the real pipeline, store and widgets.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

from myrm_tui.app.app import MyrmApp
from myrm_tui.testing.emulator import ProviderEmulator, Reply


async def _wait(pilot: object, cond: object, timeout: float = 30.0) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not cond():  # type: ignore[operator]
        if loop.time() > end:
            raise TimeoutError("screen did not settle")
        await pilot.pause(0.05)  # type: ignore[attr-defined]


async def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with ProviderEmulator() as emu, tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "project"
        ws.mkdir()
        (ws / "app.py").write_text("def add(a, b):\n    return a - b\n")
        emu.enqueue(
            Reply(text="Let me look at the file first.", tool_calls=[("file_read_tool", {"paths": ["app.py"]})]),
            Reply(tool_calls=[("file_edit_tool", {"path": "app.py", "old_string": "a - b", "new_string": "a + b"})]),
            Reply(tool_calls=[("bash", {"command": "python -c 'import app; print(app.add(2, 3))'"})]),
            Reply(text="Fixed: `add` subtracted instead of adding.\n\n- `app.py`: `a - b` → `a + b`\n- checked: `add(2, 3)` prints `5`."),
        )
        app = MyrmApp(db_path=Path(tmp) / "shots.db", workspace=ws,
                      cli={"model": "openai/gpt-4o-mini", "api_base": emu.openai_base, "api_key": "sk-demo", "approval": "auto"})
        async with app.run_test(size=(130, 40)) as pilot:
            await _wait(pilot, app.ready.is_set)
            await pilot.press(*"fix the add function in app.py")
            await pilot.press("enter")
            await _wait(pilot, lambda: not app.busy)
            await pilot.pause(0.3)
            app.save_screenshot(str(out / "main.svg"))
            await pilot.press("f1")
            await pilot.pause(0.3)
            app.save_screenshot(str(out / "help.svg"))
    print(f"screenshots written to {out}/")


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1] if len(sys.argv) > 1 else "screenshots")))
