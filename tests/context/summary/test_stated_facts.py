"""What the agent concluded, kept: when an assistant message folds into the summary, the code it wrote and
the spans of its sentences that a later message comes back to stay in the Record (``ledger
.stated_used_lines``), as an output's used facts do."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from myrm_tui.context.summary import ledger
from myrm_tui.context.summary.ledger import (
    P_CALL,
    P_RESULT,
    LaterUse,
    Line,
    Referred,
    fit,
    mark_referred,
    record_one,
)
from myrm_tui.context.types import Message, ToolCall
from tests.helpers import run_pipeline

FIX = "return self.as_sql(compiler, connection, **extra_context)"
SCRIPT = "\n".join(
    [
        "cat <<'EOF' > patch.py",
        "import re",
        "def patched(self, compiler, connection, **extra_context):",
        f"    {FIX}",
        "EOF",
    ]
)


def coding_session(rounds: int = 16) -> list[Message]:
    """The agent writes a fix in a heredoc early (its Record line keeps only the first and last line of
    the command), finds the cause in a sentence, then reads bulky outputs; a late diff shows the fix."""
    msgs = [
        Message(role="system", content="You are a coding agent.", id="s"),
        Message(role="user", content="Fix the lookup crash.", id="u"),
        Message(
            role="assistant",
            content="The bug is in `process_lhs_sql` because it drops the connection.",
            id="a0",
            tool_calls=(ToolCall("c0", "bash", json.dumps({"command": SCRIPT})),),
        ),
        Message(role="tool", content="", id="t0", tool_call_id="c0", name="bash"),
    ]
    for i in range(1, rounds + 1):
        msgs.append(
            Message(
                role="assistant",
                content="Reading on.",
                id=f"a{i}",
                tool_calls=(ToolCall(f"c{i}", "bash", json.dumps({"command": f"cat big{i}.txt"})),),
            )
        )
        body = "\n".join(f"line {i}-{k}: value_{i}_{k} = {k * i}" for k in range(120))
        if i == rounds:
            body += f"\n+    {FIX}\n process_lhs_sql still drops it"
        msgs.append(Message(role="tool", content=body, id=f"t{i}", tool_call_id=f"c{i}", name="bash"))
    msgs.append(Message(role="user", content="Is the fix in?", id="u2"))
    return msgs


async def test_a_folded_decision_and_finding_stay_in_the_record() -> None:
    raw = coding_session()
    view, run = await run_pipeline(raw, window=4_000)
    assert run.metrics.compacted, "the session must compact for the test to mean anything"
    assert not any(m.id.split("#")[0] == "a0" for m in view)  # the message itself was folded
    summary = "\n".join(m.text for m in view if m.meta.get("kind") == "summary")
    assert FIX in summary and "process_lhs_sql" in summary


def test_stated_used_lines_name_what_a_later_message_refers_to_and_no_line_holds() -> None:
    raw = coding_session(2)
    later = ledger.Referred(raw[2:], ledger.LaterUse(raw[2:]))
    a0 = raw[2]
    lines = ledger.record_one(a0)
    assert not any(FIX in ln.text for ln in lines)  # the command's line keeps its first and last line only
    out = ledger.stated_used_lines(a0, lines, 0, later)
    facts = " ".join(ln.text for ln in out)
    assert all(ln.text.startswith(ledger.USED_PREFIX) and ln.priority == ledger.P_STATED for ln in out)
    assert FIX in facts
    # The finding's span is in the message's own lines already; code nobody came back to is not kept.
    assert "process_lhs_sql" not in facts and "def patched" not in facts
    # What an earlier message said first is not this message's own: the output's used facts keep it.
    said = [Message(role="tool", content=f"earlier: {FIX}", id="t-1"), *raw[2:]]
    assert ledger.stated_used_lines(a0, lines, 1, ledger.Referred(said, ledger.LaterUse(said))) == []
    assert ledger.stated_used_lines(a0, lines, 10, later) == []  # only later messages count


async def test_a_trimmed_later_output_still_counts_as_referring_to_what_the_agent_stated() -> None:
    """Of the agent's own lines the Record keeps first those a later message refers to, read from the later
    outputs as they came (the vault original): an answered trim that kept other lines of an output does not
    make the agent's finding look unused."""
    rows = [f"row {j}: nothing here" for j in range(200)]
    rows[120] = "    budget = limit_helper_17(session)"
    # The answered trim kept the output's first lines: the line naming the helper is only in the vault.
    kept = await _record_helpers(rows, "\n".join(rows[:8]) + "\n[trimmed to 8 of 200 lines]")
    assert 0 < len(kept) < 40, "the Record must have had to choose for the test to mean anything"
    assert 17 in kept


