"""The Record merges by meaning (issue 46.2): a decision a later one on the same subject superseded goes and
the newest stays (``ledger.superseded``, in ``ledger.Fitter`` and ``summary_model.merge``); the share is spent
on what later messages still refer to (``ledger.mark_referred``: among lines of one priority, an unreferenced
one goes first)."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from myrm_tui.context.summary import fields as summary_model
from myrm_tui.context.summary import ledger
from myrm_tui.context.types import Message, ToolCall
from tests.helpers import run_pipeline


def test_subject_names_what_a_decision_decides() -> None:
    assert ledger.subject("assistant: I will set `timeout = 30` for the client.") == "=timeout"
    assert ledger.subject("  Now `TIMEOUT = 60`") == "=TIMEOUT"
    assert ledger.subject("  Set MAX_RETRIES to 5 instead.") == "=MAX_RETRIES"
    assert ledger.subject("  I'll write def as_sql(self, compiler, connection):") == "def:as_sql"
    fix = "  Let me make the fix: `return self.as_sql(compiler, connection, **extra_context)`"
    assert ledger.subject(fix) == "return:self.as_sql"
    assert ledger.subject("assistant: Let me look at the tests.") is None
    assert ledger.subject("  I will check if x == 3:") is None  # a comparison decides nothing
    # A finding is not a decision: two classes' values are two facts, neither supersedes the other.
    assert ledger.subject("  `Expr` has `_op_priority = 10.0`.") is None


def test_the_newest_decision_on_a_subject_stays_and_other_subjects_are_untouched() -> None:
    texts = ["I set `timeout = 30`", "", "I set `retries = 2`", "now `timeout = 60`", "now `timeout = 60`"]
    texts.append("a = 1")
    assert ledger.superseded(texts) == [True, False, False, False, False, False]


def test_fit_drops_a_superseded_decision_however_much_room_there_is() -> None:
    lines = [
        ledger.Line("assistant: I will use `timeout = 30` here.", ledger.P_PROSE, decided=True),
        ledger.Line("$ pytest tests/test_client.py", ledger.P_CALL),
        ledger.Line("→ timeout = 30 was read from settings.ini", ledger.P_RESULT),  # a tool's, not a decision
        ledger.Line("assistant: That was too short: `timeout = 60` instead.", ledger.P_PROSE, decided=True),
    ]
    kept = ledger.fit(lines, 10_000)
    assert kept == [lines[1].text, lines[2].text, lines[3].text]


def test_merge_drops_a_decision_a_newer_summary_superseded() -> None:
    old = summary_model.Summary(decisions=("I will use `timeout = 30`", "keep the cache"))
    new = summary_model.Summary(decisions=("raise it: now `timeout = 60`",))
    merged = summary_model.merge(old, new)
    assert merged.decisions == ("keep the cache", "raise it: now `timeout = 60`")


def decision_session(rounds: int = 14) -> list[Message]:
    """The agent tells the user a setting it chose, reads bulky outputs, then tells the user it chose again;
    both replies fold."""
    msgs = [
        Message(role="system", content="You are a coding agent.", id="s"),
        Message(role="user", content="Make the client stop timing out.", id="u"),
    ]
    for i in range(rounds):
        said = {2: "I set `CLIENT_TIMEOUT = 30` in settings.py.", 6: "Too short: now `CLIENT_TIMEOUT = 90`."}
        if i in said:
            msgs.append(Message(role="assistant", content=said[i], id=f"r{i}"))
            msgs.append(Message(role="user", content="Go on.", id=f"u{i}"))
        msgs.append(
            Message(
                role="assistant",
                content="Reading on.",
                id=f"a{i}",
                tool_calls=(ToolCall(f"c{i}", "bash", json.dumps({"command": f"cat big{i}.txt"})),),
            )
        )
        body = "\n".join(f"line {i}-{k}: value_{i}_{k} = {k * i}" for k in range(120))
        msgs.append(Message(role="tool", content=body, id=f"t{i}", tool_call_id=f"c{i}", name="bash"))
    msgs.append(Message(role="user", content="Is the timeout right now?", id="u-last"))
    return msgs


async def test_a_folded_decision_superseded_by_a_later_one_leaves_the_summary() -> None:
    view, run = await run_pipeline(decision_session(), window=4_000)
    assert run.metrics.compacted, "the session must compact for the test to mean anything"
    assert not any(m.id.split("#")[0] in ("r2", "r6") for m in view)  # both decisions were folded
    summary = "\n".join(m.text for m in view if m.meta.get("kind") == "summary")
    assert "CLIENT_TIMEOUT = 90" in summary
    assert "CLIENT_TIMEOUT = 30" not in summary
    # The superseded reply is not a lost line of the user's words: the block was not squeezed for it.
    assert "shortened to fit" not in summary


def test_mark_referred_flags_the_lines_a_later_message_comes_back_to() -> None:
    msgs = [
        Message(role="tool", content="x", id="t0"),
        Message(role="assistant", content="The failing one is `parse_header_v2` in src/http.py.", id="a1"),
    ]
    later = ledger.Referred(msgs, ledger.LaterUse(msgs))
    lines = [
        ledger.Line("assistant: The parser parse_header_v2 looks wrong.", ledger.P_PROSE, decided=True),
        ledger.Line("  And unrelated_helper too.", ledger.P_DECISION, decided=True),
        # An output's line is not ranked by it (the agent's own words are).
        ledger.Line("  src/http.py:12: def parse_header_v2(raw):", ledger.P_LOCATED),
    ]
    marked = ledger.mark_referred(lines, 0, later)
    assert [ln.referred for ln in marked] == [True, False, False]
    # Only later messages count.
    assert [ln.referred for ln in ledger.mark_referred(lines, 1, later)] == [False, False, False]


# -- properties ---------------------------------------------------------------------------------------
SUBJECTS = ("timeout", "retries", "MAX_SIZE", "cache_dir", "mode")


@st.composite
def decisions(draw: st.DrawFn) -> list[ledger.Line]:
    """Record lines: decisions on a few subjects (some decided more than once) among other lines."""
    out: list[ledger.Line] = []
    for i in range(draw(st.integers(1, 24))):
        if draw(st.booleans()):
            name = draw(st.sampled_from(SUBJECTS))
            value = draw(st.integers(0, 5))
            out.append(
                ledger.Line(f"  I will use `{name} = {value}` (step {i})", ledger.P_DECISION, decided=True)
            )
        else:
            out.append(ledger.Line(f"  → result line {i}", draw(st.sampled_from((2, 5, 8)))))
    return out


@given(decisions(), st.integers(0, 2_000))
def test_a_superseded_decision_never_survives_next_to_its_successor(
    lines: list[ledger.Line], budget: int
) -> None:
    kept = ledger.fit(lines, budget)
    for i, a in enumerate(lines):
        later = [b for b in lines[i + 1 :] if b.decided and ledger.subject(b.text) == ledger.subject(a.text)]
        if a.decided and later:
            assert a.text not in kept, f"{a.text!r} kept though {later[-1].text!r} superseded it"


@st.composite
def facts(draw: st.DrawFn) -> list[ledger.Line]:
    """Distinct lines (no line inside another: none is redundant) of a few priorities, the agent's own words
    or an output's, some referred to."""
    n = draw(st.integers(1, 30))
    return [
        ledger.Line(
            f"fact{i:02d}_{'x' * draw(st.integers(0, 40))}",
            draw(st.sampled_from((ledger.P_FILL, ledger.P_LOCATED, ledger.P_RESULT))),
            decided=draw(st.booleans()),
            referred=draw(st.booleans()),
        )
        for i in range(n)
    ]


