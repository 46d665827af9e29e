"""The transcript's mounted window (``chat_window.Window``): whatever is added, inserted or removed, the
window keeps the same items mounted, within the list, and says how many are above and below it."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from myrm_tui.app.widgets.chat_window import MARGIN, PAGE, SLACK, WINDOW, Window

_op = st.one_of(
    st.tuples(st.just("tail"), st.just(0)),
    st.tuples(st.just("around"), st.integers(0, 400)),
    st.tuples(st.just("older"), st.integers(1, 60)),
    st.tuples(st.just("newer"), st.integers(1, 60)),
    st.tuples(st.just("insert"), st.integers(0, 400)),
    st.tuples(st.just("remove"), st.integers(0, 400)),
    st.tuples(st.just("append"), st.just(0)),
    st.tuples(st.just("trim"), st.just(0)),
)


@given(total=st.integers(0, 200), ops=st.lists(_op, max_size=40))
def test_the_window_keeps_its_items_mounted_through_any_change(
    total: int, ops: list[tuple[str, int]]
) -> None:
    """A model of the list and of what is mounted (item ids): after each change the window's span names
    exactly the mounted items, in order, within the list."""
    items = list(range(total))
    fresh = total
    w = Window()
    w.set(*Window.tail(total))
    mounted = items[w.lo : w.hi]
    for op, n in ops:
        if op == "tail":
            w.set(*Window.tail(len(items)))
            mounted = items[w.lo : w.hi]
        elif op == "around" and items:
            w.set(*Window.around(n % len(items), len(items)))
            mounted = items[w.lo : w.hi]
            assert items[n % len(items)] in mounted
        elif op == "older":
            lo, hi = w.older(n)
            assert hi == w.lo and w.lo - lo == min(n, w.lo)
            mounted = items[lo:hi] + mounted
            w.set(lo, w.hi)
        elif op == "newer":
            lo, hi = w.newer(len(items), n)
            assert lo == w.hi and hi - lo == min(n, len(items) - w.hi)
            mounted = mounted + items[lo:hi]
            w.set(w.lo, hi)
        elif op == "insert":
            at = n % (len(items) + 1)
            items.insert(at, fresh)
            if w.inserted(at):
                mounted.append(fresh)  # the caller mounts it (its place is checked below)
            fresh += 1
        elif op == "remove" and items:
            at = n % len(items)
            gone = items.pop(at)
            assert w.removed(at) == (gone in mounted)
            mounted = [i for i in mounted if i != gone]
        elif op == "append":
            w.set(*Window.tail(len(items)))  # live output: the window reaches the end first
            items.append(fresh)
            w.set(w.lo, len(items))
            mounted = items[w.lo : w.hi]
            fresh += 1
        elif op == "trim":  # live output, the view following it: the oldest past WINDOW are unmounted
            lo = w.trimmed()
            assert w.lo <= lo <= w.hi and w.hi - lo <= WINDOW + SLACK
            assert lo == w.lo or w.hi - lo == WINDOW  # nothing, or down to WINDOW at once
            mounted = [i for i in mounted if i not in items[w.lo : lo]]
            w.set(lo, w.hi)
        assert 0 <= w.lo <= w.hi <= len(items)
        assert items[w.lo : w.hi] == sorted(mounted, key=items.index)


def test_a_session_opens_at_its_newest_items_and_a_match_far_away_gets_a_margin() -> None:
    assert Window.tail(1000) == (1000 - WINDOW, 1000)
    assert Window.tail(3) == (0, 3)
    assert Window.around(500, 1000) == (500 - MARGIN, 500 + MARGIN + 1)
    assert Window.around(2, 5) == (0, 5)


def test_the_lines_above_and_below_count_what_is_not_mounted() -> None:
    w = Window()
    w.set(100, 140)
    assert w.span == (100, 140) and w.holds(100) and not w.holds(140)
    assert w.earlier_text() == "↑ 100 earlier items (scroll up or Home)"
    assert w.newer_text(1_140) == "↓ 1,000 newer items (scroll down or End)"
    assert w.older() == (100 - PAGE, 100) and w.newer(1_140) == (140, 140 + PAGE)
    w.set(0, 140)
    assert w.older() == (0, 0) and w.newer(140) == (140, 140)  # nothing before the first, after the last


@given(heights=st.lists(st.integers(0, 30), max_size=120), fill=st.integers(0, 200))
def test_a_session_opens_with_the_fewest_newest_items_that_fill_the_view(
    heights: list[int], fill: int
) -> None:
    """``tail`` with the items' heights mounts the newest items, at most ``WINDOW``, that reach ``fill``
    rows, and no more: without its oldest item the window would fall short."""
    total = len(heights)
    lo, hi = Window.tail(total, heights.__getitem__, fill)
    assert hi == total and max(0, total - WINDOW) <= lo <= total
    rows = sum(heights[lo:hi])
    if lo > max(0, total - WINDOW):  # not capped: it reaches the fill
        assert rows >= fill
    if lo < total:  # and its oldest item was needed to reach it
        assert rows - heights[lo] < fill
