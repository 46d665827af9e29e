"""The 14-field structured summary: a frozen ``Summary``, its extractive builder, incremental merge,
re-fitting to a share of the window, rendering, and its JSON form at the store boundary.

Rendering puts ``blocked_items`` and ``next_steps`` last: the end of a long message is where models
attend best ("lost in the middle"), and those two fields are what the agent must act on.

Was the module ``summary_model`` (context's summary_model.py before the rooms).
The spec (Layer 4, Structured Summarization) calls this the structured summary with 14 fields.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

from myrm_tui.context.privacy.redact import redact
from myrm_tui.context.summary import ledger
from myrm_tui.context.text import signals
from myrm_tui.context.types import SYNTHETIC_TAG, UNVERIFIED_CONTEXT_MARKER, Message


@dataclass(frozen=True, slots=True)
class Summary:
    """The summary of what compactions folded. Lists are tuples: a summary is never edited in place."""

    user_goal: str = ""
    user_instructions: tuple[str, ...] = ()
    active_tasks: tuple[str, ...] = ()
    completed_actions: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()
    decisions: tuple[str, ...] = ()
    artifacts: tuple[str, ...] = ()
    files_examined: tuple[str, ...] = ()
    key_facts: tuple[str, ...] = ()
    tool_usage: tuple[str, ...] = ()
    open_questions: tuple[str, ...] = ()
    current_state: str = ""
    blocked_items: tuple[str, ...] = ()
    next_steps: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The stored (and summarizer-facing) form: one key a field, lists as JSON arrays."""
        return {f: (list(v) if isinstance(v, tuple) else v) for f in FIELDS for v in (getattr(self, f),)}

    @classmethod
    def from_json(cls, data: Any) -> Summary:
        """A stored or model-written summary, whatever its shape: unknown keys are ignored, a missing
        field is empty, a string where a list belongs is one item, a list where a string belongs is
        joined, other values become their text (sessions stored by older versions load as they are)."""
        if isinstance(data, Summary):
            return data
        if not isinstance(data, Mapping):
            return cls()
        values: dict[str, Any] = {}
        for f in FIELDS:
            v = data.get(f)
            if v is None:
                continue
            if f in LIST_FIELDS:
                items = v if isinstance(v, list | tuple) else [v]
                values[f] = tuple(_text(x) for x in items if x is not None)
            else:
                values[f] = " ".join(_text(x) for x in v) if isinstance(v, list | tuple) else _text(v)
        return cls(**values)

    def texts(self) -> list[str]:
        """Every item and string of the summary, in field order."""
        out: list[str] = []
        for f in FIELDS:
            v = getattr(self, f)
            out.extend(v) if isinstance(v, tuple) else out.append(v)
        return [t for t in out if t]

    def __bool__(self) -> bool:
        return any(getattr(self, f) for f in FIELDS)


FIELDS: tuple[str, ...] = tuple(f.name for f in fields(Summary))
LIST_FIELDS = frozenset(FIELDS) - {"user_goal", "current_state"}


def _text(x: Any) -> str:
    return x if isinstance(x, str) else str(x)


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


def is_reminder(text: str) -> bool:
    """Text the pipeline wrapped as its own (``synthetic_user``): never the user's words, even when a
    message lost its synthetic flag on the way."""
    head = text.lstrip()[:400]
    return head.startswith(f"<{SYNTHETIC_TAG}") or UNVERIFIED_CONTEXT_MARKER in head


def users_words(m: Message) -> bool:
    """A message the user wrote: not a reminder, environment, hook context, re-read, note or summary."""
    return m.role == "user" and not m.synthetic and not is_reminder(m.text)


def first_user_words(messages: Iterable[Message]) -> str:
    """The first message the user wrote (a session may start with myrm's environment reminder)."""
    return next((m.text for m in messages if users_words(m)), "")


def copies_of(goal: str, words: str) -> bool:
    """Whether ``goal`` is ``words`` (the user's first message) as ``extract`` copies it: then a block
    whose view still holds that message need not say it again."""
    if not goal or not words:
        return False
    flat = " ".join(words.split())
    return goal == flat or (goal.endswith("…") and flat.startswith(goal[:-1]))


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


