"""The map of ``myrm_tui/context/`` (its README) says what the code does: its step table is the pipeline
``build_pipeline`` builds, in order, with each step's name and module; every module it names exists and
every module of the package is on the map."""

from __future__ import annotations

import re
from pathlib import Path

from myrm_tui.context.pipeline import build_pipeline

ROOM = Path(__file__).resolve().parents[2] / "myrm_tui" / "context"
README = (ROOM / "README.md").read_text(encoding="utf-8")
ROW = re.compile(r"^\| (\d+) \| `(\w+)` \| (\w+) \| `([\w/.]+)` \|", re.M)


def test_the_step_table_is_the_pipeline() -> None:
    documented = [(int(n), cls, name, module) for n, cls, name, module in ROW.findall(README)]
    built = [
        (
            k,
            type(step).__name__,
            step.name,
            type(step).__module__.removeprefix("myrm_tui.context.").replace(".", "/") + ".py",
        )
        for k, step in enumerate(build_pipeline().steps, 1)
    ]
    assert documented == built


def test_every_module_is_on_the_map() -> None:
    named = {m for m in re.findall(r"`([\w/]+\.py)`", README) if not m.startswith(("tests/", "test_"))}
    # The bench's scripts are named from the repository's root; they must exist there.
    scripts = {m for m in named if m.startswith("bench/")}
    assert {m for m in scripts if not (ROOM.parents[1] / m).is_file()} == set(), "no such bench script"
    named -= scripts
    present = {p.relative_to(ROOM).as_posix() for p in ROOM.rglob("*.py") if p.name != "__init__.py"}
    assert named - present == set(), "the map names modules that do not exist"
    assert present - named == set(), "modules missing from the map"
