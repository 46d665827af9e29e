"""The room a Record's fit leaves takes squeezed forms of the lines it dropped (``ledger.squeezed``,
``ledger.Fitter`` with ``squeeze``; issue 46.2): the fit drops whole lines until the Record is within its
share, which leaves up to a line's length unused; the last lines dropped (the worthiest of them) come back
with their runs of white space one space (a code line's alignment: ``73:            field_name =
"CONVERT_TZ(…)"``) where they fit. No line the fit kept goes for them."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from myrm_tui.context.steps.summarize import Summarize
from myrm_tui.context.summary import fields, ledger
from myrm_tui.context.summary.fields import Summary

HIT = "→ returncode 0 73:            field_name = \"CONVERT_TZ(%s, 'UTC', '%s')\" % (field_name, tzname)"
FACT = "CONVERT_TZ(%s, 'UTC', '%s')"


def test_squeezed_forms_keep_the_indent_and_the_facts() -> None:
    assert (
        ledger.squeezed(HIT)
        == "→ returncode 0 73: field_name = \"CONVERT_TZ(%s, 'UTC', '%s')\" % (field_name, tzname)"
    )
    assert ledger.squeezed("      73\t            return x") == "      73 return x"
    assert ledger.squeezed("  one two three") is None  # nothing to squeeze


def _record() -> list[ledger.Line]:
    others = [
        ledger.Line(f"  E AssertionError: case {i} differs ({i * 7})", ledger.P_RESULT) for i in range(6)
    ]
    return [ledger.Line(HIT, ledger.P_RESULT), *others]


def test_the_room_a_fit_leaves_takes_a_dropped_line_squeezed() -> None:
    lines = _record()
    budget = sum(len(ln.text) + 1 for ln in lines) - 10  # ten characters too many: the longest line goes
    plain = ledger.fit(lines, budget)
    assert FACT not in "\n".join(plain) and len(plain) == len(lines) - 1
    kept = ledger.Fitter(lines, set(), squeeze=True)(budget)
    assert kept == [ledger.squeezed(HIT), *plain]  # back, in its place, without its alignment
    assert sum(len(t) + 1 for t in kept) <= budget


def test_a_squeezed_form_that_does_not_fit_stays_out() -> None:
    lines = _record()
    budget = sum(len(ln.text) + 1 for ln in lines[1:]) - 5  # the squeezed line would push another out
    kept = ledger.Fitter(lines, set(), squeeze=True)(budget)
    assert kept == ledger.fit(lines, budget) and FACT not in "\n".join(kept)


def test_a_squeezed_record_line_keeps_whose_it_was() -> None:
    own = ledger.Line(HIT.replace("→ returncode 0", "  Now"), ledger.P_DECISION, decided=True, own=True)
    short = ledger.squeezed(own.text)
    assert short is not None
    written: dict[str, ledger.Line] = {}
    Summarize._remember([own], [short], written)  # type: ignore[arg-type]
    assert ledger.reparse(short, written) == ledger.Line(short, ledger.P_DECISION, decided=True, own=True)


def _lines() -> st.SearchStrategy[tuple[list[ledger.Line], int]]:
    row = st.tuples(
        st.sampled_from([ledger.P_LOCATED, ledger.P_CALL, ledger.P_RESULT, ledger.P_USER]),
        st.integers(0, 14),  # alignment
        st.integers(1, 40),  # the words' length
    )

    def build(rows: list[tuple[int, int, int]], share: float) -> tuple[list[ledger.Line], int]:
        lines = [
            ledger.Line(f"  l{k}:" + " " * pad + "w" * n + " " * pad + "z", p)
            for k, (p, pad, n) in enumerate(rows)
        ]
        return lines, int(sum(len(ln.text) + 1 for ln in lines) * share)

    return st.builds(build, st.lists(row, min_size=1, max_size=16), st.floats(0.0, 1.0))


@given(_lines())
def test_a_squeezing_fit_keeps_within_its_share_and_all_the_plain_fit_keeps(
    case: tuple[list[ledger.Line], int],
) -> None:
    lines, budget = case
    kept = ledger.Fitter(lines, set(), squeeze=True)(budget)
    assert sum(len(t) + 1 for t in kept) <= budget
    assert set(ledger.fit(lines, budget)) <= set(kept)
    # Each kept line is one of the lines, whole or squeezed, in its order; the user's words are never
    # squeezed.
    forms = {ln.text: i for i, ln in enumerate(lines)}
    forms |= {
        s: i for i, ln in enumerate(lines) if ln.priority < ledger.P_USER and (s := ledger.squeezed(ln.text))
    }
    where = [forms[t] for t in kept]
    assert where == sorted(set(where))


def test_a_summary_block_spends_the_room_on_squeezed_lines() -> None:
    lines = _record()
    budget = sum(len(ln.text) + 1 for ln in lines) - 10
    block = fields.fit_block(Summary(), Summary(), lines, set(), 40, 2, 10_000, len, budget)
    assert block.record[0] == ledger.squeezed(HIT) and FACT in block.text
