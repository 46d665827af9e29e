"""``LaterUse`` answers the same questions of one fact many times in a fold (its outputs share ids and
paths): what it read of a fact once stands in for reading it again (``used_after``, ``used_before``). Over
generated messages and any order of questions, each answer is what reading the texts again gives."""

from __future__ import annotations

from bisect import bisect_right
from typing import Literal

from hypothesis import given, settings
from hypothesis import strategies as st

from myrm_tui.context.summary import ledger
from myrm_tui.context.types import Message

Role = Literal["assistant", "user", "tool"]
ROLES: list[Role] = ["assistant", "user", "tool"]
WORDS = ["src/app.py", "app", "HAT229", "hat", "self.as_sql(x)", "as_sql", "x", "42", "a-b", "a", "b", "-"]
WORDS += ["\n", " "]
texts = st.lists(st.sampled_from(WORDS), max_size=8).map("".join)
facts = st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map("".join)


def _plain_after(use: ledger.LaterUse, fact: str, k: int) -> bool:
    """``used_after`` reading the texts each time (the code before the index)."""
    low = fact.lower()
    words = ledger._PLAIN_WORD.findall(low)
    if not words or any(use._words.get(w, -1) <= k for w in words):
        return False
    if len(words) == 1 and words[0] == low:
        return True
    j = bisect_right(use._at, k)
    return j < len(use._at) and use._blob.find(low, use._offset[j]) >= 0


def _plain_before(use: ledger.LaterUse, fact: str, k: int) -> bool:
    j = bisect_right(use._at, k - 1)
    end = use._offset[j] if j < len(use._at) else len(use._blob)
    return use._blob.find(fact.lower(), 0, end) >= 0


@settings(max_examples=300)
@given(
    st.lists(st.tuples(st.sampled_from(ROLES), texts), max_size=10),
    st.lists(st.tuples(facts, st.integers(-2, 11), st.booleans()), min_size=1, max_size=40),
)
def test_each_answer_is_what_reading_the_texts_again_gives(
    messages: list[tuple[Role, str]], questions: list[tuple[str, int, bool]]
) -> None:
    msgs = [Message(role=r, content=t, id=f"m{i}") for i, (r, t) in enumerate(messages)]
    for roles in (frozenset({"assistant"}), frozenset({"user", "tool"})):
        use = ledger.LaterUse(msgs, roles)
        for fact, k, after in questions:
            if after:
                assert use.used_after(fact, k) == _plain_after(use, fact, k)
            else:
                assert use.used_before(fact, k) == _plain_before(use, fact, k)


def test_an_earlier_search_that_found_nothing_does_not_answer_for_an_earlier_start() -> None:
    """ "a-b" is only in the first message; its words are used later apart. Asked after 0 (not found from the
    second message on), then after -1 (found in the first): the second answer reads the text again."""
    msgs = [Message(role="assistant", content=t, id=f"m{i}") for i, t in enumerate(["a-b", "a", "b"])]
    use = ledger.LaterUse(msgs)
    assert not use.used_after("a-b", 0)
    assert use.used_after("a-b", -1)
    assert use.used_before("a-b", 1) and not use.used_before("a-b", 0)
    fresh = ledger.LaterUse(msgs)  # not found before the first message, then asked before the second
    assert not fresh.used_before("a-b", 0) and fresh.used_before("a-b", 1)


@settings(max_examples=200)
@given(
    st.lists(st.tuples(st.sampled_from(["assistant", "assistant", "tool"]), texts), min_size=2, max_size=8),
    st.lists(facts, min_size=1, max_size=12).map(" ; ".join),
    st.integers(-1, 4),
)
def test_the_facts_used_are_those_each_question_finds(
    messages: list[tuple[Role, str]], output: str, k: int
) -> None:
    """``used_of`` looks up only the facts whose first word the agent used: the same facts, in order."""
    msgs = [Message(role=r, content=t, id=f"m{i}") for i, (r, t) in enumerate(messages)]
    use = ledger.LaterUse(msgs)
    assert use.used_of(output, k) == [t for t in ledger.fact_tokens(output) if _plain_after(use, t, k)]
