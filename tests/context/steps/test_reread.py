"""``PostCompactionReread``: the files touched last are read again, within budget."""

from __future__ import annotations

import json

from myrm_tui.context.config import ContextConfig
from myrm_tui.context.state import ContextState
from myrm_tui.context.step import CompactionPlan, Level
from myrm_tui.context.steps.reread import FileIntegrityGuard, PostCompactionReread
from myrm_tui.context.types import Message, ToolCall
from tests.helpers import conversation, run_pipeline, run_step, view_for


async def test_reread_injects_recent_files_and_registers_them() -> None:
    raw = conversation(16)
    raw.insert(
        3,
        Message(
            role="assistant",
            content=None,
            id="w",
            tool_calls=(
                ToolCall(
                    "w1",
                    "file_edit_tool",
                    json.dumps({"path": "src/app.py", "create": True, "new_string": "x"}),
                ),
            ),
        ),
    )
    raw.insert(4, Message(role="tool", content="created src/app.py", id="wt", tool_call_id="w1"))
    guard = FileIntegrityGuard()
    files = {"src/app.py": "print('fresh contents')\n"}
    view, _ctx = await run_pipeline(
        raw, window=8_000, force_compaction=True, read_file=files.get, integrity=guard
    )
    reread = [m for m in view if m.meta.get("kind") == "reread"]
    assert reread and "fresh contents" in reread[0].text and reread[0].role == "user"
    assert guard.known("src/app.py")


async def test_reread_respects_token_budget() -> None:
    raw = conversation(6)
    state = ContextState()
    state.touch_artifact("big.txt", "created")
    view = view_for(
        raw,
        state=state,
        plan=CompactionPlan(Level.FULL, compacting=True),
        folded=(raw[2],),
        protected_head=tuple(raw[:2]),
        read_file=lambda p: "word " * 5000,
    )
    config = ContextConfig(max_context_tokens=8_000, reread_max_tokens=100)
    result = await run_step(PostCompactionReread(), view, config=config)
    assert result.messages == raw
