"""The shell stage of ``FilterProcessor``: compressors for the shell outputs agents see most.

Each compressor knows one family of commands and keeps what an engineer would read (errors, failing
tests, changed lines, summaries) while dropping progress noise and repetition. A compressor returns
None when it has nothing useful to do, so the output passes on unchanged.
"""

from __future__ import annotations

import re
from collections import Counter, OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

_PROGRESS = re.compile(
    r"(\d{1,3}%\s*\|[█▏▎▍▌▋▊▉ #=>-]*\||\[[#=>. -]{8,}\]|\d+(\.\d+)?\s?[kKMG]i?B/s|━{4,}|█{4,})"
)
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")  # colour and cursor codes: they split "188 passed" apart
_ERRORISH = re.compile(
    r"\b(error|fatal|fail(ed|ure)?|panic|exception|traceback|warning|warn)\b", re.IGNORECASE
)


def _cap(lines: list[str], keep: int, what: str) -> list[str]:
    if len(lines) <= keep:
        return lines
    return [*lines[:keep], f"[… {len(lines) - keep} more {what}]"]


def _dedupe_runs(lines: list[str]) -> list[str]:
    out: list[str] = []
    prev, count = None, 0
    for line in [*lines, None]:
        if line == prev:
            count += 1
            continue
        if prev is not None:
            out.append(prev if count == 1 else f"{prev}  [×{count}]")
        prev, count = line, 1
    return out


def git_status(cmd: str, out: str) -> str | None:
    lines = out.splitlines()
    untracked = [ln for ln in lines if ln.startswith(("?? ", "\t")) and "modified:" not in ln]
    if len(untracked) < 15:
        return None
    rest = [ln for ln in lines if ln not in untracked]
    return "\n".join([*rest, *_cap(untracked, 10, "untracked paths")])


def git_log(cmd: str, out: str) -> str | None:
    commits = re.split(r"(?m)^(?=commit [0-9a-f]{7,40})", out)
    commits = [c for c in commits if c.strip()]
    if len(commits) < 4:
        return None
    short = []
    for c in commits:
        head = c.splitlines()
        sha = head[0].split()[1][:10] if head and head[0].startswith("commit ") else ""
        subject = next((ln.strip() for ln in head[1:] if ln.startswith("    ") and ln.strip()), "")
        date = next((ln[5:].strip() for ln in head if ln.startswith("Date:")), "")
        short.append(f"{sha} {date[:16]} {subject}".strip())
    return "\n".join(_cap(short, 30, "commits"))


def git_diff(cmd: str, out: str) -> str | None:
    if "diff --git" not in out and not out.startswith("---"):
        return None
    kept: list[str] = []
    context_run: list[str] = []
    for ln in out.splitlines():
        if ln.startswith(("diff --git", "+++", "---", "@@", "+", "-", "new file", "deleted file", "rename ")):
            if context_run:
                kept.extend(context_run[-1:] if len(context_run) > 2 else context_run)
                context_run = []
            kept.append(ln)
        elif ln.startswith("index "):
            continue
        else:
            context_run.append(ln)
            if len(context_run) == 1 and kept and kept[-1].startswith(("+", "-")):
                kept.append(ln)
                context_run = []
    return "\n".join(kept)


def pytest_output(cmd: str, out: str) -> str | None:
    if "test session starts" not in out and not re.search(r"\d+ (passed|failed)", out):
        return None
    lines = out.splitlines()
    keep: list[str] = []
    in_failure = False
    failure_buf: list[str] = []
    for ln in lines:
        if re.match(r"^_{3,} .* _{3,}$", ln) or ln.startswith(("FAILED", "ERROR ")):
            if failure_buf:
                keep.extend(_cap(failure_buf[-12:], 12, "lines"))
                failure_buf = []
            in_failure = ln.startswith("_")
            keep.append(ln)
            continue
        if re.match(r"^=+ .*(passed|failed|error|no tests ran).* =+$", ln) or re.match(
            r"^=+ (FAILURES|ERRORS|short test summary info) =+$", ln
        ):
            if failure_buf:
                keep.extend(failure_buf[-12:])
                failure_buf = []
            in_failure = False
            keep.append(ln)
            continue
        if in_failure:
            failure_buf.append(ln)
        elif ln.startswith(("E ", "platform ", "rootdir", "collected ")):
            keep.append(ln)
    if failure_buf:
        keep.extend(failure_buf[-12:])
    return "\n".join(keep) if keep else None


def npm_output(cmd: str, out: str) -> str | None:
    lines = out.splitlines()
    noise = re.compile(
        r"^(npm (WARN|notice)|\s*$|added \d+ packages|\d+ packages are looking|  run `npm fund`"
        r"|yarn install v|\[\d/\d\])"
    )
    keep = [ln for ln in lines if not noise.match(ln) or "ERR" in ln]
    warns = Counter(
        ln.split(" ", 3)[2] if len(ln.split(" ")) > 2 else ln for ln in lines if ln.startswith("npm WARN")
    )
    summary = [f"[npm WARN ×{n}: {k}]" for k, n in warns.most_common(5)]
    return "\n".join([*summary, *_dedupe_runs(keep)])


def pip_output(cmd: str, out: str) -> str | None:
    noise = re.compile(
        r"^\s*(Requirement already satisfied|Collecting |Downloading |Using cached |Obtaining "
        r"|  Preparing|  Building|  Installing build|  Getting requirements|Looking in indexes|\s*━)"
    )
    lines = out.splitlines()
    dropped = sum(1 for ln in lines if noise.match(ln))
    keep = [ln for ln in lines if not noise.match(ln)]
    return "\n".join([*keep, f"[{dropped} pip progress lines removed]"]) if dropped else None


