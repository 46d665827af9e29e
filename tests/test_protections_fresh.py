"""Every mutant of ``make protections`` still finds its snippet (exactly once) and names tests that exist.

``make protections`` runs pytest once per mutant, too slow for ``make test``; this check is instant and
fails the moment code moves under a protection, so the list cannot go stale unnoticed."""

from __future__ import annotations

import pytest

from tests.protections import MUTANTS, ROOT


@pytest.mark.parametrize("mutant", MUTANTS, ids=[m.name for m in MUTANTS])
def test_mutant_is_not_stale(mutant) -> None:  # type: ignore[no-untyped-def]
    source = (ROOT / mutant.path).read_text()
    assert source.count(mutant.old) == 1, f"{mutant.name}: snippet found {source.count(mutant.old)} times"
    for test in mutant.tests:
        path, _, name = test.partition("::")
        assert (ROOT / path).is_file(), f"{mutant.name}: no file {path}"
        if name:  # a whole file may be named
            assert f"def {name}(" in (ROOT / path).read_text(), f"{mutant.name}: no test {test}"
