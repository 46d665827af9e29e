"""Every mutant of ``make protections`` still finds its marker, its snippet after it, and its tests.

``make protections`` runs pytest once per mutant, too slow for ``make test``; this check is instant and
fails the moment a guarded line changes under a protection, so the list cannot go stale unnoticed."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from tests import protections
from tests.protections import MUTANTS, Mutant, Stale, find_test, locate, markers


@pytest.mark.parametrize("mutant", MUTANTS, ids=[m.name for m in MUTANTS])
def test_mutant_is_not_stale(mutant: Mutant) -> None:
    site = locate(mutant)
    assert site.path.read_text(encoding="utf-8")[site.start : site.end] == mutant.old
    for test in mutant.tests:
        found = find_test(test)
        path, _, name = found.partition("::")
        if name:  # a whole file may be named
            assert re.search(rf"^(async )?def {name}\(", Path(path).read_text(), re.M), f"no test {test}"


def test_every_marker_is_named_by_one_mutant() -> None:
    named = Counter(m.marker for m in MUTANTS)
    assert [k for k, n in named.items() if n > 1] == []
    assert sorted(set(markers()) - set(named)) == []  # a marker no mutant names would mislead a reader


def _tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    markers.cache_clear()
    return root


GUARDED = "def f(x):\n    # guard: a-check\n    if x > 3:\n        raise ValueError\n"
CHECK = Mutant("a check", "a-check", "if x > 3:", "if False:", ("tests/x/test_m.py::test_it",))


def test_a_marker_is_found_wherever_its_module_moved(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"myrm_tui/deep/room/m.py": GUARDED, "tests/y/test_m.py": "def test_it():\n"})
    site = locate(CHECK, root)
    assert site.path == root / "myrm_tui/deep/room/m.py"
    assert GUARDED[site.start : site.end] == "if x > 3:"
    assert find_test(CHECK.tests[0], root) == "tests/y/test_m.py::test_it"


def test_a_snippet_is_searched_only_just_after_its_marker(tmp_path: Path) -> None:
    far = GUARDED.replace("    if x > 3:", "    y = 1\n" * 3 + "    if x > 3:")
    root = _tree(tmp_path, {"myrm_tui/m.py": far})
    with pytest.raises(Stale, match="snippet found 0 times"):
        locate(CHECK, root)
    _tree(tmp_path, {"myrm_tui/m.py": GUARDED, "myrm_tui/n.py": GUARDED})
    with pytest.raises(Stale, match="found 2 times"):
        locate(CHECK, root)


def test_a_test_named_twice_under_tests_is_not_guessed(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"tests/a/test_m.py": "def test_it():\n", "tests/b/test_n.py": "def test_it():\n"})
    with pytest.raises(Stale, match="2 files"):
        find_test(CHECK.tests[0], root)


def test_a_name_no_protection_holds_is_refused_not_run_as_the_whole_suite(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A marker id given for a name chose no mutant, and pytest given no test ids ran every test (a
    quarter of an hour on the shared machine, twice this round)."""
    assert protections.main(["stdin-a-message-is-bounded"]) == 2
    assert "no protection's name holds" in capsys.readouterr().out
