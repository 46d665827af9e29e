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

import errno
import gzip
import io
import json
import os
import re
import stat
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any

from myrm_tui.context.types import Message, ToolCall

NO_RESULT = (
    "[no result was recorded for this call: the other agent's session ended or moved on before it returned]"
)


class ForeignError(ValueError):
    """A file that is not another agent's session (Claude Code, Codex, Hermes), or cannot be read."""


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


def _objects(path: Path) -> Iterator[dict[str, Any]]:
    """The file's JSON objects, one a line; ``.gz`` files are read through gzip."""
    try:
        with _open(path) as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line)
                except (ValueError, RecursionError):  # RecursionError: arrays nested thousands deep
                    raise ForeignError(f"{path}:{n}: not JSON") from None
                if isinstance(obj, dict):
                    yield _no_lone_surrogates(obj) if "\\u" in line else obj
    except (OSError, EOFError, zlib.error) as exc:  # gzip.BadGzipFile is an OSError
        raise ForeignError(f"{path}: {getattr(exc, 'strerror', None) or exc}") from None


def _open(path: Path) -> IO[str]:
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
        return io.TextIOWrapper(raw, encoding="utf-8", errors="replace")
    unzipped = gzip.GzipFile(fileobj=raw, mode="rb")
    unzipped.myfileobj = raw  # type: ignore[assignment]  # closed with it, as when gzip opens a path
    return io.TextIOWrapper(unzipped, encoding="utf-8", errors="replace")


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


def _dict(value: Any) -> dict[str, Any]:
    """``value`` when it is an object, else an empty one: a field of the wrong type is read as absent."""
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def kind_of(path: Path) -> str | None:
    """ "claude-code", "codex", "hermes" or None, from the file's first lines (a ``.json`` file: its
    object)."""
    from myrm_tui.store.foreign_hermes import layout, read_json

    try:
        if path.name.removesuffix(".gz").endswith(".json"):
            return "hermes" if layout(path, read_json(path)) else None
        for k, obj in enumerate(_objects(path)):
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
        from myrm_tui.store.foreign_hermes import read_hermes

        return read_hermes(path)
    if path.name.removesuffix(".gz").endswith(".json"):
        from myrm_tui.store.foreign_hermes import read_json

        read_json(path)  # a file that cannot be read says why
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
    when its session file lies beside it (the file holds the whole conversation, the log only its end)."""
    if not path.is_dir():
        return [path]
    found = sorted(p for s in _SUFFIXES for p in path.rglob(f"*{s}") if kind_of(p) is not None)
    names = set(found)
    return [
        p
        for p in found
        if not (
            # guard: foreign-hermes-log-beside-its-session-file
            p.name.removesuffix(".gz").endswith(".jsonl")
            and {p.parent / f"session_{_stem(p)}.json", p.parent / f"session_{_stem(p)}.json.gz"} & names
        )
    ]


def is_transcript(path: Path) -> bool:
    """Another agent's session file (``.jsonl`` or ``.json``, or gzipped)."""
    return path.name.endswith(_SUFFIXES) and kind_of(path) is not None


# -- pairing calls and results -----------------------------------------------------------------------


class _Builder:
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

    def done(self) -> list[Message]:
        self._close_open()
        # A reply that was only reasoning (its text never came) has nothing a provider would take.
        return [m for m in self.out if m.role != "assistant" or m.content or m.tool_calls]


def _summary(agent: str, text: str) -> tuple[str, dict[str, Any]]:
    name = {"claude-code": "Claude Code", "codex": "Codex CLI", "hermes": "Hermes Agent"}[agent]
    return (
        f"[A summary {name} wrote when it compacted this session's earlier context]\n{text}",
        {"imported_summary": agent},
    )


def _stem(path: Path) -> str:
    return path.name.removesuffix(".gz").removesuffix(".jsonl").removesuffix(".json")


