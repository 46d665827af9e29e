"""The request-validation rules of real providers, as the emulator and the benchmark enforce them.

Each rule returns the error message the provider itself would send (HTTP 400), so a test that trips
one sees exactly what a user would. Rules are written against the providers' wire formats:
OpenAI chat completions and Anthropic messages.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any

_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
MIN_THINKING_BUDGET = 1024


def sign_thinking(thinking: str) -> str:
    """The emulator's signature of a thinking block: any change to the text (or a made-up block) fails."""
    return "sig-" + hashlib.blake2b(b"emulator-thinking:" + thinking.encode(), digest_size=16).hexdigest()


@dataclass(frozen=True)
class Rejection:
    status: int
    type: str
    message: str
    code: str | None = None

    def __str__(self) -> str:
        return f"{self.status} {self.type}: {self.message}"


def _text_of(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "".join(str(p.get("text", "")) if isinstance(p, dict) else "" for p in content)


def _has_image(content: Any) -> bool:
    parts = content if isinstance(content, list) else []
    return any(isinstance(p, dict) and p.get("type") == "image_url" for p in parts)


def validate_openai(
    body: dict[str, Any], window: int | None = None, tokens: int | None = None
) -> Rejection | None:
    """The first rule ``body`` breaks, or None; ``tokens`` (the request's size) is checked against
    ``window``."""
    msgs = body.get("messages")
    if not isinstance(msgs, list) or not msgs:
        return Rejection(400, "invalid_request_error", "[] is too short - 'messages'", "empty_array")
    tools = body.get("tools") or []
    if len(tools) > 128:
        return Rejection(
            400,
            "invalid_request_error",
            f"Invalid 'tools': array too long. Expected an array with maximum length 128, but got an array "
            f"with length {len(tools)} instead.",
            "array_above_max_length",
        )
    for t in tools:
        name = (t.get("function") or {}).get("name", "")
        params = (t.get("function") or {}).get("parameters")
        if params is not None and (
            not isinstance(params, dict)
            or params.get("type") != "object"
            or not isinstance(params.get("properties", {}), dict)
        ):
            got = params.get("type") if isinstance(params, dict) else type(params).__name__
            return Rejection(
                400,
                "invalid_request_error",
                f"Invalid schema for function '{name}': schema must be a JSON Schema of 'type: \"object\"', "
                f"got 'type: \"{got}\"'.",
                "invalid_function_parameters",
            )
        if not _TOOL_NAME.match(name):
            return Rejection(
                400,
                "invalid_request_error",
                "Invalid 'tools[].function.name': string does not match pattern. Expected a "
                "string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
                "invalid_value",
            )
    open_calls: list[str] = []
    open_from = -1
    for i, m in enumerate(msgs):
        role = m.get("role")
        if role not in ("system", "developer", "user", "assistant", "tool"):
            return Rejection(
                400,
                "invalid_request_error",
                f"Invalid value: '{role}'. Supported values are: 'system', 'assistant', 'user', "
                "'function', 'tool', and 'developer'.",
                "invalid_value",
            )
        content = m.get("content")
        if role != "user" and _has_image(content):
            return Rejection(
                400,
                "invalid_request_error",
                f"Invalid 'messages[{i}]'. Image URLs are only allowed for messages with role "
                f"'user', but this message with role '{role}' contains an image URL.",
                "invalid_value",
            )
        if role == "tool":
            tid = m.get("tool_call_id")
            if open_from < 0 or tid not in open_calls:
                return Rejection(
                    400,
                    "invalid_request_error",
                    "Invalid parameter: messages with role 'tool' must be a response to a "
                    "preceeding message with 'tool_calls'.",
                    None,
                )
            open_calls.remove(tid)
            continue
        if open_calls:
            return Rejection(
                400,
                "invalid_request_error",
                "An assistant message with 'tool_calls' must be followed by tool messages "
                "responding to each 'tool_call_id'. The following tool_call_ids did not have "
                f"response messages: {', '.join(open_calls)}",
                None,
            )
        open_from = -1
        calls = m.get("tool_calls") or []
        if role == "assistant" and calls:
            for c in calls:
                args = (c.get("function") or {}).get("arguments")
                if not isinstance(args, str):
                    return Rejection(
                        400,
                        "invalid_request_error",
                        f"Invalid type for 'messages[{i}].tool_calls[0].function.arguments': "
                        "expected a string.",
                        "invalid_type",
                    )
                if not _TOOL_NAME.match((c.get("function") or {}).get("name", "")):
                    return Rejection(
                        400,
                        "invalid_request_error",
                        f"Invalid 'messages[{i}].tool_calls[0].function.name': string does not "
                        "match pattern.",
                        "invalid_value",
                    )
            open_calls = [c.get("id") for c in calls]
            open_from = i
            continue
        if m.get("content") is None and role != "assistant":
            return Rejection(
                400,
                "invalid_request_error",
                "Invalid value for 'content': expected a string, got null.",
                None,
            )
        if role == "assistant" and not _text_of(m.get("content")) and not calls:
            return Rejection(
                400,
                "invalid_request_error",
                f"Invalid 'messages[{i}]': assistant message must have 'content' or 'tool_calls'.",
                None,
            )
    if open_calls:
        return Rejection(
            400,
            "invalid_request_error",
            "An assistant message with 'tool_calls' must be followed by tool messages responding "
            "to each 'tool_call_id'. The following tool_call_ids did not have response messages: "
            f"{', '.join(open_calls)}",
            None,
        )
    if window is not None and tokens is not None and tokens > window:
        return Rejection(
            400,
            "invalid_request_error",
            f"This model's maximum context length is {window} tokens. However, your messages "
            f"resulted in {tokens} tokens. Please reduce the length of the messages.",
            "context_length_exceeded",
        )
    return None


def validate_anthropic(
    body: dict[str, Any], window: int | None = None, tokens: int | None = None
) -> Rejection | None:
    def bad(msg: str) -> Rejection:
        return Rejection(400, "invalid_request_error", msg)

    if "max_tokens" not in body:
        return bad("max_tokens: Field required")
    msgs = body.get("messages")
    if not isinstance(msgs, list) or not msgs:
        return bad("messages: at least one message is required")
    if msgs[0].get("role") != "user":
        return bad('messages: first message must use the "user" role')
    marks = _count_cache_control(body)
    if marks > 4:
        return bad(f"A maximum of 4 blocks with cache_control may be provided. Found {marks}.")
    thinking = _check_thinking(body, msgs)
    if thinking is not None:
        return bad(thinking)
    prev_tool_uses: list[str] = []
    for i, m in enumerate(msgs):
        role = m.get("role")
        if role not in ("user", "assistant"):
            return bad(f"messages.{i}.role: Input should be 'user' or 'assistant'")
        content = m.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else (content or [])
        empty = not blocks or all(
            b.get("type") == "text" and not str(b.get("text", "")).strip() for b in blocks
        )
        if empty and not (role == "assistant" and i == len(msgs) - 1):
            return bad(
                f"messages.{i}: all messages must have non-empty content except for the optional "
                "final assistant message"
            )
        for b in blocks:
            if b.get("type") == "text" and b.get("text", "") == "" and len(blocks) > 1:
                return bad(f"messages.{i}.content: text content blocks must be non-empty")
        results = [b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"]
        if prev_tool_uses:
            missing = [t for t in prev_tool_uses if t not in results]
            if role != "user" or missing:
                return bad(
                    f"messages.{i}: `tool_use` ids were found without `tool_result` blocks "
                    f"immediately after: {', '.join(missing or prev_tool_uses)}. Each `tool_use` "
                    "block must have a corresponding `tool_result` block in the next message."
                )
        for r in results:
            if r not in prev_tool_uses:
                return bad(
                    f"messages.{i}.content: unexpected `tool_use_id` found in `tool_result` "
                    f"blocks: {r}. Each `tool_result` block must have a corresponding `tool_use` "
                    "block in the previous message."
                )
        prev_tool_uses = (
            [str(b.get("id")) for b in blocks if b.get("type") == "tool_use"] if role == "assistant" else []
        )
    if prev_tool_uses:
        return bad(
            f"messages.{len(msgs) - 1}: `tool_use` ids were found without `tool_result` blocks "
            f"immediately after: {', '.join(prev_tool_uses)}. Each `tool_use` block must have a "
            "corresponding `tool_result` block in the next message."
        )
    if window is not None and tokens is not None and tokens > window:
        return bad(f"prompt is too long: {tokens} tokens > {window} maximum")
    return None


def _check_thinking(body: dict[str, Any], msgs: list[dict[str, Any]]) -> str | None:
    """Extended thinking's rules: the budget's bounds, no temperature but 1, every thinking block signed
    by the API, and (thinking on) the last assistant message of a tool-use loop opening with its block."""
    for i, m in enumerate(msgs):
        content = m.get("content")
        for j, b in enumerate(content if isinstance(content, list) else []):
            if not isinstance(b, dict) or b.get("type") != "thinking":
                continue
            if "signature" not in b:
                return f"messages.{i}.content.{j}.thinking.signature: Field required"
            if b.get("signature") != sign_thinking(str(b.get("thinking", ""))):
                return f"messages.{i}.content.{j}: Invalid `signature` in `thinking` block"
    config = body.get("thinking")
    if not isinstance(config, dict) or config.get("type") != "enabled":
        return None
    budget = config.get("budget_tokens")
    if not isinstance(budget, int) or budget < MIN_THINKING_BUDGET:
        return (
            f"thinking.enabled.budget_tokens: Input should be greater than or equal to {MIN_THINKING_BUDGET}"
        )
    if not isinstance(body.get("max_tokens"), int) or body["max_tokens"] <= budget:
        return "`max_tokens` must be greater than `thinking.budget_tokens`"
    if body.get("temperature") not in (None, 1, 1.0):
        return "`temperature` may only be set to 1 when thinking is enabled or in extended thinking mode."
    last = msgs[-1]
    last_content = last.get("content")
    if last.get("role") != "user" or not isinstance(last_content, list):
        return None
    if not any(isinstance(b, dict) and b.get("type") == "tool_result" for b in last_content):
        return None
    i = len(msgs) - 2
    prev = msgs[i] if i >= 0 else {}
    blocks = prev.get("content")
    first = blocks[0] if isinstance(blocks, list) and blocks else {"type": "text"}
    if prev.get("role") == "assistant" and first.get("type") not in ("thinking", "redacted_thinking"):
        return (
            f"messages.{i}.content.0.type: Expected `thinking` or `redacted_thinking`, but found "
            f"`{first.get('type')}`. When `thinking` is enabled, a final `assistant` message must start "
            "with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). "
            "We recommend you include thinking blocks from previous turns. To avoid this requirement, "
            "disable `thinking`."
        )
    return None


def _count_cache_control(body: dict[str, Any]) -> int:
    n = 0
    system = body.get("system")
    if isinstance(system, list):
        n += sum(1 for b in system if isinstance(b, dict) and "cache_control" in b)
    n += sum(1 for t in body.get("tools") or [] if "cache_control" in t)
    for m in body.get("messages") or []:
        c = m.get("content")
        if isinstance(c, list):
            n += sum(1 for b in c if isinstance(b, dict) and "cache_control" in b)
    return n
