"""What every importer of another agent's session shares: the error and result types, reading a file's
JSON lines (gzipped or not, regular files only), and the builder that pairs calls with results."""

from __future__ import annotations

import errno
import gzip
import io
import json
import os
import re
import stat
import zlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any

from myrm_tui.context.types import Message, ToolCall

# Text read from one file, unpacked: past it the file is refused. A gzip of a few hundred kilobytes can
# unpack to gigabytes (a decompression bomb), and a line is read whole; the longest sessions of the
# agents read here are tens of megabytes.
MAX_IMPORT_BYTES = 256 << 20

NO_RESULT = (
    "[no result was recorded for this call: the other agent's session ended or moved on before it returned]"
)


class ForeignError(ValueError):
    """A file that is not another agent's session (Claude Code, Codex, Hermes), or cannot be read."""


class TooLarge(ForeignError):
    """A file whose text, unpacked, passes ``MAX_IMPORT_BYTES``."""


@dataclass
class ForeignSession:
    agent: str  # "claude-code" | "codex" | "hermes"
    id: str
    messages: list[Message]
    workspace: str = ""
    title: str = ""
    dropped: dict[str, int] = field(
        default_factory=dict
    )  # what was left out, by kind (for the one-line report)


def json_objects(path: Path) -> Iterator[dict[str, Any]]:
    """The file's JSON objects, one a line; ``.gz`` files are read through gzip."""
    with _reading(path) as f:
        for n, line in enumerate(f, 1):
            if line.strip() and isinstance(obj := _parse(line, f"{path}:{n}"), dict):
                yield obj


def read_json(path: Path) -> dict[str, Any] | None:
    """The one JSON object a ``.json`` (or ``.json.gz``) file holds; None when it holds something else."""
    with _reading(path) as f:
        obj = _parse(f.read(), str(path))
    return obj if isinstance(obj, dict) else None


@contextmanager
def _reading(path: Path) -> Iterator[IO[str]]:
    """``path`` open as text; a file that cannot be read (missing, a cut or corrupt gzip): a ForeignError."""
    try:
        with open_text(path) as f:
            yield f
    except (OSError, EOFError, zlib.error) as exc:  # gzip.BadGzipFile is an OSError
        error = TooLarge if getattr(exc, "errno", None) == errno.EFBIG else ForeignError
        raise error(f"{path}: {getattr(exc, 'strerror', None) or exc}") from None


def _parse(text: str, where: str) -> Any:
    """``text`` as JSON, its lone surrogates replaced; a ForeignError saying ``where`` when it is not."""
    value = loads(text)
    if value is NOT_JSON:
        raise ForeignError(f"{where}: not JSON")
    return _no_lone_surrogates(value) if isinstance(value, dict) and "\\u" in text else value


NOT_JSON = object()


def loads(text: str) -> Any:
    """``text`` as JSON, or ``NOT_JSON``: a file from elsewhere may hold anything, arrays nested thousands
    deep too (a RecursionError, not a ValueError)."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return NOT_JSON


def open_text(path: Path, errors: str = "replace") -> IO[str]:
    """``path`` (gunzipped when it ends in ``.gz``) as text, at most ``MAX_IMPORT_BYTES`` of it (one more
    byte read is an ``OSError``, EFBIG); a file that is not a regular one is an ``OSError`` too."""
    # A FIFO or a device named like a transcript (a folder walked for *.jsonl) would block the open or
    # never end: only a regular file is read, judged on the descriptor opened without blocking.
    # guard: foreign-only-regular-files-are-read
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        raw = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    if path.suffix != ".gz":
        return io.TextIOWrapper(_capped(raw), encoding="utf-8", errors=errors)
    unzipped = gzip.GzipFile(fileobj=raw, mode="rb")
    unzipped.myfileobj = raw  # type: ignore[assignment]  # closed with it, as when gzip opens a path
    return io.TextIOWrapper(_capped(unzipped), encoding="utf-8", errors=errors)


def _capped(stream: io.BufferedIOBase) -> io.BufferedReader:
    # guard: foreign-reading-stops-at-the-bound
    return io.BufferedReader(_Capped(stream, MAX_IMPORT_BYTES))


class _Capped(io.RawIOBase):
    """``inner``'s bytes, up to ``limit``: one more is an ``OSError`` (EFBIG) saying how much is too much."""

    def __init__(self, inner: io.BufferedIOBase, limit: int) -> None:
        self._inner, self._limit, self._seen = inner, limit, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        n = self._inner.readinto(buffer)
        self._seen += n
        if self._seen > self._limit:
            raise OSError(errno.EFBIG, f"larger than {self._limit >> 20} MB unpacked: not read")
        return int(n)

    def close(self) -> None:
        self._inner.close()
        super().close()


