"""Tool-output facts kept: when an output folds into the summary, the ids, amounts and statuses of it that
the agent used later stay in the ledger (context/summary/ledger.py ``used_lines``), however full the ledger
is."""

from __future__ import annotations

import json

import pytest

from myrm_tui.context.summary import ledger
from myrm_tui.context.types import Message, ToolCall
from tests.helpers import run_pipeline

RESERVATION = {
    "reservation_id": "QX7R2M",
    "user_id": "emma_kim_9957",
    "cabin": "business",
    "flights": [
        {"flight_number": f"HAT{200 + k}", "date": f"2024-05-{10 + k}", "price": 300 + 7 * k, "seat": f"{k}A"}
        for k in range(12)
    ],
    # After the flights: the ledger ranks a JSON output's first items highest, these are not among them.
    "status": "confirmed",
    "total_paid": 1628.4,
    "payment_history": [{"payment_id": "gift_card_4418190", "amount": 1628.4}],
}


def _flights(i: int) -> list[dict[str, object]]:
    return [
        {
            "flight_number": f"HAT{i:02d}{k}",
            "origin": "JFK",
            "destination": "SEA",
            "status": "available",
            "prices": {"economy": 100 + 13 * k + i, "business": 900 + 17 * k + i},
            "seats": {"economy": k},
        }
        for k in range(14)
    ]


def support_session(searches: int = 14) -> list[Message]:
    """A support chat: one reservation read early, then many bulky flight searches; the agent acts on the
    reservation's id, amount and status only later, in a sentence that opens a tool-calling message."""
    msgs = [
        Message(role="system", content="You are an airline support agent.", id="s"),
        Message(
            role="user", content="I want to move my trip to Seattle; my user id is emma_kim_9957.", id="u"
        ),
        Message(
            role="assistant",
            content="",
            id="a0",
            tool_calls=(ToolCall("c0", "get_reservation_details", '{"reservation_id": "QX7R2M"}'),),
        ),
        Message(
            role="tool",
            content=json.dumps(RESERVATION),
            id="t0",
            tool_call_id="c0",
            name="get_reservation_details",
        ),
    ]
    for i in range(1, searches + 1):
        said = (
            "Searching again."
            if i != searches // 2
            else (
                "The booking QX7R2M is confirmed and paid 1628.4 with gift_card_4418190, so I keep looking."
            )
        )
        msgs.append(
            Message(
                role="assistant",
                content=said,
                id=f"a{i}",
                tool_calls=(
                    ToolCall(f"c{i}", "search_direct_flight", json.dumps({"date": f"2024-05-{i:02d}"})),
                ),
            )
        )
        msgs.append(
            Message(
                role="tool",
                content=json.dumps(_flights(i)),
                id=f"t{i}",
                tool_call_id=f"c{i}",
                name="search_direct_flight",
            )
        )
    msgs.append(Message(role="user", content="Any luck?", id="u2"))
    return msgs


@pytest.mark.asyncio
async def test_a_folded_reservation_keeps_the_id_amount_and_status_the_agent_used() -> None:
    raw = support_session()
    view, run = await run_pipeline(raw, window=4_000)
    text = "\n".join(m.text for m in view)
    assert run.metrics.compacted, "the session must compact for the test to mean anything"
    assert not any(m.id == "t0" for m in view)  # the reservation output itself was folded
    for fact in ("QX7R2M", "1628.4", "confirmed", "gift_card_4418190"):
        assert fact in text, fact


def test_used_lines_name_what_a_later_message_used_and_no_line_holds() -> None:
    output = json.dumps(RESERVATION)
    later = ledger.LaterUse(
        [
            Message(role="tool", content=output, id="t"),
            Message(role="assistant", content="Refunding 1628.4 to gift_card_4418190 for HAT203.", id="a"),
            Message(
                role="assistant",
                content="",
                id="b",
                tool_calls=(
                    ToolCall("c", "cancel", '{"reservation_id": "QX7R2M", "note": "x\\nconfirmed"}'),
                ),
            ),
            Message(role="assistant", content="HAT205 noted.", id="s", synthetic=True),  # the pipeline's own
        ]
    )
    held = [ledger.Line('"flight_number": "HAT203"', ledger.P_RESULT)]
    lines = ledger.used_lines(output, held, 0, later)
    facts = " ".join(ln.text for ln in lines)
    assert all(ln.text.startswith(ledger.USED_PREFIX) and ln.priority == ledger.P_RESULT for ln in lines)
    for fact in ("QX7R2M", "1628.4", "gift_card_4418190", "confirmed"):  # an escaped newline in arguments too
        assert fact in facts, fact
    assert "HAT203" not in facts  # a result line holds it already
    assert "HAT205" not in facts and "emma_kim_9957" not in facts  # not used, or only by the pipeline
    # Only uses after the output count.
    assert ledger.used_lines(output, [], 3, later) == []


def test_used_lines_are_short_and_bounded() -> None:
    output = "\n".join(f"id_{k:04d} = {k}" for k in range(400))
    later = ledger.LaterUse([Message(role="assistant", content=output, id="a")])
    lines = ledger.used_lines(output, [], -1, later)
    assert lines and all(len(ln.text) <= ledger.USED_LINE_CHARS + 30 for ln in lines)
    assert sum(ln.text.count("·") + 1 for ln in lines) <= ledger.USED_MAX_FACTS


def test_a_used_line_keeps_its_rank_when_blocks_are_consolidated() -> None:
    assert ledger.reparse(ledger.USED_PREFIX + "QX7R2M · 1628.4").priority == ledger.P_RESULT


def test_a_folded_search_keeps_the_item_the_agent_used_before_the_others() -> None:
    flights = _flights(3)
    output = json.dumps(flights)
    later = ledger.LaterUse(
        [
            Message(role="tool", content=output, id="t"),
            Message(
                role="assistant", content="", id="a", tool_calls=(ToolCall("c", "book", '{"f": "HAT033"}'),)
            ),
        ]
    )
    lines = ledger.salient_lines(output)
    folded = ledger.fold_lines(output, lines, 0, later)
    # Room for about two items: the used one stays beside the first, the unused ones go first.
    kept = ledger.fit(folded, len(folded[0].text) + len(folded[3].text) + 30)
    assert [t[:26] for t in kept] == ['{"flight_number": "HAT030"', '{"flight_number": "HAT033"']
