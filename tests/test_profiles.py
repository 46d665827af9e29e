"""The hypothesis profile `make test` runs (``tests/conftest.py``)."""

from __future__ import annotations

from hypothesis import settings


def test_the_ci_profile_is_repeatable_and_never_fails_an_example_for_its_time() -> None:
    """A fixed sequence of examples, no stored ones, and no deadline: on a loaded machine an example that
    took over 200 ms once failed the run as flaky (``test_tokens``' first example builds an encoding)."""
    ci = settings.get_profile("ci")
    assert (ci.derandomize, ci.database, ci.deadline) == (True, None, None)