@given(facts(), st.integers(0, 1_500))
def test_a_referenced_fact_is_never_dropped_before_an_unreferenced_one_of_its_kind(
    lines: list[ledger.Line], budget: int
) -> None:
    """Of the agent's own words, one priority: a line a later message refers to outlasts every one none
    does."""
    kept = set(ledger.fit(lines, budget))
    for p in {ln.priority for ln in lines}:
        same = [ln for ln in lines if ln.priority == p and ln.decided]
        dropped_referred = any(ln.referred and ln.text not in kept for ln in same)
        if dropped_referred:
            assert all(ln.text not in kept for ln in same if not ln.referred)


def test_a_repeated_harness_reminder_does_not_squeeze_the_block() -> None:
    """A reminder the harness repeats with other numbers (``found 2 actions``) is a template said again:
    the fit drops its repeat first, which is no loss of the user's words, so the block is fitted at its
    first level and nothing of the fields is shortened."""
    reminder = "user: Please always provide EXACTLY ONE action in triple backticks, found {} actions instead."
    lines = [
        ledger.Line(reminder.format(2), ledger.P_USER),
        *(ledger.Line(f"  → checked file_{i}.py: ok {i}", ledger.P_RESULT) for i in range(40)),
        ledger.Line(reminder.format(3), ledger.P_USER),
    ]
    summary = summary_model.Summary(user_goal="Fix the parser.", decisions=("keep the old API",))
    fitted = summary_model.fit_block(
        summary, summary, lines, set(), 10, 1, 2_000, lambda t: len(t) // 3, budget_chars=900
    )
    assert not fitted.squeezed and "keep the old API" in fitted.text
    assert reminder.format(2) in fitted.record and reminder.format(3) not in fitted.record
