"""Prompt Cache Optimize: provider cache markers and routing, computed last.

- Anthropic (and Qwen/DashScope, which accept the same explicit markers): at most four
  ``cache_control`` breakpoints, placed on the last tool definition, the protected head's end, the end of
  the summary blocks (or before the newest outputs, or the compacted base's end) and the last message the
  next request sends again as it is (so it reads everything up to it; what follows is sent as plain input,
  not written: the price model in ``../README.md``).
- OpenAI (native endpoint only): ``prompt_cache_key`` = the root session's id, so a session's requests
  route to the same cache; subagents inherit it through a ``ContextVar``, which wins over their own id.
  (The LLM client sends it in the request body: litellm drops it as an argument.)
- Other providers: nothing; their caching (if any) is automatic and prefix-based.
"""

from __future__ import annotations

import contextvars
from dataclasses import dataclass
from typing import Any

from myrm_tui.context.config import ContextConfig
from myrm_tui.context.model_facts import family, model_kind
from myrm_tui.context.report.cache_break import detect, fingerprints, shared_prefix
from myrm_tui.context.step import CachePlanned, CacheRecord, View, settings_for
from myrm_tui.context.steps.answered import INPUT, READ, WRITE, AnsweredOutputTrim, TrimSettings
from myrm_tui.context.steps.precompact import PreCompactSettings, compacts_next
from myrm_tui.context.types import Message

MAX_BREAKPOINTS = 4
# How sure the next request's compaction must be for this request's new messages to go unwritten: the write
# saved (WRITE - INPUT) against, when it does not come, their write then instead of a read (INPUT - READ).
SURE = (INPUT - READ) / (WRITE - READ)
EPHEMERAL = {"type": "ephemeral"}
prompt_cache_key_var: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "prompt_cache_key", default=None
)


def uses_explicit_markers(model: str) -> bool:
    return family(model) in {"anthropic", "qwen"}


def is_native_openai(model: str, api_base: str | None) -> bool:
    if family(model) != "openai" or model_kind(model) in ("local", "endpoint"):
        return False
    return api_base is None or "api.openai.com" in api_base


@dataclass(frozen=True, slots=True)
class CacheSettings:
    trim: TrimSettings  # what the answered trim will cut on the next request ...
    compaction: PreCompactSettings  # ... and whether the next request compacts


class PromptCacheOptimize:
    name = "prompt_cache_optimize"
    Settings = CacheSettings

    def configure(self, config: ContextConfig) -> CacheSettings:
        return CacheSettings(settings_for(TrimSettings, config), settings_for(PreCompactSettings, config))

    async def run(self, v: View, settings: CacheSettings) -> CachePlanned:
        req, view = v.request, v.messages
        fps = fingerprints(view, req.tools_fingerprint, req.model)
        last = None if v.compacting else reused_end(v, settings, fps)
        breakpoints = plan_breakpoints(
            view, req.new_start if not v.compacting else len(view), len(req.protected_head), last
        )
        brk = detect(req.state.last_fingerprints, fps, req.state.last_sizes, v.compacting)
        sizes = [0, *(req.counter.message(m) for m in view)]
        record = CacheRecord(tuple(breakpoints), fps, sizes, brk.as_dict() if brk is not None else None)
        return CachePlanned(record=record)


def reused_end(v: View, s: CacheSettings, fps: list[str]) -> int | None:
    """The last message the next request will send again as it is, when that is not the last one (None):
    before the first output the answered trim will cut, or, when the next request will compact, the end of
    what an earlier request wrote already (this request's new messages are then sent once and never read).
    What follows the last mark is billed at the plain input price instead of the cache write's 1.25x; a
    wrong guess costs the next request a write of it instead of a read (``README.md``, the price model)."""
    req, view = v.request, v.messages
    ends: list[int] = []
    cut = AnsweredOutputTrim.cut_next(v, s.trim)
    if cut is not None:
        ends.append(cut - 1)
    if compacts_next(req.counter.messages(view), s.compaction, req.state, SURE):
        # fps[0] is the tool schemas': message i is fps[i + 1]
        ends.append(shared_prefix(req.state.last_fingerprints, fps) - 2)
    end = min(ends, default=None)
    return end if end is not None and 0 <= end < len(view) - 1 else None


