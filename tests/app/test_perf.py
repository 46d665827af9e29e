"""docs/perf.md is written by the perf script: each mode replaces its own section and keeps the others."""

from __future__ import annotations

from pathlib import Path

from myrm_tui.app.perf import DOC_HEAD, write_section


def test_each_perf_mode_replaces_its_own_section_of_the_doc(tmp_path: Path) -> None:
    doc = tmp_path / "docs" / "perf.md"
    write_section(doc, "start", "## Start-up\n\n| a |\n")
    write_section(doc, "sessions", "## Long sessions\n\n| b |")
    doc.write_text(doc.read_text().replace(DOC_HEAD, "# an older head\n"))
    write_section(doc, "start", "## Start-up\n\n| c |")
    text = doc.read_text()
    assert text.startswith(DOC_HEAD)  # the head is the script's too
    assert "| a |" not in text and "older head" not in text
    assert text.index("| c |") < text.index("| b |")  # replaced where it was, the other section kept
    assert text.count("<!-- perf:start -->") == text.count("<!-- perf:sessions -->") == 1
