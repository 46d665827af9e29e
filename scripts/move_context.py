"""Move ``myrm_tui/context/`` into its rooms (issue #47 item 3) and rewrite every reference to the old paths.

Run from anywhere inside the checkout: ``python scripts/move_context.py``. It works from the files as they
are (``git mv`` for each module still at its old place, then a rewrite of every tracked text file), so it can
run on a tree that moved on since it was written, and a second run changes nothing. A top-level module of the
package that is neither in ``MOVES`` nor in ``STAYS`` is reported (a module added since: give it a room by
hand). It ends with ``ruff check --fix`` and ``ruff format`` on the files it touched.
"""

from __future__ import annotations

import argparse
import re
import sys
import textwrap
from pathlib import Path

from _rewrite import from_package_imports, git, text_files, tidy, toplevel

# old module (under myrm_tui/context/) -> its new place, dotted from myrm_tui.context
MOVES: dict[str, str] = {
    **{
        m: f"steps.{m}"
        for m in (
            "thinking",
            "media",
            "answered",
            "reasoning",
            "ttl_prune",
            "precompact",
            "fit",
            "compress",
            "notes",
            "summarize",
            "reread",
            "normalize",
            "pinned",
            "cache_optimize",
        )
    },
    "summary_model": "summary.fields",
    "prepared": "summary.prepared",
    "ledger": "summary.ledger",
    "compaction": "compaction.record",
    "intent": "compaction.intent",
    "budget_guard": "filters.budget_guard",
    "trimming": "text.trimming",
    "signals": "text.signals",
    "call_args": "text.call_args",
    "referred": "text.referred",
    "redact": "privacy.redact",
    "secret_rules": "privacy.secret_rules",
    "window_use": "report.window_use",
    "cache_break": "report.cache_break",
}
# The contract and the core stay at the top of the package.
STAYS = {
    "__init__",
    "config",
    "pipeline",
    "step",
    "state",
    "invariants",
    "edits",
    "types",
    "tokens",
    "model_facts",
    "vault",
}
ROOMS: dict[str, str] = {
    "steps": "The pipeline's steps, a module each (``fit`` and ``media`` hold two).",
    "summary": "The 14-field summary: its data (``fields``), one prepared ahead, the ledger of kept facts.",
    "compaction": "A compaction: its typed record and the ``CompressionIntent`` that guides compression.",
    "filters": "The smart filter: shell compressors, rules, structural filters for tool output; its guard.",
    "text": "Reading and shortening message text: trims, signals, a call's arguments, what replies use.",
    "privacy": "Secrets and personal data kept out of what is stored and sent: redaction and its rules.",
    "report": "Figures about the view: what fills the window, why a prefix cache will miss.",
}
# The renamed modules say their old name and the spec's (appended to their docstring once).
RENAMED_NOTE = {
    "summary.fields": "Was the module ``summary_model`` (context's summary_model.py before the rooms).\n"
    "The spec (Layer 4, Structured Summarization) calls this the structured summary with 14 fields.",
    "compaction.record": "Was the module ``compaction`` (context's compaction.py before the rooms).\n"
    "The spec has no class for it: it is the record of one compaction (Layer 4), whose summary it stores as\n"
    "``compacted_summary``.",
}
# The scripts and their test hold the old names on purpose.
SKIP = ("scripts/", "tests/test_move_scripts.py")


FROM_CONTEXT = {
    old: (f"myrm_tui.context.{new.split('.')[0]}", new.split(".")[1]) for old, new in MOVES.items()
}
DOTTED = re.compile(r"(?<![\w.])myrm_tui\.context\.(" + "|".join(MOVES) + r")\b")
SLASH = re.compile(r"(?:(?<=myrm_tui/)|(?<![\w/.-]))context/(" + "|".join(MOVES) + r")\.py\b")
# `fit.py` -> `steps/fit.py`, but not where the room follows it: `fit.py` (`context/steps/`)
BARE = re.compile(r"(?<=`)(" + "|".join(MOVES) + r")\.py(?=`)(?!` \(`context/)")


def _dotted(text: str, moved: set[str]) -> str:
    def sub(m: re.Match[str]) -> str:
        old = m.group(1)
        room = MOVES[old].split(".")[0]
        if old == room:  # the package ``compaction`` has the old module's name: which one is meant?
            leaves = {n.split(".")[1] for n in MOVES.values() if n.startswith(room + ".")}
            after = re.match(r"\.(\w+)|\s+import\s+\(?\s*(\w+)", text[m.end() :])
            if after and (after.group(1) or after.group(2)) in leaves:
                return m.group(0)  # already the new package's module
            if not after and old not in moved:
                return m.group(0)  # the package itself, named after an earlier run
        return "myrm_tui.context." + MOVES[old]

    return DOTTED.sub(sub, text)


def _slash(text: str) -> str:
    return SLASH.sub(lambda m: "context/" + MOVES[m.group(1)].replace(".", "/") + ".py", text)


