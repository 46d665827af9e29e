"""The room model (``filters/room.py``): a lossy cut on arrival only where the output would crowd the view."""

from __future__ import annotations

import asyncio
import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from myrm_tui.context.config import ContextConfig
from myrm_tui.context.filters.processor import FilterProcessor
from myrm_tui.context.filters.room import DEFAULT_ROUND_TOKENS, crowds, mean_round
from myrm_tui.context.state import ContextState
from myrm_tui.context.types import Message, ToolCall
from myrm_tui.context.vault import ArtifactVault
from tests.helpers import COUNTER, PIPELINE, crowded_state, request_for, run_step, view_for


def requests(n: int) -> list[Message]:
    """A history of ``n`` requests (one assistant message each)."""
    out = [Message(role="user", content="go", id="u")]
    for k in range(n):
        out.append(Message(role="assistant", content=f"step {k}", id=f"a{k}"))
        out.append(Message(role="user", content="next", id=f"u{k}"))
    return out


def test_a_view_at_the_point_crowds_whatever_the_session() -> None:
    assert crowds(10_000, 10_000, [], [])
    assert crowds(12_000, 10_000, [500, 500], requests(1))


def test_a_session_expected_to_end_first_is_not_crowded() -> None:
    """Room for 10 mean rounds before the point: a session of 3 requests is taken to make 3 more and end
    first; one of 10 requests is taken to make 10 more and reach it."""
    growth = [1_000, 1_000]
    assert not crowds(10_000, 20_000, growth, requests(3))
    assert crowds(10_000, 20_000, growth, requests(10))


def test_the_mean_round_is_the_sessions_own_once_it_has_two() -> None:
    assert mean_round([]) == mean_round([7_000]) == DEFAULT_ROUND_TOKENS
    assert mean_round([1_000, 3_000]) == 2_000
    assert mean_round([0, 0]) == 1.0  # a session that only trimmed still divides by something


def code_file(lines: int) -> str:
    """A Claude Code ``Read`` of a source file: arrow-numbered code, no result lines."""
    return "\n".join(
        f"{k + 1:>6}→    def handler_{k}(request): return dispatch(request, {k})" for k in range(lines)
    )


def read_turn(output: str, earlier: int = 0) -> list[Message]:
    call = ToolCall("call_r", "Read", json.dumps({"file_path": "lib/app.ex"}))
    return [
        *requests(earlier),
        Message(role="assistant", content=None, id="ar", tool_calls=(call,)),
        Message(role="tool", content=output, id="tr", tool_call_id="call_r", name="Read"),
    ]


async def test_a_large_read_in_a_session_that_will_end_first_stays_whole() -> None:
    """A subagent's first read of a 600-line file (~9K tokens) at 32K: the view would stay far under the
    compaction point for the rest of a session this young, so nothing is cut on arrival (the answered trim
    and a compaction may shorten it later); deep into a session whose view it crowds, it is cut, its
    original in the vault."""
    text = code_file(600)
    assert COUNTER.text(text) > ContextConfig(max_context_tokens=32_000).filter_single_tokens
    young = read_turn(text)
    out = (await run_step(FilterProcessor(), view_for(young), window=32_000)).messages
    assert out[-1] is young[-1]
    old = read_turn(text, earlier=40)
    state = ContextState(round_growth=[2_000] * 16)  # 40 requests of 2K: the point is a few rounds away
    view = view_for(old, state)
    cut = (await run_step(FilterProcessor(), view, window=32_000)).messages[-1]
    assert cut.meta.get("filter") == "head+tail" and len(cut.text) < len(text) // 2
    entry = view.request.vault.original(cut.meta["vault_uri"], "tool_output")
    assert entry is not None and entry.content == text


async def test_a_json_output_gets_its_skeleton_even_where_nothing_crowds() -> None:
    """Data is shortened, not cut: its skeleton keeps every key, so it is made wherever the output is big."""
    rows = [{"id": k, "name": f"item_{k}", "tags": ["a", "b"], "price": k * 3} for k in range(600)]
    turn = read_turn(json.dumps(rows))
    out = (await run_step(FilterProcessor(), view_for(turn), window=32_000)).messages[-1]
    assert out.meta.get("filter", "").startswith("structural (json)")


async def test_a_crowded_turn_is_cut_where_a_young_one_is_not() -> None:
    """The same output, the same view size: only the session's own rounds and length differ."""
    text = code_file(300)
    turn = read_turn(text, earlier=2)
    whole = (await run_step(FilterProcessor(), view_for(turn), window=16_000)).messages[-1]
    cut = (await run_step(FilterProcessor(), view_for(turn, crowded_state()), window=16_000)).messages[-1]
    assert whole is turn[-1] and cut.meta.get("filter")


@st.composite
def sessions(draw: st.DrawFn) -> list[Message]:
    """Sessions of reads and commands whose outputs are often over the filter's single-output size."""
    msgs = [Message(role="system", content="sys", id="s"), Message(role="user", content="task", id="u")]
    for n in range(draw(st.integers(1, 14))):
        name = draw(st.sampled_from(["Read", "bash", "Task"]))
        args = json.dumps({"command": "make test"} if name == "bash" else {"file_path": f"f{n}.py"})
        msgs.append(
            Message(role="assistant", content=None, id=f"a{n}", tool_calls=(ToolCall(f"c{n}", name, args),))
        )
        lines = draw(st.sampled_from([5, 120, 400, 1_200]))
        body = "\n".join(
            f"line {k} of output {n}: value_{k * 7 % 97} at path/to/mod_{k}.py" for k in range(lines)
        )
        msgs.append(Message(role="tool", content=body, id=f"t{n}", tool_call_id=f"c{n}", name=name))
    return msgs


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sessions(), st.sampled_from([8_000, 16_000, 32_000]))
def test_a_deferred_cut_never_lets_a_request_over_the_budget_and_every_cut_is_in_the_vault(
    raw: list[Message], window: int
) -> None:
    """Grown request by request with one state: outputs the filter left whole never carry a request over
    the input budget, and every shortened output points to its whole original in the vault."""
    config = ContextConfig(max_context_tokens=window)
    state, vault = ContextState(), ArtifactVault("p")
    stored = {m.id: m.text for m in raw}

    async def go() -> None:
        for end in range(3, len(raw) + 1, 2):
            run = await PIPELINE.run(request_for(raw[:end], state, vault=vault, now=float(end)), config, "p")
            view = run.messages
            assert COUNTER.messages(view) <= config.input_budget
            for m in view:
                base = m.id.split("#", 1)[0]
                if m.role == "tool" and base in stored and m.text != stored[base]:
                    entry = vault.original(m.meta.get("vault_uri"), "tool_output")
                    assert entry is not None and entry.content == stored[base], m.id

    asyncio.run(go())
