"""No import circles in the package: a module that imports one that imports it back (even only for type
checking, even through others) is two modules that can only be understood, and changed, together."""

from __future__ import annotations

import grimp
import pytest

# Circles allowed for now (none): an entry here must name a circle that still exists
# (test_known_circles_still_exist), so the list only shrinks.
KNOWN: set[frozenset[str]] = set()


def circles(imports: dict[str, set[str]]) -> set[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: set[frozenset[str]] = set()
    for root in sorted(imports):
        if root in index:
            continue
        work = [(root, iter(sorted(imports[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(imports.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                part = set()
                while True:
                    m = stack.pop()
                    on_stack.discard(m)
                    part.add(m)
                    if m == node:
                        break
                if len(part) > 1:
                    found.add(frozenset(part))
    return found


@pytest.fixture(scope="module")
def package_circles() -> set[frozenset[str]]:
    graph = grimp.build_graph(
        "myrm_tui", cache_dir=None
    )  # TYPE_CHECKING imports count: a circle all the same
    return circles({m: set(graph.find_modules_directly_imported_by(m)) for m in graph.modules})


def test_no_import_circle_in_the_package(package_circles: set[frozenset[str]]) -> None:
    new = [sorted(c) for c in package_circles - KNOWN]
    assert not new, f"import circles: {new}"


def test_known_circles_still_exist(package_circles: set[frozenset[str]]) -> None:
    gone = [sorted(c) for c in KNOWN - package_circles]
    assert not gone, f"these circles are gone: delete them from KNOWN in {__file__}: {gone}"


@pytest.mark.parametrize(
    ("imports", "expected"),
    [
        ({"a": {"b"}, "b": set()}, set()),
        ({"a": {"b"}, "b": {"a"}}, {frozenset({"a", "b"})}),
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, {frozenset({"a", "b", "c"})}),
        (
            {"a": {"b", "d"}, "b": {"a"}, "c": {"d"}, "d": {"c"}},
            {frozenset({"a", "b"}), frozenset({"c", "d"})},
        ),
        ({"a": {"a"}}, set()),
    ],
)
def test_circles_finds_each_circle(imports: dict[str, set[str]], expected: set[frozenset[str]]) -> None:
    assert circles(imports) == expected
