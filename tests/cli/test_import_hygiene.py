"""Layering rules, checked in fresh interpreters: the pipeline never imports the UI, the agent never
imports the UI, and starting the UI does not import litellm (it takes seconds)."""

from __future__ import annotations

import json
import os
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
        "import myrm_tui.context.steps.summarize, myrm_tui.context.steps.compress, "
        "myrm_tui.context.filters.processor",
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
    """Nor the tokenizer, the Markdown parser, the agent or the pipeline: they load in the start-up
    worker's thread or on first use, after the first frame."""
    mods = _modules_after("import myrm_tui.cli, myrm_tui.app.app")
    heavy = (
        "litellm",
        "llama_cpp",
        "tiktoken",
        "markdown_it",
        "myrm_tui.agent.agent",
        "myrm_tui.context.pipeline",
    )
    assert [m for m in heavy if m in mods] == []


# Commands that call no model, run one after another in one fresh interpreter (``cli.main`` as the
# ``myrm`` script calls it): what each leaves imported. litellm alone is ~2.5 s of CPU.
NO_MODEL = r"""
import sys
from myrm_tui import cli

for argv in (["--help"], ["sessions"], ["sessions", "--help"], ["doctor", "--help"], ["ask", "--help"]):
    sys.argv = ["myrm", *argv]
    try:
        cli.main()
    except SystemExit as exc:
        assert exc.code in (0, None), (argv, exc.code)
    heavy = [m for m in ("litellm", "openai", "llama_cpp") if m in sys.modules]
    print("LOADED", " ".join(argv) + ":" + ",".join(heavy))
"""


def test_commands_that_call_no_model_do_not_import_litellm(tmp_path: Path) -> None:
    """``myrm --help``, ``myrm sessions`` and the subcommands' help answer without litellm's import (nor
    openai's or llama.cpp's): seconds of a user's wait and of every such ``myrm`` a test starts."""
    env = {**os.environ, "MYRM_DB": str(tmp_path / "s.db"), "MYRM_CONFIG": str(tmp_path / "none.toml")}
    out = subprocess.run(
        [sys.executable, "-c", NO_MODEL], capture_output=True, text=True, cwd=ROOT, env=env, timeout=120
    )
    assert out.returncode == 0, out.stderr[-3000:]
    loaded = [line.split(" ", 1)[1] for line in out.stdout.splitlines() if line.startswith("LOADED ")]
    assert loaded == [
        f"{argv}:" for argv in ("--help", "sessions", "sessions --help", "doctor --help", "ask --help")
    ]


# The real ``myrm`` start (settings check, database check, the app), headless: the modules loaded when the
# first frame is drawn, and when the ring first shows a figure. Then it quits.
START = r"""
import json, sys
from myrm_tui.app import app as app_module

App = app_module.MyrmApp
seen = {}
run, mount, show_baseline = App.run, App.on_mount, App._show_baseline


def on_mount(self):
    mount(self)  # queues the start-up worker after the first refresh; this comes after it
    self.call_after_refresh(lambda: seen.setdefault("frame", sorted(sys.modules)))


async def _show_baseline(self):  # the agent is built: the ring takes its first figure
    await show_baseline(self)
    if self.live.known:
        seen["figure"] = sorted(sys.modules)
        self.exit()


App.run = lambda self, **kw: run(self, headless=True, size=(140, 42))
App.on_mount, App._show_baseline = on_mount, _show_baseline
from myrm_tui import cli

cli._terminal_problem = lambda: None  # headless: the app draws on no terminal, so it needs none
sys.argv = ["myrm", *sys.argv[1:]]
try:
    cli.main()
finally:
    print(json.dumps(seen))
"""

# Seconds to import (or, for tiktoken's encoding, to load) and a hundred MB or more between them;
# typer's adapters parse options with pydantic validators (0.05 s of CPU): the full screen's are read
# without them.
HEAVY = (
    "litellm",
    "openai",
    "tiktoken",
    "llama_cpp",
    "markdown_it",
    "myrm_tui.agent.agent",
    "typer._adapters",
)
HEAVY_PREFIXES = ("pygments.lexers.", "tree_sitter_")  # one lexer / grammar a module


def _start(tmp_path: Path, *args: str) -> dict[str, list[str]]:
    env = {
        **os.environ,
        "MYRM_DB": str(tmp_path / "start.db"),
        "MYRM_CONFIG": str(tmp_path / "none.toml"),
        "MYRM_PREHEAT": "false",  # the start-up preheat imports litellm on purpose, beside the ring
        "OPENAI_API_KEY": "sk-test",
    }
    out = subprocess.run(
        [sys.executable, "-c", START, "-w", str(tmp_path), *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    seen: dict[str, list[str]] = json.loads(out.stdout.strip().splitlines()[-1])
    return seen


def _heavy(mods: list[str]) -> list[str]:
    return [m for m in mods if m.split(".")[0] in HEAVY or m in HEAVY or m.startswith(HEAVY_PREFIXES)]


@pytest.mark.parametrize("args", [(), ("-m", "openai/gpt-4o")], ids=["embedded", "provider"])
def test_the_first_frame_and_the_rings_first_figure_load_no_heavy_module(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    """The first frame loads no model client, no tokenizer, no highlighter; the ring's first figure needs
    the tokenizer but never waits for litellm (the window of a provider's model is read from its file)."""
    seen = _start(tmp_path, *args)
    assert set(seen) == {"frame", "figure"}, seen.keys()
    assert _heavy(seen["frame"]) == []
    assert "tiktoken" in seen["figure"]  # the figure is our count
    assert not [m for m in _heavy(seen["figure"]) if m.split(".")[0] in ("litellm", "openai", "llama_cpp")]
