"""Anchor ``tests/protections.py`` on markers: each mutant still written the old way, with a file path,
gets a ``# guard: <id>`` line just above its snippet in that file, and its entry names the id instead.

Idempotent (entries that name a marker are left alone), so it can be run again after a merge brings
entries written the old way; marker lines no mutant names any more are removed. Run from anywhere:
``python scripts/anchor_protections.py``; then ``ruff format`` the files it lists and run
``tests/test_protections_fresh.py``. A marker goes on its own line (a trailing comment would conflict
with parallel edits of the guarded line), with the guarded line's indentation, above the statement when
the snippet continues one; a file whose syntax tree the marker would change (a line inside a string,
after a backslash) is refused and named.
"""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests import protections  # noqa: E402  (the repository root first on the path)

MAX_ID = 40
MARKER_LINE = re.compile(r"^[ \t]*# guard: (\S+)[ \t]*\n", re.M)
STOPWORDS = frozenset(
    {"a", "an", "and", "as", "at", "by", "for", "in", "is", "its", "of", "on", "or", "the", "to"}
)


def marker_id(name: str, taken: set[str]) -> str:
    """A short id from a mutant's name: its first words (not ending on a small word), lower case, joined
    by dashes; unique."""
    words: list[str] = []
    for word in re.findall(r"[a-z0-9]+", name.lower().replace("'", "")):
        if words and len("-".join([*words, word])) > MAX_ID:
            break
        words.append(word)
    while len(words) > 1 and words[-1] in STOPWORDS:
        words.pop()
    out = "-".join(words)
    unique, n = out, 2
    while unique in taken:
        unique, n = f"{out}-{n}", n + 1
    taken.add(unique)
    return unique


def mutant_calls(source: bytes) -> list[ast.Call]:
    """The ``Mutant(...)`` calls of protections.py, in the order of ``MUTANTS``."""
    calls = [
        node
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Mutant"
    ]
    return sorted(calls, key=lambda c: (c.lineno, c.col_offset))


def marker_line(text: str, start: int) -> int:
    """Where the marker of a snippet starting at ``start`` goes: the start of the snippet's line, or of
    its statement's first line when the snippet's line continues a statement within a few lines (a
    comment inside brackets makes the formatter split the guarded expression over lines)."""
    line_start = text.rfind("\n", 0, start) + 1
    line = text.count("\n", 0, start) + 1
    first = max(
        (
            n.lineno
            for n in ast.walk(ast.parse(text))
            if isinstance(n, ast.stmt) and n.lineno <= line <= (n.end_lineno or 0)
        ),
        default=line,
    )
    if first == line or line - first >= protections.LOOKAHEAD:
        return line_start
    return sum(len(x) for x in text.splitlines(keepends=True)[: first - 1])


def offset(lines: list[bytes], lineno: int, col: int) -> int:
    """A byte offset from ast's (1-based line, byte column)."""
    return sum(len(line) for line in lines[: lineno - 1]) + col


def drop_orphans(named: set[str]) -> dict[Path, str]:
    """The files whose markers no mutant names, without those marker lines (left by a merge that moved
    the guarded code, or by a mutant removed)."""
    out: dict[Path, str] = {}
    for path in sorted({p for places in protections.markers(ROOT).values() for p, _ in places}):
        text = path.read_text(encoding="utf-8")
        kept = MARKER_LINE.sub(lambda m: m.group() if m.group(1) in named else "", text)
        if kept != text:
            print(f"{path.relative_to(ROOT)}: orphan markers removed")
            out[path] = kept
    return out


def main() -> int:
    plan = ROOT / "tests" / "protections.py"
    source = plan.read_bytes()
    calls = mutant_calls(source)
    if len(calls) != len(protections.MUTANTS):
        print(f"{len(calls)} Mutant(...) calls for {len(protections.MUTANTS)} mutants: not a plain tuple")
        return 2
    taken = {m.marker for m in protections.MUTANTS if not m.marker.endswith(".py")}
    texts = drop_orphans(taken)
    rewrites: list[tuple[ast.expr, str]] = []
    failed = 0
    for mutant, call in zip(protections.MUTANTS, calls, strict=True):
        path = ROOT / mutant.marker
        if not (mutant.marker.endswith(".py") and path.is_file()):
            continue  # names a marker already
        text = texts.get(path) or path.read_text(encoding="utf-8")
        if text.count(mutant.old) != 1:
            print(f"{mutant.name}: snippet found {text.count(mutant.old)} times in {mutant.marker}")
            failed += 1
            continue
        line_start = marker_line(text, text.index(mutant.old))
        indent = re.match(r"[ \t]*", text[line_start:]).group()  # type: ignore[union-attr]
        ident = marker_id(mutant.name, taken)
        marked = f"{text[:line_start]}{indent}# guard: {ident}\n{text[line_start:]}"
        try:
            same = ast.dump(ast.parse(marked)) == ast.dump(ast.parse(text))
        except SyntaxError:
            same = False
        if not same:
            print(f"{mutant.name}: a marker line above its snippet would change {mutant.marker}'s code")
            failed += 1
            continue
        texts[path] = marked
        rewrites.append((call.args[1], ident))
    for path, text in texts.items():
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path.relative_to(ROOT)}")
    lines = source.splitlines(keepends=True)
    for node, ident in sorted(rewrites, key=lambda r: (r[0].lineno, r[0].col_offset), reverse=True):
        assert node.end_lineno is not None and node.end_col_offset is not None
        a = offset(lines, node.lineno, node.col_offset)
        b = offset(lines, node.end_lineno, node.end_col_offset)
        source = source[:a] + json.dumps(ident).encode() + source[b:]
        lines = source.splitlines(keepends=True)
    if rewrites:
        plan.write_bytes(source)
    print(f"{len(rewrites)} mutants anchored on markers, {failed} refused")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
