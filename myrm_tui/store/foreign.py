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
  function_call / custom_tool_call / local_shell_call / tool_search_call and their outputs, web_search_call,
  image_generation_call, agent_message), ``compacted`` Codex's summary, ``inter_agent_communication`` another
  agent's message, ``session_meta`` the folder. ``event_msg`` lines repeat the items for Codex's UI and are
  skipped, but for the user's words in a rollout whose ``response_item`` lines hold none (Codex Desktop, 2026)
  and ``thread_rolled_back`` (an undo: the turns it names are left out). Older rollouts are read too: bare
  items after a first line of session meta (to August 2025), and the TypeScript CLI's ``.json``.
- **Claude Code** writes a prompt typed while it was busy as an ``attachment`` (``queued_command``), and the
  calls the API runs itself (``server_tool_use``: web search, web fetch) with their results inside the reply.

Every shape, and what is read or skipped and why: ``bench/foreign/README.md``, "Record shapes".

What comes over: the user's words, replies, tool calls paired with their results (parallel calls too), images,
and the other agent's compaction summaries, marked as such. Its system prompts and instructions are its own
and are left out. Reasoning is kept as text (``reasoning``; the pipeline sends it only to a model that
takes it); signed thinking blocks are dropped: a signature verifies only with the model that wrote it. A call
whose result was never recorded gets an error result saying so, and a result whose call is missing is dropped,
so the history is one a provider accepts."""

from __future__ import annotations

import json
import re
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
    readable,
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
            obj = read_json(path)
            if layout(path, obj):
                return "hermes"
            # guard: foreign-codex-typescript-rollout-read
            if isinstance(as_dict(obj).get("items"), list) and isinstance(as_dict(obj).get("session"), dict):
                return "codex"  # the TypeScript Codex CLI's rollout (spring 2025)
            return None
        for k, obj in enumerate(json_objects(path)):
            if k == 0 and layout(path, obj):
                return "hermes"
            # guard: foreign-codex-bare-rollout-read
            if _is_codex(obj, k == 0):
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
    if not path.exists():  # a mistyped path is not "not a transcript" (what the reading below would say)
        raise ForeignError(f"{path}: no such file")
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
        # guard: foreign-claude-unknown-block-read
        elif said := "\n".join(readable(b)):
            # a kind read nowhere else (a search result, a loaded tool's name): its readable text
            parts.append({"type": "text", "text": said})
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
            mid = _reply_id(e)
            # guard: foreign-claude-api-error-notice-left-out
            if e.get("isApiErrorMessage"):
                # Claude Code's own notice ("API Error: …", model "<synthetic>"): no model said it
                b.drop("API error notices")
                continue
            _claude_reply(b, content, same_reply=mid is not None and mid == reply)
            reply = mid
        elif e.get("type") == "attachment":
            # guard: foreign-claude-queued-prompt-is-the-users
            queued = as_dict(e.get("attachment"))
            if queued.get("type") == "queued_command" and (words := _claude_content(queued.get("prompt"))):
                # words typed while Claude Code was busy: the model read them mid-turn
                reply = None
                b.user(words)
        elif e.get("type") == "system" and e.get("subtype") == "compact_boundary":
            continue  # the summary follows as a user message
    messages = b.done()
    return ForeignSession("claude-code", sid, messages, workspace, title_of(messages), b.dropped)


def _claude_reply(b: Builder, content: Any, same_reply: bool) -> None:
    """One assistant line's blocks, in order. A call the API ran itself (``server_tool_use``: web search
    and fetch, code execution; ``mcp_tool_use``) has its result in the same reply: it is read as a call
    answered by a tool message, and the reply's text after it as what the model said next."""
    texts: list[str] = []
    calls: list[ToolCall] = []
    thinking: list[str] = []
    for blk in content if isinstance(content, list) else [{"type": "text", "text": content or ""}]:
        if not isinstance(blk, dict):
            continue
        kind = blk.get("type")
        if kind == "text" and blk.get("text"):
            texts.append(str(blk["text"]))
        elif kind == "thinking" and blk.get("thinking"):
            thinking.append(str(blk["thinking"]))
        elif kind == "redacted_thinking":
            b.drop("redacted thinking blocks")
        elif kind in ("tool_use", "server_tool_use", "mcp_tool_use"):
            args = json.dumps(blk.get("input") or {}, ensure_ascii=False)
            calls.append(ToolCall(id=str(blk.get("id")), name=str(blk.get("name")), arguments=args))
        elif isinstance(kind, str) and kind.endswith("_tool_result") and "tool_use_id" in blk:
            b.assistant("\n\n".join(texts), calls, "\n\n".join(thinking), same_reply=same_reply)
            texts, calls, thinking, same_reply = [], [], [], False
            out = blk.get("content")
            failed = bool(blk.get("is_error")) or any(
                str(as_dict(x).get("type", "")).endswith("_error") for x in (out, *as_list(out))
            )
            # guard: foreign-claude-server-tool-result-read
            b.result(str(blk.get("tool_use_id")), "\n".join(readable(out)) or "[no readable result]", failed)
    b.assistant("\n\n".join(texts), calls, "\n\n".join(thinking), same_reply=same_reply)


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


