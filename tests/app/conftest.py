"""The TUI tests' shared fixture: the approval dialog counts as read when it opens."""

from __future__ import annotations

import pytest
from textual import _time

from myrm_tui.app.screens import approval


@pytest.fixture(autouse=True)
def _approval_dialog_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """A dialog opens as if a second earlier: a key a test presses once it is open answers it at once (the
    user read it), while a key stamped before it opened is still too early. The tests of that grace period
    (``test_approval_keys.py``) set their own clock."""
    monkeypatch.setattr(approval.ApprovalScreen, "clock", staticmethod(lambda: _time.get_time() - 1.0))
