"""Message types shared by the agent loop, the pipeline, the store and the benchmark.

A ``Message`` is immutable. Its ``id`` is stable for the life of the message: stored messages use their
store sequence (``"m12"``); anything a processor rewrites gets a derived id, so per-message caches
(token counts, filter decisions) keyed by id never go stale.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any, Literal, get_args

# Synthetic user-role messages (notes, rereads, ...) open with this tag so neither the model nor
# `extract_protected_head` can take them for the user's own words.
SYNTHETIC_TAG = "system-reminder"
UNVERIFIED_CONTEXT_MARKER = "[UNVERIFIED CONTEXT — inserted by myrm, not written by the user]"


@dataclass(frozen=True, slots=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # raw JSON text, exactly as the model produced it

    def to_api(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }

    def parsed_arguments(self) -> dict[str, Any]:
        """Arguments as a dict; raises ``ValueError`` with a readable message on malformed JSON."""
        try:
            value = json.loads(self.arguments or "{}")
        except json.JSONDecodeError as exc:
            raise ValueError(f"tool arguments are not valid JSON ({exc.msg} at char {exc.pos})") from exc
        if not isinstance(value, dict):
            raise ValueError("tool arguments must be a JSON object")
        return value


Role = Literal["system", "user", "assistant", "tool"]
ROLES: frozenset[str] = frozenset(get_args(Role))  # for checking data read from outside (a corpus)


@dataclass(frozen=True, slots=True)
class Message:
    role: Role
    content: str | list[dict[str, Any]] | None
    id: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    reasoning: str | None = None
    thinking_blocks: tuple[dict[str, Any], ...] = ()
    synthetic: bool = False  # produced by the pipeline, never by the user, a tool or the model
    created_at: float | None = None
    meta: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    # -- construction -------------------------------------------------------------------------------
    @classmethod
    def from_api(cls, data: dict[str, Any], id: str = "", created_at: float | None = None) -> Message:
        calls = tuple(
            ToolCall(
                id=str(c.get("id") or ""),
                name=str((c.get("function") or {}).get("name") or ""),
                arguments=_arguments_text((c.get("function") or {}).get("arguments")),
            )
            for c in (data.get("tool_calls") or [])
        )
        return cls(
            role=data["role"],
            content=data.get("content"),
            id=id,
            tool_calls=calls,
            tool_call_id=data.get("tool_call_id"),
            name=data.get("name"),
            reasoning=data.get("reasoning_content"),
            thinking_blocks=tuple(data.get("thinking_blocks") or ()),
            created_at=created_at,
        )

    def derive(self, suffix: str, **changes: Any) -> Message:
        """A rewritten copy with a derived id (so caches keyed by id see a new message)."""
        return replace(self, id=f"{self.id}#{suffix}", **changes)

    # -- views --------------------------------------------------------------------------------------
    @property
    def text(self) -> str:
        """Plain text of the content (text parts joined; images omitted)."""
        c = self.content
        if c is None:
            return ""
        if isinstance(c, str):
            return c
        return "\n".join(str(p.get("text", "")) for p in c if p.get("type") == "text")

    @property
    def has_media(self) -> bool:
        return isinstance(self.content, list) and any(p.get("type") == "image_url" for p in self.content)

    def to_api(self) -> dict[str, Any]:
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            out["tool_calls"] = [c.to_api() for c in self.tool_calls]
        if self.tool_call_id is not None:
            out["tool_call_id"] = self.tool_call_id
        if self.name and self.role == "tool":
            out["name"] = self.name
        if self.reasoning is not None:
            out["reasoning_content"] = self.reasoning
        if self.thinking_blocks:
            out["thinking_blocks"] = list(self.thinking_blocks)
        return out


def _arguments_text(value: Any) -> str:
    if value is None:
        return "{}"
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def synthetic_user(text: str, id: str, kind: str) -> Message:
    """A pipeline-made user-role message, wrapped so it is never mistaken for the user's words."""
    body = f'<{SYNTHETIC_TAG} kind="{kind}">\n{UNVERIFIED_CONTEXT_MARKER}\n{text}\n</{SYNTHETIC_TAG}>'
    return Message(role="user", content=body, id=id, synthetic=True, meta={"kind": kind})
