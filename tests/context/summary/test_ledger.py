"""The fact ledger: the verbatim lines a compaction keeps of what it folds."""

from __future__ import annotations

import json
from dataclasses import replace

from myrm_tui.context.config import ContextConfig
from myrm_tui.context.invariants import check_view
from myrm_tui.context.state import ContextState
from myrm_tui.context.types import Message
from tests.helpers import call, conversation, run_pipeline


def test_salient_lines_keep_results_errors_and_located_lines_verbatim() -> None:
    from myrm_tui.context.summary.ledger import P_RESULT, salient_lines

    noise = "\n".join(f"    x_{i} = compute({i})" for i in range(60))
    out = (
        "<returncode>1</returncode>\n<output>\n"
        + noise
        + "\ndjango/db/backends/sqlite3/base.py:446:def _sqlite_datetime_cast_date(dt, tzname):\n"
        '  File "/testbed/sympy/core/decorators.py", line 77, in '
        "__sympifyit\nsqlite3.OperationalError: no such table: __main___product\n"
        + noise
        + "\nFAILED (failures=3, errors=3, skipped=8)\n===== 5 passed, 1 failed in 0.31s =====\n</output>"
    )
    lines = {ln.text: ln.priority for ln in salient_lines(out)}
    assert (
        "===== 5 passed, 1 failed in 0.31s =====" in lines
        and lines["FAILED (failures=3, errors=3, skipped=8)"] == P_RESULT
    )
    assert "sqlite3.OperationalError: no such table: __main___product" in lines
    assert "django/db/backends/sqlite3/base.py:446:def _sqlite_datetime_cast_date(dt, tzname):" in lines
    assert '  File "/testbed/sympy/core/decorators.py", line 77, in __sympifyit' in lines
    assert not any(t.startswith("    x_") for t in lines)  # bulk is not salient


def test_salient_lines_keep_a_short_output_whole_and_json_items_in_their_own_separators() -> None:
    from myrm_tui.context.summary.ledger import salient_lines

    assert [
        ln.text
        for ln in salient_lines(
            "<returncode>0</returncode>\n<output>\nExists: False\nStored value in DB: 2017-07-06 "
            "23:50:00\n</output>"
        )
    ] == ["Exists: False", "Stored value in DB: 2017-07-06 23:50:00"]
    flights = json.dumps(
        [{"flight_number": f"HAT{i:03d}", "prices": {"basic_economy": 86 + i}} for i in range(30)]
    )
    text = "\n".join(ln.text for ln in salient_lines(flights))
    assert '"flight_number": "HAT029"' in text and '"basic_economy": 86' in text


def test_ledger_fit_drops_repeats_then_lowest_priority_and_keeps_order() -> None:
    from myrm_tui.context.summary.ledger import P_PROSE, P_RESULT, P_USER, Line, fit

    lines = [
        Line("user: use the sqlite backend", P_USER),
        Line("assistant: let me look around the tree a bit", P_PROSE),
        Line("  FAILED (failures=3)", P_RESULT),
        Line("  seen before", P_RESULT),
    ]
    kept = fit(lines, budget_chars=60, seen={"seen before"})
    assert kept == ["user: use the sqlite backend", "  FAILED (failures=3)"]


async def test_compactions_append_blocks_and_keep_earlier_ones_byte_identical() -> None:
    state = ContextState()
    raw = conversation(40)
    # A first block that leaves room in the summaries' share (20 % of the window): the next one appends.
    view1, _ = await run_pipeline(raw[:24], window=32_000, state=state, force_compaction=True)
    first = [m for m in view1 if m.meta.get("kind") == "summary"]
    view2, _ = await run_pipeline(raw, window=32_000, state=state, force_compaction=True)
    blocks = [m for m in view2 if m.meta.get("kind") == "summary"]
    assert len(first) == 1 and len(blocks) == 2
    assert blocks[0] is first[0] or (blocks[0].id, blocks[0].content) == (first[0].id, first[0].content)
    assert view2[:3] == view1[:3]  # head and the first block: a cached prefix across the compaction
    assert 'part="2"' in blocks[1].text and "## Next steps" in blocks[1].text
    # Outputs folded away survive as their verbatim lines.
    assert "line 0 of file20.py: value_20_0 = 0" in blocks[1].text or "cat src/file20.py" in blocks[1].text


