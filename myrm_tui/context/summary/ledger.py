"""The fact ledger: what a compaction keeps verbatim of the messages it folds away.

Later turns refer back to exact strings — a path, ``446:def _sqlite_datetime_cast_date``, ``FAILED
(failures=3)``, ``Error: not enough seats on flight HAT229``, a decision the assistant wrote. A
paraphrase loses them, so the ledger copies lines, never rewords them: each folded message gives a
few lines (the user's words, the assistant's decision sentences, the command that ran, the salient
lines of its output), each with a priority. When the ledger is over its budget the lowest-priority
lines go first; what is kept stays in the original order.
"""

from __future__ import annotations

import json
import logging
import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import chain

from myrm_tui.context import memo
from myrm_tui.context.filters.shell import strip_ansi
from myrm_tui.context.memo import memoized
from myrm_tui.context.text import line_scan, signals
from myrm_tui.context.text.trimming import head_tail
from myrm_tui.context.types import Message

log = logging.getLogger(__name__)

# Priorities: higher survives longer.
P_USER = 9
P_RESULT = 8  # test summaries, error and exception lines, a short output whole
P_CALL = 7  # the command or call arguments
P_DECISION = 5  # assistant sentences that decide or conclude
P_LOCATED = 6  # grep -n hits, definitions, lines naming a path
P_PROSE = 3  # the opening of other assistant text
P_CODE = 3  # lines of a numbered file view
P_FILL = 2  # the other lines of a medium output (script prints, a short file view): kept while room allows
P_OTHER = 1

CHARS_PER_TOKEN = 3  # ledger lines are code and ids: denser than prose
MAX_LINE_CHARS = 240
JSON_LINE_CHARS = 400
SHORT_OUTPUT_LINES = 12  # an output this short is kept whole: script prints are what gets asked about
SHORT_OUTPUT_CHARS = 900
SALIENT_CACHE_CHARS = 60_000  # outputs up to this long: the last 256 are remembered
# Longer ones: only the last few (memory). One long output is read several times in a row (when it enters
# the view, by the fit step's cut of it, when it is folded): half the reading of a long session's outputs.
SALIENT_BIG_CACHE = 8
MAX_OUTPUT_LINES = 24  # salient lines taken from one longer output
FILL_OUTPUT_LINES = 48  # an output up to this many distinct lines also gives its other lines, at P_FILL

# Result and error lines; matched on the lower-cased text (one case-sensitive pass is several times
# faster than an IGNORECASE one over a 30K-char output). An outcome is a verdict (``5 passed``, ``FAILED``,
# ``Ran 3 tests``), an error line (``ValueError: …``, ``Error: not enough seats``) or a failure phrase;
# not an identifier that merely contains the word (``violation_error_message``, ``RemovedInDjango60Warning``,
# ``warnings.warn(``): word boundaries and the line-start anchors keep a file view of error-handling code
# from outranking every command and decision of the session.
_RESULT = re.compile(
    r"\b\d+ (?:passed|failed|errors?|skipped|xfailed|xpassed|deselected|warnings?)\b"
    r"|^(?:fail(?:ed|ure)?|error|ok|passed|success|fatal)\b(?![(.=_])"
    r"|\bran \d+ tests?\b|failures=|errors=|traceback \(most|^=+ .* =+$"
    r"|^(?:e\s+)?[\w.]*(?:error|exception|warning)\b:",
    re.M,
)
_RESULT_I = re.compile(_RESULT.pattern, re.M | re.I)
# Weaker signs of an outcome: they count on a line of output, not on a line of code (``raise
# ValueError("invalid")``, ``except Exception:`` in a file view).
_FAILURE = re.compile(
    r"\b(?:error|failed|failure|exception)\b(?![(.=_\w])|(?:error|exception|warning)\b: "
    r"|not found|no such|cannot|can't|unable to|denied|invalid|mismatch|\bsuccess",
    re.M,
)
_FAILURE_I = re.compile(_FAILURE.pattern, re.M | re.I)
_CODE = re.compile(
    r"^\s*(?:\d+[\t→]\s*)?(?:def |class |return\b|raise\b|if |elif |else:|for |while |try:|except\b|with |"
    r"import |from \S+ import|assert |@\w|#|//)|^\s{4,}\S.*(?:[=(){}\[\]]|\bself\b)"
)
# A file view's line-number prefix: ``cat -n`` / ``nl -ba`` put a tab after the number, Claude Code's
# ``Read`` an arrow (``    12→code``); an imported session's reads are file views like ours.
# Located lines: grep -n hits, definitions (also in a numbered view), traceback frames.
_LOCATED_AT = r"[ \t]*(?:(?:[^\s:]+:)?\d+[:-]|(?:\d+[\t→][ \t]*)?(?:async[ \t]+)?(?:def|class)[ \t]+\w)"
_LOCATED = re.compile(rf"^{_LOCATED_AT}|line \d", re.M)
# Any other line of a numbered file view: code, below hits and definitions, or a 40-line view would
# outrank every result line of the session.
_NUMBERED_AT = r"[ \t]*\d+[\t→]"
_NUMBERED = re.compile(rf"^{_NUMBERED_AT}", re.M)
DECIDE = re.compile(
    r"(?i)\b(instead|decid|chose|choose|the (fix|solution|cause|problem|issue|bug) (is|was)"
    r"|root cause|because|so the|this means|therefore|confirm|works?\b|fixed|passes|fails|conclude"
    r"|i will|i'll|plan|the correct|should)\b"
)
# A cheap "names a file" test (signals.paths_in is exact but too slow to run on every line of every output).
_PATH_SLASH = r"/[\w.-]+\.[A-Za-z]\w{0,5}\b"
_PATH_EXT = r"\.(?:py|pyi|js|ts|tsx|rs|go|c|h|cpp|java|rb|toml|cfg|ini|json|ya?ml|txt|md|rst|sh|html)\b"
_PATHISH = re.compile(rf"[\w-]{_PATH_SLASH}|{_PATH_EXT}")
# The same patterns, run where they can match only (``text/line_scan.py``; ``_line_priorities``). Every
# match of _RESULT or _FAILURE (on lower-cased text) holds one of their needles, but for _RESULT's ``^ok`` and
# ``^=`` (looked up at line starts); a line that is ``e`` alone lets _RESULT's ``^e\s+`` run on into the
# next line, so such a text is read the plain way.
_RESULT_NEEDLES = (
    "passed", "fail", "error", "skipped", "deselected", "warning", "success", "fatal", "ran ",
    "traceback (most", "exception",
)  # fmt: skip
_RESULT_START = re.compile(r"^(?:ok|=)", re.M)
_RESULT_START_NL = re.compile(r"\n(?:ok|=)")
_FAILURE_NEEDLES = (
    "error", "fail", "exception", "warning", "not found", "no such", "cannot", "can't", "unable to",
    "denied", "invalid", "mismatch", "success",
)  # fmt: skip
_E_ALONE = re.compile(r"^e\s*$", re.M)
_LOCATED_NL = re.compile(rf"\n{_LOCATED_AT}")
_LINE_NO = re.compile(r"line \d")
_NUMBERED_NL = re.compile(rf"\n{_NUMBERED_AT}")
_PATH_AFTER = re.compile(
    _PATH_SLASH
)  # starts with "/", which ``re`` jumps to; the character before is checked
_PATH_CHAR = re.compile(r"[\w-]")
_PATH_EXT_RX = re.compile(_PATH_EXT)
# Rules, lone brackets, and the blank lines of a numbered view (``   480\t``).
_NOISE = re.compile(r"^\s*([-=_*#.~`]{3,}|[{}\[\](),;]+|\d+[\t→])?\s*$")
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


