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

_PLAN = re.compile(
    r"(?i)\b(next,? i(?:'ll| will)|i (?:will|need to|should|'ll)|let me|then i(?:'ll| will)|now i)\b"
)
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


def outcome(code: int | None, failed: bool) -> str:
    """How a tool call ended, in the result's own terms (``<returncode>N</returncode>`` → "returncode N")."""
    if code is not None:
        return "ok" if code == 0 else f"returncode {code}"
    return "error" if failed else "ok"


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
            s["completed_actions"].append(f"`{cmd}` → {outcome(code, failed)}")
            if failed:
                exc = signals.last_exception_line(m.text)
                s["errors"].append(f"`{cmd}` → {outcome(code, failed)}" + (f": {exc}" if exc else ""))
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
        if entry.endswith(" → ok"):
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
                items = [*items[:h], f"… {len(items) - lim} more …", *items[-(lim - h - 1) :]]
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
    # A blocker from the old summary whose command now succeeded is resolved.
    out["blocked_items"] = [b for b in out["blocked_items"] if not _resolved(b, new)]
    out["next_steps"] = new.get("next_steps") or [
        s for s in old.get("next_steps", []) if not _step_done(s, done)
    ]
    out["tool_usage"] = _merge_counts(old.get("tool_usage", []), new.get("tool_usage", []))
    return bound(out)


def _resolved(blocker: str, new: dict[str, Any]) -> bool:
    cmd = blocker.split(" still failing")[0]
    return any(a == cmd + " → ok" for a in new.get("completed_actions", []))


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


_SEP = "\n\x00\n"


def redact_summary(s: dict[str, Any]) -> dict[str, Any]:
    """Every field redacted, in one pass over all of them (a pass per item costs ~1 ms a hundred items).

    A private key spanning items keeps the separators it covered; should the items still not come back
    one for one, each is redacted on its own, and an item whose redaction fails becomes ``[redacted]``."""
    flat = [str(x) for v in s.values() for x in (v if isinstance(v, list) else [v])]
    out = redact(_SEP.join(flat), keep_lines=True).split(_SEP) if flat else []
    if len(out) != len(flat):
        out = [redact(x) for x in flat]
    done = iter(x if x == orig else (x.strip() or "[redacted]") for x, orig in zip(out, flat, strict=True))
    return {k: ([next(done) for _ in v] if isinstance(v, list) else next(done)) for k, v in s.items()}


TITLES = {f: f.replace("_", " ").capitalize() for f in FIELDS}


# Fields a block leaves out: the ledger below them already holds these, verbatim.
BLOCK_SKIP = frozenset({"user_instructions", "completed_actions", "files_examined", "tool_usage"})
CONTINUITY = ("current_state", "blocked_items", "next_steps")


def render_block(
    fresh: dict[str, Any], merged: dict[str, Any], record: Sequence[str], covered: int, part: int
) -> str:
    """One compaction's summary block: what it folded (fields, then the verbatim ledger), ending with the
    session's current state, blockers and next steps (the tail is where models attend best)."""
    lines = [
        f'<compacted_summary part="{part}" messages="{covered}">',
        "Earlier messages of this session were compacted; lines under Record are copied verbatim from them "
        "(originals are in the vault).",
    ]
    for f in FIELDS:
        v = fresh.get(f)
        if not v or f in BLOCK_SKIP or f in CONTINUITY or (f == "user_goal" and part > 1):
            continue
        _section(lines, f, v)
    if record:
        lines.append("## Record")
        lines.extend(record)
    for f in CONTINUITY:
        if merged.get(f):
            _section(lines, f, merged[f])
    lines.append("</compacted_summary>")
    return "\n".join(lines)


def record_lines(block_text: str) -> list[str]:
    """The Record lines of a rendered block (to fold old blocks into a consolidated one)."""
    out: list[str] = []
    inside = False
    for ln in block_text.splitlines():
        if ln.startswith("## "):
            inside = ln == "## Record"
        elif inside and not ln.startswith("</compacted_summary"):
            out.append(ln)
    return out


def _section(lines: list[str], f: str, v: Any) -> None:
    if isinstance(v, list):
        lines.append(f"## {TITLES[f]}")
        lines.extend(f"- {x}" for x in v)
    else:
        lines.append(f"## {TITLES[f]}\n{v}")


def render(s: dict[str, Any], covered: int) -> str:
    lines = [
        f'<compacted_summary messages="{covered}">',
        "Summary of the earlier part of this session (older messages were compacted; originals "
        "are in the vault).",
    ]
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