_SURROGATE = re.compile("[\ud800-\udfff]")


def _no_lone_surrogates(obj: dict[str, Any]) -> dict[str, Any]:
    """``obj`` with each lone surrogate (an escape like ``\\ud800`` JSON allows but UTF-8 cannot hold, so
    the store could not write it) replaced by U+FFFD; pairs were joined by the parser and are kept."""
    text = json.dumps(obj, ensure_ascii=False)
    try:
        text.encode()
    except UnicodeEncodeError:
        fixed: dict[str, Any] = json.loads(_SURROGATE.sub("\ufffd", text))
        return fixed
    return obj


def as_dict(value: Any) -> dict[str, Any]:
    """``value`` when it is an object, else an empty one: a field of the wrong type is read as absent."""
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def json_text(value: Any) -> str:
    """``value`` as JSON text: a string as it is (it is the JSON already), nothing as ``{}``."""
    return (
        value
        if isinstance(value, str)
        else json.dumps(value if value is not None else {}, ensure_ascii=False)
    )


def arguments(value: Any) -> str:
    """A call's arguments as the wire format takes them: a JSON string, ``{}`` when there are none."""
    return json_text(value) or "{}"


def plain_text(parts: list[dict[str, Any]]) -> str:
    """The text of a content's parts (its images left out)."""
    return "\n".join(p.get("text", "") for p in parts if p.get("type") == "text")


# -- pairing calls and results -----------------------------------------------------------------------


