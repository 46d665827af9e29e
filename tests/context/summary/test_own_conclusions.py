"""What the agent concluded itself stays in the Record (issue 46.2): a line of its own words that states a
fact no earlier message held, which a later message comes back to (``own`` and ``referred``), ranks with the
commands it ran (``ledger.rank``), above the located and code lines of outputs; and a Record line keeps whose
it was when the blocks are merged (``ledger.reparse``), so a decision a later block superseded still goes."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from myrm_tui.context.config import ContextConfig
from myrm_tui.context.state import ContextState
from myrm_tui.context.summary import ledger
from myrm_tui.context.types import Message
from tests.helpers import call, conversation, run_pipeline


def _fold() -> list[Message]:
    return [
        Message(role="tool", content="src/http.py:12: def parse_header_v2(raw):", id="t0"),
        Message(
            role="assistant",
            content="The bug is in parse_header_v2. The fix: pass `strict_mode=True` to it.",
            id="a1",
        ),
        Message(role="assistant", content="Applied strict_mode=True in parse_header_v2.", id="a2"),
    ]


def test_own_marks_a_line_that_states_what_no_earlier_message_held() -> None:
    msgs = _fold()
    later = ledger.Referred(msgs, ledger.LaterUse(msgs))
    lines = [
        # Names only what the output showed first: referred to later, not the agent's own.
        ledger.Line("assistant: The bug is in parse_header_v2.", ledger.P_PROSE, decided=True),
        # States a fact of its own that the next message comes back to.
        ledger.Line("  The fix: pass `strict_mode=True` to it.", ledger.P_DECISION, decided=True),
    ]
    marked = ledger.mark_referred(lines, 1, later)
    assert [(ln.referred, ln.own) for ln in marked] == [(True, False), (True, True)]
    # Nothing after the last message refers to it; a line of an earlier block (k -1) keeps what it had.
    assert [ln.own for ln in ledger.mark_referred(lines, 2, later)] == [False, False]
    old = [ledger.Line(lines[1].text, ledger.P_DECISION, decided=True, own=True), lines[0]]
    assert [(ln.referred, ln.own) for ln in ledger.mark_referred(old, -1, later)] == [
        (True, True),
        (True, False),
    ]


def test_an_own_conclusion_outlasts_the_located_lines_of_outputs() -> None:
    located = [
        ledger.Line(f"  src/mod{i}.py:{10 + i}: def helper_{i}(x):", ledger.P_LOCATED) for i in range(8)
    ]
    own = ledger.Line("  The fix: pass `strict_mode=True` to it.", ledger.P_DECISION, True, True, True)
    echo = ledger.Line("  So parse_header_v2 is what fails.", ledger.P_DECISION, True, True, False)
    result = ledger.Line("→ returncode 1 ValueError: bad header", ledger.P_RESULT)
    lines = [*located, own, echo, result]
    budget = len(own.text) + len(result.text) + len(located[0].text) + 3
    kept = ledger.fit(lines, budget)
    assert own.text in kept and result.text in kept
    assert echo.text not in kept  # referred to, but it only repeats what an output said: ranks as written
    assert ledger.rank(own) == ledger.P_OWN and ledger.rank(echo) == ledger.P_DECISION


def test_reparse_keeps_whose_line_it_was() -> None:
    text = "  Now `CLIENT_TIMEOUT = 90` instead."
    known = {text: ledger.Line(text, ledger.P_DECISION, decided=True, referred=True, own=True)}
    assert ledger.reparse(text, known) == ledger.Line(text, ledger.P_DECISION, decided=True, own=True)
    # Unknown: guessed from the text, nobody's own.
    assert not ledger.reparse(text).own


def _decided_twice(rounds: int = 24) -> list[Message]:
    """The agent chooses a setting early, reads bulky outputs, chooses it again much later."""
    raw = [
        Message(role="system", content="You are a coding agent.", id="ds"),
        Message(role="user", content="Make the client stop timing out.", id="du"),
    ]
    said = {
        1: "I will use `CLIENT_TIMEOUT = 30` in settings.py.",
        16: "Too short: now `CLIENT_TIMEOUT = 90`.",
    }
    for i in range(rounds):
        if i in said:  # told the user: its Record line ranks with the user's words, so it is kept
            raw.append(Message(role="assistant", content=said[i], id=f"dr{i}"))
            raw.append(Message(role="user", content="Go on.", id=f"dg{i}"))
        raw.append(
            Message(
                role="assistant",
                content=f"Reading part {i}.",
                id=f"da{i}",
                tool_calls=(call(f"dc{i}", f"nl -ba src/m{i}.py"),),
            )
        )
        body = "\n".join(f"  {100 + k}\t    total_{i}_{k} = compute_value({k}, scale={i})" for k in range(40))
        raw.append(Message(role="tool", content=body, id=f"dt{i}", tool_call_id=f"dc{i}", name="bash"))
    return raw


async def test_a_decision_superseded_in_a_later_block_goes_when_the_blocks_merge() -> None:
    """The two decisions fold in different compactions, so each sits in its own block; merging the blocks
    re-fits their Record lines, which must still know they are the agent's decisions."""
    raw = _decided_twice()
    state = ContextState()
    cfg = ContextConfig(max_context_tokens=16_000, summary_ratio=0.05)
    for end in range(14, len(raw) + 1, 8):
        view, _ = await run_pipeline(raw[:end], window=16_000, state=state, force_compaction=True, config=cfg)
    text = "\n".join(m.text for m in view if m.meta.get("kind") == "summary")
    assert state.compactions >= 4 and sum(m.meta.get("kind") == "summary" for m in view) <= 2  # merged
    assert "CLIENT_TIMEOUT = 90" in text
    assert "CLIENT_TIMEOUT = 30" not in text


