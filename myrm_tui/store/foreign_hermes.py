"""Sessions recorded by Hermes Agent (NousResearch/hermes-agent), read as myrm messages.

Hermes writes a session in four layouts (as of its 2026 releases); each is read here:

- **session file** ``sessions/session_<id>.json``: one object, ``messages`` in OpenAI chat format
  (assistant messages may carry ``reasoning``), beside ``session_id``, ``model``, ``platform``,
  ``system_prompt``, ``tools``.
- **session log** ``sessions/<id>.jsonl``: one message a line, the first ``{"role": "session_meta", …}``
  (in spring 2026 logs, the first message itself).
- **request dump** ``sessions/request_dump_<id>_<time>.json``: the request a provider refused, the messages
  under ``request.body.messages``.
- **trajectories** (``trajectory_samples.jsonl``, ``failed_trajectories.jsonl``, the batch runner's
  ``batch_N.jsonl``): one conversation a line in ShareGPT form, ``{"conversations": [{"from", "value"}]}``;
  a ``gpt`` turn holds ``<think>…</think>`` and ``<tool_call>{json}</tool_call>`` blocks, the ``tool`` turn
  after it one ``<tool_response>{"tool_call_id", "name", "content"}</tool_response>`` per call, in order.

Hermes's own compaction summary (a message starting ``[CONTEXT COMPACTION``, earlier ``[CONTEXT SUMMARY]:``)
comes over marked as an imported summary; its system prompts (and system notes such as a model change) and
tool schemas are its own and are left out, counted, as for the other agents."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from myrm_tui.context.types import ToolCall
from myrm_tui.store.foreign_read import (
    NOT_JSON,
    Builder,
    ForeignError,
    ForeignSession,
    arguments,
    as_dict,
    as_list,
    imported_summary,
    json_objects,
    json_text,
    loads,
    plain_text,
    read_json,
    stem,
    title_of,
)

AGENT = "hermes"
_COMPACTION = ("[CONTEXT COMPACTION", "[CONTEXT SUMMARY]:")  # the second: releases before spring 2026


def layout(path: Path, first: dict[str, Any] | None) -> str | None:
    """Which Hermes layout ``path`` is ("session", "log", "dump", "trajectories"), from its first object (a
    ``.json`` file: the whole object); None when it is none of them."""
    if first is None:
        return None
    if path.name.removesuffix(".gz").endswith(".json"):
        if isinstance(first.get("messages"), list) and (
            "session_id" in first or "system_prompt" in first or "platform" in first
        ):
            return "session"
        if isinstance(as_dict(as_dict(first.get("request")).get("body")).get("messages"), list):
            return "dump"
        return None
    if first.get("role") == "session_meta" or (
        # before session_meta lines were written (spring 2026) a log began with its first message
        first.get("role") in ("user", "assistant", "tool", "system")
        and "content" in first
        and not {"type", "payload", "uuid"} & first.keys()
    ):
        return "log"
    convs = first.get("conversations")
    if isinstance(convs, list) and convs and all(isinstance(t, dict) and "from" in t for t in convs[:3]):
        return "trajectories"
    return None


def read_hermes(path: Path) -> list[ForeignSession]:
    """Every conversation in a Hermes file: one for a session file, log or dump; one a line of
    trajectories."""
    if path.name.removesuffix(".gz").endswith(".json"):
        obj = read_json(path)
        kind = layout(path, obj)
        if obj is None or kind is None:
            raise ForeignError(f"{path}: not a Hermes Agent session file or request dump")
        if kind == "session":
            sid = str(obj.get("session_id") or stem(path).removeprefix("session_"))
            return [_session(sid, as_list(obj.get("messages")))]
        body = as_dict(as_dict(obj.get("request")).get("body"))
        sid = f"{obj.get('session_id') or stem(path)}@{obj.get('timestamp') or 'dump'}"
        return [_session(sid, as_list(body.get("messages")))]
    objects = list(json_objects(path))
    kind = layout(path, objects[0] if objects else None)
    if kind == "log":
        # guard: foreign-hermes-log-keeps-its-first-message
        return [_session(stem(path), [o for o in objects if o.get("role") != "session_meta"])]
    if kind == "trajectories":
        return [
            _trajectory(f"{stem(path)}#{n}", as_list(o.get("conversations")))
            for n, o in enumerate(objects, 1)
            if isinstance(o.get("conversations"), list)
        ]
    raise ForeignError(f"{path}: not a Hermes Agent session log or trajectory file")


def _content(value: Any) -> str | list[dict[str, Any]]:
    """A message's content: text, or text and images; parts of other kinds are left out."""
    if isinstance(value, str):
        return value
    parts = [
        p
        for p in as_list(value)
        if isinstance(p, dict)
        and (
            (p.get("type") == "text" and isinstance(p.get("text"), str))
            or (p.get("type") == "image_url" and isinstance(as_dict(p.get("image_url")).get("url"), str))
        )
    ]
    if all(p["type"] == "text" for p in parts):
        return "\n".join(p["text"] for p in parts)
    return parts


