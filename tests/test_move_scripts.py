"""The move scripts (``scripts/move_context.py``, ``scripts/mirror_tests.py``) rewrite each kind of reference,
tell the old module ``compaction`` from the package of that name, and change nothing the second time: run
over every tracked text file of this checkout, a second rewrite equals the first."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def scripts() -> tuple[ModuleType, ModuleType]:
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        return importlib.import_module("move_context"), importlib.import_module("mirror_tests")
    finally:
        sys.path.remove(str(ROOT / "scripts"))


def test_imports_of_moved_modules_keep_their_local_names(scripts: tuple[ModuleType, ModuleType]) -> None:
    move = scripts[0]
    text = (
        "from myrm_tui.context import config, ledger, summary_model\n"
        "    from myrm_tui.context import redact as mod  # lazily\n"
        "from myrm_tui.context.compaction import Trigger\n"
        "import myrm_tui.context.fit\n"
        'monkeypatch.setattr("myrm_tui.context.summarize.Summarize.run", run)\n'
    )
    assert move.rewrite("x.py", text, set()) == (
        "from myrm_tui.context import config\n"
        "from myrm_tui.context.summary import ledger\n"
        "from myrm_tui.context.summary import fields as summary_model\n"
        "    from myrm_tui.context.privacy import redact as mod  # lazily\n"
        "from myrm_tui.context.compaction.record import Trigger\n"
        "import myrm_tui.context.steps.fit\n"
        'monkeypatch.setattr("myrm_tui.context.steps.summarize.Summarize.run", run)\n'
    )


def test_paths_and_bare_names(scripts: tuple[ModuleType, ModuleType]) -> None:
    move = scripts[0]
    text = "see myrm_tui/context/fit.py, context/redact.py and `fit.py`; not tests/context/fit.py\n"
    assert move.rewrite("README.md", text, set()) == (
        "see myrm_tui/context/steps/fit.py, context/privacy/redact.py and `steps/fit.py`; "
        "not tests/context/fit.py\n"
    )
    assert "`fit.py`" in move.rewrite("myrm_tui/agent/x.py", text, set())  # outside the package: not its own
    placed = "`cache_break.py` (`context/report/`) compares"
    assert move.rewrite("docs/context.md", placed, set()) == placed


def test_the_package_compaction_is_not_the_old_module(scripts: tuple[ModuleType, ModuleType]) -> None:
    move = scripts[0]
    bare = 'contract = ["myrm_tui.context.compaction"]\n'
    assert move.rewrite("x.py", bare, {"compaction"}) == 'contract = ["myrm_tui.context.compaction.record"]\n'
    assert move.rewrite("x.py", bare, set()) == bare  # a later run: the name is the package
    new = "from myrm_tui.context.compaction import intent\nfrom myrm_tui.context.compaction.record import X\n"
    assert move.rewrite("x.py", new, {"compaction"}) == new


def test_test_paths_modules_and_renamed_bare_names(scripts: tuple[ModuleType, ModuleType]) -> None:
    mirror = scripts[1]
    text = (
        "from tests.llm.test_llm_client import silent_server\n"
        '    ("tests/agent/test_redact.py::x", "tests/context/test_fit_properties.py"),\n'
        "(``test_approval_keys.py``) and ``test_tui.py``\n"
    )
    assert mirror.rewrite("x.py", text) == (
        "from tests.llm.test_client import silent_server\n"
        '    ("tests/context/privacy/test_redact.py::x", "tests/context/steps/test_fit_properties.py"),\n'
        "(``tests/app/screens/test_approval.py``) and ``test_tui.py``\n"
    )


def test_every_place_is_taken_once(scripts: tuple[ModuleType, ModuleType]) -> None:
    places = scripts[1].PLACES
    assert len(set(places.values())) == len(places)
    assert all(
        p.startswith("tests/") and Path(p).name.startswith("test_") for p in [*places, *places.values()]
    )


def test_a_second_rewrite_of_every_file_changes_nothing(scripts: tuple[ModuleType, ModuleType]) -> None:
    move, mirror = scripts
    paths = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    checked = 0
    for path in paths.splitlines():
        p = ROOT / path
        if p.suffix not in (".py", ".md", ".toml") or not p.is_file():
            continue
        text = p.read_text(encoding="utf-8")
        once = mirror.rewrite(path, move.rewrite(path, text, set(move.MOVES)))
        assert mirror.rewrite(path, move.rewrite(path, once, set())) == once, path
        checked += 1
    assert checked > 100


def test_pyproject_lists_the_rooms_and_guards_every_step(scripts: tuple[ModuleType, ModuleType]) -> None:
    move = scripts[0]
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    text = move.rewrite("pyproject.toml", pyproject, set(move.MOVES))
    assert all(f'"myrm_tui.context.{room}"' in text for room in move.ROOMS)
    # every step, pinned.py and those added later included, may not import the pipeline
    rooms = '["myrm_tui.context.steps", "myrm_tui.context.filters", "myrm_tui.context.step"]'
    assert f"source_modules = {rooms}" in text
