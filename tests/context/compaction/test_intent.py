"""``CompressionIntent``: the files, modules and failed calls a query is about."""

from __future__ import annotations

from myrm_tui.context.compaction.intent import CompressionIntent
from myrm_tui.context.types import Message
from tests.helpers import call


def test_intent_finds_focus_files_modules_and_failed_calls() -> None:
    raw = [
        Message(role="system", content="s", id="s"),
        Message(role="user", content="Why does `astropy.wcs.utils` break in src/wcs/sliced.py?", id="u"),
        Message(role="assistant", content=None, id="a", tool_calls=(call("c1", "pytest"),)),
        Message(role="tool", content="<returncode>1</returncode>\nboom", id="t", tool_call_id="c1"),
    ]
    intent = CompressionIntent.build(raw)
    assert "src/wcs/sliced.py" in intent.focus_files
    assert "astropy.wcs.utils" in intent.focus_modules
    assert intent.failed_call_ids == {"c1"}
    assert intent.protects(raw[3])
