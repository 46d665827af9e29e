"""Which of the transcript's items are mounted as widgets: a window ``items[lo:hi]`` over all of them.

A session opens with as many of its newest items mounted as fill two screens, at most ``WINDOW`` (a
10,000-message session opens as fast as a new one: building a widget, its markdown above all, is what
a reopen's time went to); pages of ``PAGE`` items are built as the view reaches an edge; a search
match or the cursor far from the window mounts ``MARGIN`` items each side of it. ``ChatLog`` mounts
and removes the widgets; this keeps the indices straight as items are added, inserted and removed."""

from __future__ import annotations

from collections.abc import Callable

WINDOW = 40  # at most this many items mounted when a session opens
# Live output mounts items at the end; past WINDOW + SLACK mounted, the oldest are unmounted down to WINDOW
# (a page at a time, not an item a turn: each unmount lays the log out again).
SLACK = 25
PAGE = 25  # items built at a time as the view reaches the top
MARGIN = 12  # items mounted each side of a search match that was not mounted


class Window:
    def __init__(self) -> None:
        self._lo = 0  # items[_lo:_hi] are mounted, in order
        self._hi = 0

    @property
    def span(self) -> tuple[int, int]:
        """``(lo, hi)``: ``items[lo:hi]`` are mounted."""
        return self._lo, self._hi

    @property
    def lo(self) -> int:
        return self._lo

    @property
    def hi(self) -> int:
        return self._hi

    def holds(self, index: int) -> bool:
        return self._lo <= index < self._hi

    def set(self, lo: int, hi: int) -> None:
        assert 0 <= lo <= hi, (lo, hi)
        self._lo, self._hi = lo, hi

    # -- ranges to mount ------------------------------------------------------------------------------
    @staticmethod
    def tail(total: int, rows: Callable[[int], int] | None = None, fill: int = 0) -> tuple[int, int]:
        """The newest items: where a session opens and live output goes. With ``rows`` (item index ->
        rows it takes at least) only as many as fill ``fill`` rows, at most ``WINDOW``."""
        lo = max(0, total - WINDOW)
        if rows is None:
            return lo, total
        start, filled = total, 0
        while start > lo and filled < fill:
            start -= 1
            filled += rows(start)
        return start, total

    @staticmethod
    def around(index: int, total: int) -> tuple[int, int]:
        """A window around an item far from the mounted part."""
        return max(0, index - MARGIN), min(total, index + MARGIN + 1)

    def older(self, count: int = PAGE) -> tuple[int, int]:
        """The page before the window (empty at the first item)."""
        return max(0, self._lo - count), self._lo

    def newer(self, total: int, count: int = PAGE) -> tuple[int, int]:
        """The page after the window (empty at the newest item)."""
        return self._hi, min(total, self._hi + count)

    def trimmed(self) -> int:
        """Where the window would start once trimmed to its newest ``WINDOW`` items, or its start as it is
        when it holds no more than ``WINDOW + SLACK``."""
        if self._hi - self._lo <= WINDOW + SLACK:
            return self._lo
        return self._hi - WINDOW

    # -- the item list changed ----------------------------------------------------------------------------
    def inserted(self, at: int) -> bool:
        """An item was inserted at ``at``: the same items stay mounted. True if the new one falls inside
        the window (the caller mounts it)."""
        if at < self._lo:
            self._lo += 1
            self._hi += 1
            return False
        if at <= self._hi:
            self._hi += 1
            return True
        return False

    def removed(self, at: int) -> bool:
        """The item at ``at`` was removed; True if it was mounted (the caller removes its widget)."""
        if at < self._lo:
            self._lo -= 1
            self._hi -= 1
            return False
        if at < self._hi:
            self._hi -= 1
            return True
        return False

    # -- the lines above and below the window -------------------------------------------------------------
    def earlier_text(self) -> str:
        return f"↑ {self._lo:,} earlier items (scroll up or Home)"

    def newer_text(self, total: int) -> str:
        return f"↓ {total - self._hi:,} newer items (scroll down or End)"