def extract(messages: Sequence[Message], head_user: str = "") -> Summary:
    """A deterministic summary of ``messages`` (no LLM): the fallback and the bench's default. Messages
    the pipeline made are never a source: only the user's words, the model's and the tools'."""
    out: dict[str, list[str]] = {f: [] for f in LIST_FIELDS}
    goal = "" if not head_user or is_reminder(head_user) else _short(head_user, 600)
    calls: dict[str, Any] = {}
    tool_counts: dict[str, int] = {}
    last_assistant = ""
    for m in messages:
        if m.synthetic and m.role != "tool":
            continue
        if m.role == "user":
            if users_words(m):
                out["user_instructions"].append(_short(m.text, 400))
        elif m.role == "assistant":
            if m.text.strip():
                last_assistant = m.text
                if _DECIDE.search(m.text):
                    out["decisions"].append(_first_sentence(m.text))
            for c in m.tool_calls:
                calls[c.id] = c
                tool_counts[c.name] = tool_counts.get(c.name, 0) + 1
                for path, op in signals.written_files(c):
                    out["artifacts"].append(f"{op}: {path}")
                for path in signals.read_files(c):
                    out["files_examined"].append(path)
        elif m.role == "tool":
            call = calls.get(m.tool_call_id or "")
            cmd = short_command(signals.command_of(call)) if call else (m.name or "tool")
            code = signals.exit_code(m)
            failed = signals.is_failure(m)
            out["completed_actions"].append(f"`{cmd}` → {outcome(code, failed)}")
            if failed:
                exc = signals.last_exception_line(m.text)
                out["errors"].append(f"`{cmd}` → {outcome(code, failed)}" + (f": {exc}" if exc else ""))
            elif (exc := signals.last_exception_line(m.text)) is not None:
                out["key_facts"].append(f"`{cmd}` printed {exc}")
            for path in signals.diff_files(m.text):
                out["artifacts"].append(f"in diff: {path}")
    out["tool_usage"] = [f"{k}: {v} calls" for k, v in sorted(tool_counts.items(), key=lambda kv: -kv[1])]
    state = ""
    if last_assistant:
        state = _short(last_assistant, 500)
        plans = [ln.strip() for ln in re.split(r"(?<=[.!?])\s+|\n", last_assistant) if _PLAN.search(ln)]
        out["next_steps"] = [_short(p, 200) for p in plans]
    # Blockers: failures whose command never succeeded afterwards.
    ok_after: set[str] = set()
    blockers: list[str] = []
    for entry in reversed(out["completed_actions"]):
        cmd = entry.rsplit(" → ", 1)[0]
        if entry.endswith(" → ok"):
            ok_after.add(cmd)
        elif cmd not in ok_after and len(blockers) < LIMITS["blocked_items"]:
            blockers.append(f"{cmd} still failing")
    out["blocked_items"] = blockers
    return bound(Summary(user_goal=goal, current_state=state, **{k: tuple(v) for k, v in out.items()}))


def _dedupe(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(i for i in items if i))


def bound(s: Summary) -> Summary:
    """Dedupe list fields and cut them to their limits (keeping head and tail where that matters)."""
    changes: dict[str, Any] = {}
    for f in LIST_FIELDS:
        items = _dedupe(getattr(s, f))
        lim = LIMITS[f]
        if len(items) > lim:
            if f in KEEP_HEAD:
                h = lim // 2
                items = [*items[:h], f"… {len(items) - lim} more …", *items[-(lim - h - 1) :]]
            else:
                items = items[-lim:]
        changes[f] = tuple(items)
    return replace(s, **changes)


def repaired(s: Summary | None, goal: str) -> Summary | None:
    """``s`` without what myrm wrote itself: a reminder stored as the goal (older versions took the first
    user message of the head, myrm's environment reminder) becomes ``goal``, the user's first words."""
    if s is None:
        return None
    bad = [t for t in s.user_instructions if is_reminder(t)]
    if not is_reminder(s.user_goal) and not bad:
        return s
    return replace(
        s,
        user_goal=_short(goal, 600) if is_reminder(s.user_goal) and not is_reminder(goal) else s.user_goal,
        user_instructions=tuple(t for t in s.user_instructions if not is_reminder(t)),
    )


