"""``StructuralFilter``, the smart filter's structural stage: zero-LLM-cost extraction for structured outputs.

Nine formats, tried in this order: JSON, stack traces, XML/HTML, CSV/TSV, Markdown tables, TOML,
INI, YAML, logs. Each detector is strict enough to leave prose alone; each extractor keeps the shape
(keys, headers, counts, the error lines) and drops the bulk.
"""

from __future__ import annotations

import configparser
import csv
import io
import re
import tomllib
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable

import yaml

from myrm_tui.context.text.trimming import trim_json_text, trim_json_value

_TAG = re.compile(r"<(/?)([A-Za-z][\w:.-]*)[^>]*?(/?)>")
_LOG_LINE = re.compile(
    r"^(\d{4}-\d\d-\d\d[T ]\d\d:\d\d|\[\d{4}-|\w{3} +\d+ \d\d:\d\d:\d\d|\d\d:\d\d:\d\d)"
    r"|\b(DEBUG|INFO|WARN(ING)?|ERROR|CRITICAL|FATAL|TRACE)\b"
)
_LEVEL = re.compile(r"\b(DEBUG|INFO|WARN(?:ING)?|ERROR|CRITICAL|FATAL|TRACE)\b")


def _json(text: str, limits: tuple[int, int, int]) -> str | None:
    return trim_json_text(text, *limits)


_RULE = re.compile(r"^([-=_~*])\1{5,}\s*$")
STACK_MESSAGE_LINES = 40  # exception / test-header lines kept from between the kept frames


def _stack(text: str, limits: tuple[int, int, int]) -> str | None:
    if "Traceback (most recent call last)" not in text and not re.search(r"^\s+at [\w.$]+\(", text, re.M):
        return None
    lines = text.splitlines()
    frames = [i for i, ln in enumerate(lines) if re.match(r'^\s+(File "|at )', ln)]
    if len(frames) < 6:
        return None
    keep_idx = set(range(frames[0])) if frames[0] < 10 else set(range(5))
    for i in frames[:3] + frames[-5:]:
        keep_idx.update({i, i + 1})
    keep_idx.update(range(frames[-1] + 2, len(lines)))
    # Between the kept frames: the exception and test-header lines (``UnicodeEncodeError: …``,
    # ``ERROR: test_x (…)``, ``During handling …``), each with the frame that raised it — later turns
    # quote them; the frames in between are what repeats.
    seen: set[str] = set()
    for i in range(frames[0], frames[-1]):
        ln = lines[i]
        if not ln or ln[0].isspace() or _RULE.match(ln) or i in keep_idx or ln in seen:
            continue
        seen.add(ln)
        if len(seen) > STACK_MESSAGE_LINES:
            break
        keep_idx.add(i)
        j = bisect_left(frames, i) - 1  # the frame that raised it, when it is right above
        if j >= 0 and i - frames[j] <= 3:
            keep_idx.update(range(frames[j], i))
    out, last = [], -1
    for i in sorted(k for k in keep_idx if k < len(lines)):
        if i != last + 1:
            out.append(f"  [… {i - last - 1} lines of frames cut]")
        out.append(lines[i])
        last = i
    return "\n".join(out)


def _xml(text: str, limits: tuple[int, int, int]) -> str | None:
    s = text.lstrip()
    if not s.startswith("<") or len(_TAG.findall(s[:5000])) < 5:
        return None
    if re.match(r"(?is)<!doctype html|<html", s):
        body = re.sub(r"(?is)<(script|style)\b.*?</\1>", "", s)
        title = re.search(r"(?is)<title>(.*?)</title>", body)
        txt = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", body)).strip()
        return f"[HTML page{': ' + title.group(1).strip() if title else ''}]\n{txt[:3000]}"
    depth = 0
    counts: Counter[tuple[int, str]] = Counter()
    outline: list[str] = []
    for close, tag, selfclose in _TAG.findall(s):
        if close:
            depth = max(depth - 1, 0)
            continue
        counts[(depth, tag)] += 1
        if counts[(depth, tag)] <= 3 and depth < limits[0] and len(outline) < 80:
            outline.append("  " * depth + f"<{tag}>")
        if not selfclose:
            depth += 1
    totals: Counter[str] = Counter()
    for (_, tag), n in counts.items():
        totals[tag] += n
    return (
        "[XML outline]\n"
        + "\n".join(outline)
        + "\n[element counts] "
        + ", ".join(f"{t}×{n}" for t, n in totals.most_common(15))
    )


