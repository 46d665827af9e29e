"""Layering rules, checked in fresh interpreters: the pipeline never imports the UI, the agent never
imports the UI, and starting the UI does not import litellm (it takes seconds)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _modules_after(import_stmt: str) -> set[str]:
    code = f"import sys\n{import_stmt}\nprint('\\n'.join(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    ).stdout
    return set(out.split())


@pytest.mark.parametrize(
    "stmt",
    [
        "import myrm_tui.context.pipeline",
        "import myrm_tui.context.summarize, myrm_tui.context.compress, myrm_tui.context.filters.processor",
        "import myrm_tui.agent.agent, myrm_tui.agent.factory",
        "import myrm_tui.bench.run",
    ],
)
def test_headless_modules_never_import_the_tui(stmt: str) -> None:
    mods = _modules_after(stmt)
    assert not any(m == "myrm_tui.app" or m.startswith("myrm_tui.app.") for m in mods)
    assert "textual" not in mods


def test_context_package_does_not_depend_on_store_or_agent() -> None:
    mods = _modules_after("import myrm_tui.context.pipeline")
    assert not any(m.startswith(("myrm_tui.store", "myrm_tui.agent", "myrm_tui.app")) for m in mods)


def test_tui_start_up_path_does_not_import_litellm() -> None:
    mods = _modules_after("import myrm_tui.cli, myrm_tui.app.app")
    assert "litellm" not in mods and "llama_cpp" not in mods
