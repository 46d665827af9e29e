"""Search over the transcript: the items whose text contains the needle (case-insensitive), mounted or
not, and which of them is the current one. ``ChatLog`` marks their widgets and brings a match on screen."""

from __future__ import annotations

from collections.abc import Sequence

from myrm_tui.app.widgets.chat_render import Item


class Matches:
    def __init__(self) -> None:
        self.needle = ""
        self._hits: list[Item] = []
        self._hit_ids: set[int] = set()  # id() of the matching items
        self._current = -1
        self._version = 0  # bumped when an item is added or changes: a narrowed search is then redone
        self._searched = (-1, "")  # (version, needle) of the last search

    @property
    def hits(self) -> tuple[Item, ...]:
        """The matching items, oldest first."""
        return tuple(self._hits)

    @property
    def count(self) -> int:
        return len(self._hits)

    @property
    def current(self) -> Item | None:
        """The match the last step landed on (None before a step, or with no match)."""
        return self._hits[self._current] if 0 <= self._current < len(self._hits) else None

    def is_hit(self, item: Item) -> bool:
        return id(item) in self._hit_ids

    def changed(self) -> None:
        """An item was added or its text changed: the next search scans every item again."""
        self._version += 1

    def clear(self) -> None:
        """Another conversation: nothing matches until the next search."""
        self._hits, self._hit_ids = [], set()

    def find(self, items: Sequence[Item], needle: str) -> tuple[list[Item], list[Item]]:
        """Search ``items`` for ``needle``; returns the matches before and after (their widgets' marks
        change). The first step up lands on the newest match."""
        before = self._hits
        self.needle = needle
        low = needle.lower()
        # As you type, each key narrows the last search: only its matches can match the longer text.
        version, last = self._searched
        pool = self._hits if last and low.startswith(last) and version == self._version else items
        self._hits = [it for it in pool if low in it.low] if low else []
        self._searched = (self._version, low)
        self._hit_ids = {id(it) for it in self._hits}
        self._current = len(self._hits)
        return before, self._hits

    def step(self, step: int) -> int:
        """Move ``step`` matches (wrapping); returns the current match's 1-based number (0: none)."""
        if not self._hits:
            return 0
        self._current = (self._current + step) % len(self._hits)
        return self._current + 1
