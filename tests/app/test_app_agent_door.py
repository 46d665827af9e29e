"""The app reaches the agent through the agent API (``agent/api.py``) and the Controller, its one adapter
onto it: no other app module reads an agent build's session, and none imports the units behind it (what
the session holds can then change without the UI changing with it)."""

from __future__ import annotations

import ast
from pathlib import Path

import grimp
import pytest

import myrm_tui

APP = Path(myrm_tui.__file__).resolve().parent / "app"
# The units agent/agent.py wires; the app knows the API, the factory and the plain data they hand out.
BEHIND = {
    "myrm_tui.agent.session",
    "myrm_tui.agent.session_deps",
    "myrm_tui.agent.summary_prep",
    "myrm_tui.agent.turn",
    "myrm_tui.agent.tool_runner",
}


def reaches_into_session(tree: ast.AST) -> list[int]:
    """Lines where ``agent.session`` (or ``….agent.session``) is read."""
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and node.attr == "session"
        and (
            (isinstance(node.value, ast.Name) and node.value.id == "agent")
            or (isinstance(node.value, ast.Attribute) and node.value.attr == "agent")
        )
    ]


def test_the_app_does_not_import_what_is_behind_the_facade() -> None:
    graph = grimp.build_graph("myrm_tui", cache_dir=None)
    found = sorted(
        f"{m} imports {d}"
        for m in graph.find_descendants("myrm_tui.app")
        for d in graph.find_modules_directly_imported_by(m)
        if d in BEHIND
    )
    assert not found, found


# The Controller builds the health panel's numbers from the agent build (the TUI's adapter onto the API);
# perf.py measures the pipeline on a built agent (a benchmark, not a front-end).
ADAPTERS = {"controller.py", "perf.py"}


def test_the_app_does_not_reach_past_the_api() -> None:
    found = [
        f"{p.relative_to(APP.parent)}:{line}"
        for p in sorted(APP.rglob("*.py"))
        if p.name not in ADAPTERS
        for line in reaches_into_session(ast.parse(p.read_text(encoding="utf-8")))
    ]
    assert not found, (
        f"the app reads agent.session (add what it needs to agent/api.py's ChatSession): {found}"
    )


@pytest.mark.parametrize(
    ("source", "lines"),
    [
        ("agent.session.preparer.listeners", [1]),
        ("x = self.agent.session.schema_tokens()", [1]),
        ("self.controller.session.id", []),
        ("agent.session_id", []),
        ("event.session.title", []),
    ],
)
def test_the_scan_tells_the_agent_session_from_others(source: str, lines: list[int]) -> None:
    assert reaches_into_session(ast.parse(source)) == lines
