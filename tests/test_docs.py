"""The documentation stays a door and a map: README is short, every relative link (and its ``#anchor``)
in README, CONTRIBUTING and ``docs/`` leads somewhere, and ``docs/context.md``'s step table is the
pipeline ``build_pipeline`` builds."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from myrm_tui.context.pipeline import build_pipeline

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted([ROOT / "README.md", ROOT / "CONTRIBUTING.md", *(ROOT / "docs").glob("*.md")])
# Written by the start-up work (``make perf``'s figures); linked before it lands on every branch.
PENDING = {ROOT / "docs" / "perf.md"}
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.M | re.S)


def links(page: Path) -> list[str]:
    """The targets of the page's Markdown links and images, outside code blocks."""
    return LINK.findall(FENCE.sub("", page.read_text(encoding="utf-8")))


def anchors(page: Path) -> set[str]:
    """The page's heading anchors as GitHub makes them (lower case, punctuation dropped, spaces to ``-``)."""
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    heads = re.findall(r"^#+ (.+)$", text, re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in heads}


def test_the_readme_is_a_door_of_at_most_250_lines() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 250, f"README.md has {len(lines)} lines; move the detail into docs/"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_resolves(page: Path) -> None:
    broken = []
    for target in links(page):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:: not ours to check
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if dest in PENDING and not dest.exists():
            continue
        if not dest.exists():
            broken.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(f"{target}: no heading #{anchor} in {dest.relative_to(ROOT)}")
    assert not broken, broken


def test_the_pages_are_linked_from_the_readme_or_another_page() -> None:
    linked = {(p.parent / t.partition("#")[0]).resolve() for p in PAGES for t in links(p) if t[:1] not in "#"}
    orphans = [p.relative_to(ROOT).as_posix() for p in PAGES if p.name != "README.md" and p not in linked]
    assert not orphans, orphans


def test_the_step_table_of_docs_context_is_the_pipeline() -> None:
    text = (ROOT / "docs" / "context.md").read_text(encoding="utf-8")
    documented = [(int(n), cls) for n, cls in re.findall(r"^\| (\d+) \| `(\w+)`", text, re.M)]
    built = [(k, type(step).__name__) for k, step in enumerate(build_pipeline().steps, 1)]
    assert documented == built
