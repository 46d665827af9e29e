"""Pure translations between myrm's agent events and stored messages and the Agent Client Protocol's
session updates. No I/O here: ``server.py`` sends what these return."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlparse
from urllib.request import url2pathname

from acp import schema as s
from acp.helpers import (
    text_block,
    tool_content,
    update_agent_message_text,
    update_agent_thought_text,
    update_user_message_text,
)

from myrm_tui.agent.images import image_mime
from myrm_tui.attachments import FILE_BUDGET, TOTAL_BUDGET, file_block
from myrm_tui.context.filters.shell import strip_ansi
from myrm_tui.context.text.call_args import call_args as read_args
from myrm_tui.context.text.call_args import whole_text
from myrm_tui.context.types import Message, ToolCall
from myrm_tui.safe_text import sanitize

# Which ACP kind each of myrm's tools is (editors pick icons and follow-along by it); MCP tools are "other".
TOOL_KINDS: dict[str, s.ToolKind] = {
    "file_read_tool": "read",
    "file_edit_tool": "edit",
    "bash": "execute",
    "bash_output": "execute",
    "grep": "search",
    "glob": "search",
    "history_search": "search",
    "session_notes": "think",
    "subagent": "think",
    "web_fetch": "fetch",
}

# Shown output is cut for the editor's card; the whole output stays in myrm's history and vault.
MAX_SHOWN_OUTPUT = 20_000


def shown(text: str) -> str:
    """Text the editor shows (a reply, a title, a command's output): colour codes dropped, every other
    control, bidi override and lone surrogate made inert, as the TUI shows it. An editor that draws in a
    terminal (Toad, Emacs, Neovim) would otherwise obey an escape sequence a model or a file holds;
    a graphical one showed ``[31m`` around a command's coloured output. Raw input and output, and diffs,
    stay as they are: they are data, not display."""
    # guard: acp-shown-text-is-inert
    return sanitize(strip_ansi(text))


def tool_kind(name: str) -> s.ToolKind:
    return TOOL_KINDS.get(name, "other")


def call_args(call: ToolCall) -> dict[str, Any]:
    """The call's arguments as a dict; a model's malformed JSON becomes ``{"raw": text}``. Read through
    the one reader of a call's arguments (any text, JSON nested past the recursion limit too), and only
    what can be sent on: the editor gets JSON."""
    # guard: acp-reads-arguments-through-call-args
    parsed = read_args(call)
    if not parsed.ok:
        return {"raw": whole_text(call.arguments)}
    try:
        # JSON allows a lone surrogate ("\ud800"), UTF-8 does not: the message to the editor would not encode
        text = json.dumps(dict(parsed.fields), allow_nan=False, ensure_ascii=False)
        return dict(json.loads(whole_text(text)))
    except (ValueError, RecursionError):
        return {"raw": whole_text(call.arguments)}


def tool_title(call: ToolCall) -> str:
    """One line an editor shows on the call's card: the tool and what it acts on."""
    args = read_args(call)
    subject = next(
        (args.text(k) for k in ("command", "path", "pattern", "query", "url", "task") if args.text(k)), ""
    )
    subject = " ".join(subject.split())
    if len(subject) > 120:
        subject = subject[:119] + "…"
    return shown(f"{call.name} {subject}".strip())


def tool_locations(call: ToolCall, workspace: Path) -> list[s.ToolCallLocation] | None:
    """The files a call reads or edits, as absolute paths (the editor's follow-along)."""
    args = call_args(call)
    raw = args.get("paths") or ([args["path"]] if args.get("path") else [])
    if not isinstance(raw, list) or call.name not in ("file_read_tool", "file_edit_tool"):
        return None
    out = []
    for p in raw:
        if isinstance(p, str) and p:
            line = args.get("offset") if isinstance(args.get("offset"), int) else None
            out.append(s.ToolCallLocation(path=str((workspace / p).resolve()), line=line))
    return out or None


def start_call(call: ToolCall, workspace: Path) -> s.ToolCallStart:
    return s.ToolCallStart(
        session_update="tool_call",
        tool_call_id=call.id,
        title=tool_title(call),
        kind=tool_kind(call.name),
        status="pending",
        locations=tool_locations(call, workspace),
        raw_input=call_args(call),
    )


def edit_diff(call: ToolCall, workspace: Path) -> s.FileEditToolCallContent | None:
    """An edit's change as ACP diff content: the editor shows it as a diff, not as text."""
    if call.name != "file_edit_tool":
        return None
    args = call_args(call)
    path, new = args.get("path"), args.get("new_string")
    if not isinstance(path, str) or not isinstance(new, str):
        return None
    old = args.get("old_string")
    return s.FileEditToolCallContent(
        type="diff",
        path=str((workspace / path).resolve()),
        old_text=old if isinstance(old, str) and not args.get("create") else None,
        new_text=new,
    )


def finish_call(call: ToolCall, result: Message, workspace: Path) -> s.ToolCallProgress:
    """The call's end: completed or failed, with its output (cut for the card) and an edit's diff."""
    text = result.text
    if len(text) > MAX_SHOWN_OUTPUT:
        text = text[:MAX_SHOWN_OUTPUT] + f"\n… [{len(result.text) - MAX_SHOWN_OUTPUT:,} more characters]"
    failed = bool(result.meta.get("is_error"))
    content: list[Any] = []
    diff = None if failed else edit_diff(call, workspace)
    if diff is not None:
        content.append(diff)
    if text:
        content.append(tool_content(text_block(shown(text))))
    return s.ToolCallProgress(
        session_update="tool_call_update",
        tool_call_id=call.id,
        status="failed" if failed else "completed",
        content=content or None,
        raw_output={"output": text},
    )


def history_updates(messages: Sequence[Message], workspace: Path) -> Iterator[Any]:
    """A stored session as the updates an editor would have seen live (``session/load``): the user's
    words, the replies, and each tool call with its result. Pipeline-made messages are left out."""
    calls: dict[str, ToolCall] = {}
    for m in messages:
        if m.synthetic or m.meta.get("synthetic") or m.role == "system":
            continue
        if m.role == "user":
            if m.text:
                yield update_user_message_text(shown(m.text))
        elif m.role == "assistant":
            if m.reasoning:
                yield update_agent_thought_text(shown(m.reasoning))
            if m.text:
                yield update_agent_message_text(shown(m.text))
            for c in m.tool_calls:
                calls[c.id] = c
                yield start_call(c, workspace)
        elif m.role == "tool" and m.tool_call_id in calls:
            yield finish_call(calls.pop(m.tool_call_id), m, workspace)
    for c in calls.values():  # a call whose result was never stored (a kill mid-call): closed, not pending
        yield s.ToolCallProgress(session_update="tool_call_update", tool_call_id=c.id, status="failed")


def prompt_text(blocks: Sequence[Any], workspace: Path) -> tuple[str, list[tuple[str, bytes]]]:
    """A ``session/prompt``'s content as myrm's message: text blocks joined; an embedded resource attached
    as ``@file`` attaches a file (a ``<file>`` block within the same budget, then named); a resource link
    named (the agent can read it);
    images returned apart, as (mime type, bytes)."""
    parts: list[str] = []
    files: list[str] = []
    images: list[tuple[str, bytes]] = []
    used = 0  # characters of embedded files attached
    for b in blocks:
        if isinstance(b, s.TextContentBlock):
            parts.append(b.text)
        elif isinstance(b, s.ImageContentBlock):
            try:
                data = base64.b64decode(b.data, validate=True)
            except ValueError:
                parts.append("[an image that could not be decoded was left out]")
                continue
            # The type its bytes show, not the one declared: the file is named by it, and a type no
            # model takes (SVG, a "image/../x") was written as "image-1.x" and named to the model, unread
            mime = image_mime(data)
            if mime is None:
                declared = sanitize(" ".join(b.mime_type.split())[:40])
                parts.append(f"[an image ({declared}) that is not a PNG, JPEG, GIF or WebP was left out]")
            else:
                images.append((mime, data))
        elif isinstance(b, s.EmbeddedResourceContentBlock):
            res = b.resource
            shown = _shown_path(res.uri, workspace)
            room = min(FILE_BUDGET, TOTAL_BUDGET - used)
            if isinstance(res, s.TextResourceContents) and room > 0:
                # within @file's budget: an editor embeds a whole file (Zed, for each @-mention), and a
                # large one had the message refused ("over the limit for one message")
                # guard: acp-embedded-text-within-the-attachment-budget
                block, _ = file_block(shown, res.text, room, f"{len(res.text):,} characters")
                used += min(len(res.text), room)
                files.append(block)
            elif isinstance(res, s.TextResourceContents):  # past the message's budget: named, to be read
                parts.append(f"@{shown}")
            else:
                parts.append(f"[attached binary resource {shown} ({res.mime_type or 'unknown type'})]")
        elif isinstance(b, s.ResourceContentBlock):
            parts.append(f"@{_shown_path(b.uri, workspace)}")
        else:  # audio: no model here hears it
            parts.append(f"[{getattr(b, 'type', 'unknown')} content is not supported and was left out]")
    return " ".join(p for p in parts if p) + "".join(files), images


def _shown_path(uri: str, workspace: Path) -> str:
    """A ``file://`` URI inside the workspace as a relative path (as ``@file`` names it); others as given."""
    if not uri.startswith("file://"):
        return uri
    path = Path(url2pathname(urlparse(uri).path))  # percent-escapes decoded: %20 is a space
    try:
        return str(path.resolve().relative_to(workspace.resolve()))
    except ValueError:
        return str(path)