def cargo_output(cmd: str, out: str) -> str | None:
    lines = out.splitlines()
    compiling = [
        ln for ln in lines if re.match(r"^\s*(Compiling|Downloaded|Downloading|Checking|Fresh) ", ln)
    ]
    if len(compiling) < 5:
        return None
    keep = [ln for ln in lines if ln not in compiling]
    return "\n".join([f"[{len(compiling)} crates compiled/checked]", *keep])


def compiler_output(cmd: str, out: str) -> str | None:
    lines = out.splitlines()
    keep: list[str] = []
    after = 0
    for ln in lines:
        if re.search(r"(error|warning)(\[\w+\])?:|\berror\b|Error \d+", ln, re.IGNORECASE):
            keep.append(ln)
            after = 3
        elif after:
            keep.append(ln)
            after -= 1
    if not keep or len(keep) > len(lines) * 0.8:
        return None
    return "\n".join(
        [*_cap(_dedupe_runs(keep), 120, "diagnostic lines"), f"[{len(lines)} lines of build output]"]
    )


def listing_output(cmd: str, out: str) -> str | None:
    lines = [ln for ln in out.splitlines() if ln.strip()]
    if len(lines) < 60:
        return None
    by_dir: OrderedDict[str, int] = OrderedDict()
    for ln in lines:
        path = ln.split()[-1] if ln.split() else ln
        d = path.rsplit("/", 1)[0] if "/" in path else "."
        by_dir[d] = by_dir.get(d, 0) + 1
    dirs = [f"{d}/ ({n} entries)" for d, n in list(by_dir.items())[:25]]
    return "\n".join([*lines[:40], f"[… {len(lines) - 40} more entries; by folder:]", *dirs])


def grep_output(cmd: str, out: str) -> str | None:
    lines = out.splitlines()
    if len(lines) < 40:
        return None
    per_file: OrderedDict[str, list[str]] = OrderedDict()
    for ln in lines:
        f = ln.split(":", 1)[0] if ":" in ln else ""
        per_file.setdefault(f, []).append(ln if len(ln) < 240 else ln[:240] + "…")
    out_lines: list[str] = []
    for f, hits in per_file.items():
        out_lines.extend(_cap(hits, 8, f"matches in {f or 'output'}"))
    return "\n".join(_cap(out_lines, 200, "lines"))


def docker_output(cmd: str, out: str) -> str | None:
    noise = re.compile(
        r"^([0-9a-f]{12}: (Pulling|Waiting|Downloading|Extracting|Verifying"
        r"|Download complete|Pull complete|Already exists)|#\d+ (sha256|\d+\.\d+ ))"
    )
    lines = out.splitlines()
    keep = [ln for ln in lines if not noise.match(ln)]
    return "\n".join(keep) if len(keep) < len(lines) else None


def progress_output(cmd: str, out: str) -> str | None:
    # Carriage-return redraws keep only their final state. (Split by hand: a regex over one long line
    # without "\r" backtracks quadratically.)
    lines = [ln.removesuffix("\r").rsplit("\r", 1)[-1] for ln in out.split("\n")]
    keep = [ln for ln in lines if not _PROGRESS.search(ln) or _ERRORISH.search(ln)]
    keep = _dedupe_runs(keep)
    if len("\n".join(keep)) >= len(out) * 0.9:
        return None
    return "\n".join(keep)


@dataclass(frozen=True)
class ShellCompressor:
    name: str
    pattern: re.Pattern[str]
    fn: Callable[[str, str], str | None]


def _c(name: str, pattern: str, fn: Callable[[str, str], str | None]) -> ShellCompressor:
    return ShellCompressor(name, re.compile(pattern), fn)


COMPRESSORS: tuple[ShellCompressor, ...] = (
    _c("git_status", r"^\s*git\s+status\b", git_status),
    _c("git_log", r"^\s*git\s+log\b", git_log),
    _c("git_diff", r"^\s*git\s+(diff|show)\b", git_diff),
    _c("pytest", r"\b(pytest|py\.test|tox|python\d?(\.\d+)? -m pytest)\b", pytest_output),
    _c("npm", r"^\s*(npm|yarn|pnpm|npx)\s", npm_output),
    _c("pip", r"\b(pip\d?(\.\d+)?|uv pip|python\d?(\.\d+)? -m pip)\s+install\b", pip_output),
    _c("cargo", r"^\s*cargo\s+(build|test|check|run|clippy)\b", cargo_output),
    _c("compiler", r"^\s*(make|cmake|gcc|g\+\+|clang|cc|tsc|go build|mvn|gradle|ninja)\b", compiler_output),
    _c("listing", r"^\s*(ls\s+-\w*R|find|tree)\b", listing_output),
    _c("grep", r"^\s*(grep|rg|ag|git grep)\b", grep_output),
    _c("docker", r"^\s*docker(-compose)?\s", docker_output),
    _c("progress", r".", progress_output),  # last: any command whose output is mostly progress bars
)


def strip_ansi(text: str) -> str:
    return _ANSI.sub("", text) if "\x1b" in text else text


def compress_shell(command: str, output: str) -> tuple[str, str] | None:
    """(compressor name, compressed output) for the first compressor that helps, else None."""
    first = command.strip().split("\n", 1)[0]
    output = strip_ansi(output)
    for comp in COMPRESSORS:
        if comp.pattern.search(first):
            result = comp.fn(first, output)
            if result is not None and len(result) < len(output) * 0.85:
                return comp.name, result
    return None