def _text(value: Any) -> str:
    c = _content(value)
    return c if isinstance(c, str) else plain_text(c)


def _calls(raw: Any, b: Builder) -> list[ToolCall]:
    if isinstance(raw, str):  # some versions store the list as a JSON string
        raw = loads(raw)
        if raw is NOT_JSON:
            b.drop("unreadable tool call lists")
            return []
    out = []
    for c in as_list(raw):
        fn = as_dict(as_dict(c).get("function"))
        cid = as_dict(c).get("id") or as_dict(c).get("call_id")
        if not isinstance(cid, str) or not isinstance(fn.get("name"), str):
            b.drop("tool calls without an id or a name")
            continue
        out.append(ToolCall(id=cid, name=fn["name"], arguments=arguments(fn.get("arguments"))))
    return out


def _session(sid: str, messages: list[Any]) -> ForeignSession:
    """A conversation in OpenAI chat format, as the session file, log and dump hold it."""
    b = Builder()
    for m in messages:
        m = as_dict(m)
        role = m.get("role")
        if role == "user" or (role == "assistant" and _text(m.get("content")).startswith(_COMPACTION)):
            text = _content(m.get("content"))
            if isinstance(text, str) and text.startswith(_COMPACTION):
                b.user(*imported_summary(AGENT, text))
            else:
                b.user(text)
        elif role == "assistant":
            reasoning = m.get("reasoning")
            b.assistant(
                _text(m.get("content")),
                _calls(m.get("tool_calls"), b),
                reasoning if isinstance(reasoning, str) else "",
            )
        elif role == "tool":
            content = _content(m.get("content"))
            b.result(str(m.get("tool_call_id")), content, _failed(content))
        else:  # its own system prompt and runtime notes are left out, as for the other agents
            b.drop(f"{role} messages")
    out = b.done()
    return ForeignSession(AGENT, sid, out, "", title_of(out), b.dropped)


def _trajectory(sid: str, turns: list[Any]) -> ForeignSession:
    """A ShareGPT trajectory: the calls come from ``<tool_call>`` blocks (which carry no id: one is made up)
    and the ``tool`` turn's ``<tool_response>`` blocks answer them by position, as Hermes pairs them."""
    b = Builder()
    pending: list[ToolCall] = []
    n = 0
    for t in turns:
        t = as_dict(t)
        who, value = t.get("from"), t.get("value")
        if not isinstance(value, str):
            b.drop("turns without text")
            continue
        if who == "human":
            b.user(value)
        elif who == "gpt":
            thoughts, said = _blocks(value, "think")
            # a <tool_call> the model only thought about is no call
            # guard: foreign-hermes-a-call-only-thought-of-is-no-call
            found, text = _blocks(said, "tool_call")
            thinking = "\n\n".join(x for x in thoughts if x)
            calls = []
            for raw in found:
                n += 1
                call = loads(raw)
                if not isinstance(call, dict) or not isinstance(call.get("name"), str):
                    b.drop("unreadable tool calls")
                    continue
                args = arguments(call.get("arguments"))
                calls.append(ToolCall(id=f"{sid}-call{n}", name=call["name"], arguments=args))
            pending = calls
            b.assistant(text.strip(), calls, thinking)
        elif who == "tool":
            for k, raw in enumerate(_blocks(value, "tool_response")[0] or [value]):
                resp = loads(raw)
                if resp is NOT_JSON:
                    resp = raw
                content = as_dict(resp).get("content", resp) if isinstance(resp, dict) else resp
                if k < len(pending):
                    text = json_text(content)
                    b.result(pending[k].id, text, _failed(text))
                else:
                    b.drop("results without a call")
        elif who != "system":
            b.drop(f"{who} turns")
    out = b.done()
    return ForeignSession(AGENT, sid, out, "", title_of(out), b.dropped)


def _blocks(text: str, tag: str) -> tuple[list[str], str]:
    """The bodies of ``text``'s ``<tag>…</tag>`` blocks (stripped) and ``text`` without them; an unclosed
    tag stays text. One pass: a lazy regex rescans the rest of the text from every unclosed tag, which a
    hostile trajectory line of many of them turns into minutes."""
    start, end = f"<{tag}>", f"</{tag}>"
    bodies, rest, at = [], [], 0
    while (i := text.find(start, at)) != -1 and (j := text.find(end, i + len(start))) != -1:
        bodies.append(text[i + len(start) : j].strip())
        rest.append(text[at:i])
        at = j + len(end)
    rest.append(text[at:])
    return bodies, "".join(rest)


def _failed(content: Any) -> bool:
    """Whether a Hermes tool result reports a failure: its tools answer JSON with a non-zero ``exit_code``,
    ``"success": false`` or an ``error`` (the pipeline reads neither field, so it is marked here)."""
    if not (isinstance(content, str) and content.lstrip().startswith("{")):
        return False
    d = loads(content)
    if not isinstance(d, dict):
        return False
    code = d.get("exit_code")
    return (isinstance(code, int) and not isinstance(code, bool) and code != 0) or (
        d.get("success") is False or bool(d.get("error"))
    )
