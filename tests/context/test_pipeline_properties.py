"""View properties hold after any pipeline run, on any history (hypothesis)."""

from __future__ import annotations

import asyncio

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from myrm_tui.context.invariants import check_tool_pairing, check_view, extract_protected_head
from myrm_tui.context.state import ContextState
from myrm_tui.context.types import Message, ToolCall
from tests.helpers import COUNTER, run_pipeline

words = st.text(alphabet="abcdefghij klmnop\n", min_size=1, max_size=60)


@st.composite
def histories(draw: st.DrawFn) -> list[Message]:
    msgs = [
        Message(role="system", content="sys", id="s"),
        Message(role="user", content="task: fix a.py", id="u"),
    ]
    for n in range(1, draw(st.integers(1, 30)) + 1):
        kind = draw(st.sampled_from(["tools", "tools", "text", "user", "orphan", "dangling", "reuse"]))
        if kind == "text":
            msgs.append(Message(role="assistant", content=draw(words), id=f"a{n}"))
        elif kind == "user":
            msgs.append(Message(role="user", content=draw(words), id=f"u{n}"))
        elif kind == "orphan":
            msgs.append(Message(role="tool", content="stray", id=f"o{n}", tool_call_id=f"nope{n}"))
        else:
            k = draw(st.integers(1, 3))
            ids = [
                ("dup" if kind == "reuse" else f"c{n}_{j}") + (f"_{j}" if kind == "reuse" else "")
                for j in range(k)
            ]
            calls = tuple(ToolCall(i, "bash", '{"command": "ls"}') for i in ids)
            msgs.append(Message(role="assistant", content=None, id=f"a{n}", tool_calls=calls))
            answered = ids[:-1] if kind == "dangling" else ids
            if draw(st.booleans()):
                answered = list(reversed(answered))
            for j, i in enumerate(answered):
                size = draw(st.sampled_from([10, 500, 9000]))
                msgs.append(
                    Message(
                        role="tool",
                        content=f"<returncode>{j % 2}</returncode>\n" + "x " * size,
                        id=f"t{n}_{j}",
                        tool_call_id=i,
                    )
                )
    return msgs


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories(), st.sampled_from([2_000, 6_000, 20_000]), st.booleans())
def test_any_history_yields_a_valid_view(raw: list[Message], window: int, force: bool) -> None:
    before = list(raw)
    view, _ctx = asyncio.run(run_pipeline(raw, window=window, force_compaction=force))
    assert check_view(view, raw) == [], check_view(view, raw)
    assert raw == before  # the stored history is never touched
    head = extract_protected_head(raw)
    assert [m.content for m in view[: len(head)]] == [m.content for m in head]


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories())
def test_repeated_requests_stay_valid_and_keep_the_tail(raw: list[Message]) -> None:
    """Grow the history message by message, running the pipeline each time with one shared state."""
    state = ContextState()

    async def go() -> None:
        for end in range(2, len(raw) + 1):
            view, _ctx = await run_pipeline(raw[:end], window=3_000, state=state)
            assert check_tool_pairing(view) == []
            # The newest message always reaches the model unchanged unless it alone exceeds the budget.
            last = raw[end - 1]
            if last.role != "tool" and last.text.strip() and COUNTER.message(last) < 500:
                assert any(m.content == last.content for m in view)

    asyncio.run(go())
