"""Token accounting with a per-message cache, so a turn costs O(new messages).

Counts use tiktoken (o200k_base by default, the encoding of current OpenAI models; close enough for
other providers' budgeting). The encoding files come from litellm's bundled copy (see ``offline``).
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterable, Sequence
from typing import Any

from myrm_tui.context.types import Message
from myrm_tui.offline import configure_offline_env

MESSAGE_OVERHEAD = 4  # role + separators, as OpenAI's cookbook counts them
REQUEST_OVERHEAD = 3
IMAGE_TOKENS = 765  # a 1024x1024 image at "high" detail on OpenAI; a fair flat budget for any provider
# Texts longer than this are estimated (4 chars/token) rather than encoded: encoding a multi-megabyte
# blob costs hundreds of milliseconds and those blobs never reach the model unshortened anyway.
EXACT_LIMIT_CHARS = 400_000

TEXT_CACHE_MIN_CHARS = 256
TEXT_CACHE_SIZE = 2_048
# Message objects counted lately, by identity: a request's budget checks count the same view many times
# over (millions of calls in a long replay), and hashing its content for the keyed cache each time was
# most of the counting. Bounded: the entries keep their messages alive.
SEEN_SIZE = 4_096

# ``joined``: a text's chunks, split after a newline where no token can span the split. tiktoken's
# pre-tokenizer (o200k and cl100k) cuts the text into pieces, each encoded on its own; a piece takes in a
# newline only at its end, and runs on past it only into more newlines or ``\r`` (``\s*[\r\n]+``) or, after
# punctuation, into ``/`` (o200k's ``[\r\n/]*``: ``.\n/``). So after a newline followed by spaces or tabs and
# then a character that is no white space and no ``/``, the pieces of the two sides are the pieces of the
# whole, and their counts add up (tests/context/test_tokens.py checks it over generated texts).
# guard: a-chunk-starts-where-no-token-spans-the
_CHUNK = re.compile(r"(?<=\n)(?=[ \t]*[^\s/])")
_CHUNK_START = re.compile(r"[ \t]*[^\s/]")
# A 128K window's view holds some 3,600 Record lines (400 messages); at about 200 bytes an entry (the
# line and its count) the cache stays under 2 MB.
CHUNK_CACHE_SIZE = 8_192

_encodings: dict[str, Any] = {}
_lock = threading.Lock()


CALL_OVERHEAD = 8


def get_encoding(name: str = "o200k_base") -> Any:
    with _lock:
        enc = _encodings.get(name)
        if enc is None:
            configure_offline_env()
            import tiktoken

            enc = tiktoken.get_encoding(name)
            drop_rank_copies()
            _encodings[name] = enc
        return enc


def drop_rank_copies() -> None:
    """Every loaded tiktoken encoding keeps, beside the Rust tables that encode, a Python dict of all its
    merge ranks that only pickling an unregistered encoding reads (registered ones pickle by name): ~29
    MB of idle memory for o200k_base, ~8 MB for the cl100k_base litellm loads. Dropped."""
    import tiktoken.registry

    for enc in list(tiktoken.registry.ENCODINGS.values()):
        enc._mergeable_ranks = {}


def _parts_hash(parts: Any) -> int:
    """Content parts (text, image urls) or thinking blocks, by their strings: each str caches its hash, so
    a multi-megabyte image url is not read again for every count."""
    out: list[Any] = []
    for p in parts:
        if not isinstance(p, dict):
            out.append(str(p))
            continue
        for v in p.values():
            out.append(v.get("url") if isinstance(v, dict) else v)
    return hash(tuple(x if isinstance(x, (str, int, float, type(None))) else repr(x) for x in out))


class TokenCounter:
    """Counts tokens of text, messages and requests; message counts are cached by message id."""

    def __init__(self, encoding: str = "o200k_base") -> None:
        self._enc = get_encoding(encoding)
        self._cache: dict[tuple[str, int, int, int], int] = {}
        # Recent texts: a new tool output is counted by the filter, then as a message, then by the budget
        # checks — encoding dominates a request that compacts nothing. Keyed by the string (hash cached).
        self._texts: dict[str, int] = {}
        self._seen: dict[int, tuple[Message, int]] = {}
        self._chunks: dict[str, int] = {}  # ``joined``'s chunks
        # history(): (length counted, its last message, tokens of all but the first)
        self._history: tuple[int, Message, int] | None = None

    def schemas(self, schemas: Sequence[dict[str, Any]]) -> int:
        """Tokens of the tool schemas a request carries, counted one way for the live agent and the bench."""
        return self.text(json.dumps(list(schemas), ensure_ascii=False)) if schemas else 0

    def text(self, text: str) -> int:
        if not text:
            return 0
        if len(text) > EXACT_LIMIT_CHARS:
            return len(text) // 4
        if len(text) < TEXT_CACHE_MIN_CHARS:
            return len(self._enc.encode_ordinary(text))
        hit = self._texts.get(text)
        if hit is None:
            hit = self._texts[text] = len(self._enc.encode_ordinary(text))
            if len(self._texts) > TEXT_CACHE_SIZE:
                self._texts.pop(next(iter(self._texts)), None)
        return hit

    def joined(self, text: str) -> int:
        """``text(text)``, for a text of many lines counted again and again with some lines changed (a
        summary block the fit renders at several budgets, compaction after compaction): the sum of its
        chunks' counts (``_CHUNK``), each chunk encoded once."""
        if len(text) > EXACT_LIMIT_CHARS or len(text) < TEXT_CACHE_MIN_CHARS:
            return self.text(text)
        n = self._texts.get(text)
        if n is None:
            n = self._texts[text] = sum(map(self._chunk, _CHUNK.split(text)))
            if len(self._texts) > TEXT_CACHE_SIZE:  # the block sent is counted again as a message
                self._texts.pop(next(iter(self._texts)), None)
        return n

    def _chunk(self, part: str) -> int:
        hit = self._chunks.get(part)
        if hit is None:
            hit = self._chunks[part] = len(self._enc.encode_ordinary(part))
            if len(self._chunks) > CHUNK_CACHE_SIZE:
                self._chunks.pop(next(iter(self._chunks)), None)
        return hit

    def count_lines(self, lines: Iterable[str]) -> None:
        """Each of ``lines`` counted ahead as the chunk it makes in a ``joined`` text, followed by another
        line (a message's Record lines, when it enters the view: the compaction finds them counted)."""
        for line in lines:
            if _CHUNK_START.match(line):
                self._chunk(line + "\n")

    @staticmethod
    def _key(msg: Message) -> tuple[str, int, int, int] | None:
        # Keyed by id *and* everything counted: ids are stable, but two sessions (or benchmark conversations)
        # may reuse a pipeline-made id such as "summary-1", and a step may derive the same id twice with
        # different arguments (the fit step's ever tighter cuts of one call). str hashes are cached by
        # Python, so this is cheap.
        if not msg.id:
            return None
        body = msg.content
        content = hash(body) if isinstance(body, str) else _parts_hash(body) if body else 0
        calls = hash(tuple((c.id, c.name, c.arguments) for c in msg.tool_calls)) if msg.tool_calls else 0
        extra = (
            hash((msg.reasoning, _parts_hash(msg.thinking_blocks)))
            if msg.reasoning or msg.thinking_blocks
            else 0
        )
        return (msg.id, content, calls, extra)

    def remember(self, msg: Message, tokens: int) -> None:
        """A count made before (stored with the message when it was appended): a reopened long session's
        first request does not tokenize its whole history again (seconds at 10,000 messages)."""
        key = self._key(msg)
        if key is not None and tokens > 0:
            self._cache[key] = tokens

    def message(self, msg: Message) -> int:
        # Messages are frozen values, so an object counted once keeps its count; the ``is`` check is
        # what makes a reused id() (a collected message) a miss.
        seen = self._seen.get(id(msg))
        if seen is not None and seen[0] is msg:
            return seen[1]
        n = self._count(msg)
        self._seen[id(msg)] = (msg, n)
        if len(self._seen) > SEEN_SIZE:
            self._seen.pop(next(iter(self._seen)), None)
        return n

    def _count(self, msg: Message) -> int:
        key = self._key(msg)
        if key is not None:
            hit = self._cache.get(key)
            if hit is not None:
                return hit
        n = MESSAGE_OVERHEAD + self._content(msg.content)
        for call in msg.tool_calls:
            # The id is sent with every call, and so is its framing (type, function, the quoting).
            n += self.text(call.name) + self.text(call.arguments) + self.text(call.id) + CALL_OVERHEAD
        if msg.reasoning:
            n += self.text(msg.reasoning)
        for block in msg.thinking_blocks:  # signed thinking sent back (Anthropic); the signature too
            n += self.text(str(block.get("thinking") or block.get("data") or "")) + 40
        if key is not None:
            self._cache[key] = n
        return n

    def messages(self, msgs: Iterable[Message]) -> int:
        return REQUEST_OVERHEAD + sum(self.message(m) for m in msgs)

    def history(self, msgs: Sequence[Message]) -> int:
        """``messages(msgs)`` for a history that grows by appends (the stored one, counted on every
        request): counted on from where the last call ended when the message it ended at is still in its
        place, so a request costs O(new messages), not O(session). The first message is counted each time
        (the system prompt in force may replace the stored one)."""
        n = len(msgs)
        if n == 0:
            return REQUEST_OVERHEAD
        memo = self._history
        k, tail = 1, 0
        # guard: the-stored-historys-count-goes-on-from
        if memo is not None and 1 < memo[0] <= n and msgs[memo[0] - 1] is memo[1]:
            k, tail = memo[0], memo[2]
        tail += sum(self.message(m) for m in msgs[k:])
        if n > 1:
            self._history = (n, msgs[n - 1], tail)
        return REQUEST_OVERHEAD + self.message(msgs[0]) + tail

    def _content(self, content: Any) -> int:
        if content is None:
            return 0
        if isinstance(content, str):
            return self.text(content)
        n = 0
        for part in content:
            if part.get("type") == "text":
                n += self.text(str(part.get("text", "")))
            elif part.get("type") == "image_url":
                n += IMAGE_TOKENS
        return n
