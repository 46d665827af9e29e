"""The app's stylesheet, with its parsed CSS kept for the whole process.

Textual parses every CSS source again for each ``App`` (its cache of parsed rules belongs to the app's
stylesheet): each app after the first in a process (every TUI test of a test worker) paid ~15 ms of CPU,
7 % of its start, re-parsing the same widgets' ``DEFAULT_CSS`` and the same files. Parsed rules depend on
the source, where it was read from, its priority and scope (the key Textual's own cache uses) and on the
CSS variables (the theme's colours): the cache is kept per set of variables, so a theme change still
parses afresh.
"""

from __future__ import annotations

from textual.cache import LRUCache
from textual.css.model import RuleSet
from textual.css.stylesheet import Stylesheet

# Room for every source the app and its screens bring (~60); Textual's own per-app cache holds 64.
RULES_PER_THEME = 256
THEMES_KEPT = 4  # sets of variables kept (a theme's own, and a few switched to)

_caches: LRUCache[frozenset[tuple[str, str]], LRUCache[tuple[object, ...], list[RuleSet]]] = LRUCache(
    THEMES_KEPT
)


def _rules_cache(variables: dict[str, str]) -> LRUCache[tuple[object, ...], list[RuleSet]]:
    key = frozenset(variables.items())
    cache = _caches.get(key)
    if cache is None:
        cache = _caches[key] = LRUCache(RULES_PER_THEME)
    return cache


class ProcessStylesheet(Stylesheet):
    """A ``Stylesheet`` whose parsed rules are shared with every other one of the process that has the
    same variables (parsed rules are never changed after parsing: Textual reuses them across re-parses)."""

    def __init__(self, *, variables: dict[str, str] | None = None) -> None:
        super().__init__(variables=variables)
        self._parse_cache = _rules_cache(self._variables)

    def set_variables(self, variables: dict[str, str]) -> None:
        # Textual empties the cache it holds: this one's own, not the one other apps share.
        self._parse_cache = LRUCache(1)
        super().set_variables(variables)
        self._parse_cache = _rules_cache(variables)