@dataclass(frozen=True, slots=True)
class Line:
    text: str
    priority: int
    decided: bool = False  # the agent's own words: a later decision on its subject supersedes it
    referred: bool = False  # a later message refers to what it holds: among equals it is the last to go
    own: bool = False  # it states a fact no earlier message held that a later one comes back to


def _clip(line: str, n: int = MAX_LINE_CHARS) -> str:
    line = line.rstrip()
    return line if len(line) <= n else line[: n - 1] + "…"


def _json_lines(text: str) -> list[str] | None:
    """A JSON output as one line per item, in the provider's own separators (``"price": 140`` stays as
    written); an item too long for one line is split into its members, so ids deep inside survive."""
    s = text.strip()
    if not s or s[0] not in "[{":
        return None
    try:
        value = json.loads(s)
    except (json.JSONDecodeError, RecursionError):
        return None
    out: list[str] = []

    def walk(v: object, prefix: str, depth: int) -> None:
        line = prefix + json.dumps(v, ensure_ascii=False)
        if len(line) <= JSON_LINE_CHARS or depth >= 3 or not isinstance(v, dict | list):
            out.append(line)
            return
        for k, x in v.items() if isinstance(v, dict) else enumerate(v):
            walk(x, f"{json.dumps(k)}: " if isinstance(k, str) else "", depth + 1)

    walk(value, "", 0)
    return out


@lru_cache(maxsize=256)
def text_envelope(text: str) -> dict[str, object] | None:
    """``text`` as a JSON object wrapping text, or None: a tool that returns its output inside JSON
    (``{"content": "     1|---\\n     2|name: …", "total_lines": 40}``, ``{"output": "…", "exit_code": 0}``)
    has a string member of several lines. Its text is an output to be read by its lines, not a record."""
    s = text.strip()
    if not s.startswith("{") or "\\n" not in s:
        return None
    try:
        value = json.loads(s)
    except (json.JSONDecodeError, RecursionError):
        return None
    if isinstance(value, dict) and any(isinstance(x, str) and "\n" in x.strip() for x in value.values()):
        return value
    return None


def salient_lines(text: str, max_lines: int = MAX_OUTPUT_LINES) -> list[Line]:
    """Lines of a tool output worth keeping verbatim, in order, with priorities.

    A short output is kept whole; a JSON output keeps its items whole (ids and prices live there); from a
    longer text output, result and error lines, located lines (``path:12:``, ``def``/``class``) and lines
    naming a path, at most ``max_lines`` of them, deduplicated. Remembered for recent outputs: the summary
    ledger reads an output when it enters the view, the answered-output trim on the next request."""
    if len(text) > SALIENT_CACHE_CHARS:
        return list(_salient_big(text, max_lines))
    return list(_salient_cached(text, max_lines))


def _salient_tuple(text: str, max_lines: int) -> tuple[Line, ...]:
    return tuple(_salient_lines(text, max_lines))


_salient_cached = lru_cache(maxsize=256)(_salient_tuple)
_salient_big = lru_cache(maxsize=SALIENT_BIG_CACHE)(_salient_tuple)


def _salient_lines(text: str, max_lines: int) -> list[Line]:
    body = text.strip()
    if body.startswith("<returncode>"):
        body = re.sub(r"^<returncode>-?\d+</returncode>\s*(<output>\s*)?", "", body)
        body = re.sub(r"\s*</output>\s*$", "", body)
    items = _json_lines(body)
    if items is not None:
        return [
            Line(_clip(x, 2 * JSON_LINE_CHARS), P_RESULT if i < 8 else P_LOCATED)
            for i, x in enumerate(items[:60])
        ]
    lines = [ln for ln in body.splitlines() if not _NOISE.match(ln)]
    if len(lines) <= SHORT_OUTPUT_LINES and len(body) <= SHORT_OUTPUT_CHARS:
        return [Line(_clip(ln), P_RESULT) for ln in lines]
    text = "\n".join(lines)
    starts = line_scan.line_starts(lines)
    prio = _line_priorities(lines, text, text.lower(), starts)
    picked: list[tuple[int, int]] = []  # (line, priority): a Line is made only for the lines kept
    seen: set[str] = set()
    for k in sorted(prio):
        key = lines[k].strip()
        if key in seen:
            continue
        seen.add(key)
        picked.append((k, prio[k]))
    distinct = {ln.strip() for ln in lines} if len(lines) <= 2 * FILL_OUTPUT_LINES else ()
    if 0 < len(distinct) <= FILL_OUTPUT_LINES:
        # A medium output — what a script printed, a short file view: its plain lines are asked about too
        # (``DEBUG: dtype: object``, ``# unique_together``). The ledger drops them first when it is full.
        for k, ln in enumerate(lines):
            key = ln.strip()
            if key not in seen:
                seen.add(key)
                picked.append((k, P_FILL))
        picked.sort(key=lambda x: x[0])
    elif len(picked) > max_lines:
        # Keep the highest priorities; among equals, the last lines (summaries come at the end).
        ranked = sorted(range(len(picked)), key=lambda i: (picked[i][1], i), reverse=True)[:max_lines]
        picked = [picked[i] for i in sorted(ranked)]
    kept = [(k, Line(_clip(lines[k]), p)) for k, p in picked]
    # The last line is where most commands report.
    tail = lines[-1].strip() if lines else ""
    kept = [(k, ln) for k, ln in kept if ln.text.strip() != tail or k == len(lines) - 1]
    if tail and (not kept or kept[-1][0] != len(lines) - 1):
        kept.append((len(lines) - 1, Line(_clip(lines[-1]), P_RESULT)))
    elif kept:
        kept[-1] = (kept[-1][0], Line(kept[-1][1].text, max(kept[-1][1].priority, P_RESULT)))
    return [ln for _, ln in kept]


def _line_priorities(lines: Sequence[str], text: str, low: str, starts: Sequence[int]) -> dict[int, int]:
    """The priority of each line of ``text`` (``"\\n".join(lines)``; ``low`` lower-cased) that a pattern
    marks: a numbered view's code, located lines, paths, results, failures. Each pattern runs only where
    it can match (``_line_priorities_plain``, one pass per pattern over the text, gives the same)."""
    # guard: a-text-the-shortcuts-cannot-read-the-plain
    if len(low) != len(text) or _E_ALONE.search(low):
        return _line_priorities_plain(lines, text, low, starts)
    ends = [s + len(ln) for s, ln in zip(starts, lines, strict=True)]
    slash = {
        bisect_right(starts, mt.start()) - 1
        for mt in _PATH_AFTER.finditer(text)
        if mt.start() and _PATH_CHAR.match(text, mt.start() - 1)
    }
    located = line_scan.starting(text, starts, _LOCATED, _LOCATED_NL) | line_scan.hit_lines(
        _LINE_NO, text, starts
    )
    results = line_scan.holding(low, starts, _RESULT_NEEDLES)
    results |= line_scan.starting(low, starts, _RESULT_START, _RESULT_START_NL)
    prio: dict[int, int] = {}
    for ks, p in (
        (line_scan.starting(text, starts, _NUMBERED, _NUMBERED_NL), P_CODE),
        (located | slash | line_scan.hit_lines(_PATH_EXT_RX, text, starts), P_LOCATED),
        (line_scan.confirmed(_RESULT, low, starts, ends, results), P_RESULT),
    ):
        for k in ks:
            prio[k] = max(prio.get(k, 0), p)
    failures = line_scan.confirmed(
        _FAILURE, low, starts, ends, line_scan.holding(low, starts, _FAILURE_NEEDLES)
    )
    for k in failures:
        if prio.get(k, 0) < P_RESULT and not _CODE.match(lines[k]):
            prio[k] = P_RESULT
    return prio


