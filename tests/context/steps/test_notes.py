"""``SessionNotes``: the agent's notes come back after a compaction."""

from __future__ import annotations

from myrm_tui.context.state import ContextState
from myrm_tui.context.steps.notes import SessionNotes
from myrm_tui.context.types import SYNTHETIC_TAG
from tests.helpers import conversation, run_pipeline, run_step, view_for


async def test_notes_are_reinserted_after_compaction() -> None:
    state = ContextState(notes=["the cache key is session-scoped", "do not touch setup.py"])
    raw = conversation(12)
    view, _ctx = await run_pipeline(raw, window=8_000, state=state, force_compaction=True)
    notes = [m for m in view if m.meta.get("kind") == "session_notes"]
    assert len(notes) == 1 and "do not touch setup.py" in notes[0].text
    assert f"<{SYNTHETIC_TAG}" in notes[0].text


async def test_notes_processor_is_idle_without_compaction() -> None:
    raw = conversation(2)
    result = await run_step(SessionNotes(), view_for(raw, state=ContextState(notes=["x"])))
    assert result.messages == raw
