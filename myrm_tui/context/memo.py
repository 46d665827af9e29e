"""``Memo``: one session's results of pure functions of message text, kept between requests.

Messages are append-only, so most of what a request reads of a message (the words and fact-like tokens
the ledger looks up, a folded message's gist, the facts an assistant message stated) was read on an
earlier request already. A function decorated ``@memoized`` keeps its results in the memo of the session
whose pipeline run is under way (``active``; outside a run it is just called). The key of an entry is the
function and its *whole* input (the strings themselves, not a hash of them: a dict look-up compares
them), so a different input can never hit a stale entry, and a hit returns what the call would.

The memo lives on ``ContextState`` (never stored), so it goes with the session. It is bounded: at most
``MEMO_ENTRIES`` entries and ``MEMO_CHARS`` characters of their keys' strings (a result is of the order
of its input: a lower-cased copy, the tokens of a text), the oldest dropped first — a session's oldest
messages are the first folded away.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import ParamSpec, TypeVar, cast

P = ParamSpec("P")
T = TypeVar("T")
A = TypeVar("A")

# A 500-message session at 32K ends with 7,400 entries holding 7.4 MB (tracemalloc): this bound is about
# 1,300 messages' worth, some 20 MB at most; what goes first is the oldest, folded away already.
MEMO_ENTRIES = 20_000
MEMO_CHARS = 16_000_000


def _chars(key: Hashable) -> int:
    if isinstance(key, str):
        return len(key)
    if not isinstance(key, tuple):
        return 0
    # A loop, not a generator per level: every miss of a compaction's thousands of look-ups sizes its key.
    n = 0
    for x in key:
        if isinstance(x, str):
            n += len(x)
        elif isinstance(x, tuple):
            n += _chars(x)
    return n


class Memo:
    """A bounded map from (function, input) to the function's result."""

    def __init__(self, entries: int = MEMO_ENTRIES, chars: int = MEMO_CHARS) -> None:
        self.max_entries = entries
        self.max_chars = chars
        self.chars = 0
        self._d: dict[Hashable, tuple[object, int]] = {}

    def get(self, key: Hashable, compute: Callable[[], T]) -> T:
        hit = self._d.get(key)
        if hit is not None:
            return cast(T, hit[0])
        return self.put(key, compute())

    def put(self, key: Hashable, value: T) -> T:
        """``value`` kept under ``key`` (replacing what it held); the oldest dropped past the bounds."""
        size = _chars(key)
        old = self._d.pop(key, None)
        if old is not None:
            self.chars -= old[1]
        self._d[key] = (value, size)
        self.chars += size
        while len(self._d) > self.max_entries or (self.chars > self.max_chars and len(self._d) > 1):
            _, n = self._d.pop(next(iter(self._d)))
            self.chars -= n
        return value

    def __len__(self) -> int:
        return len(self._d)


_ACTIVE: ContextVar[Memo | None] = ContextVar("myrm_context_memo", default=None)


@contextmanager
def active(memo: Memo) -> Iterator[None]:
    """``@memoized`` functions keep their results in ``memo`` within this block (one pipeline run)."""
    token = _ACTIVE.set(memo)
    try:
        yield
    finally:
        _ACTIVE.reset(token)


@contextmanager
def suspended() -> Iterator[None]:
    """No memo within this block: for reads of text no later request asks about again (the rows of a file
    view being cut), which would only crowd the memo and keep garbage alive for the collector to walk."""
    token = _ACTIVE.set(None)
    try:
        yield
    finally:
        _ACTIVE.reset(token)


def memoized(
    key: Callable[..., Hashable] | None = None,
) -> Callable[[Callable[P, T]], Callable[P, T]]:
    """``fn`` kept in the active session's memo. ``fn`` must be pure; ``key(*args)``, when given, must hold
    everything of the arguments that ``fn`` reads (a message's role, name, text and calls), and the
    arguments themselves are the key otherwise."""

    def deco(fn: Callable[P, T]) -> Callable[P, T]:
        @functools.wraps(fn)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
            memo = _ACTIVE.get()
            if memo is None or kwargs:
                return fn(*args, **kwargs)
            # guard: the-memo-key-is-the-whole-input
            k = key(*args) if key is not None else args
            # ``get`` inlined: a compaction makes thousands of these look-ups.
            hit = memo._d.get((wrapper, k))
            if hit is not None:
                return cast(T, hit[0])
            return memo.put((wrapper, k), fn(*args))  # type: ignore[call-arg]  # no kwargs here

        wrapper.uncached = fn  # type: ignore[attr-defined]  # tests compare the two
        return wrapper

    return deco


def each(fn: Callable[[A], T], args: Iterable[A]) -> list[T]:
    """``[fn(x) for x in args]`` for ``fn`` ``@memoized`` without a ``key``, of one argument: the active
    memo found once, not per call (a fit looks up the shape of each of thousands of lines)."""
    memo = _ACTIVE.get()
    if memo is None:
        return [fn(x) for x in args]
    raw: Callable[[A], T] = fn.uncached  # type: ignore[attr-defined]
    get, put = memo._d.get, memo.put
    out: list[T] = []
    for x in args:
        # guard: memo-each-keys-as-the-wrapper-does
        k = (fn, (x,))  # the key ``fn``'s wrapper makes
        hit = get(k)
        out.append(cast(T, hit[0]) if hit is not None else put(k, raw(x)))
    return out
