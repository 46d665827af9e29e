"""Below the result rank, the Record's fit drops the costliest line per fact first (``ledger.chars_per_fact``,
issue 46, tau-dev 8K): a JSON line holding several values — a reservation's ``"flights"`` member, a flight
of a search nothing later named — counts its length per value, so it no longer goes before every short
one-value member (``"nonfree_baggages": 0``, ``"created_at": …``) for its length alone. A line of text
counts as one fact: its place is its length, as before."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from myrm_tui.context.summary import ledger

FLIGHTS = [
    {"origin": "LAX", "destination": "EWR", "flight_number": "HAT228", "date": "2024-05-23", "price": 131},
    {"origin": "EWR", "destination": "CLT", "flight_number": "HAT043", "date": "2024-05-24", "price": 163},
]
META = {
    "user_id": "sophia_silva_7557",
    "created_at": "2024-05-04T14:07:11",
    "flight_type": "round_trip",
    "total_baggages": 0,
    "nonfree_baggages": 0,
    "insurance": "yes",
}


def _reservation() -> list[ledger.Line]:
    """A folded reservation as the Record holds it: its id first, the rest demoted (nothing later used it)."""
    lines = [ledger.Line('→ "reservation_id": "S61CZX"', ledger.P_RESULT)]
    lines.append(ledger.Line(f'  "flights": {json.dumps(FLIGHTS)}', ledger.P_LOCATED))
    lines += [ledger.Line(f"  {json.dumps(k)}: {json.dumps(v)}", ledger.P_LOCATED) for k, v in META.items()]
    return lines


def test_a_member_of_several_values_outlasts_one_value_members() -> None:
    lines = _reservation()
    budget = sum(len(ln.text) + 1 for ln in lines) - 60  # some must go
    kept = "\n".join(ledger.fit(lines, budget))
    assert "HAT228" in kept and "HAT043" in kept and '"price": 163' in kept
    assert "created_at" not in kept  # the costliest one-value line went instead


def test_the_cost_of_a_line() -> None:
    assert ledger.chars_per_fact('  "nonfree_baggages": 0') == len('  "nonfree_baggages": 0')
    line = f'  "flights": {json.dumps(FLIGHTS)}'
    assert ledger.chars_per_fact(line) == len(line) / 10
    assert ledger.chars_per_fact("  Error: not enough seats on flight HAT229") == 42  # text: one fact
    assert ledger.chars_per_fact("  [unbalanced {json") == len("  [unbalanced {json")


SCALAR = st.one_of(st.integers(0, 9999), st.sampled_from(["HAT043", "economy", "2024-05-24", "yes", None]))
VALUE = st.recursive(
    SCALAR,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from("abcde"), inner, max_size=4),
    max_leaves=12,
)


@settings(deadline=None)  # a loaded machine's first example is slow
@given(
    st.lists(
        st.tuples(st.sampled_from(["flights", "seats", "id", "prices"]), VALUE), min_size=2, max_size=10
    ),
    st.integers(0, 400),
)
def test_below_the_result_rank_the_fit_drops_the_costliest_per_fact_first(
    members: list[tuple[str, object]], cut: int
) -> None:
    lines = [
        ledger.Line(f"  {json.dumps(f'{k}{i}')}: {json.dumps(v)}", ledger.P_LOCATED)
        for i, (k, v) in enumerate(members)
    ]
    fitter = ledger.Fitter(lines)
    budget = max(sum(len(ln.text) + 1 for ln in lines) - cut, 0)
    kept = set(fitter(budget))
    spare = fitter.spare()
    cost = {ln.text: ledger.chars_per_fact(ln.text) for ln in fitter.uniq}
    dropped = [ln.text for i, ln in enumerate(fitter.uniq) if ln.text not in kept and not spare[i]]
    for k in kept:
        assert all(cost[k] <= cost[d] for d in dropped), (k, dropped)