def _codex_output(output: Any) -> tuple[str | list[dict[str, Any]], bool]:
    """A call's output and whether it failed. Codex writes a plain string (an exec's may be JSON:
    ``{"output", "metadata": {"exit_code"}}``), a list of content items (text and images: an MCP tool's,
    ``view_image``'s), or ``{"content", "success": false}``."""
    if isinstance(output, dict):
        text, _ = _codex_output(output.get("content"))
        return text, output.get("success") is False
    if isinstance(output, list):  # input_text / input_image items
        # guard: foreign-codex-output-items-read
        return _codex_text(output), False
    if isinstance(output, str):
        d = loads(output)
        if isinstance(d, dict) and "output" in d:
            code = as_dict(d.get("metadata")).get("exit_code")
            return str(d["output"]), bool(code)
        return output, False
    return json.dumps(output, ensure_ascii=False), False


_CODEX_CONTEXT = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions")

# The lines of a rollout since Codex 0.3x (September 2025): {"timestamp", "type", "payload"}.
_CODEX_LINES = (
    "session_meta",
    "response_item",
    "event_msg",
    "turn_context",
    "compacted",
    "inter_agent_communication",
    "inter_agent_communication_metadata",
    "world_state",
)
# ResponseItem kinds (codex-rs/protocol models.rs): an older rollout writes them bare, one a line.
_CODEX_ITEMS = (
    "message",
    "reasoning",
    "function_call",
    "function_call_output",
    "custom_tool_call",
    "custom_tool_call_output",
    "local_shell_call",
    "web_search_call",
    "image_generation_call",
    "tool_search_call",
    "tool_search_output",
    "agent_message",
    "ghost_snapshot",
    "compaction",
    "compaction_summary",
    "context_compaction",
)


def _codex_line(obj: dict[str, Any], first: bool) -> dict[str, Any] | None:
    """A rollout line as ``{"type", "payload"}``. Before that envelope (Codex CLI to August 2025) a rollout
    was a first line of session meta (``{"id", "timestamp", "instructions", "git"}``) and bare items, with
    ``{"record_type": "state"}`` lines between (bookkeeping: None)."""
    if "payload" in obj and obj.get("type") in _CODEX_LINES:
        return obj
    if obj.get("type") in _CODEX_ITEMS and "uuid" not in obj:
        return {"type": "response_item", "payload": obj}
    if first and "type" not in obj and "id" in obj and "timestamp" in obj:
        return {"type": "session_meta", "payload": obj}
    return None


def _is_codex(obj: dict[str, Any], first: bool) -> bool:
    """A line only a Codex rollout holds, in or before the envelope (Claude Code's lines have a ``uuid``;
    a Hermes log's no ``type``)."""
    return (
        ("payload" in obj and obj.get("type") in _CODEX_LINES)
        or obj.get("record_type") == "state"
        or (first and "type" not in obj and "id" in obj and "timestamp" in obj and "instructions" in obj)
        or (obj.get("type") in _CODEX_ITEMS and "uuid" not in obj and ("role" in obj or "call_id" in obj))
    )


def _codex_events(path: Path) -> list[dict[str, Any]]:
    """The rollout's lines, in the envelope; a ``.json`` rollout (the TypeScript Codex CLI, spring 2025:
    ``{"session": {…}, "items": […]}``) as its meta and items."""
    if path.name.removesuffix(".gz").endswith(".json"):
        obj = as_dict(read_json(path))
        items = [x for x in as_list(obj.get("items")) if isinstance(x, dict)]
        head = [{"type": "session_meta", "payload": as_dict(obj.get("session"))}]
        return head + [{"type": "response_item", "payload": x} for x in items]
    out = []
    for k, obj in enumerate(json_objects(path)):
        line = _codex_line(obj, k == 0)
        if line is not None:
            out.append(line)
    return out


def _said(p: dict[str, Any]) -> bool:
    """A ``response_item`` payload that is the user's own words (not Codex's context message)."""
    content = _codex_text(p.get("content"))
    return (
        p.get("type") == "message"
        and p.get("role") == "user"
        and not (isinstance(content, str) and content.lstrip().startswith(_CODEX_CONTEXT))
    )


_CWD = re.compile(r"<cwd>([^<\n]+)</cwd>")


def _relayed(p: dict[str, Any]) -> str:
    """Another agent's message to this one (Codex's multi-agent threads), marked as such."""
    content = _codex_text(p.get("content"))
    text = content if isinstance(content, str) else plain_text(content)
    if not text:
        return ""
    author, recipient = p.get("author") or "another agent", p.get("recipient") or "this agent"
    return f"[message from {author} to {recipient}]\n{text}"


