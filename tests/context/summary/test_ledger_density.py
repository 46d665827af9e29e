"""The fact ledger spends its room on what later turns refer back to: outcomes, not code that names them."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from myrm_tui.context.summary.ledger import (
    P_CALL,
    P_RESULT,
    P_USER,
    Line,
    fit,
    record_one,
    redundant,
    salient_lines,
)
from myrm_tui.context.types import Message


def _view(code: list[str]) -> str:
    return "<returncode>0</returncode>\n<output>\n" + "\n".join(code) + "\n</output>"


def test_code_that_names_errors_is_not_an_outcome_but_error_lines_and_verdicts_are() -> None:
    code = [
        "    def get_violation_error_message(self):",
        "        return self.violation_error_message % {'name': self.name}",
        "            warnings.warn(",
        "                RemovedInDjango60Warning,",
        "        except FieldError:",
        "class PermissionDenied(Exception):",
        '        raise ValueError("invalid literal")',
    ] * 8  # long enough not to be kept whole
    out = [
        "Caught ValidationError: {'__all__': ['Price must be non-negative.']}",
        "Error: not enough seats on flight HAT229",
        "E       AssertionError: assert 3 == 4",
        "FAILED (failures=3)",
        "===== 5 passed, 1 failed in 0.31s =====",
        "Could not load the file: no such file or directory",
    ]
    lines = {ln.text: ln.priority for ln in salient_lines(_view(code[:28] + out[:3] + code[28:] + out[3:]))}
    for text in out:
        assert lines.get(text) == P_RESULT, text
    for text in code:
        assert lines.get(text, 0) < P_RESULT, text


def test_a_reply_opening_outranks_bulk_output_in_a_full_ledger() -> None:
    reply = Message(
        role="assistant",
        content="The fastest return is Option 2 with a total travel time of 5 hours. Shall I book it?",
        id="r",
    )
    opening = record_one(reply)[0]
    assert opening.priority == P_USER and "total travel time of 5 hours" in opening.text
    bulk = [Line(f'  {{"flight_number": "HAT{i:03d}", "price": {100 + i}}}', P_RESULT) for i in range(40)]
    kept = fit([*bulk[:20], opening, *bulk[20:]], budget_chars=400)
    assert opening.text in kept


def test_redundant_lines_are_those_held_verbatim_by_another_line() -> None:
    lines = [
        Line("  446:def _sqlite_datetime_cast_date(dt, tzname):", P_RESULT),
        Line("django/db/backends/sqlite3/base.py:446:def _sqlite_datetime_cast_date(dt, tzname):", P_RESULT),
        Line("  x/Poly(x, x, domain='ZZ')", P_RESULT),
        Line("  Poly(x, x, domain='ZZ')*x", P_RESULT),  # the same words, another expression
        Line("  same line", P_RESULT),
        Line("  same line", P_RESULT),
        Line("$ python reproduce.py", P_CALL),
        Line("$ python reproduce.py --verbose", P_CALL),
    ]
    flags = redundant(lines, ["old block: seen before, verbatim"])
    assert flags == [True, False, False, False, True, False, False, False]
    assert redundant([Line("  seen before", P_RESULT)], ["old block: seen before, verbatim"]) == [True]
    # A line is only held by one of at least its priority (the holder must outlive it).
    assert redundant([Line("  ab c", P_RESULT), Line("  ab c d", P_CALL)]) == [False, False]


def test_fit_drops_redundant_lines_before_any_other() -> None:
    held = Line("  446:def _sqlite_datetime_cast_date(dt, tzname):", P_RESULT)
    holder = Line("base.py:446:def _sqlite_datetime_cast_date(dt, tzname):", P_RESULT)
    low = Line("  a short distinct line", P_CALL - 2)
    budget = len(holder.text) + len(low.text) + 2
    assert fit([held, holder, low], budget) == [holder.text, low.text]


def test_an_output_line_the_next_message_quotes_ranks_with_the_commands() -> None:
    from myrm_tui.context.summary.ledger import promote_quoted

    prints = [f"case {k}: value {k * 7}" for k in range(30)]
    prints.insert(15, "DEBUG: self._data.array dtype: object")
    lines = salient_lines(_view(prints))
    quoted = "DEBUG: self._data.array dtype: object"
    assert {ln.text: ln.priority for ln in lines}[quoted] < P_CALL
    reply = "Wait, the debug output says `self._data.array dtype: object`.\n```bash\necho `date`\n```"
    before = {ln.text: ln.priority for ln in lines}
    out = {ln.text: ln.priority for ln in promote_quoted(lines, reply)}
    assert out[quoted] == P_CALL
    assert all(p == before[t] for t, p in out.items() if t != quoted)  # `date` is in a fence, and short
    last = "case 29: value 203"  # an output's last line is a result: it still outranks the quoted one
    assert fit(promote_quoted(lines, reply), budget_chars=len(quoted) + len(last) + 4) == [quoted, last]


def test_the_blank_lines_of_a_numbered_view_are_noise() -> None:
    view = "\n".join(f"   {n}\t    x_{n} = {n}" if n % 3 else f"   {n}\t" for n in range(400, 461))
    assert not any(ln.text.strip().isdigit() for ln in salient_lines(_view([view])))


def test_a_long_line_said_again_but_for_its_numbers_is_redundant_and_goes_first() -> None:
    reminder = (
        "user: Please always provide EXACTLY ONE action in triple backticks, found {} actions. Please "
        "format your action in triple backticks as shown in <response_example>."
    )
    first, again = Line(reminder.format(2), P_USER), Line(reminder.format(5), P_USER)
    fact = Line("  → returncode 1 ValueError: 'id' is not in list", P_RESULT)
    assert redundant([first, fact, again]) == [False, False, True]
    # An earlier block's line counts as the first; a short line differing in a number is news ("run test 3").
    assert redundant([again], [first.text]) == [True]
    assert redundant([Line("user: run test 3", P_USER), Line("user: run test 4", P_USER)]) == [False, False]
    # A full ledger drops the repeat before a fact of lower priority; with room, both stay.
    budget = len(first.text) + len(fact.text) + 2
    assert fit([first, fact, again], budget) == [first.text, fact.text]
    assert fit([first, fact, again], 10_000) == [first.text, fact.text, again.text]


def _pytest_verdict(failed: int, passed: int, secs: float) -> str:
    """A pytest summary line as pytest prints it: centred in ``=`` to 80 columns."""
    return "  " + f" {failed} failed, {passed} passed, 1 xfailed in {secs:.2f}s ".center(80, "=")


def test_a_later_test_verdict_is_news_though_it_differs_only_in_its_numbers() -> None:
    # pytest-6197: the second run's "2 failed, 69 passed" looked like the first's "1 failed, 70 passed"
    # said again (same length, same padding) and was the first line the Record dropped.
    first, later = _pytest_verdict(1, 70, 5.12), _pytest_verdict(2, 69, 3.88)
    assert len(first.strip()) == len(later.strip()) == 80
    lines = [Line(first, P_RESULT), Line("  E   ModuleNotFoundError: No module named 'x'", P_RESULT)]
    assert redundant([*lines, Line(later, P_RESULT)]) == [False, False, False]
    assert redundant([Line(later, P_RESULT)], [first]) == [False]
    # unittest's and a failure count's verdicts too; a harness's reminder is still a template said again.
    ran = "  " + "x" * 80 + " Ran {} tests"
    assert redundant([Line(ran.format(12), P_RESULT)], [ran.format(13)]) == [False]
    # A full Record drops by priority and length, not the newer verdict first.
    every = [*lines, Line(later, P_RESULT)]
    assert later in fit(every, sum(len(ln.text) + 1 for ln in every) - 1)


@given(
    st.lists(st.tuples(st.integers(0, 999), st.integers(0, 9999), st.floats(0, 99)), min_size=2, max_size=6),
    st.integers(1, 9),
)
def test_no_test_verdict_is_dropped_as_a_template_of_another(
    runs: list[tuple[int, int, float]], n: int
) -> None:
    """Property: of several test runs' verdicts, each says something unless the same line comes again later
    (one of ``runs`` repeated verbatim); a long reminder said again but for its number stays redundant."""
    verdicts = [_pytest_verdict(f, p, s) for f, p, s in runs]
    reminder = "user: Please always provide EXACTLY ONE action in triple backticks, found {} actions, please"
    lines = [Line(v, P_RESULT) for v in verdicts] + [Line(reminder.format(n), P_USER)]
    flags = redundant(lines, [reminder.format(n + 1)])
    for i, v in enumerate(verdicts):
        assert flags[i] == (v in verdicts[i + 1 :]), v
    assert flags[-1]
