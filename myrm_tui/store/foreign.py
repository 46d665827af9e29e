"""Sessions recorded by other agents, read as myrm messages: Claude Code transcripts
(``~/.claude/projects/<cwd>/<uuid>.jsonl``), Codex CLI rollouts (``~/.codex/sessions/…/rollout-*.jsonl``) and
Hermes Agent's sessions and trajectories (``foreign_hermes``).

Neither format has a formal spec; this reads them as their files are laid out (December 2026):

- **Claude Code**: one event a line (``type`` user / assistant / system / summary / …) linked by
  ``parentUuid``. The conversation is the chain that ends at the last main-line event (``isSidechain``
  events are a subagent's and are left out; a rewind's abandoned branch is not on the chain), plus the
  branches parallel calls grow off it: the other lines of a reply on the chain (same ``message.id``) and the
  results of its calls, in file order. A subagent's own file (``<session>/subagents/agent-*.jsonl``, every
  line a sidechain) is read as that subagent's conversation. A
  ``compact_boundary`` restarts the chain (``logicalParentUuid`` links over it); the next user message is
  Claude Code's own summary (``isCompactSummary``). An assistant reply is split over lines, one content block
  a line, sharing ``message.id``: they are joined.
- **Codex**: ``{"type", "payload"}`` lines; ``response_item`` carries the model's items (message, reasoning,
  function_call / function_call_output, local_shell_call, custom_tool_call), ``compacted`` Codex's summary;
  ``session_meta`` the folder. ``event_msg`` lines repeat the items for Codex's UI and are skipped, but for
  the user's words in a rollout whose ``response_item`` lines hold none (Codex Desktop, 2026).

What comes over: the user's words, replies, tool calls paired with their results (parallel calls too), images,
and the other agent's compaction summaries, marked as such. Its system prompts and instructions are its own
and are left out. Reasoning is kept as text (``reasoning``; the pipeline sends it only to a model that
takes it); signed thinking blocks are dropped: a signature verifies only with the model that wrote it. A call
whose result was never recorded gets an error result saying so, and a result whose call is missing is dropped,
so the history is one a provider accepts."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from myrm_tui.context.types import ToolCall
from myrm_tui.store.foreign_hermes import layout, read_hermes
from myrm_tui.store.foreign_read import (
    NO_RESULT,
    Builder,
    ForeignError,
    ForeignSession,
    TooLarge,
    arguments,
    as_dict,
    as_list,
    imported_summary,
    json_objects,
    loads,
    plain_text,
    read_json,
    stem,
    title_of,
)

__all__ = [  # the readers shared with foreign_hermes live in foreign_read; these are what callers import
    "NO_RESULT",
    "ForeignError",
    "ForeignSession",
    "import_session",
    "is_transcript",
    "kind_of",
    "read_claude",
    "read_codex",
    "read_session",
    "read_sessions",
    "sessions_in",
]


def kind_of(path: Path) -> str | None:
    """ "claude-code", "codex", "hermes" or None, from the file's first lines (a ``.json`` file: its
    object)."""
    try:
        if path.name.removesuffix(".gz").endswith(".json"):
            return "hermes" if layout(path, read_json(path)) else None
        for k, obj in enumerate(json_objects(path)):
            if k == 0 and layout(path, obj):
                return "hermes"
            if "payload" in obj and obj.get("type") in (
                "session_meta",
                "response_item",
                "event_msg",
                "turn_context",
            ):
                return "codex"
            if obj.get("type") in ("user", "assistant", "summary", "system") and (
                "uuid" in obj or "leafUuid" in obj
            ):
                return "claude-code"
            if k >= 20:
                break
    except ForeignError:
        return None
    return None


def read_sessions(path: Path) -> list[ForeignSession]:
    """Every conversation in the file: one, but a Hermes trajectory file holds one a line."""
    kind = kind_of(path)
    if kind == "codex":
        return [read_codex(path)]
    if kind == "claude-code":
        return [read_claude(path)]
    if kind == "hermes":
        return read_hermes(path)
    if path.name.removesuffix(".gz").endswith(".json"):
        read_json(path)  # a file that cannot be read says why
    else:
        try:  # a file too large says so (kind_of read as much as this: its first lines)
            for k, _ in enumerate(json_objects(path)):
                if k >= 20:
                    break
        except TooLarge:
            raise
        except ForeignError:
            pass
    raise ForeignError(f"{path}: not a Claude Code transcript, a Codex rollout or a Hermes Agent session")


def read_session(path: Path) -> ForeignSession:
    """The file's one conversation; a file of several (Hermes trajectories) is refused, not cut short."""
    found = read_sessions(path)
    # guard: foreign-several-conversations-refused
    if len(found) != 1:
        raise ForeignError(f"{path}: holds {len(found)} conversations, not one (myrm bench reads them all)")
    return found[0]