def _line_priorities_plain(
    lines: Sequence[str], text: str, low: str, starts: Sequence[int]
) -> dict[int, int]:
    """``_line_priorities`` by one regex pass over the whole text per kind (a search per line is ten times
    slower)."""
    prio: dict[int, int] = {}
    same = len(low) == len(text)  # lower() may change lengths
    results, failures = ((_RESULT, low), (_FAILURE, low)) if same else ((_RESULT_I, text), (_FAILURE_I, text))
    kinds = (
        (_NUMBERED, P_CODE, text),
        (_LOCATED, P_LOCATED, text),
        (_PATHISH, P_LOCATED, text),
        (*results[:1], P_RESULT, results[1]),
    )
    for rx, p, src in kinds:
        for k in line_scan.hit_lines(rx, src, starts):
            prio[k] = max(prio.get(k, 0), p)
    for k in line_scan.hit_lines(failures[0], failures[1], starts):
        if prio.get(k, 0) < P_RESULT and not _CODE.match(lines[k]):
            prio[k] = P_RESULT
    return prio


def _assistant_lines(text: str, reply: bool = False) -> list[Line]:
    """The opening sentence and the deciding ones; of a ``reply`` to the user (no tool call), every
    sentence as a decision: what it offers, confirms or concludes is what the user answers to."""
    text = re.sub(r"^\s*THOUGHT:\s*", "", text.strip())
    text = re.sub(r"```(?:bash|sh)?\n.*?```", "", text, flags=re.S).strip()
    if not text:
        return []
    sentences = [s.strip() for s in _SENTENCE.split(text) if s.strip()]
    if reply:
        # The opening of a reply states what the turn found or concluded (the option chosen, the booking
        # found): what the user answers to, so it ranks with the user's own words — one short line a
        # turn, where a bulky output gives dozens.
        return [Line(_clip(s, 300), P_USER if k == 0 else P_DECISION) for k, s in enumerate(sentences)]
    out = [Line(_clip(sentences[0], 300), P_PROSE)]
    out += [Line(_clip(s, 300), P_DECISION) for s in sentences[1:] if DECIDE.search(s) or "`" in s]
    return out


def _call_line(call_name: str, arguments: str, command: str) -> str:
    if command and (call_name in signals.COMMAND_TOOLS or '"command"' in arguments[:40]):
        lines = [ln for ln in command.strip().splitlines() if ln.strip()]
        if len(lines) <= 3:
            return "$ " + _clip(" ; ".join(ln.strip() for ln in lines), 400)
        return f"$ {_clip(lines[0].strip(), 200)} … {_clip(lines[-1].strip(), 160)} [{len(lines)} lines]"
    return f"{call_name} {_clip(arguments, 500)}"


def record(messages: Sequence[Message]) -> list[Line]:
    """The ledger lines of ``messages`` (pipeline-made messages are skipped: they are rebuilt or folded)."""
    return [ln for m in messages for ln in record_one(m)]


def record_one(m: Message) -> list[Line]:
    """The ledger lines of one message; one that cannot be read is logged and stands as a plain
    placeholder line, so one odd shape never stops a compaction."""
    try:
        return _lines_of(m)
    except Exception:
        log.exception("ledger: message %s (%s) could not be recorded; a placeholder stands in", m.id, m.role)
        return [Line(f"{m.role}: [message {m.id} could not be read]", P_OTHER)]


def _lines_of(m: Message) -> list[Line]:
    out: list[Line] = []
    if m.synthetic:
        return out
    if m.role == "user":
        out.append(Line("user: " + _clip(" ".join(m.text.split()), 1500), P_USER))
    elif m.role == "assistant":
        out += [
            Line(("assistant: " if k == 0 else "  ") + ln.text, ln.priority, decided=True)
            for k, ln in enumerate(_assistant_lines(m.text, not m.tool_calls))
        ]
        for c in m.tool_calls:
            command = signals.command_of(c)
            shell = c.name in signals.COMMAND_TOOLS or '"command"' in c.arguments[:40]
            # guard: a-prose-argument-is-the-agents-words
            if not shell and (said := prose_argument(c.arguments)):
                out += said_lines(c.name, *said)
                continue
            out.append(Line(_call_line(c.name, c.arguments, command), P_CALL))
            for path, op in signals.written_files(c):
                out.append(Line(f"  {op}: {path}", P_CALL))
    elif m.role == "tool":
        code = signals.exit_code(m)
        head = f"→ returncode {code}" if code is not None else "→"
        lines = salient_lines(strip_ansi(m.text))
        if not lines:
            out.append(Line(head + " (no output)", P_OTHER))
        else:
            out.append(Line(f"{head} {lines[0].text}", lines[0].priority))
            out += [Line("  " + ln.text, ln.priority) for ln in lines[1:]]
    return out


PROSE_ARGUMENT_SENTENCES = 2  # sentences of four or more words: a thought, not a name or a path


def prose_argument(arguments: str) -> tuple[str, list[str]] | None:
    """The key and sentences of a call whose one argument is the agent's prose (a ``think`` tool's thought):
    None for any other call."""
    try:
        value = json.loads(arguments)
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, dict) or len(value) != 1:
        return None
    ((key, text),) = value.items()
    if not isinstance(text, str) or "```" in text or any(_CODE.match(ln) for ln in text.splitlines()):
        return None
    sentences = [x.strip() for x in _SENTENCE.split(text) if x.strip()]
    words = sum(len(x.split()) >= 4 for x in sentences)
    return (str(key), sentences) if words >= PROSE_ARGUMENT_SENTENCES else None


def said_lines(name: str, key: str, sentences: Sequence[str]) -> list[Line]:
    """A prose argument as the agent's words, one line a sentence: the fit keeps the sentences later
    messages refer to instead of dropping the whole call, the longest of its rank, as one line."""
    return [
        Line((f"{name} {key}: " if k == 0 else "  ") + _clip(x, 300), P_CALL, decided=True)
        for k, x in enumerate(sentences)
    ]


_QUOTED = re.compile(r"`([^`\n]{8,200})`")


