"""A call's argument shown as one line, whatever its nesting (the approval card, the tool card, errors)."""

from __future__ import annotations

import sys

from hypothesis import given
from hypothesis import strategies as st

from myrm_tui.context.text.call_args import CallArgs


def _nested(depth: int) -> list[object]:
    value: list[object] = []
    for _ in range(depth):
        value = [value]
    return value


@given(depth=st.integers(min_value=0, max_value=sys.getrecursionlimit() * 3))
def test_a_value_nested_at_any_depth_is_shown_as_one_bounded_line(depth: int) -> None:
    """json.dumps and repr both recurse: past the limit each raised, and the card that shows the call
    with them; shown() always gives a line."""
    shown = CallArgs(name="t", raw="", fields={"x": _nested(depth)}).shown("x")
    assert shown and "\n" not in shown and len(shown) <= 120
