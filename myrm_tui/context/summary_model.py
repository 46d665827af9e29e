"""The 14-field structured summary: fields, extractive builder, incremental merge, rendering.

Rendering puts ``blocked_items`` and ``next_steps`` last: the end of a long message is where models
attend best ("lost in the middle"), and those two fields are what the agent must act on.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from myrm_tui.context import signals
from myrm_tui.context.redact import redact
from myrm_tui.context.types import Message

FIELDS: tuple[str, ...] = (
    "user_goal",
    "user_instructions",
    "active_tasks",
    "completed_actions",
    "errors",
    "decisions",
    "artifacts",
    "files_examined",
    "key_facts",
    "tool_usage",
    "open_questions",
    "current_state",
    "blocked_items",
    "next_steps",
)
LIST_FIELDS = frozenset(FIELDS) - {"user_goal", "current_state"}
LIMITS = {
    "user_instructions": 12,
    "active_tasks": 6,
    "completed_actions": 30,
    "errors": 12,
    "decisions": 8,
    "artifacts": 30,
    "files_examined": 30,
    "key_facts": 15,
    "tool_usage": 12,
    "open_questions": 5,
    "blocked_items": 3,
    "next_steps": 5,
}
# Lists where the earliest entries matter as much as the latest (the first failure, the first file
# created): merging keeps a head and a tail of them rather than only the newest.
KEEP_HEAD = frozenset({"errors", "artifacts", "completed_actions", "files_examined", "user_instructions"})

_PLAN = re.compile(r"(?i)\b(next,? i(?:'ll| will)|i (?:will|need to|should|'ll)|let me|then i(?:'ll| will)|now i)\b")
_DECIDE = re.compile(r"(?i)\b(instead|decid|i chose|the (?:fix|solution|cause) is|root cause|because)\b")


def empty() -> dict[str, Any]:
    return {f: ([] if f in LIST_FIELDS else "") for f in FIELDS}


def _short(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def short_command(cmd: str) -> str:
    """First and last line of a multi-line command (heredocs end with the command that ran)."""
    lines = [ln.strip() for ln in cmd.strip().splitlines() if ln.strip()]
    if len(lines) <= 1:
        return _short(cmd, 200)
    return f"{_short(lines[0], 100)} … {_short(lines[-1], 120)}"


def _first_sentence(text: str, n: int = 200) -> str:
    text = re.sub(r"^(THOUGHT:\s*)", "", text.strip())
    m = re.search(r"(.+?[.!?])(\s|$)", text, re.S)
    return _short(m.group(1) if m else text, n)


def extract(messages: Sequence[Message], head_user: str = "") -> dict[str, Any]:
    """A deterministic summary of ``messages`` (no LLM): the fallback and the bench's default."""
    s = empty()
    s["user_goal"] = _short(head_user, 600) if head_user else ""
    calls: dict[str, Any] = {}
    tool_counts: dict[str, int] = {}
    last_assistant = ""
    for m in messages:
        if m.synthetic and m.meta.get("kind") == "summary":
            continue
        if m.role == "user" and not m.synthetic:
            s["user_instructions"].append(_short(m.text, 400))
        elif m.role == "assistant":
            if m.text.strip():
                last_assistant = m.text
                if _DECIDE.search(m.text):
                    s["decisions"].append(_first_sentence(m.text))
            for c in m.tool_calls:
                calls[c.id] = c
                tool_counts[c.name] = tool_counts.get(c.name, 0) + 1
                for path, op in signals.written_files(c):
                    s["artifacts"].append(f"{op}: {path}")
                for path in signals.read_files(c):
                    s["files_examined"].append(path)
        elif m.role == "tool":
            call = calls.get(m.tool_call_id or "")
            cmd = short_command(signals.command_of(call)) if call else (m.name or "tool")
            code = signals.exit_code(m)
            failed = signals.is_failure(m)
            outcome = f"exit code {code}" if code is not None else ("error" if failed else "ok")
            s["completed_actions"].append(f"`{cmd}` → {outcome}")
            if failed:
                exc = signals.last_exception_line(m.text)
                s["errors"].append(f"`{cmd}` failed with exit code {code if code is not None else '?'}" + (f": {exc}" if exc else ""))
            elif (exc := signals.last_exception_line(m.text)) is not None:
                s["key_facts"].append(f"`{cmd}` printed {exc}")
            for path in signals.diff_files(m.text):
                s["artifacts"].append(f"in diff: {path}")
    s["tool_usage"] = [f"{k}: {v} calls" for k, v in sorted(tool_counts.items(), key=lambda kv: -kv[1])]
    if last_assistant:
        s["current_state"] = _short(last_assistant, 500)
        plans = [ln.strip() for ln in re.split(r"(?<=[.!?])\s+|\n", last_assistant) if _PLAN.search(ln)]
        s["next_steps"] = [_short(p, 200) for p in plans]
    # Blockers: failures whose command never succeeded afterwards.
    ok_after: set[str] = set()
    blockers: list[str] = []
    for entry in reversed(s["completed_actions"]):
        cmd = entry.rsplit(" → ", 1)[0]
        if entry.endswith(("exit code 0", "ok")):
            ok_after.add(cmd)
        elif cmd not in ok_after and len(blockers) < LIMITS["blocked_items"]:
            blockers.append(f"{cmd} still failing")
    s["blocked_items"] = blockers
    return bound(s)


