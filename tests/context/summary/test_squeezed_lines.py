"""A squeezed summary block cuts the lines of the user's rank: the user's words by their head, the opening of
the agent's reply by its head and its tail (tau-dev task003: "… is Option 2 with a total travel time of 5
hours" was cut to its first 60 characters at 8K)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from myrm_tui.context.summary import ledger
from myrm_tui.context.summary.fields import Summary, _clip_user, _short_ends, fit_block
from tests.helpers import COUNTER

REPLY = (
    "assistant: The fastest return trip, including layover time, is **Option 2** with a total travel "
    "time of 5 hours:"
)


def test_a_squeezed_block_keeps_the_end_of_a_replys_opening_and_the_start_of_the_users_words() -> None:
    names = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet"]
    names += ["kilo", "lima"]
    words = [" ".join(f"{n}{c}" for c in "abcdefghijklmnopqrstuvwxyz") for n in names]
    users = [ledger.Line(f"user: {n} asks {w}", ledger.P_USER) for n, w in zip(names, words, strict=True)]
    reply = ledger.Line(REPLY, ledger.P_USER, decided=True)
    lines = [*users[:6], reply, *users[6:]]
    block = fit_block(Summary(), Summary(), lines, set(), 20, 2, 400, COUNTER.text)
    assert block.squeezed and COUNTER.text(block.text) <= 400
    assert "assistant: The fastest return" in block.text
    assert "total travel time of 5 hours" in block.text
    for n in names:  # every user line, by its opening
        assert f"user: {n} asks {n}a" in block.text


def test_only_the_agents_lines_of_the_users_rank_keep_their_tail() -> None:
    lines = [
        ledger.Line(REPLY, ledger.P_USER, decided=True),
        ledger.Line("user: " + "x" * 100 + " the end", ledger.P_USER),
        ledger.Line("  " + "y" * 100 + " kept whole", ledger.P_RESULT),
    ]
    reply, user, other = _clip_user(lines, 70)
    assert len(reply.text) == 70 and reply.text.endswith("5 hours:") and reply.decided
    assert len(user.text) == 70 and user.text.startswith("user: xxx") and "end" not in user.text
    assert other == lines[2]


@given(st.text(st.characters(blacklist_characters="…"), max_size=400), st.integers(3, 300))
def test_a_line_cut_by_its_ends_keeps_its_head_and_tail_within_the_limit(text: str, n: int) -> None:
    """Property: within ``n`` characters; the line itself (spaces joined) when it fits, else its first
    and its last characters around one cut mark."""
    flat = " ".join(text.split())
    cut = _short_ends(text, n)
    assert len(cut) <= n
    if len(flat) <= n:
        assert cut == flat
    else:
        head, _, tail = cut.partition("…")
        assert flat.startswith(head) and flat.endswith(tail)
        assert len(head) >= (n - 1) // 2 and len(head) + len(tail) == n - 1