def _title(messages: list[Message]) -> str:
    first = next((m.text for m in messages if m.role == "user" and not m.meta), "")
    return " ".join(first.split())[:60] or "imported session"


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
            at = next(i for i, e in enumerate(main) if e is prev)
            cur = main[at - 1] if at > 0 else None
    # Parallel calls: Claude Code writes each call of a reply as its own line and each result as a child
    # of its call's line, so the chain runs through one of them and the others hang off it.
    replies = {_dict(e.get("message")).get("id") for e in chain if e.get("type") == "assistant"} - {None}
    for e in main:
        if (
            e["uuid"] not in seen
            and e.get("type") == "assistant"
            and _dict(e.get("message")).get("id") in replies
        ):
            seen.add(e["uuid"])
    calls = {
        b.get("id")
        for e in main
        if e["uuid"] in seen and e.get("type") == "assistant"
        for b in _list(_dict(e.get("message")).get("content"))
        if isinstance(b, dict) and b.get("type") == "tool_use"
    }
    for e in main:
        if (
            e["uuid"] not in seen
            and e.get("type") == "user"
            and any(
                isinstance(b, dict) and b.get("type") == "tool_result" and b.get("tool_use_id") in calls
                for b in _list(_dict(e.get("message")).get("content"))
            )
        ):
            seen.add(e["uuid"])
    return [e for e in main if e["uuid"] in seen]


def _claude_image(block: dict[str, Any]) -> dict[str, Any] | None:
    src = _dict(block.get("source"))
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
    src = _dict(block.get("source"))
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
    events = list(_objects(path))
    b = _Builder()
    workspace = ""
    sid = _stem(path)
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
                text, meta = _summary("claude-code", str(_claude_text(content)))
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
            mid = msg.get("id")
            same = isinstance(mid, str) and mid == reply
            b.assistant("\n\n".join(texts), calls, "\n\n".join(thinking), same_reply=same)
            reply = mid
        elif e.get("type") == "system" and e.get("subtype") == "compact_boundary":
            continue  # the summary follows as a user message
    messages = b.done()
    return ForeignSession("claude-code", sid, messages, workspace, _title(messages), b.dropped)


def _only_results(content: Any) -> bool:
    blocks = _list(content)
    return bool(blocks) and all(isinstance(b, dict) and b.get("type") == "tool_result" for b in blocks)


def _claude_text(content: Any) -> str:
    c = _claude_content(content)
    return c if isinstance(c, str) else "\n".join(p.get("text", "") for p in c if p["type"] == "text")


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
        try:  # exec output as a JSON string: {"output": ..., "metadata": {"exit_code": N}}
            d = json.loads(output)
        except ValueError:
            return output, False
        if isinstance(d, dict) and "output" in d:
            code = _dict(d.get("metadata")).get("exit_code")
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
    b = _Builder()
    workspace = ""
    sid = _stem(path)
    events = list(_objects(path))
    # Codex Desktop writes the user's words only as event_msg lines; the CLI writes them twice
    from_events = not any(e.get("type") == "response_item" and _said(_dict(e.get("payload"))) for e in events)
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
            text, meta = _summary("codex", str(p.get("message") or ""))
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
                    b.assistant(content if isinstance(content, str) else _plain(content))
                else:
                    b.drop(f"{role} messages")
            elif t == "reasoning":
                summary = "\n".join(
                    str(s.get("text", "")) for s in _list(p.get("summary")) if isinstance(s, dict)
                )
                if summary:
                    b.assistant("", (), summary)
            elif t in ("function_call", "custom_tool_call"):
                args = p.get("arguments") if t == "function_call" else {"input": p.get("input")}
                if not isinstance(args, str):  # the wire format takes arguments as a JSON string
                    args = json.dumps(args if args is not None else {}, ensure_ascii=False)
                b.assistant(
                    "",
                    [ToolCall(id=str(p.get("call_id")), name=str(p.get("name")), arguments=args or "{}")],
                )
            elif t == "local_shell_call":
                action = _dict(p.get("action"))
                args = json.dumps({"command": action.get("command")}, ensure_ascii=False)
                b.assistant(
                    "", [ToolCall(id=str(p.get("call_id") or p.get("id")), name="shell", arguments=args)]
                )
            elif t in ("function_call_output", "custom_tool_call_output", "local_shell_call_output"):
                text, failed = _codex_output(p.get("output"))
                b.result(str(p.get("call_id")), text, failed)
    messages = b.done()
    return ForeignSession("codex", sid, messages, workspace, _title(messages), b.dropped)


def _plain(parts: list[dict[str, Any]]) -> str:
    return "\n".join(p.get("text", "") for p in parts if p.get("type") == "text")


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
