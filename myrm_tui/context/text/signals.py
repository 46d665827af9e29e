"""Cheap facts read off messages: did a tool fail, which command ran, which files were touched.

Shared by CompressionIntent, priority classification, the extractive summary and the ArtifactTracker,
so the same regexes decide the same question everywhere.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from functools import lru_cache

from myrm_tui.context.memo import memoized
from myrm_tui.context.text.call_args import SHELL_TOOLS, call_args
from myrm_tui.context.types import Message, ToolCall

_RC_TAG = re.compile(r"<returncode>\s*(-?\d+)\s*</returncode>")
_EXIT_CODE = re.compile(r"\bexit(?:ed with)? code[:= ]\s*(-?\d+)", re.IGNORECASE)
_EXC_LINE = re.compile(
    r"^\s*([A-Za-z_][\w.]*(?:Error|Exception|Warning|Exit|Interrupt|Failure))(?::\s?(.*))?$"
)
_PATH = re.compile(r"(?<![\w/.-])((?:\.{0,2}/)?(?:[\w.-]+/)*[\w-]+\.[A-Za-z][\w]{0,7})(?![\w/])")
_DOTTED = re.compile(r"`([A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)+)`|`([A-Z][A-Za-z0-9_]{2,})`")
_HEREDOC_TARGET = re.compile(
    r"(?:cat|tee)\s+(?:-a\s+)?>{0,2}\s*['\"]?([\w./-]+)['\"]?\s*<<|cat\s+<<-?\s*['\"]?\w+['\"]?\s*>{1,2}\s*['\"]?([\w./-]+)"
)
_SED_INPLACE = re.compile(r"\bsed\s+(?:-[^\s]*i[^\s]*|--in-place)\s+(?:'[^']*'|\"[^\"]*\"|\S+)\s+([\w./-]+)")
_REDIRECT = re.compile(r"(?<![<>&2])>\s*['\"]?([\w./-]+\.\w+)")
_DIFF_FILE = re.compile(r"^diff --git a/(\S+) b/", re.MULTILINE)
_FILE_EXT_OK = re.compile(
    r"\.(py|pyi|js|ts|tsx|jsx|rs|go|c|h|cpp|hpp|java|rb|md|txt|toml|yaml|yml|json|cfg|ini|sh|rst|html|css|sql|xml|csv|lock)$"
)

COMMAND_TOOLS = SHELL_TOOLS


def exit_code(msg: Message) -> int | None:
    """The exit status a tool result reports, if it reports one."""
    if msg.meta.get("exit_code") is not None:
        return int(msg.meta["exit_code"])
    text = msg.text[:400]
    m = _RC_TAG.search(text) or _EXIT_CODE.search(text)
    return int(m.group(1)) if m else None


def is_failure(msg: Message) -> bool:
    if msg.role != "tool":
        return False
    if msg.meta.get("is_error"):
        return True
    code = exit_code(msg)
    if code is not None:
        return code != 0
    head = msg.text[:200].lstrip()
    return head.startswith(("Error:", "error:", "Traceback (most recent call last)"))


# Read once a session per output (``context/memo.py``): the extractive summary reads every folded output.
@memoized()
def last_exception_line(text: str) -> str | None:
    """The final ``SomeError: message`` line of the first traceback in ``text``."""
    start = text.find("Traceback (most recent call last)")
    scan = text[start:] if start >= 0 else text
    found = None
    for line in scan.splitlines():
        m = _EXC_LINE.match(line)
        if m:
            found = line.strip()
            if start >= 0:
                # the exception line ends the traceback; stop at the first one after it started
                break
    return found


def command_of(call: ToolCall) -> str:
    """The shell command of a bash-like call, or a short rendering of any call (any argument shape)."""
    args = call_args(call)
    if not args.ok:
        return f"{call.name}({call.arguments[:80]})"
    if call.name in COMMAND_TOOLS or args.has("command"):
        return args.command.strip()
    if args.has("paths") or args.has("path"):
        return f"{call.name} {' '.join(args.read_paths)}".rstrip()
    return f"{call.name}({', '.join(f'{k}={args.shown(k, 40)}' for k in list(args.fields)[:3])})"


def paths_in(text: str) -> list[str]:
    out: list[str] = []
    for m in _PATH.finditer(text):
        p = m.group(1)
        if _FILE_EXT_OK.search(p) and p not in out and not p.startswith(("http", "www.")):
            out.append(p)
    return out


def modules_in(text: str) -> list[str]:
    return list(dict.fromkeys(a or b for a, b in _DOTTED.findall(text)))


def written_files(call: ToolCall) -> Iterator[tuple[str, str]]:
    """(path, op) for files a call creates or modifies: op is "created" or "modified"."""
    yield from _written(call)


@lru_cache(maxsize=8192)  # a call is parsed by several layers on every compaction: parse it once
def _written(call: ToolCall) -> tuple[tuple[str, str], ...]:
    return tuple(_scan_written(call))


def _scan_written(call: ToolCall) -> Iterator[tuple[str, str]]:
    args = call_args(call)
    if call.name == "file_edit_tool":
        if args.path:
            yield args.path, "created" if args.flag("create") or not args.text("old_string") else "modified"
        return
    cmd = args.command if (call.name in COMMAND_TOOLS or args.has("command")) else ""
    if not cmd:
        return
    for m in _HEREDOC_TARGET.finditer(cmd):
        yield (m.group(1) or m.group(2)), "created"
    for m in _SED_INPLACE.finditer(cmd):
        yield m.group(1), "modified"
    first_line = cmd.split("\n", 1)[0]
    if "<<" not in first_line:
        for m in _REDIRECT.finditer(first_line):
            yield m.group(1), "created"


def read_files(call: ToolCall) -> list[str]:
    return list(_read(call))


@lru_cache(maxsize=8192)
def _read(call: ToolCall) -> tuple[str, ...]:
    return tuple(_scan_read(call))


def _scan_read(call: ToolCall) -> list[str]:
    args = call_args(call)
    if call.name == "file_read_tool":
        return list(args.read_paths)
    cmd = args.command
    if not cmd:
        return []
    try:
        words = shlex.split(cmd.split("\n", 1)[0])
    except ValueError:
        words = cmd.split()
    if words and words[0] in {"cat", "head", "tail", "sed", "nl", "less", "grep"}:
        return [w for w in words[1:] if _FILE_EXT_OK.search(w) and not w.startswith("-")]
    return []


def diff_files(text: str) -> list[str]:
    return list(_diff_files(text))


@memoized()
def _diff_files(text: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(_DIFF_FILE.findall(text)))
