"""``myrm sessions --export ID [--json]``: a session as Markdown (or JSON) with every compaction record,
what left the view and its ``vault://`` pointers. Every text is redacted as summaries are (credentials,
PII: ``context.redact``)."""

from __future__ import annotations

import json
import time
from dataclasses import asdict, replace
from typing import Any

from myrm_tui import plain_words
from myrm_tui.context.compaction.record import Compaction, compactions_of
from myrm_tui.context.privacy.redact import redact
from myrm_tui.context.state import message_to_dict
from myrm_tui.context.types import Message
from myrm_tui.store.db import SessionRow, Store

ALL_ROWS = 1_000_000


def _redacted(c: Compaction) -> Compaction:
    return replace(
        c,
        summary=redact(c.summary),
        focus=redact(c.focus),
        left=tuple(replace(i, gist=redact(i.gist)) for i in c.left),
    )


async def load_export(store: Store, row: SessionRow) -> tuple[list[Message], list[Compaction]]:
    messages = await store.load_messages(row.id)
    records = [_redacted(c) for c in compactions_of(await store.metrics(row.id, limit=ALL_ROWS))]
    return messages, records


def to_json(row: SessionRow, messages: list[Message], records: list[Compaction]) -> str:
    def clean(m: Message) -> dict[str, Any]:
        d = message_to_dict(m)
        if isinstance(d.get("content"), str):
            d["content"] = redact(d["content"])
        for call in d.get("tool_calls") or []:
            call["function"]["arguments"] = redact(call["function"]["arguments"])
        return d

    return json.dumps(
        {
            "session": asdict(row),
            "messages": [clean(m) for m in messages],
            "compactions": [c.to_dict() for c in records],
        },
        ensure_ascii=False,
        indent=2,
    )


def to_markdown(row: SessionRow, messages: list[Message], records: list[Compaction]) -> str:
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(row.created_at))
    parent = f" · fork of {row.parent_id}" if row.parent_id else ""
    out = [f"# {row.title}", "", f"session `{row.id}` · {row.model} · {when}{parent}", ""]
    after: dict[int, list[Compaction]] = {}
    for c in records:
        after.setdefault(c.seq, []).append(c)
    for i, m in enumerate(messages, 1):
        out += _message(m)
        for c in after.pop(i, []):
            out += _compaction(c)
    for cs in after.values():  # a record past the copied history (should not happen): still exported
        for c in cs:
            out += _compaction(c)
    return "\n".join(out).rstrip() + "\n"


def _message(m: Message) -> list[str]:
    head = m.role + (f" ({m.name})" if m.name else "") + (" · synthetic" if m.synthetic else "")
    lines = [f"## {head}", ""]
    if m.text.strip():
        fence = m.role in ("tool", "system") or m.synthetic
        body = plain_words.text(redact(m.text))
        lines += ["````text", body, "````"] if fence else [body]
    for c in m.tool_calls:
        lines.append(f"→ tool call `{c.name}` `{redact(c.arguments)}`")
    return [*lines, ""]


def _compaction(c: Compaction) -> list[str]:
    lines = [
        f"### ⟲ Compaction: {c.headline()}",
        "",
        f"- reason: {c.reason} · saved {c.saved:,} tokens · cache cost {c.cache_cost:,} tokens",
    ]
    if c.archive_uri:
        lines.append(f"- view before: `{c.archive_uri}`")
    if c.summary:
        lines += ["", "Summary:", "", "````text", plain_words.text(c.summary), "````"]
    if c.left:
        lines += ["", f"What left the view ({len(c.left)}):", ""]
        lines += [f"- {i.role} · {i.tokens:,} tokens · {i.gist} — `{i.pointer}`" for i in c.left]
    return [*lines, ""]