def promote_quoted(lines: Sequence[Line], reply: str, source: str = "") -> list[Line]:
    """``lines`` of an output with those the next assistant message quotes (a backticked span of at least
    8 characters: ``Wait, the debug output says `self._data.array dtype: object` ``) raised to result
    priority: the agent itself marked them as what it acts on. With the output's text (``source``), a
    quoted line that ``lines`` lacks is added, in its place."""
    spans = {x.strip() for x in _QUOTED.findall(re.sub(r"```.*?```", "", reply, flags=re.S))}
    spans = {x for x in spans if len(x) >= 8}
    if not spans:
        return list(lines)
    out = [
        Line(ln.text, P_CALL) if ln.priority < P_CALL and any(x in ln.text for x in spans) else ln
        for ln in lines
    ]
    if not source:
        return out
    rows = [_clip(r) for r in source.splitlines()]
    where = {r: i for i, r in reversed(list(enumerate(rows)))}
    have = {ln.text for ln in out}
    extra = [(i, Line(r, P_CALL)) for i, r in enumerate(rows) if r not in have and any(x in r for x in spans)]
    if not extra:
        return out
    placed: list[tuple[float, Line]] = []
    at = -1.0
    for ln in out:  # a line not found in ``source`` (a JSON item) stays after the one before it
        at = where.get(ln.text, at + 1e-3)
        placed.append((at, ln))
    placed += [(float(i), ln) for i, ln in extra]
    return [ln for _, ln in sorted(placed, key=lambda p: p[0])]


def reparse(text: str, known: Mapping[str, Line] | None = None) -> Line:
    """A line of an earlier block's Record with its priority again (for consolidation): the one it was
    made with when ``known`` has it (an output's short lines were kept whole at P_RESULT, and a line the
    agent wrote is its own, which the text alone cannot tell), else guessed from the text."""
    if known is not None and (hit := known.get(text)) is not None:
        # guard: a-record-line-keeps-whose-it-was
        return Line(text, hit.priority, hit.decided, own=hit.own)
    s = text.strip()
    if s.startswith("user:"):
        p = P_USER
    elif s.startswith(USED_PREFIX.strip()):
        p = P_RESULT
    elif s.startswith(("$ ", "created:", "modified:")):
        p = P_CALL
    elif s.startswith("assistant:"):
        return Line(text, P_PROSE, decided=True)
    elif (
        s.startswith("→") or _RESULT.search(s.lower()) or (_FAILURE.search(s.lower()) and not _CODE.match(s))
    ):
        p = P_RESULT
    elif _LOCATED.search(s) or DECIDE.search(s):
        p = P_LOCATED
    elif _NUMBERED.search(s):
        p = P_CODE
    else:
        p = P_OTHER
    return Line(text, p)


_WORD = re.compile(r"[a-z0-9]+")
TEMPLATE_MIN_CHARS = 80
_DIGITS = re.compile(r"\d+")


def _template(norm: str) -> str:
    return _DIGITS.sub("#", norm)


# A test run's verdict: its counts are the result, so a later run's verdict is news however alike the two
# lines look (``1 failed, 70 passed`` then ``2 failed, 69 passed``, both padded to 80 columns by pytest).
_VERDICT = re.compile(
    r"\b\d+ (?:passed|failed|errors?|skipped|xfailed|xpassed|deselected)\b|\bran \d+ tests?\b"
    r"|\b(?:failures|errors)=\d"
)


def numbers_are_news(text: str) -> bool:
    """Whether ``text`` is a line whose numbers are what it says (a test run's verdict): never a template
    said again (``redundant``)."""
    return _VERDICT.search(text.lower()) is not None


# Each Record line's once a session (``context/memo.py``), read when its message enters the view.
@memoized()
def redundant_shape(text: str) -> tuple[frozenset[str], str, str | None, bool]:
    """What ``redundant`` reads of a line: its words (lower-cased), its text with each run of white space
    one space, that text's template when it is long enough to count as one (else None), and whether the
    line can be redundant at all (it has words and is no command or output head)."""
    words = frozenset(_WORD.findall(text.lower()))
    norm = " ".join(text.split())
    # guard: a-test-verdict-is-never-a-template
    long = len(norm) >= TEMPLATE_MIN_CHARS and not numbers_are_news(text)
    template = _template(norm) if long else None
    return words, norm, template, bool(words) and not text.lstrip().startswith(("→", "$"))


def redundant(lines: Sequence[Line], seen: Sequence[str] = ()) -> list[bool]:
    """Which lines say nothing another line does not: the line's text is inside one other line of at
    least its priority (or inside an earlier block's line, ``seen``) — a grep hit inside the view of the
    same file, the ``def`` line of a traceback frame quoted again, a sentence the reply repeats. Such a
    line is the first to go when the ledger is full; the line holding it stays, so nothing verbatim is
    lost (a looser test, every word elsewhere, loses the expression ``x/Poly(x, x, domain='ZZ')`` to a
    line with the same words in another order). Commands and the first line of an output (``$``, ``→``)
    are never redundant: a re-run is news."""
    shapes = memo.each(redundant_shape, [ln.text for ln in lines])
    seen_shapes = memo.each(redundant_shape, seen)
    # How many lines hold each word (a line holding a word holds all of it): a line is compared only with
    # the lines holding its rarest word, and with none when that word is its own alone — most lines.
    often = Counter(chain.from_iterable(sh[0] for sh in shapes))
    often.update(chain.from_iterable(sh[0] for sh in seen_shapes))
    rare: dict[int, str] = {}
    for i, (ws, _, _, may) in enumerate(shapes):
        if may:
            rare[i] = min(ws, key=often.__getitem__)
    # guard: a-line-whose-rarest-word-is-its-own-alone
    wanted = {w for i, w in rare.items() if often[w] > 1}
    posting: dict[str, list[int]] = {w: [] for w in wanted}
    for i, sh in enumerate(shapes):
        for w in sh[0] & wanted if len(sh[0]) > len(wanted) else wanted & sh[0]:
            posting[w].append(i)
    seen_posting: dict[str, list[int]] = {}
    for j, sh in enumerate(seen_shapes):
        for w in sh[0] & wanted:
            seen_posting.setdefault(w, []).append(j)
    out = [False] * len(lines)
    # A long line that an earlier one repeats but for its numbers is a template said again (a harness's
    # "found 2 actions" reminder, a progress line): the first says it.
    templates = {sh[2] for sh in seen_shapes if sh[2] is not None}
    for i, w in rare.items():
        ws, norm, template, _ = shapes[i]
        if template is not None:
            if template in templates:
                out[i] = True
                continue
            templates.add(template)
        if w not in wanted:
            continue
        for j in seen_posting.get(w, ()):
            held, text = seen_shapes[j][0], seen_shapes[j][1]
            if ws <= held and norm in text:
                out[i] = True
                break
        if out[i]:
            continue
        p = lines[i].priority
        for j in posting[w]:
            # A longer line, or the same text later: the relation has no cycles, so the lines holding the
            # others are never all marked.
            if j != i and lines[j].priority >= p:
                held, text = shapes[j][0], shapes[j][1]
                if ws <= held and norm in text and (norm != text or j > i):
                    out[i] = True
                    break
    return out


def fit(lines: Sequence[Line], budget_chars: int, seen: set[str] = frozenset()) -> list[str]:  # type: ignore[assignment]
    """Lines within ``budget_chars``: repeats of ``seen`` (earlier blocks) and of each other dropped, then
    the redundant lines (``redundant``), then the lowest priorities; the order of what is kept is
    unchanged."""
    return Fitter(lines, seen)(budget_chars)


