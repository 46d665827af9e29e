"""What the move scripts share: git, the tracked text files, and fitting lines a longer path made too long."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
import textwrap
import tokenize
from collections.abc import Callable, Iterator
from pathlib import Path

TEXT_SUFFIXES = {".py", ".md", ".toml", ".cfg", ".ini", ".yaml", ".yml"}
TEXT_NAMES = {"Makefile", "run"}  # .ci/run
SKIP_PREFIXES = ("prompts/",)  # text sent to models, not references to code


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


def toplevel() -> Path:
    return Path(git(Path.cwd(), "rev-parse", "--show-toplevel").strip())


def text_files(root: Path, skip: tuple[str, ...] = ()) -> Iterator[str]:
    """Tracked files that may name a module or a path: code, docs, config, the Makefile and CI."""
    for path in git(root, "ls-files").splitlines():
        p = root / path
        if path.startswith((*skip, *SKIP_PREFIXES)) or not p.is_file():
            continue
        if p.suffix in TEXT_SUFFIXES or p.name in TEXT_NAMES:
            yield path


def from_package_imports(text: str, parent: str, moves: dict[str, tuple[str, str]]) -> str:
    """``from <parent> import a, b as c`` where ``a`` moved to ``moves[a] = (package, leaf)``: one import per
    package, each module keeping its local name (so the code that uses it is unchanged)."""
    pattern = re.compile(
        rf"^(?P<ind>[ \t]*)from {re.escape(parent)} import "
        r"(?:\((?P<par>[^)]*)\)|(?P<line>[^\n(]*?))[ \t]*(?P<cmt>#[^\n]*)?$",
        re.M,
    )

    def sub(m: re.Match[str]) -> str:
        names = [n.strip() for n in (m.group("par") or m.group("line") or "").replace("\n", ",").split(",")]
        names = [n for n in names if n and not n.startswith("#")]
        if not any(n.split(" as ")[0].strip() in moves for n in names):
            return m.group(0)
        ind, kept, lines = m.group("ind"), [], []
        for n in names:
            name, _, alias = (p.strip() for p in n.partition(" as "))
            if name not in moves:
                kept.append(n)
                continue
            package, leaf = moves[name]
            local = alias or name
            alias_part = f" as {local}" if local != leaf else ""
            lines.append(f"{ind}from {package} import {leaf}{alias_part}")
        if kept:
            lines.insert(0, f"{ind}from {parent} import {', '.join(kept)}")
        if m.group("cmt"):
            lines[0] += "  " + m.group("cmt")
        return "\n".join(lines)

    return pattern.sub(sub, text)


def _ruff() -> str:
    ruff = Path(sys.executable).with_name("ruff")
    return str(ruff) if ruff.exists() else "ruff"


def _split_at(line: str, limit: int, start: int) -> int:
    """The last space at or before ``limit`` after ``start`` (or -1)."""
    cut = line.rfind(" ", start, limit + 1)
    return cut if cut > start else -1


def _reflow(lines: list[str], row: int, prefix: str, more: Callable[[str, str], bool], limit: int) -> None:
    """Re-wrap the paragraph starting at ``row`` (1-based) whose lines start with ``prefix``; ``more(line,
    next_line)`` says whether the next line belongs to it."""
    end = row
    while end < len(lines) and more(lines[end - 1], lines[end]):
        end += 1
    words = " ".join(ln.strip()[len(prefix.strip()) :].strip() for ln in lines[row - 1 : end])
    wrapped = textwrap.wrap(
        words, limit - len(prefix), break_long_words=False, break_on_hyphens=False
    )  # the width leaves room for the prefix
    lines[row - 1 : end] = [f"{prefix}{w}\n" for w in wrapped]


def _comment_more(indent: str) -> Callable[[str, str], bool]:
    def more(_line: str, nxt: str) -> bool:
        body = nxt.strip()
        return nxt.startswith(indent + "#") and not nxt[len(indent)].isspace() and len(body) > 2

    return more


def _doc_more(_line: str, nxt: str) -> bool:
    closed = _line.rstrip().endswith(('"""', "'''")) and _line.strip() not in ('"""', "'''")
    return not closed and bool(nxt.strip()) and not nxt.strip().startswith(("-", "*", "|", ">>>", '"""'))


