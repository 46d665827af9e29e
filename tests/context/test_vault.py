"""``ArtifactVault``: line ranges of what it holds."""

from __future__ import annotations

import pytest

from myrm_tui.context.vault import slice_lines


def test_vault_line_ranges() -> None:
    text = "\n".join(f"row {i}" for i in range(1, 101))
    out = slice_lines(text, "10:12")
    assert out.splitlines() == ["10\trow 10", "11\trow 11", "12\trow 12"]
    with pytest.raises(ValueError):
        slice_lines(text, "a:b")