_SUFFIXES = (".jsonl", ".jsonl.gz", ".json", ".json.gz")


def sessions_in(path: Path) -> list[Path]:
    """The session files at ``path``: the file itself, or every ``*.jsonl`` and ``*.json`` (or gzipped)
    below a folder that is another agent's, subagents' files included. A Hermes session log is left out
    when its session file lies beside it (the file holds the whole conversation, the log only its end), and
    a Hermes request dump when either does (the dump is the conversation up to a refused request: a bench
    would count it twice)."""
    if not path.is_dir():
        return [path]
    found = sorted(p for s in _SUFFIXES for p in path.rglob(f"*{s}") if kind_of(p) is not None)
    names = set(found)
    sessions = {(p.parent, stem(p).removeprefix("session_")) for p in found}
    return [
        p
        for p in found
        if not (
            # guard: foreign-hermes-log-beside-its-session-file
            p.name.removesuffix(".gz").endswith(".jsonl")
            and {p.parent / f"session_{stem(p)}.json", p.parent / f"session_{stem(p)}.json.gz"} & names
        )
        and not (
            # guard: foreign-hermes-dump-beside-its-session
            p.name.startswith("request_dump_")
            and any(
                folder == p.parent and sid and stem(p).startswith(f"request_dump_{sid}_")
                for folder, sid in sessions
            )
        )
    ]


def is_transcript(path: Path) -> bool:
    """Another agent's session file (``.jsonl`` or ``.json``, or gzipped)."""
    return path.name.endswith(_SUFFIXES) and kind_of(path) is not None


# -- Claude Code -----------------------------------------------------------------------------------


