"""The TUI tests' shared fixtures: the approval dialog counts as read when it opens; a long session."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual import _time

from myrm_tui.app.screens import approval


@pytest.fixture(autouse=True)
def _approval_dialog_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """A dialog opens as if a second earlier: a key a test presses once it is open answers it at once (the
    user read it), while a key stamped before it opened is still too early. The tests of that grace period
    (``tests/app/screens/test_approval.py``) set their own clock."""
    monkeypatch.setattr(approval.ApprovalScreen, "clock", staticmethod(lambda: _time.get_time() - 1.0))


@pytest.fixture(scope="session")
def long_db(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A stored session of thousands of items (``test_focus_keys.ROUNDS`` rounds: 2.6 s of CPU to write),
    made once a run for every worker and module that asks (each test opens a copy): (its database, its id)."""
    from tests.app.test_focus_keys import make_long_db

    return make_long_db(tmp_path_factory)
