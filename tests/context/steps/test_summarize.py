"""``Summarize`` and ``SummaryAuditor``: extractive and LLM summaries, the audit, the incremental merge."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from myrm_tui.context.compaction.intent import CompressionIntent
from myrm_tui.context.config import ContextConfig
from myrm_tui.context.step import CompactionPlan, Level
from myrm_tui.context.steps.summarize import Summarize, SummaryAuditor
from myrm_tui.context.summary import fields as summary_model
from myrm_tui.context.summary import ledger
from myrm_tui.context.types import Message, ToolCall
from tests.helpers import call, conversation, run_pipeline, run_step, view_for


async def test_extractive_summary_keeps_errors_artifacts_and_goal() -> None:
    raw = conversation(20)
    raw.insert(
        4,
        Message(
            role="assistant",
            content=None,
            id="mk",
            tool_calls=(
                call("mk1", "cat <<'EOF' > reproduce_issue.py\nprint(1)\nEOF\npython reproduce_issue.py"),
            ),
        ),
    )
    raw.insert(
        5,
        Message(
            role="tool",
            content="<returncode>1</returncode>\n<output>\nTraceback (most recent call last):\n  File "
            '"x", line 1\nValueError: bad frame\n</output>',
            id="mkt",
            tool_call_id="mk1",
        ),
    )
    view, ctx = await run_pipeline(raw, window=8_000, force_compaction=True)
    summary = next(m for m in view if m.meta.get("kind") == "summary")
    assert summary.role == "assistant" and summary.synthetic
    text = summary.text
    # The goal is the user's first message, which the protected head keeps in the view: not said twice.
    assert [m.id for m in view if m.role == "user" and "Fix the bug in src/app.py" in m.text] == [raw[1].id]
    assert "## User goal" not in text
    assert "reproduce_issue.py" in text and "ValueError: bad frame" in text
    # The result is kept in its own terms, not reworded into a phrase no raw message contains.
    assert "returncode 1" in text and "exit code" not in text
    assert text.rfind("## Next steps") > text.find("## Errors")  # the tail carries what to do next
    assert ctx.metrics.summary_source == "extractive"


async def test_llm_summary_is_audited_and_falls_back() -> None:
    raw = conversation(20)
    calls: list[str] = []

    async def bad(system: str, user: str) -> str:
        calls.append(user)
        return '{"user_goal": "x"}'  # missing 13 fields: rejected twice

    view, ctx = await run_pipeline(raw, window=8_000, force_compaction=True, summarizer=bad)
    assert len(calls) == 2 and ctx.metrics.summary_source == "extractive"
    assert any("rejected" in e for e in ctx.metrics.events)

    async def good(system: str, user: str) -> str:
        fields: dict[str, list[str]] = {
            f: []
            for f in (
                "user_instructions",
                "active_tasks",
                "completed_actions",
                "errors",
                "decisions",
                "artifacts",
                "files_examined",
                "key_facts",
                "tool_usage",
                "open_questions",
                "blocked_items",
                "next_steps",
            )
        }
        return json.dumps(
            {
                **fields,
                "user_goal": "fix app.py",
                "current_state": "reading files",
                "next_steps": ["run tests"],
                "key_facts": ["token sk-abcdefghijklmnopqrstuvwxyz123456 seen"],
            }
        )

    view, ctx = await run_pipeline(raw, window=8_000, force_compaction=True, summarizer=good)
    summary = next(m for m in view if m.meta.get("kind") == "summary")
    assert ctx.metrics.summary_source == "llm" and "fix app.py" in summary.text
    assert "sk-abcdefghij" not in summary.text and "[REDACTED:OPENAI_KEY]" in summary.text


def test_auditor_requires_protected_facts() -> None:
    raw = [
        Message(
            role="assistant",
            content=None,
            id="a",
            tool_calls=(
                ToolCall(
                    "c",
                    "file_edit_tool",
                    json.dumps({"path": "pkg/core.py", "old_string": "a", "new_string": "b"}),
                ),
            ),
        )
    ]
    from myrm_tui.context.summary import fields as summary_model

    intent, limits = CompressionIntent.build(raw), ContextConfig()
    s = summary_model.Summary()
    verdict = SummaryAuditor().audit(s, raw, intent, limits)
    assert not verdict.ok and any("pkg/core.py" in p for p in verdict.problems)
    s = summary_model.Summary(artifacts=("modified: pkg/core.py",))
    assert SummaryAuditor().audit(s, raw, intent, limits).ok


async def test_incremental_merge_drops_resolved_blockers() -> None:
    from myrm_tui.context.summary import fields as summary_model

    old = summary_model.Summary(blocked_items=("`pytest` still failing",), next_steps=("fix pytest",))
    new = summary_model.Summary(completed_actions=("`pytest` → ok",))
    merged = summary_model.merge(old, new)
    assert merged.blocked_items == ()


async def test_summarize_is_idle_when_nothing_was_removed() -> None:
    raw = conversation(2)
    view = view_for(raw, plan=CompactionPlan(Level.FULL, compacting=True))
    result = await run_step(Summarize(), view)
    assert result.messages == raw and not hasattr(result, "record")


async def test_a_block_leaves_the_artifacts_to_its_record() -> None:
    """The files a folded call wrote are Record lines (``created: …``); the block does not list them again
    as a field, so that room goes to other Record lines."""
    raw = conversation(20)
    raw.insert(
        4,
        Message(
            role="assistant",
            content=None,
            id="wr",
            tool_calls=(call("wr1", "cat <<'EOF' > fix_parser.py\nprint(1)\nEOF\npython fix_parser.py"),),
        ),
    )
    raw.insert(5, Message(role="tool", content="1", id="wrt", tool_call_id="wr1"))
    view, _ = await run_pipeline(raw, window=8_000, force_compaction=True)
    summary = next(m for m in view if m.meta.get("kind") == "summary")
    assert "  created: fix_parser.py" in summary_model.record_lines(summary.text)
    assert "## Artifacts" not in summary.text


def _remembered_by_squeezing_every_line(
    lines: list[ledger.Line], record: list[str]
) -> dict[str, ledger.Line]:
    """``Summarize._remember`` as first written: every line squeezed to find whose a missed text was."""
    made = {ln.text: ln for ln in lines}
    short = {t: ln for ln in lines if (t := ledger.squeezed(ln.text)) is not None}
    out: dict[str, ledger.Line] = {}
    for text in record:
        hit = made.get(text) or short.get(text)
        if hit is not None:
            out[text] = hit if hit.text == text else replace(hit, text=text)
    return out


priorities = st.integers(1, 9)
ROWS = ["  73:", "field_name", "=", "x", "  ", "\t", "    ", "def f(a,\tb):", "→", "12", "a  b"]


@settings(max_examples=200, deadline=None, derandomize=True)
@given(
    st.lists(
        st.builds(
            ledger.Line,
            st.lists(st.sampled_from(ROWS), min_size=1, max_size=6).map("".join),
            st.integers(1, 9),
        ),
        max_size=12,
    ),
    st.lists(st.sampled_from(ROWS), max_size=6).map("".join),
    st.data(),
)
def test_the_record_remembers_whose_each_squeezed_line_was(
    lines: list[ledger.Line], other: str, data: st.DataObject
) -> None:
    """Only the lines that equal a missed text but for spaces and tabs are squeezed: the lines remembered
    are those squeezing every line finds (the last of several that squeeze alike), over Records holding
    lines as written, squeezed and written by no line."""
    forms = [t for ln in lines for t in (ln.text, ledger.squeezed(ln.text)) if t is not None] + [other]
    record = data.draw(st.lists(st.sampled_from(forms), max_size=10))
    written: dict[str, Any] = {}
    Summarize._remember(lines, record, written)
    assert written == _remembered_by_squeezing_every_line(lines, record)