def _claude_chain(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The main line: from the last main-line event back to the root, over compact boundaries, then the
    lines parallel calls branch off it (a reply's other lines, its calls' results), in file order."""
    by_uuid = {e["uuid"]: e for e in events if isinstance(e.get("uuid"), str)}
    main = [e for e in events if isinstance(e.get("uuid"), str) and not e.get("isSidechain")]
    if not main:  # a subagent's own file: its lines are all sidechain, and they are its conversation
        main = [e for e in events if isinstance(e.get("uuid"), str)]
    if not main:
        return []
    chain: list[dict[str, Any]] = []
    seen: set[str] = set()
    cur: dict[str, Any] | None = main[-1]
    while cur is not None and cur["uuid"] not in seen:
        seen.add(cur["uuid"])
        chain.append(cur)
        parent = cur.get("parentUuid") or cur.get("logicalParentUuid")
        prev = cur
        cur = by_uuid.get(parent) if isinstance(parent, str) else None
        if cur is None and prev.get("subtype") == "compact_boundary":
            # The boundary's logical parent is not always written (December 2026: often it is not): the
            # session went on from the main line's last line before it.
            # (A boundary off the main line, a sidechain's, has no main line before it.)
            at = next((i for i, e in enumerate(main) if e is prev), 0)
            cur = main[at - 1] if at > 0 else None
    # Parallel calls: Claude Code writes each call of a reply as its own line and each result as a child
    # of its call's line, so the chain runs through one of them and the others hang off it.
    # Ids are compared as read_claude reads them (a message id only when a string, a call's as str()): an id
    # of another JSON type (a list is unhashable) must neither raise nor link lines read_claude keeps apart.
    replies = {_reply_id(e) for e in chain if e.get("type") == "assistant"} - {None}
    for e in main:
        if e["uuid"] not in seen and e.get("type") == "assistant" and _reply_id(e) in replies:
            seen.add(e["uuid"])
    calls = {
        str(b.get("id"))
        for e in main
        if e["uuid"] in seen and e.get("type") == "assistant"
        for b in as_list(as_dict(e.get("message")).get("content"))
        if isinstance(b, dict) and b.get("type") == "tool_use"
    }
    for e in main:
        if (
            e["uuid"] not in seen
            and e.get("type") == "user"
            and any(
                isinstance(b, dict) and b.get("type") == "tool_result" and str(b.get("tool_use_id")) in calls
                for b in as_list(as_dict(e.get("message")).get("content"))
            )
        ):
            seen.add(e["uuid"])
    return [e for e in main if e["uuid"] in seen]


def _reply_id(event: dict[str, Any]) -> str | None:
    """An assistant line's ``message.id``, which its reply's other lines share; None when not a string."""
    mid = as_dict(event.get("message")).get("id")
    # guard: foreign-reply-id-a-string
    return mid if isinstance(mid, str) else None


def _claude_image(block: dict[str, Any]) -> dict[str, Any] | None:
    src = as_dict(block.get("source"))
    if src.get("type") == "base64" and isinstance(src.get("data"), str):
        return {
            "type": "image_url",
            "image_url": {"url": f"data:{src.get('media_type', 'image/png')};base64,{src['data']}"},
        }
    if src.get("type") == "url" and isinstance(src.get("url"), str):  # a pointer stays a pointer
        return {"type": "image_url", "image_url": {"url": src["url"]}}
    return None


def _stand_in(block: dict[str, Any]) -> dict[str, Any]:
    """A text part saying what a block that could not come over was, so the history shows it was there."""
    src = as_dict(block.get("source"))
    what = " ".join(str(x) for x in (block.get("type"), src.get("media_type") or src.get("type")) if x)
    title = f' "{block["title"]}"' if isinstance(block.get("title"), str) else ""
    return {"type": "text", "text": f"[{what}{title} in the other agent's transcript: not carried over]"}


def _claude_content(blocks: Any) -> str | list[dict[str, Any]]:
    """A tool result's or user message's content: text, or text and images."""
    if isinstance(blocks, str):
        return blocks
    parts: list[dict[str, Any]] = []
    for b in blocks if isinstance(blocks, list) else ():
        if not isinstance(b, dict):
            continue
        if b.get("type") == "text" and isinstance(b.get("text"), str):
            parts.append({"type": "text", "text": b["text"]})
        elif b.get("type") == "image" and (img := _claude_image(b)) is not None:
            parts.append(img)
        elif b.get("type") in ("image", "document"):
            parts.append(_stand_in(b))
    if all(p["type"] == "text" for p in parts):
        return "\n".join(p["text"] for p in parts)
    return parts


def read_claude(path: Path) -> ForeignSession:
    events = list(json_objects(path))
    b = Builder()
    workspace = ""
    sid = stem(path)
    reply: Any = None  # message.id of the last assistant line, while no user line came after it
    for e in _claude_chain(events):
        workspace = workspace or str(e.get("cwd") or "")
        sid = str(e.get("sessionId") or sid)
        if e.get("isSidechain") and isinstance(e.get("agentId"), str):
            sid = f"{sid}/agent-{e['agentId']}"  # a subagent shares its parent's sessionId
        msg: dict[str, Any] = e["message"] if isinstance(e.get("message"), dict) else {}
        content = msg.get("content")
        if e.get("type") == "user":
            if not _only_results(content):
                reply = None  # the user spoke: the next line is a new reply
            if e.get("isCompactSummary"):
                text, meta = imported_summary("claude-code", str(_claude_text(content)))
                b.user(text, meta)
                continue
            blocks = content if isinstance(content, list) else [{"type": "text", "text": content or ""}]
            rest: list[dict[str, Any]] = []
            for blk in blocks:
                if isinstance(blk, dict) and blk.get("type") == "tool_result":
                    b.result(
                        str(blk.get("tool_use_id")),
                        _claude_content(blk.get("content")),
                        bool(blk.get("is_error")),
                    )
                elif isinstance(blk, dict):
                    rest.append(blk)
            if rest and not e.get("isMeta"):
                b.user(_claude_content(rest))
        elif e.get("type") == "assistant":
            texts: list[str] = []
            calls: list[ToolCall] = []
            thinking: list[str] = []
            for blk in content if isinstance(content, list) else [{"type": "text", "text": content or ""}]:
                if not isinstance(blk, dict):
                    continue
                if blk.get("type") == "text" and blk.get("text"):
                    texts.append(str(blk["text"]))
                elif blk.get("type") == "thinking" and blk.get("thinking"):
                    thinking.append(str(blk["thinking"]))
                elif blk.get("type") == "redacted_thinking":
                    b.drop("redacted thinking blocks")
                elif blk.get("type") == "tool_use":
                    args = json.dumps(blk.get("input") or {}, ensure_ascii=False)
                    calls.append(ToolCall(id=str(blk.get("id")), name=str(blk.get("name")), arguments=args))
            mid = _reply_id(e)
            same = mid is not None and mid == reply
            b.assistant("\n\n".join(texts), calls, "\n\n".join(thinking), same_reply=same)
            reply = mid
        elif e.get("type") == "system" and e.get("subtype") == "compact_boundary":
            continue  # the summary follows as a user message
    messages = b.done()
    return ForeignSession("claude-code", sid, messages, workspace, title_of(messages), b.dropped)


def _only_results(content: Any) -> bool:
    blocks = as_list(content)
    return bool(blocks) and all(isinstance(b, dict) and b.get("type") == "tool_result" for b in blocks)


def _claude_text(content: Any) -> str:
    c = _claude_content(content)
    return c if isinstance(c, str) else plain_text(c)


# -- Codex -----------------------------------------------------------------------------------------


def _codex_text(content: Any) -> str | list[dict[str, Any]]:
    if isinstance(content, str):
        return content
    parts: list[dict[str, Any]] = []
    for p in content if isinstance(content, list) else ():
        if not isinstance(p, dict):
            continue
        if p.get("type") in ("input_text", "output_text", "text") and isinstance(p.get("text"), str):
            parts.append({"type": "text", "text": p["text"]})
        elif p.get("type") == "input_image" and isinstance(p.get("image_url"), str):
            parts.append({"type": "image_url", "image_url": {"url": p["image_url"]}})
    if all(p["type"] == "text" for p in parts):
        return "\n".join(p["text"] for p in parts)
    return parts


def _codex_output(output: Any) -> tuple[str, bool]:
    if isinstance(output, dict):  # {"content": ..., "success": bool}
        text = output.get("content")
        return (text if isinstance(text, str) else json.dumps(text, ensure_ascii=False)), output.get(
            "success"
        ) is False
    if isinstance(output, str):
        d = loads(output)  # exec output as a JSON string: {"output": ..., "metadata": {"exit_code": N}}
        if isinstance(d, dict) and "output" in d:
            code = as_dict(d.get("metadata")).get("exit_code")
            return str(d["output"]), bool(code)
        return output, False
    return json.dumps(output, ensure_ascii=False), False


_CODEX_CONTEXT = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions")


def _said(p: dict[str, Any]) -> bool:
    """A ``response_item`` payload that is the user's own words (not Codex's context message)."""
    content = _codex_text(p.get("content"))
    return (
        p.get("type") == "message"
        and p.get("role") == "user"
        and not (isinstance(content, str) and content.lstrip().startswith(_CODEX_CONTEXT))
    )


def read_codex(path: Path) -> ForeignSession:
    b = Builder()
    workspace = ""
    sid = stem(path)
    events = list(json_objects(path))
    # Codex Desktop writes the user's words only as event_msg lines; the CLI writes them twice
    from_events = not any(
        e.get("type") == "response_item" and _said(as_dict(e.get("payload"))) for e in events
    )
    for e in events:
        p: dict[str, Any] = e["payload"] if isinstance(e.get("payload"), dict) else {}
        kind = e.get("type")
        # guard: foreign-codex-words-only-in-ui-events
        if kind == "event_msg" and from_events and p.get("type") == "user_message":
            if isinstance(p.get("message"), str):
                b.user(p["message"])
        elif kind == "session_meta":
            workspace = str(p.get("cwd") or workspace)
            sid = str(p.get("id") or sid)
        elif kind == "compacted":
            text, meta = imported_summary("codex", str(p.get("message") or ""))
            b.user(text, meta)
        elif kind == "response_item":
            t = p.get("type")
            if t == "message":
                role = p.get("role")
                content = _codex_text(p.get("content"))
                if role == "user":
                    if isinstance(content, str) and content.lstrip().startswith(_CODEX_CONTEXT):
                        b.drop("Codex context messages")  # its own environment and instructions
                        continue
                    b.user(content)
                elif role == "assistant":
                    b.assistant(content if isinstance(content, str) else plain_text(content))
                else:
                    b.drop(f"{role} messages")
            elif t == "reasoning":
                summary = "\n".join(
                    str(s.get("text", "")) for s in as_list(p.get("summary")) if isinstance(s, dict)
                )
                if summary:
                    b.assistant("", (), summary)
            elif t in ("function_call", "custom_tool_call"):
                args = p.get("arguments") if t == "function_call" else {"input": p.get("input")}
                b.assistant(
                    "",
                    [ToolCall(id=str(p.get("call_id")), name=str(p.get("name")), arguments=arguments(args))],
                )
            elif t == "local_shell_call":
                action = as_dict(p.get("action"))
                args = json.dumps({"command": action.get("command")}, ensure_ascii=False)
                b.assistant(
                    "", [ToolCall(id=str(p.get("call_id") or p.get("id")), name="shell", arguments=args)]
                )
            elif t in ("function_call_output", "custom_tool_call_output", "local_shell_call_output"):
                text, failed = _codex_output(p.get("output"))
                b.result(str(p.get("call_id")), text, failed)
    messages = b.done()
    return ForeignSession("codex", sid, messages, workspace, title_of(messages), b.dropped)


async def import_session(store: Any, path: Path, model: str, workspace: Path) -> tuple[Any, ForeignSession]:
    """Read ``path`` and store it as a new myrm session (its messages appended in order, one transaction);
    returns the session's row and what was read. The session's folder is the transcript's own when it
    still exists, else ``workspace``."""
    fs = read_session(path)
    if not fs.messages:
        raise ForeignError(f"{path}: no messages to import")
    folder = fs.workspace if fs.workspace and Path(fs.workspace).is_dir() else str(workspace)
    async with store.transaction():
        row = await store.create_session(title=f"{fs.title} (from {fs.agent})", model=model, workspace=folder)
        for m in fs.messages:
            await store.append_message(row.id, replace(m, meta={**m.meta, "imported_from": fs.agent}))
    return row, fs