def merge(old: Summary | None, new: Summary) -> Summary:
    """Fold ``new`` into ``old``: lists are appended, resolved blockers, done steps and superseded decisions
    (``ledger.superseded``) dropped. A goal that is one of myrm's reminders is replaced (repaired) by the new
    summary's."""
    if not old:
        return bound(new)
    goal = old.user_goal if old.user_goal and not is_reminder(old.user_goal) else new.user_goal
    done = " ".join(new.completed_actions)
    lists = {f: (*getattr(old, f), *getattr(new, f)) for f in LIST_FIELDS}
    lists["user_instructions"] = tuple(t for t in lists["user_instructions"] if not is_reminder(t))
    # Merged by meaning: a decision a newer one on the same subject superseded goes, the newest stays.
    gone = ledger.superseded(lists["decisions"])
    lists["decisions"] = tuple(d for d, g in zip(lists["decisions"], gone, strict=True) if not g)
    # A blocker from the old summary whose command now succeeded is resolved.
    lists["blocked_items"] = tuple(b for b in lists["blocked_items"] if not _resolved(b, new))
    lists["next_steps"] = new.next_steps or tuple(s for s in old.next_steps if not _step_done(s, done))
    lists["tool_usage"] = tuple(_merge_counts(old.tool_usage, new.tool_usage))
    return bound(
        Summary(
            user_goal="" if is_reminder(goal) else goal,
            current_state=new.current_state or old.current_state,
            **lists,
        )
    )


def _resolved(blocker: str, new: Summary) -> bool:
    cmd = blocker.split(" still failing")[0]
    return any(a == cmd + " → ok" for a in new.completed_actions)


def _step_done(step: str, done: str) -> bool:
    words = [w for w in re.findall(r"[\w./-]{5,}", step)]
    return bool(words) and all(w in done for w in words[:3])


def _merge_counts(a: Sequence[str], b: Sequence[str]) -> list[str]:
    counts: dict[str, int] = {}
    for entry in [*a, *b]:
        name, _, rest = entry.partition(": ")
        try:
            counts[name] = counts.get(name, 0) + int(rest.split()[0])
        except (ValueError, IndexError):
            continue
    return [f"{k}: {v} calls" for k, v in sorted(counts.items(), key=lambda kv: -kv[1])]


_SEP = "\n\x00\n"


def redact_summary(s: Summary) -> Summary:
    """Every field redacted, in one pass over all of them (a pass per item costs ~1 ms a hundred items).

    A private key spanning items keeps the separators it covered; should the items still not come back
    one for one, each is redacted on its own, and an item whose redaction fails becomes ``[redacted]``."""
    values = [(f, getattr(s, f)) for f in FIELDS]  # an empty field has nothing to redact
    flat = [x for _, v in values if v for x in (v if isinstance(v, tuple) else (v,))]
    # guard: redaction-a-key-across-summary-items
    out = redact(_SEP.join(flat), keep_lines=True).split(_SEP) if flat else []
    if len(out) != len(flat):
        out = [redact(x) for x in flat]
    done = iter(x if x == orig else (x.strip() or "[redacted]") for x, orig in zip(out, flat, strict=True))
    redacted: dict[str, Any] = {
        f: (tuple(next(done) for _ in v) if isinstance(v, tuple) else next(done)) for f, v in values if v
    }
    return Summary(**redacted)


TITLES = {f: f.replace("_", " ").capitalize() for f in FIELDS}


# Fields a block leaves out: the ledger below them already holds these, verbatim (artifacts: the calls'
# ``created:``/``modified:`` lines and the diffs' paths). Artifacts listed again in every block took room
# the Record's lines then lacked (swe-dev tune halves: 8K agent facts 38 -> 39 of 78, tool facts 91 -> 92 of
# 125, 32K tool facts 124 -> 125; nothing lower on any window or corpus measured). The whole summary, in the
# vault, keeps them all.
BLOCK_SKIP = frozenset(
    {"user_instructions", "completed_actions", "files_examined", "tool_usage", "artifacts"}
)
CONTINUITY = ("current_state", "blocked_items", "next_steps")
EMPTY = Summary()