def _dedupe(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(i for i in items if i))


def bound(s: dict[str, Any]) -> dict[str, Any]:
    """Dedupe list fields and cut them to their limits (keeping head and tail where that matters)."""
    for f in LIST_FIELDS:
        items = _dedupe(str(x) for x in s.get(f, []))
        lim = LIMITS[f]
        if len(items) > lim:
            if f in KEEP_HEAD:
                h = lim // 2
                items = [*items[:h], f"… {len(items) - lim} more …", *items[-(lim - h - 1):]]
            else:
                items = items[-lim:]
        s[f] = items
    return s


def merge(old: dict[str, Any] | None, new: dict[str, Any]) -> dict[str, Any]:
    """Fold ``new`` into ``old``: lists are appended, resolved blockers and done steps dropped."""
    if not old:
        return bound(new)
    out = empty()
    for f in FIELDS:
        if f in LIST_FIELDS:
            out[f] = [*old.get(f, []), *new.get(f, [])]
        else:
            out[f] = new.get(f) or old.get(f, "")
    out["user_goal"] = old.get("user_goal") or new.get("user_goal", "")
    done = " ".join(new.get("completed_actions", []))
    out["blocked_items"] = [
        b for b in out["blocked_items"] if b not in old.get("blocked_items", []) or b.split(" still failing")[0] + " → exit code 0" not in done
    ]
    # A blocker from the old summary whose command now succeeded is resolved.
    out["blocked_items"] = [b for b in out["blocked_items"] if not _resolved(b, new)]
    out["next_steps"] = new.get("next_steps") or [s for s in old.get("next_steps", []) if not _step_done(s, done)]
    out["tool_usage"] = _merge_counts(old.get("tool_usage", []), new.get("tool_usage", []))
    return bound(out)


def _resolved(blocker: str, new: dict[str, Any]) -> bool:
    cmd = blocker.split(" still failing")[0]
    return any(a.startswith(cmd + " → ") and a.endswith(("exit code 0", "ok")) for a in new.get("completed_actions", []))


def _step_done(step: str, done: str) -> bool:
    words = [w for w in re.findall(r"[\w./-]{5,}", step)]
    return bool(words) and all(w in done for w in words[:3])


def _merge_counts(a: list[str], b: list[str]) -> list[str]:
    counts: dict[str, int] = {}
    for entry in [*a, *b]:
        name, _, rest = entry.partition(": ")
        try:
            counts[name] = counts.get(name, 0) + int(rest.split()[0])
        except (ValueError, IndexError):
            continue
    return [f"{k}: {v} calls" for k, v in sorted(counts.items(), key=lambda kv: -kv[1])]


def redact_summary(s: dict[str, Any]) -> dict[str, Any]:
    return {k: ([redact(str(x)) for x in v] if isinstance(v, list) else redact(str(v))) for k, v in s.items()}


TITLES = {f: f.replace("_", " ").capitalize() for f in FIELDS}


def render(s: dict[str, Any], covered: int) -> str:
    lines = [f"<compacted_summary messages=\"{covered}\">", "Summary of the earlier part of this session (older messages were compacted; originals are in the vault)."]
    for f in FIELDS:
        v = s.get(f)
        if not v:
            continue
        if isinstance(v, list):
            lines.append(f"## {TITLES[f]}")
            lines.extend(f"- {x}" for x in v)
        else:
            lines.append(f"## {TITLES[f]}\n{v}")
    lines.append("</compacted_summary>")
    return "\n".join(lines)
