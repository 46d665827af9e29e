"""Prefix-caching simulation: cached tokens = the longest common prefix with an earlier request.

Requests are seen as sequences of segments (tool definitions, system prompt, then one segment a
message), each a (fingerprint, tokens) pair. A trie per cache key holds every prefix seen, so a
lookup costs O(segments). Granularity is one segment: a request that differs from an earlier one
inside a message caches up to that message's start (real providers cache to a 128-token block
inside it — the simulation is slightly pessimistic, never optimistic).

Two policies:
- ``automatic`` (OpenAI, DeepSeek...): any prefix of at least ``min_tokens`` seen before is read.
- ``explicit`` (Anthropic): only prefixes ending at a ``cache_control`` breakpoint are written;
  a request reads the longest written prefix that it shares (with ``lookback``, only one ending at most
  that many segments before one of its own breakpoints: Anthropic looks back about 20 blocks), and writes
  its own breakpoints. Tokens after its last breakpoint are neither read nor written (billed as plain
  input).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

Segment = tuple[str, int]


@dataclass
class CacheResult:
    input_tokens: int
    cached_tokens: int  # read from cache
    cache_write_tokens: int = 0  # written to cache (explicit policy)

    @property
    def uncached_tokens(self) -> int:
        return self.input_tokens - self.cached_tokens


@dataclass
class _Node:
    children: dict[str, _Node] = field(default_factory=dict)
    written: bool = False  # explicit policy: a breakpoint was written at this node


class PrefixCacheSimulator:
    def __init__(
        self, policy: str = "automatic", min_tokens: int = 1024, lookback: int | None = None
    ) -> None:
        if policy not in ("automatic", "explicit"):
            raise ValueError(f"unknown cache policy {policy!r}")
        self.policy = policy
        self.min_tokens = min_tokens
        self.lookback = lookback
        self._roots: dict[str, _Node] = {}

    def reset(self, key: str | None = None) -> None:
        if key is None:
            self._roots.clear()
        else:
            self._roots.pop(key, None)

    def request(self, key: str, segments: Sequence[Segment], breakpoints: Sequence[int] = ()) -> CacheResult:
        """Account one request; ``breakpoints`` are segment indices carrying ``cache_control``."""
        root = self._roots.setdefault(key, _Node())
        total = sum(n for _, n in segments)
        node, depth_tokens, cached = root, 0, 0
        path: list[_Node] = []
        marks = sorted(breakpoints)
        for i, (fp, n) in enumerate(segments):
            child = node.children.get(fp)
            if child is None:
                break
            node = child
            depth_tokens += n
            path.append(node)
            if self.policy == "automatic" or (node.written and self._in_reach(i, marks)):
                cached = depth_tokens
        if cached < self.min_tokens:
            cached = 0
        # Insert this request's prefixes.
        node, running = root, 0
        write_upto = 0
        for i, (fp, n) in enumerate(segments):
            node = node.children.setdefault(fp, _Node())
            running += n
            if self.policy == "explicit" and i in marks and running >= self.min_tokens:
                node.written = True
                write_upto = running
        written = max(write_upto - cached, 0) if self.policy == "explicit" else 0
        return CacheResult(total, cached, written)

    def _in_reach(self, index: int, marks: Sequence[int]) -> bool:
        """Whether a written prefix ending at segment ``index`` is found from one of ``marks``."""
        if self.lookback is None:
            return True
        return any(0 <= b - index <= self.lookback for b in marks)


def fingerprint(obj: Any) -> str:
    return hashlib.blake2b(
        json.dumps(obj, sort_keys=True, ensure_ascii=False, default=str).encode(), digest_size=12
    ).hexdigest()