async def test_a_huge_original_read_at_its_ends_still_counts_what_its_trimmed_copy_kept() -> None:
    """An original over the scan limit is read only at its ends; the line the trim kept from its middle
    (one a reply used) still counts as referring to the agent's finding."""
    from myrm_tui.context.steps.summarize import ORIGINAL_SCAN_CHARS

    rows = [f"row {j}: nothing here at all" for j in range(3_000)]
    middle = len(rows) // 2
    rows[middle] = "    budget = limit_helper_17(session)"
    assert len("\n".join(rows[:middle])) > ORIGINAL_SCAN_CHARS  # the line is outside both ends read
    shown = "\n".join([*rows[:4], f"[… {middle - 4} lines]", rows[middle], "[… the rest in the vault]"])
    kept = await _record_helpers(rows, shown)
    assert 0 < len(kept) < 40, "the Record must have had to choose for the test to mean anything"
    assert 17 in kept


async def _record_helpers(rows: list[str], shown: str) -> list[int]:
    """The helpers (of 40 the agent named while folded) a compaction's Record keeps, when a later output
    whose original is ``rows`` is in the view as ``shown``."""
    from myrm_tui.context.step import CompactionPlan, Level
    from myrm_tui.context.steps.summarize import Summarize
    from myrm_tui.context.vault import ArtifactVault
    from tests.helpers import run_step, view_for

    head = [
        Message(role="system", content="You are a coding agent.", id="s"),
        Message(role="user", content="Why does the sync stop early?", id="u"),
    ]
    folded: list[Message] = []
    for k in range(40):
        folded.append(
            Message(
                role="assistant",
                content=f"Reading on. The cause is in `limit_helper_{k:02d}` because it caps the batch.",
                id=f"a{k}",
                tool_calls=(ToolCall(f"c{k}", "bash", json.dumps({"command": f"cat part{k}.txt"})),),
            )
        )
        folded.append(Message(role="tool", content="ok", id=f"t{k}", tool_call_id=f"c{k}", name="bash"))
    vault = ArtifactVault("t")
    uri = vault.put("\n".join(rows), "tool_output", "bash")
    tail = [
        Message(
            role="assistant",
            content="Reading the log.",
            id="b1",
            tool_calls=(ToolCall("d1", "bash", json.dumps({"command": "cat sync.log"})),),
        ),
        Message(
            role="tool",
            content=f"{shown}\nfull text: {uri}",
            id="t-log",
            tool_call_id="d1",
            name="bash",
            meta={"trimmed": True, "vault_uri": uri},
        ),
    ]
    view = view_for(
        [*head, *tail],
        plan=CompactionPlan(Level.FULL, compacting=True),
        folded=tuple(folded),
        protected_head=tuple(head),
        vault=vault,
    )
    result = await run_step(Summarize(), view, window=16_000)
    summary = next(m.text for m in result.messages if m.meta.get("kind") == "summary")
    return [k for k in range(40) if f"`limit_helper_{k:02d}`" in summary]


_names = st.sampled_from(["limit_helper", "retry_budget", "sync_dir", "batch_size", "cap_17", "src/pager.py"])


@settings(max_examples=40, deadline=None)
@given(
    st.lists(_names, min_size=1, max_size=4),
    st.lists(st.tuples(_names, st.booleans()), min_size=1, max_size=12),
)
def test_an_output_as_it_came_refers_to_whatever_its_shortened_copy_does(
    stated: list[str], rows: list[tuple[str, bool]]
) -> None:
    """Reading later outputs whole never un-marks a line of the agent's: a trimmed copy holds a subset of
    its original's lines, so what it refers to the original refers to as well."""
    said = Message(role="assistant", content=f"I will check `{'` and `'.join(stated)}` next.", id="a0")
    lines = [ledger.Line(f"assistant: {x} is the cause", ledger.P_DECISION, decided=True) for x in stated]
    whole = "\n".join(f"row {k}: {name} = {k}" for k, (name, _) in enumerate(rows))
    kept = "\n".join(f"row {k}: {name} = {k}" for k, (name, keep) in enumerate(rows) if keep)

    def marked(text: str) -> list[bool]:
        later = [said, Message(role="tool", content=text, id="t1", tool_call_id="c1")]
        refs = ledger.Referred(later, ledger.LaterUse(later))
        return [ln.referred for ln in ledger.mark_referred(lines, 0, refs)]

    by_copy, by_original = marked(kept), marked(whole)
    assert all(o or not c for c, o in zip(by_copy, by_original, strict=True))


THOUGHT = (
    "The reservation IFOYYZ is a basic economy ticket and was created more than 24 hours ago without "
    "travel insurance, so it cannot be canceled due to a change of plans. The reservation NQNU5R is a "
    "business class ticket and can be canceled at any time. I will proceed to cancel NQNU5R and inform "
    "the user about the inability to cancel IFOYYZ."
)


def _think(arguments: dict[str, str], name: str = "think") -> Message:
    return Message("assistant", "", tool_calls=(ToolCall("c1", name, json.dumps(arguments)),))


