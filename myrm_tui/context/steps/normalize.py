"""Normalize — tool-call linear alignment, before every LLM call.

- ID-based grouping: each tool result is matched to its call by ``tool_call_id`` within the
  calling assistant message's turn (not by position), so ids reused across turns pair correctly
  and a result that drifted behind another message is moved back under its call.
- integrity guard: results that answer no call (orphans, e.g. after a cut) are dropped; empty
  messages providers reject are dropped or given placeholder text.
- a tool name providers reject (stored before names were checked) is replaced by a valid stand-in.
- dangling-call repair: a call with no result (interrupted, timed out, crashed) gets a synthetic
  error result, so the provider never sees an unanswered call.
"""

from __future__ import annotations

import re
from dataclasses import replace

from myrm_tui.context.step import Normalized, NoSettings, Trace, Unconfigured, View
from myrm_tui.context.types import Message, synthetic_user

INTERRUPTED = (
    "Error: this tool call was interrupted before it returned a result (cancelled, timed out or crashed)."
)


# The tool-name pattern OpenAI and Anthropic enforce on every request that carries a name again.
TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def valid_tool_name(name: str) -> str:
    """A stand-in that passes the providers' pattern for a name that does not (``functions.bash``)."""
    return ("invalid_" + re.sub(r"[^a-zA-Z0-9_-]", "_", name))[:64]


def normalize(view: list[Message]) -> tuple[list[Message], dict[str, int]]:
    stats = {"orphans": 0, "dangling": 0, "empty": 0, "moved": 0, "renamed": 0}
    n = len(view)
    claimed = [False] * n
    out: list[Message] = []
    for i, m in enumerate(view):
        if m.role == "tool":
            if not claimed[i]:
                stats["orphans"] += 1
            continue
        if m.role == "assistant" and m.tool_calls:
            calls = _unique_calls(m)
            # guard: normalize-repairs-a-stored-bad-tool-name
            if any(not TOOL_NAME.match(c.name) for c in calls):  # stored before names were checked
                calls = [
                    c if TOOL_NAME.match(c.name) else replace(c, name=valid_tool_name(c.name)) for c in calls
                ]
                stats["renamed"] += 1
                m = m.derive("toolname", tool_calls=tuple(calls))
            elif len(calls) != len(m.tool_calls):
                m = m.derive("dedupcalls", tool_calls=tuple(calls))
            wanted = {c.id: None for c in calls}
            found: dict[str, int] = {}
            j = i + 1
            # Results normally follow at once; search on (past other roles) until the next call turn.
            while j < n and len(found) < len(wanted):
                v = view[j]
                if v.role == "assistant" and v.tool_calls:
                    break
                tid = v.tool_call_id or ""
                if v.role == "tool" and not claimed[j] and tid in wanted and tid not in found:
                    found[tid] = j
                    if j != i + 1 + len(found) - 1:
                        stats["moved"] += 1
                j += 1
            out.append(m)
            for c in calls:
                k = found.get(c.id)
                if k is None:
                    stats["dangling"] += 1
                    out.append(
                        Message(
                            role="tool",
                            content=INTERRUPTED,
                            id=f"{m.id}:{c.id}:dangling",
                            tool_call_id=c.id,
                            name=c.name,
                            synthetic=True,
                            meta={"is_error": True},
                        )
                    )
                else:
                    claimed[k] = True
                    r = view[k]
                    out.append(
                        r if r.text.strip() or r.has_media else r.derive("empty", content="(no output)")
                    )
            continue
        if not m.text.strip() and not m.has_media:
            stats["empty"] += 1
            if m.role == "assistant":
                continue
            m = m.derive("empty", content="(empty message)")
        out.append(m)
    first = next((k for k, m in enumerate(out) if m.role != "system"), None)
    if first is not None and out[first].role != "user":
        out.insert(first, synthetic_user("The conversation continues below.", "start-anchor", "anchor"))
    return out, stats


def _unique_calls(m: Message) -> list:
    seen: set[str] = set()
    calls = []
    for c in m.tool_calls:
        if c.id and c.id not in seen:
            seen.add(c.id)
            calls.append(c)
    return calls


class Normalize(Unconfigured):
    name = "normalize"

    async def run(self, v: View, settings: NoSettings) -> Normalized:
        out, stats = normalize(v.messages)
        trace = Trace()
        for k, n in stats.items():
            if n:
                trace.event(f"normalize: {n} {k}")
        return Normalized(messages=out, trace=trace)