class Builder:
    """Messages in order, keeping every tool call answered and every result attached to its call."""

    def __init__(self) -> None:
        self.out: list[Message] = []
        self.open: dict[str, ToolCall] = {}  # calls of the last assistant message not yet answered
        self.dropped: dict[str, int] = {}

    def drop(self, what: str) -> None:
        self.dropped[what] = self.dropped.get(what, 0) + 1

    def _close_open(self) -> None:
        for call in self.open.values():
            self.out.append(
                Message(
                    role="tool",
                    content=NO_RESULT,
                    tool_call_id=call.id,
                    name=call.name,
                    meta={"is_error": True},
                )
            )
        if self.open:
            self.drop("calls without a result")
        self.open = {}

    def user(self, content: str | list[dict[str, Any]], meta: dict[str, Any] | None = None) -> None:
        if not content:
            return
        self._close_open()
        if self.out and self.out[-1].role == "user" and isinstance(content, str) and not meta:
            last = self.out[-1]
            if isinstance(last.content, str) and not last.meta:
                self.out[-1] = Message(role="user", content=f"{last.content}\n\n{content}")
                return
        self.out.append(Message(role="user", content=content, meta=meta or {}))

    def assistant(
        self, text: str, calls: Iterable[ToolCall] = (), reasoning: str = "", same_reply: bool = False
    ) -> None:
        """``same_reply``: this continues the last assistant message (one reply split over lines), so text
        after its calls joins it rather than closing them unanswered."""
        calls = tuple(calls)
        if not (text or calls or reasoning):
            return
        k = len(self.out)
        while same_reply and k > 0 and self.out[k - 1].role == "tool":
            k -= 1
        if same_reply and 0 < k < len(self.out) and self.out[k - 1].role == "assistant":
            # A line of a reply whose first results were written before it (Claude Code writes each block
            # a line, as it streams): it joins the reply, ahead of those results.
            self._extend(k - 1, text, calls, reasoning)
            return
        last = self.out[-1] if self.out else None
        if last is not None and last.role == "assistant" and not self.open and not last.tool_calls:
            # One reply split over lines (Claude Code) or items (Codex): joined.
            text = "\n\n".join(t for t in (last.text, text) if t)
            reasoning = "\n\n".join(r for r in (last.reasoning or "", reasoning) if r)
            self.out.pop()
        elif last is not None and last.role == "assistant" and self.open and (same_reply or not text):
            # More parallel calls (or text after them) of the same reply.
            calls = (*last.tool_calls, *calls)
            text = "\n\n".join(t for t in (last.text, text) if t)
            reasoning = "\n\n".join(r for r in (last.reasoning or "", reasoning) if r)
            self.out.pop()
        else:
            self._close_open()
        # A provider rejects a reply whose calls share an id (one result could answer only one): the
        # first call with an id is kept.
        unique = {c.id: c for c in reversed(calls)}
        if len(unique) < len(calls):
            self.drop("tool calls with a repeated id")
            calls = tuple(c for c in calls if unique.get(c.id) is c)
        self.out.append(
            Message(role="assistant", content=text or None, tool_calls=calls, reasoning=reasoning or None)
        )
        self.open.update({c.id: c for c in calls})

    def _extend(self, at: int, text: str, calls: tuple[ToolCall, ...], reasoning: str) -> None:
        reply = self.out[at]
        known = {c.id for c in reply.tool_calls}
        fresh = tuple(c for c in calls if c.id not in known)
        if len(fresh) < len(calls):
            self.drop("tool calls with a repeated id")
        joined = "\n\n".join(r for r in (reply.reasoning or "", reasoning) if r)
        content = "\n\n".join(t for t in (reply.text, text) if t)
        self.out[at] = replace(
            reply, content=content or None, tool_calls=(*reply.tool_calls, *fresh), reasoning=joined or None
        )
        self.open.update({c.id: c for c in fresh})

    def result(self, call_id: str, text: str | list[dict[str, Any]], is_error: bool = False) -> None:
        call = self.open.pop(call_id, None)
        if call is None:
            self.drop("results without a call")
            return
        meta = {"is_error": True} if is_error else {}
        self.out.append(Message(role="tool", content=text, tool_call_id=call_id, name=call.name, meta=meta))

    def rollback(self, turns: Any) -> None:
        """Drop the last ``turns`` turns of the user and all that followed them: the other agent's undo
        (Codex's ``thread_rolled_back``), after which its model no longer saw them."""
        starts = [i for i, m in enumerate(self.out) if m.role == "user" and not m.meta]
        # guard: foreign-rollback-a-positive-count
        if not (isinstance(turns, int) and not isinstance(turns, bool) and turns > 0 and starts):
            return
        self.out = self.out[: starts[-min(turns, len(starts))]]
        self.open = {}  # the calls left open were made after the last user turn: gone with it
        self.drop("turns the other agent rolled back")

    def done(self) -> list[Message]:
        self._close_open()
        # A reply that was only reasoning (its text never came) has nothing a provider would take.
        return [m for m in self.out if m.role != "assistant" or m.content or m.tool_calls]


# Members that hold what a block says (a search hit's title and address, a page's or a run's text); not
# its kind, its encrypted or base64 payload, or bookkeeping (ids, ages, media types).
_READABLE = (
    "title",
    "url",
    "source",
    "text",
    "content",
    "data",
    "stdout",
    "stderr",
    "error_code",
    "tool_name",
)


def readable(value: Any, depth: int = 0) -> list[str]:
    """The strings a block of a kind no reader knows holds for a reader, in order; a base64 source's
    data (an image, a PDF) left out. Bounded in depth: a file may nest arrays thousands deep."""
    if depth > 16:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for v in value for s in readable(v, depth + 1)]
    if not isinstance(value, dict) or value.get("type") == "base64":
        return []
    out: list[str] = []
    for key in _READABLE:
        v = value.get(key)
        out += [v] if isinstance(v, str) else readable(v, depth + 1)
    return out


def imported_summary(agent: str, text: str) -> tuple[str, dict[str, Any]]:
    name = {"claude-code": "Claude Code", "codex": "Codex CLI", "hermes": "Hermes Agent"}[agent]
    return (
        f"[A summary {name} wrote when it compacted this session's earlier context]\n{text}",
        {"imported_summary": agent},
    )


def stem(path: Path) -> str:
    return path.name.removesuffix(".gz").removesuffix(".jsonl").removesuffix(".json")


def title_of(messages: list[Message]) -> str:
    first = next((m.text for m in messages if m.role == "user" and not m.meta), "")
    return " ".join(first.split())[:60] or "imported session"