def render_block(
    fresh: Summary, merged: Summary, record: Sequence[str], covered: int, part: int, note: str = ""
) -> str:
    """One compaction's summary block: what it folded (fields, then the verbatim ledger), ending with the
    session's current state, blockers and next steps (the tail is where models attend best)."""
    lines = [
        f'<compacted_summary part="{part}" messages="{covered}">',
        "Earlier messages of this session were compacted; lines under Record are copied verbatim from them "
        "(originals are in the vault; history_search finds any earlier message or output by its words).",
    ]
    if note:
        lines.append(note)
    for f in FIELDS:
        v = getattr(fresh, f)
        if not v or f in BLOCK_SKIP or f in CONTINUITY or (f == "user_goal" and part > 1):
            continue
        _section(lines, f, v)
    if record:
        lines.append("## Record")
        lines.extend(record)
    for f in CONTINUITY:
        if getattr(merged, f):
            _section(lines, f, getattr(merged, f))
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


def _section(lines: list[str], f: str, v: str | tuple[str, ...]) -> None:
    if isinstance(v, tuple):
        lines.append(f"## {TITLES[f]}")
        lines.extend(f"- {x}" for x in v)
    else:
        lines.append(f"## {TITLES[f]}\n{v}")


def render(s: Summary, covered: int) -> str:
    lines = [
        f'<compacted_summary messages="{covered}">',
        "Summary of the earlier part of this session (older messages were compacted; originals "
        "are in the vault).",
    ]
    for f in FIELDS:
        v = getattr(s, f)
        if v:
            _section(lines, f, v)
    lines.append("</compacted_summary>")
    return "\n".join(lines)


# -- within its share ------------------------------------------------------------------------------
# The fields the agent must act on, never dropped, only shortened (and last): the goal, the user's
# instructions (the Record's "user:" lines), the newest errors, the current state, blockers, next steps.
KEPT_ERRORS = 3
# Squeeze levels: (chars an older entry of an other field keeps, how many of its newest entries stay,
# chars of a protected entry, chars of the goal, chars of a "user:" Record line). Each level is tried
# only when the one before did not fit; an older entry is shortened before a newer one.
_LEVELS: tuple[tuple[int, int, int, int, int], ...] = (
    (10**6, 10**6, 10**6, 10**6, 10**6),
    (160, 10**6, 10**6, 10**6, 1500),
    (100, 3, 300, 600, 400),
    (80, 1, 160, 300, 240),
    (0, 0, 120, 200, 160),
    (0, 0, 80, 120, 100),
    (0, 0, 50, 80, 70),
)
SHORTENED = "(shortened to fit its share of the window; the whole summary: {uri})"


@dataclass(frozen=True, slots=True)
class FittedBlock:
    text: str
    record: list[str]  # the Record lines kept
    squeezed: bool  # fields were shortened: the whole summary went to the vault (``note`` points there)


def _squeeze(s: Summary, level: int, keep_goal: bool) -> Summary:
    other, newest, kept, goal_chars, _ = _LEVELS[level]
    if level == 0:
        return s
    changes: dict[str, Any] = {}
    for f in LIST_FIELDS - BLOCK_SKIP - set(CONTINUITY):
        items = getattr(s, f)
        protected = items[-KEPT_ERRORS:] if f == "errors" else ()
        rest = items[: len(items) - len(protected)]
        # Older entries of other fields go first: the newest stay (shortened), the oldest leave.
        start = max(len(rest) - newest, 0)
        rest = tuple(_short(x, other) for x in rest[start:]) if other else ()
        changes[f] = (*rest, *(_short(x, kept) for x in protected))
    for f in ("blocked_items", "next_steps"):
        changes[f] = tuple(_short(x, kept) for x in getattr(s, f))
    changes["current_state"] = _short(s.current_state, max(kept * 2, 120))
    changes["user_goal"] = _short(s.user_goal, goal_chars) if keep_goal else s.user_goal
    return replace(s, **changes)