def _bare(text: str) -> str:
    return BARE.sub(lambda m: MOVES[m.group(1)].replace(".", "/") + ".py", text)


# The import-linter contract over the summary modules names them in its title.
CONTRACT_NAME = "summarize > prepared > step > summary_model (no circle)"
CONTRACT_NAME_NOW = "steps.summarize > summary.prepared > step > summary.fields (no circle)"


STEPS_CONTRACT = re.compile(
    r'(name = "Steps know the step contract[^\n]*\ntype = "forbidden"\nsource_modules = )\[([^\]]*)\]'
)


def _steps_contract(text: str) -> str:
    """The contract that steps never import the pipeline names the room ``steps`` once instead of each step
    (so a step added later is covered too), when every module it lists is in steps/, filters/ or step."""

    def sub(m: re.Match[str]) -> str:
        listed = re.findall(r'"([\w.]+)"', m.group(2))
        covered = ("myrm_tui.context.steps.", "myrm_tui.context.filters", "myrm_tui.context.step")
        if not all(n.startswith(covered) for n in listed):
            return m.group(0)
        return m.group(1) + '["myrm_tui.context.steps", "myrm_tui.context.filters", "myrm_tui.context.step"]'

    return STEPS_CONTRACT.sub(sub, text)


def _packages(text: str) -> str:
    """The new sub-packages in pyproject's explicit ``[tool.setuptools] packages`` list (after filters)."""
    missing = [f'"myrm_tui.context.{r}",' for r in ROOMS if f'"myrm_tui.context.{r}"' not in text]
    lines = text.splitlines(keepends=True)
    at = next((i for i, ln in enumerate(lines) if '"myrm_tui.context.filters",' in ln), None)
    if not missing or at is None:
        return text
    lines[at + 1 : at + 1] = [f"    {w}\n" for w in textwrap.wrap(" ".join(missing), 106)]
    return "".join(lines)


def rewrite(path: str, text: str, moved: set[str]) -> str:
    out = from_package_imports(text, "myrm_tui.context", FROM_CONTEXT) if path.endswith(".py") else text
    out = _slash(_dotted(out, moved))
    if path.endswith(".md") or path.startswith("myrm_tui/context/"):
        out = _bare(out)  # a bare `fit.py` names a context module only in the docs and in the package itself
    if path == "pyproject.toml":
        out = _steps_contract(_packages(out).replace(CONTRACT_NAME, CONTRACT_NAME_NOW))
    return out


def move(root: Path, touched: set[str]) -> set[str]:
    """``git mv`` each module still at its old place; the old names of those moved now."""
    moved: set[str] = set()
    pkg = root / "myrm_tui" / "context"
    for room, doc in ROOMS.items():
        init = pkg / room / "__init__.py"
        if not init.exists():
            init.parent.mkdir(exist_ok=True)
            init.write_text(f'"""{doc}"""\n', encoding="utf-8")
            git(root, "add", str(init.relative_to(root)))
            touched.add(str(init.relative_to(root)))
    for old, new in MOVES.items():
        src, dst = pkg / f"{old}.py", pkg / (new.replace(".", "/") + ".py")
        if src.exists() and dst.exists():
            sys.exit(f"both {src.relative_to(root)} and {dst.relative_to(root)} exist: merge them by hand")
        if src.exists():
            git(root, "mv", str(src.relative_to(root)), str(dst.relative_to(root)))
            moved.add(old)
            touched.add(str(dst.relative_to(root)))
    for new, note in RENAMED_NOTE.items():
        f = pkg / (new.replace(".", "/") + ".py")
        text = f.read_text(encoding="utf-8")
        if note.splitlines()[0] in text or not text.startswith('"""'):
            continue
        end = text.index('"""', 3)
        text = '"""' + text[3:end].rstrip("\n") + "\n\n" + note + "\n" + text[end:]
        f.write_text(text, encoding="utf-8")
        touched.add(str(f.relative_to(root)))
    strays = sorted(p.stem for p in pkg.glob("*.py") if p.stem not in STAYS and p.stem not in MOVES)
    if strays:
        print("not moved (new since the layout was agreed; give them a room by hand):", ", ".join(strays))
    return moved


def references(root: Path, touched: set[str], moved: set[str]) -> None:
    for path in text_files(root, skip=SKIP):
        p = root / path
        text = p.read_text(encoding="utf-8")
        new = rewrite(path, text, moved)
        if new != text:
            p.write_text(new, encoding="utf-8")
            touched.add(path)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-ruff", action="store_true", help="skip ruff check --fix / ruff format")
    args = ap.parse_args()
    root = toplevel()
    touched: set[str] = set()
    references(root, touched, move(root, touched))
    print(f"{len(touched)} files touched")
    if not args.no_ruff:
        tidy(root, sorted(t for t in touched if t.endswith(".py")))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