# What the agent concluded itself — a line of its own words stating a fact no earlier message held, which a
# later message comes back to (``own`` and ``referred``) — ranks with the commands it ran: above the located
# and code lines of outputs, below result lines and the user's words. Ranking every referred line of the
# agent there (most repeat names an output showed first) lost tool facts (swe-dev 16K tune half 0.960 ->
# 0.954, swe-dev 8K 0.736 -> 0.728); ranking the own ones with result lines lost them too (0.960 -> 0.920).
P_OWN = P_CALL


def rank(ln: Line) -> int:
    """The priority the Record's fit ranks ``ln`` by: its own, or ``P_OWN`` for the agent's own conclusion a
    later message refers to."""
    # guard: the-agents-own-conclusions-rank-with
    return max(ln.priority, P_OWN) if ln.own and ln.referred else ln.priority


_RUN = re.compile(r"(?<=\S)[ \t]{2,}")


def squeezed(text: str) -> str | None:
    """``text`` with each run of white space after its first word one space — its indent is the Record's
    layout and stays, a code line's alignment goes (``73:            field_name = …``) — or None when it has
    no such run. (It may break a fact with a run inside, ``476:    def``: only a line the fit dropped is
    squeezed, so such a fact was gone anyway.)"""
    short = _RUN.sub(" ", text)
    return short if short != text else None


_JSON_AT = re.compile(r"(?:→ )?(?:\"[^\"\n]{1,80}\": )?(?=[\[{])")


@lru_cache(maxsize=4096)
def chars_per_fact(text: str) -> float:
    """What a Record line costs per fact it holds: its length, or, for a line that is a JSON record or a
    member holding several (``"flights": [{"flight_number": "HAT028", …, "price": 140}, …]``), its length
    per scalar value. A line of one value or of text counts as one fact."""
    body = text.lstrip()
    m = _JSON_AT.match(body)
    if m is None:
        return len(text)
    try:
        value = json.loads(body[m.end() :])
    except (json.JSONDecodeError, RecursionError):
        return len(text)
    leaves, stack = 0, [value]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
        else:
            leaves += 1
    return len(text) / max(leaves, 1)


class Fitter:
    """``fit`` of the same lines at several budgets (the summary block tries a few until its text fits):
    the deduplication and the drop order, the costly part, are computed once."""

    def __init__(
        self,
        lines: Sequence[Line],
        seen: set[str] = frozenset(),  # type: ignore[assignment]
        squeeze: bool = False,
    ) -> None:
        """``squeeze``: the room a fit leaves takes squeezed forms of the lines it dropped (``_refill``), the
        summary's Record; else not (one output's lines, the answered trim)."""
        self.squeeze = squeeze
        uniq: list[Line] = []
        have = set(seen)
        for ln in lines:
            key = ln.text.strip()
            if key in have and not key.startswith(("→", "$")):  # a re-run's result line repeats meaningfully
                continue
            have.add(key)
            uniq.append(ln)
        # guard: the-record-merges-by-meaning
        gone = superseded([ln.text if ln.decided else "" for ln in uniq])
        uniq = [ln for ln, g in zip(uniq, gone, strict=True) if not g]
        self.uniq, self.seen = uniq, seen
        self.total = sum(len(ln.text) + 1 for ln in uniq)
        self._order: list[int] | None = None
        self._spare: list[bool] | None = None

    @staticmethod
    def _kept_late(ln: Line) -> bool:
        """Of one priority, the agent's own words no later message refers to go first. (Not a tool output's
        lines: a line with more ids counts as referred more often, and the short ones went first then:
        swe-dev 16K hand probes 0.949 -> 0.898.)"""
        return ln.referred or not ln.decided

    def lost_users(self, kept: Sequence[str]) -> bool:
        """Whether ``kept`` (a fit of these lines) lost a line of the user's words (``P_USER``) that says
        something no other line does: a repeat of a harness's reminder (a template said again) or a line
        inside another is no loss, nor is a decision a later one superseded (no fit keeps those)."""
        if len(kept) == len(self.uniq):
            return False
        have = set(kept)
        spare = self.spare()
        return any(
            ln.priority >= P_USER and ln.text not in have and not spare[i] for i, ln in enumerate(self.uniq)
        )

    def spare(self) -> list[bool]:
        """``redundant`` of the lines, computed once."""
        if self._spare is None:
            self._spare = redundant(self.uniq, sorted(self.seen))
        return self._spare

    @staticmethod
    def _cost(ln: Line) -> float:
        """What a line costs the Record per fact: its length; below the result rank (an output's located
        lines, the items and members of a JSON output nothing later used) its length per value
        (``chars_per_fact``). Result and user lines keep their length: there a one-fact line of text (an
        error, a verdict) outranked a JSON item of many values (tau-dev 8K hand probes 95 -> 93 of 103)."""
        # guard: a-json-line-costs-its-length-per-value
        return chars_per_fact(ln.text) if rank(ln) < P_RESULT else len(ln.text)

    def order(self) -> list[int]:
        """Redundant lines first, then lowest ``rank`` (the priority; the agent's own conclusions raised);
        among equals the agent's words no later message refers to, then the costliest first (``_cost``: the
        longest, as the same room then keeps more distinct lines, and the facts asked about later are
        short: an id, a result, a path; a JSON line below the result rank by its length per value)."""
        if self._order is None:
            uniq, spare = self.uniq, self.spare()
            self._order = sorted(
                range(len(uniq)),
                key=lambda i: (
                    not spare[i],
                    rank(uniq[i]),
                    # guard: the-record-spends-its-share-on-what
                    self._kept_late(uniq[i]),
                    -self._cost(uniq[i]),
                    i,
                ),
            )
        return self._order

    def __call__(self, budget_chars: int) -> list[str]:
        uniq, total = self.uniq, self.total
        if total <= budget_chars:
            return [ln.text for ln in uniq]
        drop: list[int] = []
        for i in self.order():
            if total <= budget_chars:
                break
            drop.append(i)
            total -= len(uniq[i].text) + 1
        texts: dict[int, str | None] = dict.fromkeys(drop)
        if self.squeeze:
            # guard: the-room-a-fit-leaves-takes-squeezed-lines
            self._refill(drop, texts, budget_chars - total)
        return [t for i, ln in enumerate(uniq) if (t := texts.get(i, ln.text)) is not None]

    def _refill(self, drop: list[int], texts: dict[int, str | None], room: int) -> None:
        """The room the fit left spent on the lines it dropped, the last to go first (the worthiest of
        them), each squeezed (``squeezed``) where that fits: the same facts in fewer characters, where
        otherwise the line was gone. No line the fit kept goes for them."""
        spare = self.spare()
        for i in reversed(drop):
            if room <= 1:
                break
            ln = self.uniq[i]
            if spare[i] or ln.priority >= P_USER:
                continue
            short = squeezed(ln.text)
            if short is not None and len(short) < room:
                texts[i] = short
                room -= len(short) + 1