def test_a_thought_is_recorded_as_the_agents_sentences_and_a_command_as_a_call() -> None:
    # tau-dev task027: the thought was one 360-character call line, the longest of its rank, the first to go.
    lines = record_one(_think({"thought": THOUGHT}))
    assert [ln.text for ln in lines] == [
        "think thought: The reservation IFOYYZ is a basic economy ticket and was created more than 24 hours "
        "ago without travel insurance, so it cannot be canceled due to a change of plans.",
        "  The reservation NQNU5R is a business class ticket and can be canceled at any time.",
        "  I will proceed to cancel NQNU5R and inform the user about the inability to cancel IFOYYZ.",
    ]
    assert all(ln.priority == P_CALL and ln.decided for ln in lines)
    # A command, code, several arguments or a name: one call line as before.
    for args, name in (
        ({"command": THOUGHT}, "bash"),
        ({"code": "def f(x):\n    return g(x)  # the reservation is a basic ticket and so on"}, "python"),
        ({"reservation_id": "NQNU5R", "reason": THOUGHT}, "cancel_reservation"),
        ({"reservation_id": "NQNU5R"}, "get_reservation_details"),
    ):
        (line,) = record_one(_think(args, name))
        assert not line.decided and line.priority == P_CALL, line


def test_the_sentence_a_later_message_refers_to_outlasts_the_rest_of_a_thought() -> None:
    lines = [*record_one(_think({"thought": THOUGHT})), Line("→ cancelled", P_RESULT)]
    later = Referred([Message("user", "cancel NQNU5R please")], LaterUse([]))
    marked = [mark_referred([ln], 0, later)[0] if ln.decided else ln for ln in lines]
    kept = fit(marked, len(marked[1].text) + len(marked[3].text) + 2)
    assert kept == [marked[1].text, "→ cancelled"]


@given(st.lists(st.text("abcefgh XYZ,", min_size=1, max_size=40), min_size=1, max_size=8))
def test_a_prose_argument_keeps_every_sentence_once_in_order(parts: list[str]) -> None:
    """Property: a thought of generated sentences is recorded whole, a sentence a line, in order, or as the
    one call line it was when it has fewer than two sentences of four words."""
    sentences = [" ".join(p.split()) + "." for p in parts if p.split()]
    text = " ".join(sentences)
    lines = record_one(_think({"thought": text}))
    if sum(len(x.split()) >= 4 for x in sentences) >= 2:
        assert [ln.text.removeprefix("think thought: ").strip() for ln in lines] == sentences
        assert all(ln.decided and ln.priority == P_CALL for ln in lines)
    else:
        assert len(lines) == 1 and not lines[0].decided


def _long_script(lines: list[str]) -> Message:
    """The agent writes a script in one heredoc: its Record line keeps only the command's first and last
    line."""
    script = "\n".join(["cat <<'EOF' > reproduce.py", *lines, "EOF"])
    return Message(
        role="assistant",
        content="",
        id="a0",
        tool_calls=(ToolCall("c0", "bash", json.dumps({"command": script})),),
    )


def _stated_later(lines: list[str]) -> list[Line]:
    """``stated_used_lines`` of a script of ``lines`` that a later output (the file read back) shows whole."""
    a0 = _long_script(lines)
    shown = Message(role="tool", content="\n".join(lines), id="t1", tool_call_id="c1", name="bash")
    msgs = [a0, shown]
    return ledger.stated_used_lines(a0, record_one(a0), 0, Referred(msgs, LaterUse(msgs)))


def test_a_code_line_far_down_a_long_script_a_later_message_shows_gets_its_line() -> None:
    """No cap in characters on what the agent stated: the Record's fit chooses among the lines, not the
    order of the code in the message (the cap of 600 characters kept only a script's first lines, and a
    fix further down was never a candidate: swe-dev 16K agent facts, matplotlib-24870)."""
    code = [f"    value_{k:02d} = compute_field_{k:02d}(record, strict=True)" for k in range(20)]
    fix = "    f.writelines(new_lines)"
    assert len("\n".join(code)) > ledger.USED_MAX_CHARS  # the old cap would stop before the fix
    facts = " ".join(ln.text for ln in _stated_later([*code, fix]))
    assert fix.strip() in facts
    assert all(x.strip() in facts for x in code)


@given(
    st.lists(
        st.tuples(st.integers(0, 999), st.text("abcdefghij_", min_size=0, max_size=80)),
        min_size=2,  # a command of up to three lines is its Record line whole
        max_size=48,
        unique_by=lambda x: x[0],
    )
)
def test_every_stated_code_line_a_later_message_uses_is_kept_up_to_the_count_cap(
    rows: list[tuple[int, str]],
) -> None:
    """Of a script's code lines that a later message shows, the stated lines hold the first
    ``USED_MAX_FACTS``, whatever their lengths, in order; none is cut."""
    lines = [f"name_{k} = call_{k}({pad})" for k, pad in rows]
    out = _stated_later(lines)
    held = [f.strip() for ln in out for f in ln.text.removeprefix(ledger.USED_PREFIX).split(" · ")]
    assert held == lines[: ledger.USED_MAX_FACTS]
    assert all(ln.priority == ledger.P_STATED and len(ln.text) <= ledger.USED_LINE_CHARS for ln in out)