def _short_ends(text: str, n: int) -> str:
    """``text`` within ``n`` chars by its head and its tail (``_short`` keeps the head only)."""
    text = " ".join(text.split())
    if len(text) <= n:
        return text
    head = (n - 1) // 2
    return text[:head] + "…" + text[len(text) - (n - 1 - head) :]


def _clip_user(lines: Sequence[ledger.Line], n: int) -> list[ledger.Line]:
    """Record lines of the user's rank cut to ``n`` chars: the user's words by their head, the opening of
    the agent's reply (``decided``) by its head and tail, where a sentence that reports ends on what it
    found ("the fastest is Option 2 with a total travel time of 5 hours"); others as they are."""
    # guard: a-reply-opening-keeps-its-head-and-tail
    cut = [_short_ends if ln.decided else _short for ln in lines]
    return [
        replace(ln, text=c(ln.text, n)) if ln.priority >= ledger.P_USER else ln
        for ln, c in zip(lines, cut, strict=True)
    ]


def fit_block(
    fresh: Summary,
    merged: Summary,
    lines: Sequence[ledger.Line],
    seen: set[str],
    covered: int,
    part: int,
    max_tokens: int,
    count: Callable[[str], int],
    budget_chars: int | None = None,
    vault_uri: Callable[[], str] | None = None,
) -> FittedBlock:
    """One summary block within ``max_tokens``: the Record (``ledger.Line``s) is fitted first within
    ``budget_chars``, then older entries of the fields are shortened and left out, level by level, the
    goal, the user's words, the newest errors, blockers and next steps last and only shortened. When
    fields were shortened, ``vault_uri()`` stores the whole summary and the block points there."""
    last = FittedBlock("", [], False)
    for level in range(len(_LEVELS)):
        f, m = _squeeze(fresh, level, part == 1), _squeeze(merged, level, False)
        rec_lines = _clip_user(lines, _LEVELS[level][4]) if level else lines
        note = SHORTENED.format(uri=vault_uri()) if level and vault_uri is not None else ""
        bare = render_block(f, m, [], covered, part, note)
        room = max_tokens - count(bare)
        if room < 0:
            continue
        budget = room * ledger.CHARS_PER_TOKEN
        if budget_chars is not None and level == 0:
            budget = min(budget, budget_chars)
        # guard: the-record-squeezes-the-lines-it-drops
        fitter = ledger.Fitter(rec_lines, seen, squeeze=True)
        for _ in range(5):
            kept = fitter(max(budget, 0))
            text = render_block(f, m, kept, covered, part, note)
            over = count(text) - max_tokens
            if over <= 0:
                # The user's words are part of what must stay: a level that lost them is not good enough.
                if level + 1 < len(_LEVELS) and fitter.lost_users(kept):
                    break
                return FittedBlock(text, kept, level > 0)
            budget = max(int(budget * (1 - over / max(count(text), 1))) - 50, 0)
            if not kept:
                break
        last = FittedBlock(bare, [], level > 0)
    return last if count(last.text) <= max_tokens else _hard_cut(last.text or bare, max_tokens, count)


def _hard_cut(text: str, max_tokens: int, count: Callable[[str], int]) -> FittedBlock:
    """The last resort (a share too small for even the shortest fields, or text of many tokens a
    character): the block cut at a line end, its closing tag kept."""
    end = "\n</compacted_summary>"
    lines = text.removesuffix(end).splitlines()
    while lines and count("\n".join(lines) + end) > max_tokens:
        lines.pop()
    return FittedBlock("\n".join(lines) + end if lines else "", [], True)


@dataclass(frozen=True, slots=True)
class PreparedSummary:
    """An audited 14-field summary of the messages whose stored ids are ``covers``
    (``context/summary/prepared.py`` prepares and adopts it; here because the step contract carries it: no
    import circle)."""

    summary: Summary
    covers: frozenset[str]
    source: str = "llm"
    epoch: int = 0  # ``ContextState.compactions`` when it was asked for