# What a decision decides: ``name = value`` (a setting, a variable), ``def name`` / ``class name`` (the
# function or class written), ``set name to value`` / ``use X for name`` in prose. Two decisions on one
# subject: the later one supersedes the earlier.
_ASSIGN = re.compile(r"^(?:[-*] )?`?([A-Za-z_][\w.]*(?:\[[^\]]{1,40}\])?)\s*(?::\s*\w+\s*)?=(?!=)\s*\S")
_DEFINES = re.compile(r"\b(?:def|class)\s+([A-Za-z_]\w*)\s*[(:]")
_SET_TO = re.compile(r"(?i)\bset(?:ting)?\s+`?([A-Za-z_][\w.]*)`?\s+to\b")
_RETURNS = re.compile(r"\breturn\s+([A-Za-z_][\w.]*)\(")
_PREFIX = re.compile(r"^\s*(?:assistant:\s*|[-*]\s+|\d+[.)]\s+)*")


# A decision, not a finding: the agent says what it does or chose (``I will set``, ``instead``, ``now``);
# ``Expr has `_op_priority = 10.0` `` and ``Matrix has `_op_priority = 10.01` `` are two facts, not one
# decision taken twice.
_DECIDING = re.compile(
    r"(?i)\b(?:i will|i'll|i'm going to|i am going to|let me|let's|i (?:set|changed|chose|decided|modified|"
    r"replaced|used|will use)|instead|now|switch(?:ed)? to|chang(?:e|ed|ing) (?:it |this )?to|go with)\b"
)


@memoized()
def subject(text: str) -> str | None:
    """The subject a decision line decides (``"=timeout"``, ``"def:as_sql"``), or None when it names none
    or is a finding rather than a decision."""
    if not _DECIDING.search(text):
        return None
    t = _PREFIX.sub("", text.strip().strip("`"), count=1)
    if mt := _ASSIGN.match(t):
        return "=" + mt.group(1)
    if mt := _DEFINES.search(t):
        return "def:" + mt.group(1)
    if mt := _SET_TO.search(t):
        return "=" + mt.group(1)
    for span in _TICKED.findall(text):  # a code span in prose: `timeout = 60`, `return self.as_sql(...)`
        if mt := _ASSIGN.match(span.strip()):
            return "=" + mt.group(1)
    if mt := _RETURNS.search(t):
        return "return:" + mt.group(1)
    return None


def superseded(texts: Sequence[str]) -> list[bool]:
    """Which of ``texts`` (decisions, oldest first; "" for a line that is not one) a later one on the same
    ``subject`` supersedes: the newest on each subject stays, the earlier different ones go."""
    keys = [subject(t) if t else None for t in texts]
    newest = {k: i for i, k in enumerate(keys) if k is not None}

    def norm(t: str) -> str:  # only a decision's text is compared: most lines are none
        return " ".join(t.split())

    return [
        k is not None and newest[k] != i and norm(texts[i]) != norm(texts[newest[k]])
        for i, k in enumerate(keys)
    ]


def condense(text: str, head_lines: int, tail_lines: int, max_chars: int) -> str:
    """Head and tail lines of ``text``, and in between its salient lines verbatim instead of a bare cut
    marker."""
    lines = text.splitlines()
    if len(lines) <= head_lines + tail_lines:
        return head_tail(text, head_lines, tail_lines, max_chars=max_chars)
    middle = "\n".join(lines[head_lines : len(lines) - tail_lines])
    room = max_chars // 3
    kept: list[str] = []
    for ln in salient_lines(middle, MAX_OUTPUT_LINES):
        if room - len(ln.text) < 0:
            break
        kept.append(ln.text)
        room -= len(ln.text) + 1
    cut = len(lines) - head_lines - tail_lines
    marker = (
        f"[… {cut} lines cut; {len(kept)} salient lines of them kept:]" if kept else f"[… {cut} lines cut …]"
    )
    out = "\n".join([*lines[:head_lines], marker, *kept, *lines[-tail_lines:]])
    return (
        out
        if len(out) <= max_chars
        else head_tail(out, head_lines + len(kept) + 1, tail_lines, max_chars=max_chars)
    )


# Used facts -----------------------------------------------------------------------------------------
# A fact-like token of an output: an id, a number, a path, a dotted or snake_case name (``ZFA04Y``,
# ``1234.5``, ``src/pager.py``, ``self.connection.features``, ``credit_card_7407366``). Plain words are too
# many to track, except a JSON output's short string values (a status, a cabin, a name).
_TOKEN = re.compile(r"[\w$#][\w.#/$:-]*\w")
_FACTLIKE = re.compile(r"\d|_|/|\w\.\w|[a-z][A-Z]")
_PLAIN_WORD = re.compile(r"\w+")
USED_MAX_FACTS = 32
USED_MAX_CHARS = 600
USED_LINE_CHARS = 150  # used facts come in short lines: a full ledger drops one of them, not all
USED_PREFIX = "  used later: "
_PARTS = re.compile(r"[:/=,]+")


def _fact_parts(token: str) -> tuple[str, ...]:
    """``token`` and, when it is compound, its parts: those that are fact-like (3–80 characters). A part
    lies inside its token, so a token no pattern marks has none (most tokens of code: looked at once)."""
    if _FACTLIKE.search(token) is None:
        return ()
    if _PARTS.search(token):
        return tuple(x for x in (token, *_PARTS.split(token)) if 3 <= len(x) <= 80 and _FACTLIKE.search(x))
    return (token,) if 3 <= len(token) <= 80 else ()


def holds_fact_token(text: str) -> bool:
    """Whether ``text`` holds a token ``fact_tokens`` would give (found without collecting them)."""
    if not _FACTLIKE.search(text):  # no token can be fact-like: most lines of plain code
        return False
    return any(_fact_parts(mt.group()) for mt in _TOKEN.finditer(text))


@lru_cache(maxsize=512)
def fact_tokens(text: str) -> tuple[str, ...]:
    """The fact-like tokens of a tool output, in order of first appearance, deduplicated; a compound one
    (``tests/test_x.py:4310``) also gives its parts, as the agent may use either."""
    found: list[str] = []
    envelope = text_envelope(text) if len(text) <= SALIENT_CACHE_CHARS else None
    # An envelope's text is read unescaped: ``\\nauthor`` is the word ``author`` at a line's start.
    # guard: an-envelopes-text-is-read-unescaped
    source = "\n".join(map(str, envelope.values())) if envelope is not None else text
    # Each distinct token once: a repeat adds nothing the first did not (a file view names a thing often).
    for t in dict.fromkeys(_TOKEN.findall(source[:SALIENT_CACHE_CHARS])):
        found.extend(_fact_parts(t))
    s = text.strip()
    if s[:1] in ("[", "{"):
        try:
            stack: list[object] = [json.loads(s)]
        except (json.JSONDecodeError, RecursionError):
            stack = []
        while stack:
            v = stack.pop()
            if isinstance(v, dict):
                stack.extend(reversed(list(v.values())))
            elif isinstance(v, list):
                stack.extend(reversed(v))
            elif isinstance(v, str) and 4 <= len(v) <= 40 and _PLAIN_WORD.fullmatch(v):
                found.append(v)
    return tuple(dict.fromkeys(found))


@memoized()
def fact_index(text: str) -> dict[str, tuple[int, ...]]:
    """Where in ``fact_tokens(text)`` the facts whose first word (lower-cased) is each word are: a fact the
    agent used has its first word among the agent's (``LaterUse.used_of`` looks up only those)."""
    index: dict[str, list[int]] = {}
    for i, t in enumerate(fact_tokens(text)):
        if first := _PLAIN_WORD.search(t.lower()):
            index.setdefault(first.group(), []).append(i)
    return {w: tuple(ids) for w, ids in index.items()}