# -- property -----------------------------------------------------------------------------------------
@st.composite
def record(draw: st.DrawFn) -> list[ledger.Line]:
    """Distinct lines (none inside another: none is redundant) of several priorities, some the agent's own
    conclusions referred to later."""
    n = draw(st.integers(1, 30))
    out = []
    for i in range(n):
        decided = draw(st.booleans())
        out.append(
            ledger.Line(
                f"line{i:02d}_{'x' * draw(st.integers(0, 40))}",
                draw(
                    st.sampled_from(
                        (
                            ledger.P_FILL,
                            ledger.P_CODE,
                            ledger.P_DECISION,
                            ledger.P_LOCATED,
                            ledger.P_CALL,
                            ledger.P_RESULT,
                        )
                    )
                ),
                decided=decided,
                referred=decided and draw(st.booleans()),
                own=decided and draw(st.booleans()),
            )
        )
    return out


@given(record(), st.integers(0, 1_500))
def test_no_line_below_an_own_conclusion_is_kept_while_it_goes(lines: list[ledger.Line], budget: int) -> None:
    """The fit never drops an own conclusion a later message refers to while it keeps a line that ranks
    below it (an output's located or code line, the agent's other words)."""
    kept = set(ledger.fit(lines, budget))
    if any(ln.own and ln.referred and ln.text not in kept for ln in lines):
        assert all(ledger.rank(ln) >= ledger.P_OWN for ln in lines if ln.text in kept)


async def test_what_a_record_line_was_is_known_only_to_its_own_session() -> None:
    """One pipeline serves every session (and a session's subagents): how each Record line was written
    (the agent's own? a decision?) is kept on the session's state, so an identical line in another session
    is never taken for what it was in the first."""
    cfg = ContextConfig(max_context_tokens=16_000, summary_ratio=0.05)
    a, b = ContextState(), ContextState()
    raw_a = _decided_twice()
    for end in range(14, len(raw_a) + 1, 8):
        await run_pipeline(raw_a[:end], window=16_000, state=a, force_compaction=True, config=cfg)
    assert a.record_written  # the merges read it back
    raw_b = conversation(12, prefix="b")
    view, _ = await run_pipeline(raw_b, window=16_000, state=b, force_compaction=True, config=cfg)
    summary = "\n".join(m.text for m in view if m.meta.get("kind") == "summary")
    assert b.record_written and all(text in summary for text in b.record_written)  # its own Record only
    assert not set(a.record_written) & set(b.record_written)