def _csv(text: str, limits: tuple[int, int, int]) -> str | None:
    lines = text.strip().splitlines()
    if len(lines) < 8:
        return None
    delim = "\t" if lines[0].count("\t") >= 2 else "," if lines[0].count(",") >= 2 else None
    if delim is None:
        return None
    n = lines[0].count(delim)
    if sum(1 for ln in lines[:20] if ln.count(delim) == n) < min(len(lines), 20) * 0.8:
        return None
    rows = list(csv.reader(io.StringIO("\n".join([*lines[:6], *lines[-2:]])), delimiter=delim))
    kind = "TSV" if delim == "\t" else "CSV"
    body = (
        "\n".join(delim.join(r) for r in rows[:6])
        + f"\n[… {len(lines) - 8} rows …]\n"
        + "\n".join(delim.join(r) for r in rows[6:])
    )
    return f"[{kind}: {len(lines) - 1} rows × {n + 1} columns]\n{body}"


def _md_table(text: str, limits: tuple[int, int, int]) -> str | None:
    lines = text.splitlines()
    table = [i for i, ln in enumerate(lines) if ln.strip().startswith("|") and ln.strip().endswith("|")]
    if len(table) < 10 or not any(re.match(r"^\s*\|[\s:|-]+\|\s*$", lines[i]) for i in table[:3]):
        return None
    keep = set(table[:7]) | set(table[-2:]) | {i for i in range(len(lines)) if i not in set(table)}
    out, last = [], -1
    for i in sorted(keep):
        if last >= 0 and i != last + 1 and i in set(table):
            out.append(f"| … {i - last - 1} rows … |")
        out.append(lines[i])
        last = i
    return f"[Markdown table: {len(table) - 2} rows]\n" + "\n".join(out)


def _toml(text: str, limits: tuple[int, int, int]) -> str | None:
    if not re.search(r"(?m)^\[[\w.\"-]+\]\s*$", text) or "=" not in text:
        return None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return None
    import json

    return "[TOML]\n" + json.dumps(trim_json_value(data, *limits), indent=1, ensure_ascii=False)


def _ini(text: str, limits: tuple[int, int, int]) -> str | None:
    if not re.search(r"(?m)^\[[^\]]+\]\s*$", text):
        return None
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text)
    except configparser.Error:
        return None
    out = []
    for sec in parser.sections()[:30]:
        keys = list(parser[sec].keys())
        out.append(f"[{sec}] {', '.join(keys[: limits[1]])}{' …' if len(keys) > limits[1] else ''}")
    return "[INI sections]\n" + "\n".join(out) if out else None


def _yaml(text: str, limits: tuple[int, int, int]) -> str | None:
    if not re.match(r"^(---\s*\n)?[\w\"'-]+:\s", text.lstrip()) or text.count("\n") < 10:
        return None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        return None
    if not isinstance(data, dict | list):
        return None
    import json

    return "[YAML]\n" + json.dumps(trim_json_value(data, *limits), indent=1, ensure_ascii=False, default=str)


def _logs(text: str, limits: tuple[int, int, int]) -> str | None:
    lines = text.splitlines()
    if len(lines) < 30 or sum(1 for ln in lines[:50] if _LOG_LINE.search(ln)) < min(len(lines), 50) * 0.6:
        return None
    levels = Counter(m.group(1)[:4] for ln in lines if (m := _LEVEL.search(ln)))
    important = [ln for ln in lines if re.search(r"\b(ERROR|CRITICAL|FATAL|WARN)", ln)]
    seen: dict[str, int] = {}
    for ln in important:
        key = re.sub(r"\d+", "#", ln)
        seen[key] = seen.get(key, 0) + 1
    uniq = []
    for ln in important:
        key = re.sub(r"\d+", "#", ln)
        if seen.get(key):
            uniq.append(ln + (f"  [×{seen[key]}]" if seen[key] > 1 else ""))
            seen[key] = 0
    summary = ", ".join(f"{k}×{v}" for k, v in levels.most_common())
    return (
        f"[log: {len(lines)} lines; {summary}]\n"
        + "\n".join(uniq[:60])
        + "\n[last lines]\n"
        + "\n".join(lines[-10:])
    )


FORMATS: tuple[tuple[str, Callable[[str, tuple[int, int, int]], str | None]], ...] = (
    ("json", _json),
    ("stacktrace", _stack),
    ("xml", _xml),
    ("csv", _csv),
    ("markdown_table", _md_table),
    ("toml", _toml),
    ("ini", _ini),
    ("yaml", _yaml),
    ("log", _logs),
)


def structural_extract(text: str, limits: tuple[int, int, int] = (4, 12, 6)) -> tuple[str, str] | None:
    """(format, extract) for the first format that recognises ``text`` and shortens it."""
    for name, fn in FORMATS:
        try:
            result = fn(text, limits)
        except (ValueError, RecursionError):
            result = None
        if result is not None and len(result) < len(text):
            return name, result
    return None