def _argument_text(arguments: str) -> str:
    """A call's arguments as the agent wrote them: the JSON's strings and numbers unescaped (a command's
    ``\\n__all__`` is ``__all__`` on a new line), whatever the shape; the raw text when it is not JSON."""
    try:
        value = json.loads(arguments)
    except (ValueError, RecursionError):
        return arguments
    out: list[str] = []
    stack: list[object] = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            stack.extend(reversed(list(v.values())))
        elif isinstance(v, list):
            stack.extend(reversed(v))
        elif v is not None:
            out.append(str(v))
    return "\n".join(out)


# Each message's part is read once a session (``context/memo.py``), not again by every compaction.
@memoized()
def use_text(text: str, arguments: tuple[str, ...]) -> str:
    """A message as ``LaterUse`` reads it: its text and its calls' arguments, lower-cased."""
    return (text + "\n" + "\n".join(_argument_text(a) for a in arguments)).lower()


@memoized()
def use_words(part: str) -> tuple[str, ...]:
    """The plain words of a ``use_text``, each once."""
    return tuple(dict.fromkeys(_PLAIN_WORD.findall(part)))


@memoized()
def use_tokens(part: str) -> tuple[str, ...]:
    """The fact-like tokens of a ``use_text``, and the parts of a compound one, each once."""
    out: dict[str, None] = {}
    for t in dict.fromkeys(_TOKEN.findall(part)):
        out[t] = None
        if _PARTS.search(t):
            out.update(dict.fromkeys(_PARTS.split(t)))
    return tuple(out)


class LaterUse:
    """Where the agent used a string: the text and call arguments of assistant messages (not the pipeline's
    own), looked up as "after position k". ``roles``: other messages' instead (``Referred``)."""

    def __init__(self, messages: Sequence[Message], roles: frozenset[str] = frozenset({"assistant"})) -> None:
        parts: list[str] = []
        self._at: list[int] = []  # message position of each part
        self._offset: list[int] = []  # where each part starts in the blob
        self._words: dict[str, int] = {}  # word -> last message position using it
        pos = 0
        for i, m in enumerate(messages):
            if m.synthetic or m.role not in roles:
                continue
            t = use_text(m.text, tuple(c.arguments for c in m.tool_calls))
            self._at.append(i)
            self._offset.append(pos)
            parts.append(t)
            pos += len(t) + 1
            self._words.update(dict.fromkeys(use_words(t), i))
        self._blob = "\n".join(parts)
        self._parts = parts
        self._tokens: dict[str, int] | None = None
        self._first: dict[str, int] | None = None
        self._toks: list[tuple[str, ...]] | None = None
        # What one fold asks of a fact again and again (its outputs share ids and paths), read once; keyed
        # by the lower-cased fact, they live as long as this instance (one compaction, one trim).
        self._facts: dict[str, tuple[int | None, bool]] = {}  # (last use of its least used word, one word)
        self._found: dict[str, tuple[int, int]] = {}  # (a search start, its first occurrence from there)
        self._before: dict[str, tuple[int, int]] = {}  # (a search end, its first occurrence before it)

    def _part_tokens(self) -> list[tuple[str, ...]]:
        """``use_tokens`` of each part, looked up once for both indexes (a memo look-up compares the text)."""
        if self._toks is None:
            self._toks = [use_tokens(part) for part in self._parts]
        return self._toks

    def token_first(self, token: str) -> int:
        """The first message position whose text has fact-like ``token`` (as ``token_last``), -1 for none."""
        if self._first is None:
            self._first = {}
            for at, toks in zip(reversed(self._at), reversed(self._part_tokens()), strict=True):
                self._first.update(dict.fromkeys(toks, at))
        return self._first.get(token.lower(), -1)

    def token_last(self, token: str) -> int:
        """The last message position whose text has fact-like ``token`` (or a compound holding it as a
        part), -1 for none: one pass over the texts, on first use."""
        if self._tokens is None:
            self._tokens = {}
            for at, toks in zip(self._at, self._part_tokens(), strict=True):
                self._tokens.update(dict.fromkeys(toks, at))
        return self._tokens.get(token.lower(), -1)

    def used_before(self, fact: str, k: int) -> bool:
        """Whether a message before position ``k`` holds ``fact`` (so it is not the message's own)."""
        j = bisect_right(self._at, k - 1)
        end = self._offset[j] if j < len(self._at) else len(self._blob)
        low = fact.lower()
        hit = self._before.get(low)
        if hit is not None:
            limit, first = hit
            # An occurrence ends before ``end`` if and only if the first one does.
            if first >= 0:
                return first + len(low) <= end
            if end <= limit:
                return False
        first = self._blob.find(low, 0, end)
        self._before[low] = (end, first)
        return first >= 0

    def used_after(self, fact: str, k: int) -> bool:
        low = fact.lower()
        known = self._facts.get(low)
        if known is None:
            words = _PLAIN_WORD.findall(low)
            last = min(self._words.get(w, -1) for w in words) if words else None
            known = self._facts[low] = (last, len(words) == 1 and words[0] == low)
        last, single = known
        # Each word of the fact must be used after k (a dictionary look-up) before the text is searched.
        if last is None or last <= k:
            return False
        if single:
            return True
        j = bisect_right(self._at, k)
        return j < len(self._at) and self._occurs_from(low, self._offset[j])

    def used_of(self, text: str, k: int) -> list[str]:
        """``[t for t in fact_tokens(text) if self.used_after(t, k)]``, looking up only the facts whose first
        word the agent used at all (an output's thousand ids and names are mostly not)."""
        facts, index = fact_tokens(text), fact_index(text)
        hits = sorted(i for w in index.keys() & self._words.keys() for i in index[w])
        return [facts[i] for i in hits if self.used_after(facts[i], k)]

    def _occurs_from(self, low: str, start: int) -> bool:
        """``self._blob.find(low, start) >= 0``, from what an earlier search for ``low`` found when it can
        tell."""
        hit = self._found.get(low)
        if hit is not None:
            began, pos = hit
            # guard: a-search-that-found-nothing-answers-only
            if pos >= start:
                return True
            if pos < 0 and start >= began:
                return False
        pos = self._blob.find(low, start)
        self._found[low] = (start, pos)
        return pos >= 0


class Referred:
    """Where any message holds a string (a diff that shows code the agent wrote, the user answering a total
    it gave): the agent's uses, read once for ``used_lines``, and the other messages'."""

    def __init__(self, messages: Sequence[Message], agent: LaterUse) -> None:
        self.agent = agent
        self.others = LaterUse(messages, frozenset({"system", "user", "tool"}))

    def used_after(self, fact: str, k: int) -> bool:
        return self.agent.used_after(fact, k) or self.others.used_after(fact, k)

    def token_after(self, token: str, k: int) -> bool:
        """Whether a message after position ``k`` has fact-like ``token`` (``LaterUse.token_last``)."""
        return self.agent.token_last(token) > k or self.others.token_last(token) > k

    def used_before(self, fact: str, k: int) -> bool:
        return self.agent.used_before(fact, k) or self.others.used_before(fact, k)

    def token_before(self, token: str, k: int) -> bool:
        """Whether a message before position ``k`` has fact-like ``token`` (``LaterUse.token_first``)."""
        return -1 < self.agent.token_first(token) < k or -1 < self.others.token_first(token) < k