def read_codex(path: Path) -> ForeignSession:
    b = Builder()
    workspace = ""
    sid = ""
    events = _codex_events(path)
    # Codex Desktop writes the user's words only as event_msg lines; the CLI writes them twice
    from_events = not any(
        e.get("type") == "response_item" and _said(as_dict(e.get("payload"))) for e in events
    )
    for n, e in enumerate(events):
        p: dict[str, Any] = e["payload"] if isinstance(e.get("payload"), dict) else {}
        kind = e.get("type")
        # guard: foreign-codex-words-only-in-ui-events
        if kind == "event_msg" and from_events and p.get("type") == "user_message":
            if isinstance(p.get("message"), str):
                b.user(p["message"])
        # guard: foreign-codex-rollback-read
        elif kind == "event_msg" and p.get("type") == "thread_rolled_back":
            b.rollback(p.get("num_turns"))  # the user undid turns: Codex rebuilt its history without them
        elif kind == "session_meta":
            # A fork's rollout repeats its parent's meta lines after its own: the first is this session's.
            # guard: foreign-codex-first-session-meta
            sid = sid or str(p.get("id") or p.get("session_id") or "")
            workspace = workspace or str(p.get("cwd") or "")
        elif kind == "turn_context":
            workspace = workspace or str(p.get("cwd") or "")
        elif kind == "compacted":
            # A remote compaction keeps its summary encrypted (an empty message): nothing to carry over
            # guard: foreign-codex-encrypted-summary-skipped
            if isinstance(p.get("message"), str) and p["message"].strip():
                text, meta = imported_summary("codex", p["message"])
                b.user(text, meta)
            else:
                b.drop("encrypted compaction summaries")
        elif kind == "inter_agent_communication" and (relayed := _relayed(p)):
            b.user(relayed)
        elif kind == "response_item":
            _codex_item(b, p, n)
            if not workspace and p.get("type") == "message" and p.get("role") == "user":
                # an older rollout names its folder only in Codex's context message
                content = _codex_text(p.get("content"))
                found = _CWD.search(content if isinstance(content, str) else plain_text(content))
                workspace = found.group(1).strip() if found else ""
    messages = b.done()
    sid = sid or stem(path)
    return ForeignSession("codex", sid, messages, workspace, title_of(messages), b.dropped)


def _codex_item(b: Builder, p: dict[str, Any], n: int) -> None:
    """One ResponseItem (``n``: its line, naming a call whose own id was not written)."""
    t = p.get("type")
    if t == "message":
        role = p.get("role")
        content = _codex_text(p.get("content"))
        if role == "user":
            if isinstance(content, str) and content.lstrip().startswith(_CODEX_CONTEXT):
                b.drop("Codex context messages")  # its own environment and instructions
                return
            b.user(content)
        elif role == "assistant":
            b.assistant(content if isinstance(content, str) else plain_text(content))
        else:
            b.drop(f"{role} messages")
    elif t == "reasoning":
        # the summary, and the raw reasoning an open-weights model's items carry in ``content``
        # guard: foreign-codex-reasoning-content-read
        said = [
            str(s.get("text", ""))
            for part in ("summary", "content")
            for s in as_list(p.get(part))
            if isinstance(s, dict) and isinstance(s.get("text"), str)
        ]
        if any(said):
            b.assistant("", (), "\n".join(x for x in said if x))
    elif t in ("function_call", "custom_tool_call", "tool_search_call"):
        # a freeform tool's input (apply_patch's patch) is text: it goes in as {"input": …}
        args = {"input": p.get("input")} if t == "custom_tool_call" else p.get("arguments")
        name = p.get("name") if t != "tool_search_call" else "tool_search"
        call_id = p.get("call_id") or p.get("id") or f"call_{n}"
        b.assistant("", [ToolCall(id=str(call_id), name=str(name), arguments=arguments(args))])
    elif t == "local_shell_call":
        action = as_dict(p.get("action"))
        args = json.dumps({"command": action.get("command")}, ensure_ascii=False)
        b.assistant("", [ToolCall(id=str(p.get("call_id") or p.get("id")), name="shell", arguments=args)])
    elif t in ("function_call_output", "custom_tool_call_output", "local_shell_call_output"):
        text, failed = _codex_output(p.get("output"))
        b.result(str(p.get("call_id")), text, failed)
    elif t == "tool_search_output":
        b.result(str(p.get("call_id") or p.get("id")), json.dumps(p.get("tools"), ensure_ascii=False))
    # guard: foreign-codex-web-search-read
    elif t == "web_search_call":
        # The search ran on the provider's side: the query is recorded, its results are not.
        call = ToolCall(id=f"web_search_{n}", name="web_search", arguments=arguments(p.get("action")))
        b.assistant("", [call])
        b.result(call.id, "[the search ran on the provider's side: Codex records no results]")
    elif t == "image_generation_call":
        prompt = {"prompt": p.get("revised_prompt")} if isinstance(p.get("revised_prompt"), str) else {}
        call = ToolCall(id=f"image_generation_{n}", name="image_generation", arguments=arguments(prompt))
        b.assistant("", [call])
        b.result(call.id, "[an image the provider generated: not carried over]")
    elif t == "agent_message" and (relayed := _relayed(p)):
        b.user(relayed)
    elif t in ("compaction", "compaction_summary", "context_compaction"):
        b.drop("encrypted compaction items")  # readable only by the model that wrote them
    # ghost_snapshot (Codex's undo commits) and kinds this reader does not know carry nothing a model saw


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