def plan_breakpoints(
    view: list[Message], base_len: int, head_len: int = 0, last: int | None = None
) -> list[int]:
    """Message indices to mark (the tool-definition marker is added separately by ``render``): what a later
    request sends again unchanged, so it reads it. The protected head's end (the system prompt and the first
    user message: every compaction keeps it), the end of the summary blocks after it (a compaction keeps them
    and appends its own; without blocks, the end of the compacted base), and ``last`` (default: the last
    message). Anthropic reads a prefix only where an earlier request marked it."""
    if not view:
        return []
    marks: list[int] = []
    last_system = max((i for i, m in enumerate(view) if m.role == "system"), default=-1)
    # guard: a-compaction-reads-the-protected-head
    head_end = max(min(head_len, len(view)) - 1, last_system)
    if head_end >= 0:
        marks.append(head_end)
    blocks = head_end
    while blocks + 1 < len(view) and view[blocks + 1].meta.get("kind") == "summary":
        blocks += 1
    end = len(view) - 1 if last is None else min(last, len(view) - 1)
    # Before the newest outputs: the next request reads up to here when the answered trim cuts one of them.
    asked = max((i for i in range(len(view)) if view[i].role == "assistant"), default=-1)
    if blocks > head_end:
        marks.append(blocks)
    elif head_end < asked < end:
        marks.append(asked)
    elif 0 < base_len < len(view) and base_len - 1 not in marks:
        marks.append(base_len - 1)
    # What follows ``last`` is not sent again as it is: a mark there would write what no request reads.
    # guard: nothing-after-the-last-reused-message-is-marked
    marks = [i for i in marks if i <= end]
    if end not in marks and end > (marks[-1] if marks else -1):
        marks.append(end)
    return marks[: MAX_BREAKPOINTS - 1]


def render(
    view: list[Message],
    model: str,
    breakpoints: list[int] | None = None,
    tools: list[dict[str, Any]] | None = None,
    api_base: str | None = None,
    session_key: str | None = None,
    images: bool = True,
) -> dict[str, Any]:
    """Request kwargs (``messages``, ``tools``, routing extras) for ``litellm.acompletion``. ``images``:
    the model takes image parts; without, each becomes a one-line text stand-in."""
    msgs = [m.to_api() for m in view]
    out_tools = [dict(t) for t in tools] if tools else None
    extra: dict[str, Any] = {}
    if uses_explicit_markers(model):
        for i in breakpoints or []:
            msgs[i] = _mark(msgs[i])
        if out_tools:
            out_tools[-1] = {**out_tools[-1], "cache_control": EPHEMERAL}
    elif is_native_openai(model, api_base):
        # The key set by the root session's turn wins: a subagent's requests route with its parent's.
        key = prompt_cache_key_var.get() or session_key
        if key:
            extra["prompt_cache_key"] = key
    if any(isinstance(m.get("content"), list) for m in msgs):  # after the marks: it may add messages
        msgs = place_images(msgs, images, family(model) == "anthropic")
    out: dict[str, Any] = {"messages": msgs, **extra}
    if out_tools:
        out["tools"] = out_tools
    return out


IMAGE_STAND_IN = "[image not shown: this model does not take images]"
IMAGES_BELOW = "[image: attached in the next message]"
TOOL_IMAGES_INTRO = "Images returned by the tool calls above, in order:"


def place_images(msgs: list[dict[str, Any]], images: bool, in_tool_results: bool) -> list[dict[str, Any]]:
    """Image parts where the provider accepts them. A model without vision gets a text stand-in for each.
    Anthropic takes images inside tool results; OpenAI-style APIs take them only in user messages, so a
    run of tool results hands its images to one user message after it (a pure function of the view:
    the same history gives the same request, so the prefix cache holds)."""
    out: list[dict[str, Any]] = []
    held: list[dict[str, Any]] = []  # images of the current run of tool results
    for msg in msgs:
        if msg["role"] != "tool" and held:
            out.append({"role": "user", "content": [{"type": "text", "text": TOOL_IMAGES_INTRO}, *held]})
            held = []
        content = msg.get("content")
        if not isinstance(content, list) or not any(p.get("type") == "image_url" for p in content):
            out.append(msg)
            continue
        parts: list[dict[str, Any]] = []
        for p in content:
            if p.get("type") != "image_url":
                parts.append(p)
            elif not images:
                parts.append({"type": "text", "text": IMAGE_STAND_IN})
            elif msg["role"] == "tool" and not in_tool_results:
                held.append(p)
                parts.append({"type": "text", "text": IMAGES_BELOW})
            else:
                parts.append(p)
        out.append({**msg, "content": _join_text(parts) if msg["role"] == "tool" else parts})
    if held:
        out.append({"role": "user", "content": [{"type": "text", "text": TOOL_IMAGES_INTRO}, *held]})
    return out


def _join_text(parts: list[dict[str, Any]]) -> str | list[dict[str, Any]]:
    """A tool result left with text parts only is sent as one string, as every API takes it."""
    if all(p.get("type") == "text" and "cache_control" not in p for p in parts):
        return "\n".join(str(p.get("text", "")) for p in parts)
    return parts


def _mark(msg: dict[str, Any]) -> dict[str, Any]:
    content = msg.get("content")
    if isinstance(content, str) and content:
        return {**msg, "content": [{"type": "text", "text": content, "cache_control": EPHEMERAL}]}
    if isinstance(content, list) and content:
        parts = [dict(p) for p in content]
        parts[-1]["cache_control"] = EPHEMERAL
        return {**msg, "content": parts}
    return msg