def _fit(path: Path, rows: list[int], limit: int) -> None:
    """Re-wrap each too-long row that is a comment, a docstring line or a string in brackets."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    comments: dict[int, int] = {}
    in_text: set[int] = set()
    literals: dict[int, tuple[int, int]] = {}
    depth, prev = 0, tokenize.NEWLINE
    statement_start = {tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT}
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        starts = prev in statement_start
        if tok.type not in (tokenize.NL, tokenize.COMMENT):
            prev = tok.type
        if tok.type == tokenize.OP and tok.string in "([{":
            depth += 1
        elif tok.type == tokenize.OP and tok.string in ")]}":
            depth -= 1
        elif tok.type == tokenize.COMMENT:
            comments[tok.start[0]] = tok.start[1]
        elif tok.type == tokenize.STRING and starts and tok.start[0] < tok.end[0]:  # a docstring
            in_text.update(range(tok.start[0], tok.end[0] + 1))
        elif tok.type == tokenize.STRING and depth and tok.string[:1] in "\"'":
            literals[tok.start[0]] = tok.start[1], tok.end[1]
    for row in sorted(rows, reverse=True):  # bottom-up: a re-wrapped paragraph moves no row still to do
        line = lines[row - 1].rstrip("\n")
        indent = line[: len(line) - len(line.lstrip())]
        if row in comments and line[: comments[row]].strip():  # an inline comment goes on its own line above
            c = comments[row]
            lines[row - 1 : row] = [f"{indent}{line[c:]}\n", line[:c].rstrip() + "\n"]
            if len(indent) + len(line) - c > limit:
                _reflow(lines, row, indent + "# ", _comment_more(indent), limit)
        elif row in comments:
            _reflow(lines, row, indent + "# ", _comment_more(indent), limit)
        elif row in in_text and _split_at(line, limit, len(indent) + 4) > 0:
            _reflow(lines, row, indent, _doc_more, limit)
        elif row in literals and (cut := _split_at(line, limit - 1, literals[row][0] + 1)) > 0:
            q = line[literals[row][0]]
            cont = " " * literals[row][0]
            lines[row - 1 : row] = [line[: cut + 1] + q + "\n", f"{cont}{q}{line[cut + 1 :]}\n"]
    path.write_text("".join(lines), encoding="utf-8")


def tidy(root: Path, paths: list[str], limit: int = 110) -> None:
    """``ruff check --fix`` and ``ruff format`` on ``paths``, then lines a longer name pushed past ``limit``
    re-wrapped (comments, docstrings, strings in brackets); any other is printed for a hand fix."""
    if not paths:
        return
    subprocess.run([_ruff(), "check", "--fix", "-q", "--ignore", "E501", *paths], cwd=root, check=False)
    for _ in range(3):  # before ruff format, which would split a code line to fit its comment
        for f, rows in _too_long(root, paths).items():
            _fit(Path(f), rows, limit)
        subprocess.run([_ruff(), "format", "-q", *paths], cwd=root, check=True)
    for f, rows in _too_long(root, paths).items():
        for row in rows:
            print(f"line too long, fix by hand: {Path(f).relative_to(root)}:{row}")


def _too_long(root: Path, paths: list[str]) -> dict[str, list[int]]:
    out = subprocess.run(
        [_ruff(), "check", "--select", "E501", "--output-format", "json", *paths],
        cwd=root,
        capture_output=True,
        text=True,
    ).stdout
    long: dict[str, list[int]] = {}
    for item in json.loads(out or "[]"):
        long.setdefault(item["filename"], []).append(item["location"]["row"])
    return long
