"""The transcript's search (``chat_search.Matches``): as-you-type narrowing finds what a full scan
finds; steps wrap, starting from the newest match."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from myrm_tui.app.widgets.chat_render import Item
from myrm_tui.app.widgets.chat_search import Matches


@settings(max_examples=60, deadline=None)
@given(
    texts=st.lists(st.text(alphabet="abAB c", max_size=12), max_size=30),
    words=st.lists(st.text(alphabet="abAB c", min_size=1, max_size=5), min_size=1, max_size=3),
    added=st.integers(min_value=0, max_value=6),
)
def test_search_as_you_type_finds_what_a_full_scan_finds(
    texts: list[str], words: list[str], added: int
) -> None:
    """Each key narrows the last search; whatever is typed (each word key by key, and an item that
    matches added in between), the matches are the items a case-insensitive scan of every item finds,
    oldest first."""
    items = [Item("user", t) for t in texts]
    matches = Matches()
    typed = [w[:k] for w in words for k in range(1, len(w) + 1)]
    for k, needle in enumerate(typed):
        if k == added:
            items.append(Item("notice", words[-1].swapcase()))
            matches.changed()  # what every change of the items does
        before = matches.hits
        was, now = matches.find(items, needle)
        low = needle.lower()
        want = [it for it in items if low in it.text.lower()]
        assert tuple(was) == before and matches.hits == tuple(now) == tuple(want)
        assert matches.count == len(want) and all(matches.is_hit(it) for it in want)


def test_steps_start_at_the_newest_match_and_wrap() -> None:
    items = [Item("user", "apple"), Item("assistant", "pear"), Item("user", "Apple pie")]
    matches = Matches()
    assert matches.step(-1) == 0 and matches.current is None  # nothing searched: no match
    assert len(matches.find(items, "APPLE")[1]) == 2 and matches.current is None
    assert matches.step(-1) == 2 and matches.current is items[2]
    assert matches.step(-1) == 1 and matches.current is items[0]
    assert matches.step(-1) == 2  # wraps
    assert matches.step(1) == 1 and matches.current is items[0]
    matches.clear()
    assert matches.count == 0 and not matches.is_hit(items[0]) and matches.current is None


def test_a_changed_item_is_searched_again_not_only_the_last_matches() -> None:
    """Narrowing reuses the last matches only while no item changed: a reply that streams in the
    searched word is found by the next key."""
    items = [Item("user", "ab"), Item("assistant", "")]
    matches = Matches()
    matches.find(items, "a")
    items[1].text = "abc"
    matches.changed()
    matches.find(items, "ab")
    assert matches.hits == (items[0], items[1])