async def test_blocks_over_their_budget_are_consolidated_into_one() -> None:
    state = ContextState()
    raw = conversation(60, output_chars=1200)
    cfg = ContextConfig(max_context_tokens=8_000, summary_ratio=0.05)
    for end in (30, 60, 90, len(raw)):
        view, _ = await run_pipeline(raw[:end], window=8_000, state=state, force_compaction=True, config=cfg)
    blocks = [m for m in view if m.meta.get("kind") == "summary"]
    assert len(blocks) <= 2 and state.compactions == 4
    assert check_view(view, raw) == []


async def test_consolidation_keeps_the_priority_each_line_was_written_with() -> None:
    """A short script print is kept whole at result priority when first folded; when the blocks are
    consolidated it must outrank the bulk of numbered code views, which its text alone does not say."""
    raw = [
        Message(role="system", content="You are a test agent.", id="ps"),
        Message(role="user", content="Fix src/app.py.", id="pu"),
    ]
    for i in range(24):
        raw.append(
            Message(
                role="assistant",
                content=f"Step {i}.",
                id=f"pa{i}",
                tool_calls=(call(f"pc{i}", "python check.py"),),
            )
        )
        raw.append(
            Message(
                role="tool",
                content=f"<returncode>0</returncode>\n<output>\nprobe_{i} dtype: object\nprobe_{i} shape: "
                f"({i}, 3)\n</output>",
                id=f"pt{i}",
                tool_call_id=f"pc{i}",
                name="bash",
            )
        )
        raw.append(
            Message(
                role="assistant",
                content=f"View {i}.",
                id=f"pb{i}",
                tool_calls=(call(f"pd{i}", f"nl -ba src/m{i}.py"),),
            )
        )
        view = "\n".join(f"  {100 + k}\t    total_{i}_{k} = compute_value({k}, scale={i})" for k in range(40))
        raw.append(
            Message(
                role="tool",
                content=f"<returncode>0</returncode>\n<output>\n{view}\n</output>",
                id=f"pe{i}",
                tool_call_id=f"pd{i}",
                name="bash",
            )
        )
    state = ContextState()
    cfg = ContextConfig(max_context_tokens=16_000, summary_ratio=0.12)
    for end in range(26, len(raw) + 1, 16):
        view_out, _ = await run_pipeline(
            raw[:end], window=16_000, state=state, force_compaction=True, config=cfg
        )
    text = "\n".join(m.text for m in view_out)
    assert (
        state.compactions >= 5 and sum(m.meta.get("kind") == "summary" for m in view_out) <= 3
    )  # consolidated
    assert all(f"probe_{i} shape: ({i}, 3)" in text for i in range(22))
    assert text.count("= compute_value(") < 22 * 40 // 4  # the code views are what made room


def test_ledger_lines_of_replies_medium_outputs_and_numbered_views() -> None:
    from myrm_tui.context.summary.ledger import (
        P_CODE,
        P_DECISION,
        P_FILL,
        P_LOCATED,
        P_PROSE,
        P_USER,
        record_one,
        salient_lines,
    )

    reply = Message(
        role="assistant", content="The fastest trip is Option 2, 5 hours in all. Shall I book it?", id="r"
    )
    assert [ln.priority for ln in record_one(reply)] == [
        P_USER,
        P_DECISION,
    ]  # a reply to the user decides; its opening states the conclusion and ranks with the user's words
    thought = replace(reply, tool_calls=(call("x", "ls"),))
    assert record_one(thought)[0].priority == P_PROSE
    prints = "\n".join(
        [*(f"case {k}: value {k * 7}" for k in range(20)), "DEBUG: self._data.array dtype: object"]
    )
    lines = {ln.text: ln.priority for ln in salient_lines(prints)}
    assert lines["case 3: value 21"] == P_FILL and "DEBUG: self._data.array dtype: object" in lines
    numbered = "\n".join(
        [*(f"   {k}\t    x_{k} = f({k})" for k in range(100, 130)), "   130\tclass PandasIndexAdapter(Base):"]
    )
    lines = {ln.text.strip(): ln.priority for ln in salient_lines(numbered)}
    assert (
        lines["105\t    x_105 = f(105)"] == P_CODE
        and lines["130\tclass PandasIndexAdapter(Base):"] >= P_LOCATED
    )
