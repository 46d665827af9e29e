"""``ContextConfig``'s fields are grouped by the step that reads them: a group is a blank line and a
comment naming its modules (``precompact.py``, ``filters/``), and every field of the group is read there,
by its name or through a threshold derived from it (``input_budget`` reads ``reserve_output_tokens``)."""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

from myrm_tui.context import config
from myrm_tui.context.config import ContextConfig, UserContextSettings

ROOM = Path(config.__file__).parent
MODULE = re.compile(r"``([\w/]*\w\.py|\w+/)``")  # a module or a folder, by name or path in context/


def groups(cls: type) -> dict[str, tuple[str, ...]]:
    """Each field declared in ``cls``'s body -> the modules its group's comment names."""
    lines, _ = inspect.getsourcelines(cls)
    body = next(n for n in ast.parse("".join(lines)).body if isinstance(n, ast.ClassDef))
    out: dict[str, tuple[str, ...]] = {}
    named: tuple[str, ...] = ()
    for node in body.body:
        if not isinstance(node, ast.AnnAssign) or not isinstance(node.target, ast.Name):
            continue
        above = node.lineno - 2  # the lines above the field, back to the blank line that opens a group
        while above >= 0 and lines[above].strip().startswith("#"):
            above -= 1
        if above >= 0 and not lines[above].strip():
            named = tuple(MODULE.findall("".join(lines[above + 1 : node.lineno - 1])))
        out[node.target.id] = named
    return out


def readers(name: str) -> set[str]:
    """``name`` and every property of ``ContextConfig`` derived from it, however indirectly."""
    derived = {
        p: set(re.findall(r"self\.(\w+)", inspect.getsource(getattr(ContextConfig, p).fget)))
        for p, v in vars(ContextConfig).items()
        if isinstance(v, property)
    }
    out = {name}
    while grown := {p for p, uses in derived.items() if uses & out} - out:
        out |= grown
    return out


def source(module: str) -> str:
    found = [ROOM / module] if (ROOM / module).exists() else list(ROOM.rglob(module.rstrip("/")))
    assert len(found) == 1, f"{module}: {len(found)} places under context/"
    files = sorted(found[0].rglob("*.py")) if found[0].is_dir() else [found[0]]
    return "".join(p.read_text(encoding="utf-8") for p in files)


def test_every_field_is_read_by_a_module_its_group_names() -> None:
    unread = []
    for cls in (UserContextSettings, ContextConfig):
        for name, modules in groups(cls).items():
            assert modules, f"{name}: its group names no module"
            words = re.compile(r"\b(" + "|".join(sorted(readers(name))) + r")\b")
            text = "".join(source(m) for m in modules if m != "config.py")
            if "config.py" not in modules and not words.search(text):
                unread.append(f"{name} (read through {sorted(readers(name))}) in none of {modules}")
    assert unread == []


def test_the_window_group_is_read_through_the_derived_budgets() -> None:
    window = [n for n, m in groups(ContextConfig).items() if m == ("config.py",)]
    assert window == ["max_context_tokens", "reserve_output_tokens", "overhead_tokens"]
    for name in window:
        assert readers(name) & {"input_budget", "view_window"}, name