def used_lines(text: str, lines: Sequence[Line], k: int, later: LaterUse) -> list[Line]:
    """Ledger lines naming the facts of output ``text`` (at position ``k``) that the agent used later and
    that none of the output's result lines (``lines``) holds already: folding the output keeps them, however
    little room the ledger has (a line of ids is short, a JSON item or a file view long). Facts no line of
    the output holds at all come first."""
    found = later.used_of(text, k)
    if not found:
        return []
    held = "\n".join(ln.text for ln in lines if ln.priority >= P_RESULT).lower()
    anywhere = "\n".join(ln.text for ln in lines).lower()
    used = [t for t in found if t.lower() not in held]
    # ``used_of`` gives them in their order in ``fact_tokens(text)``: that order, without a map of them all.
    order = {t: i for i, t in enumerate(used)}
    used.sort(key=lambda t: t.lower() in anywhere)  # stable: order of appearance within each group
    facts: list[str] = []
    size = 0
    for t in used:
        if any(t in f for f in facts):
            continue
        facts = [f for f in facts if f not in t]
        facts.append(t)
        size += len(t) + 3
        if len(facts) >= USED_MAX_FACTS or size >= USED_MAX_CHARS:
            break
    facts.sort(key=lambda t: order[t])
    return _used_lines(facts, P_RESULT)


def _used_lines(facts: list[str], priority: int) -> list[Line]:
    """``facts`` packed into "used:" lines of at most ``USED_LINE_CHARS`` each, in order."""
    out: list[Line] = []
    row: list[str] = []
    for t in facts:
        if row and len(USED_PREFIX) + sum(len(x) + 3 for x in row) + len(t) > USED_LINE_CHARS:
            out.append(Line(USED_PREFIX + " · ".join(row), priority))
            row = []
        row.append(t)
    if row:
        out.append(Line(USED_PREFIX + " · ".join(row), priority))
    return out


@memoized()
def line_facts(text: str) -> tuple[str, ...]:
    """The fact-like tokens of one Record line (``fact_tokens`` without its cache: that one is for
    outputs)."""
    return tuple(t for t in _TOKEN.findall(text) if 3 <= len(t) <= 80 and _FACTLIKE.search(t))


def mark_referred(lines: Sequence[Line], k: int, later: Referred) -> list[Line]:
    """``lines`` of the ``k``-th folded message with ``referred`` set on each of the agent's own lines
    (``decided``) holding a fact-like token (an id, a path, a name) that a message after it has too: of those,
    the Record spends its share on these first (``Fitter.order``). ``own`` too when one such token is the
    message's own (``own_fact``); a line of an earlier block (``k`` -1) keeps the ``own`` it was made with."""
    out: list[Line] = []
    for ln in lines:
        if ln.decided and not ln.referred:
            used = [t for t in line_facts(ln.text) if later.token_after(t, k)]
            if used:
                own = ln.own or (ln.priority < P_OWN and own_fact(used, k, later))  # ranks the same else
                ln = Line(ln.text, ln.priority, ln.decided, True, own)
        out.append(ln)
    return out


def own_fact(used: Sequence[str], k: int, later: Referred) -> bool:
    """Whether the ``k``-th folded message is the first to hold one of ``used`` (tokens a later message has
    too): the agent stated it, no output or earlier message showed it. Unknown for an earlier block's line
    (``k`` < 0)."""
    # A token an earlier message has is used before it; one it lacks may still sit inside an earlier word
    # (the text search, slower, only for those).
    # guard: own-is-what-no-earlier-message-held
    return k >= 0 and any(not later.token_before(t, k) and not later.used_before(t, k) for t in used)


def fold_lines(text: str, lines: Sequence[Line], k: int, later: LaterUse) -> list[Line]:
    """The ledger lines of a tool output being folded (its text ``text``, its lines ``lines``, at position
    ``k``): the items of a JSON output that hold nothing the agent used later rank below the ones that do
    (a search's other flights, a user's other reservations); then the used facts no result line holds."""
    out = list(lines)
    # guard: an-envelope-is-no-record
    if out and text.lstrip()[:1] in ("[", "{") and text_envelope(text) is None:
        used = [t.lower() for t in later.used_of(text, k)]
        # Only demoted: raising a later used item as well measured worse (tau 4K), as its facts are in
        # the used lines already and the room goes to other messages' lines.
        out[1:] = [
            Line(ln.text, P_LOCATED)
            if ln.priority == P_RESULT and not any(u in ln.text.lower() for u in used)
            else ln
            for ln in out[1:]
        ]
    return [*out, *used_lines(text, out, k, later)]


P_STATED = P_RESULT  # what the agent stated and a later message refers to ranks with an output's used facts
_TICKED = re.compile(r"`([^`\n]{4,120})`")
_CODE_LINE = re.compile(r"[(=]")


def _stated_key(m: Message) -> tuple[str, tuple[str, ...]]:
    return (m.text, tuple(c.arguments for c in m.tool_calls))  # all that ``stated_facts`` reads


@memoized(_stated_key)
def stated_facts(m: Message) -> tuple[str, ...]:
    """What an assistant message states of its own: the code lines its calls write (a multi-line command's
    Record line keeps only its first and last), the backticked spans and fact-like tokens of its prose."""
    out: list[str] = []
    for c in m.tool_calls:
        lines = [ln.strip() for ln in _argument_text(c.arguments).splitlines()]
        out += [ln for ln in lines[1:-1] if 12 <= len(ln) <= 120 and _CODE_LINE.search(ln)]
    out += _TICKED.findall(m.text)
    out += [t for t in fact_tokens(m.text) if len(t) >= 4]
    return tuple(dict.fromkeys(x.strip() for x in out if x.strip()))


def stated_used_lines(m: Message, lines: Sequence[Line], k: int, later: Referred) -> list[Line]:
    """Record lines for what folded assistant message ``m`` (``k``-th of the fold) stated of its own (no
    message before it holds it) that a later message refers to and none of its lines holds: its decisions,
    findings and failed attempts stay as short result lines, like an output's used facts. (Taking also
    what it repeats of earlier outputs measured worse on swe-dev 16K's tune half: tool facts 0.9375
    against 0.9487.) At most ``USED_MAX_FACTS`` of them, however long: the Record's fit chooses among the
    lines, not the order of the code in the message."""
    held = "\n".join(ln.text for ln in lines).lower()
    facts: list[str] = []
    for t in stated_facts(m):
        low = t.lower()
        if (
            low in held
            or any(low in f.lower() for f in facts)
            or not later.used_after(t, k)  # before the scan of all that came before: most are not used
            or later.used_before(t, k)
        ):
            continue
        facts.append(t)
        # No cap in characters (an output's used facts have one: USED_MAX_CHARS): a script the agent
        # wrote in one heredoc states many code lines, and the cap kept the first 600 characters of those a
        # later message came back to, so a line further down the script was never a candidate at all
        # (matplotlib-24870's `f.writelines(new_lines)`).
        # guard: every-stated-fact-a-later-message-uses
        if len(facts) >= USED_MAX_FACTS:
            break
    return _used_lines(facts, P_STATED)
