"""``ArtifactVault``: where every removed or shortened original goes, addressed by ``vault://`` URIs.

Writes are synchronous and land in memory first (the pipeline never awaits I/O); whoever owns the
store drains ``pending`` into SQLite after each pipeline run. Reads fall back to an async loader for
entries written in earlier runs. Content is addressed by hash, so storing the same output twice is free.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from myrm_tui.context.text.call_args import parse, whole_text

VAULT_SCHEME = "vault://"


# What a vault entry holds: a tool's output (filtered, truncated or spilled), an archived view (JSON
# messages), an image, a subagent's result, an MCP result, a hook's output.
VaultKind = Literal["tool_output", "archive", "media", "subagent", "mcp", "hook_output"]


@dataclass(frozen=True, slots=True)
class VaultEntry:
    uri: str
    content: str
    kind: VaultKind
    tool_name: str = ""
    created_at: float = 0.0
    meta: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def size(self) -> int:
        return len(self.content.encode("utf-8", "replace"))


Loader = Callable[[str], Awaitable[VaultEntry | None]]


class ArtifactVault:
    def __init__(self, namespace: str = "local", loader: Loader | None = None) -> None:
        self.namespace = namespace
        self._entries: dict[str, VaultEntry] = {}
        self.pending: list[VaultEntry] = []
        self._loader = loader

    def put(self, content: str, kind: VaultKind, tool_name: str = "", **meta: Any) -> str:
        digest = hashlib.sha256(content.encode("utf-8", "replace")).hexdigest()[:16]
        uri = f"{VAULT_SCHEME}{self.namespace}/{digest}"
        if uri not in self._entries:
            entry = VaultEntry(uri, content, kind, tool_name, time.time(), dict(meta))
            self._entries[uri] = entry
            self.pending.append(entry)
        return uri

    def get_cached(self, uri: str) -> VaultEntry | None:
        return self._entries.get(uri)

    def original(self, uri: object, kind: VaultKind) -> VaultEntry | None:
        """The entry a shortened message points to (its ``meta["vault_uri"]``), if it is of ``kind``."""
        entry = self._entries.get(str(uri)) if uri else None
        return entry if entry is not None and entry.kind == kind else None

    async def get(self, uri: str) -> VaultEntry | None:
        entry = self._entries.get(uri)
        if entry is None and self._loader is not None:
            entry = await self._loader(uri)
            if entry is not None:
                self._entries[uri] = entry
        return entry

    def drain(self) -> list[VaultEntry]:
        out, self.pending = self.pending, []
        return out

    def entries(self) -> list[VaultEntry]:
        return list(self._entries.values())

    def __contains__(self, uri: str) -> bool:
        return uri in self._entries


def slice_lines(text: str, line_range: str | None) -> str:
    """Lines ``"a:b"`` (1-based, inclusive; either side may be empty) of ``text``, numbered."""
    lines = text.splitlines()
    if not line_range:
        start, end = 1, len(lines)
    else:
        a, _, b = line_range.partition(":")
        try:
            start = int(a) if a.strip() else 1
            end = int(b) if b.strip() else len(lines)
        except ValueError as exc:
            raise ValueError(f"line_range must look like '100:200', got {line_range!r}") from exc
    start = max(1, start)
    end = min(len(lines), end)
    width = len(str(max(end, 1)))
    return "\n".join(f"{i:>{width}}\t{lines[i - 1]}" for i in range(start, end + 1))


def readable(entry: VaultEntry) -> str:
    """The text of ``entry`` as the vault pane shows it and ``file_read_tool`` numbers it (one rendering,
    so a ``vault://…`` line range points at what the user sees). Archives of messages are stored as JSON:
    they become one block per message (role, text, tool calls, tool results); anything else is unchanged."""
    if entry.kind != "archive" or entry.content[:1] not in "[{":
        return entry.content
    try:
        data = json.loads(entry.content)
    except ValueError:
        return entry.content
    if isinstance(data, dict) and set(data) == {
        "content",
        "tool_calls",
    }:  # one message shrunk in an emergency
        data = [{"role": "message", **data}]
    if not isinstance(data, list) or not all(isinstance(d, dict) and d.get("role") in _ROLES for d in data):
        return entry.content  # an archived tool output that happens to be JSON
    return messages_text([block_parts(d) for d in data]) or ""


BlockParts = tuple[bool, tuple[str, ...], str]


def block_parts(d: object) -> BlockParts:
    """What ``readable`` shows of one archived message ``d`` (its JSON read) but its number: whether it is a
    message at all, its head's names after the number, and the block's lines after its head (each with the
    line break before it)."""
    if not isinstance(d, dict) or d.get("role") not in _ROLES:
        return False, (), ""
    head = [str(d["role"])]
    if d.get("role") == "tool":
        head += [d.get("name") or "", d.get("tool_call_id") or ""]
    if d.get("synthetic"):
        head.append("(synthetic)")
    lines: list[str] = []
    content = d.get("content")
    if isinstance(content, list):  # multimodal parts: text kept, media named
        content = "\n".join(
            str(p.get("text", "")) if p.get("type") == "text" else f"[{p.get('type', 'part')}]"
            for p in content
            if isinstance(p, dict)
        )
    if d.get("reasoning_content"):
        lines += ["(reasoning)", *str(d["reasoning_content"]).splitlines()]
    if content:
        lines += str(content).splitlines()
    for call in d.get("tool_calls") or []:
        fn = call.get("function") or {}
        lines.append(f"→ tool call {fn.get('name', '?')} ({call.get('id', '')})")
        lines += _arguments(fn.get("arguments"))
    return True, tuple(h for h in head if h), "".join("\n" + ln for ln in lines)


def messages_text(parts: Sequence[BlockParts]) -> str | None:
    """An archive of messages as ``readable`` shows it, from each one's ``block_parts``: one block per
    message, numbered from 1; None when one of them is no message."""
    if not all(ok for ok, _, _ in parts):
        return None
    return "\n\n".join(
        f"─── {' · '.join((f'#{n}', *head))} ───{body}" for n, (_, head, body) in enumerate(parts, 1)
    )


_ROLES = frozenset({"system", "user", "assistant", "tool", "message"})


def _arguments(raw: Any) -> list[str]:
    """Tool-call arguments one per line (multi-line strings indented below their name)."""
    if not isinstance(raw, str):  # an archive written by hand: the object itself
        raw = json.dumps(raw, ensure_ascii=False)
    args = parse("", raw)
    if not args.ok:  # the text as the model sent it (invalid JSON, a list, a string...)
        return [f"    {line}" for line in whole_text(raw).splitlines()]
    out: list[str] = []
    for key, value in args.fields.items():
        text = whole_text(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))
        parts = text.splitlines() or [""]
        if len(parts) == 1:
            out.append(f"    {key}: {parts[0]}")
        else:
            out += [f"    {key}:", *(f"      {p}" for p in parts)]
    return out
