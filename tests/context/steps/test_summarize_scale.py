"""A compaction of a history far over the window does work bounded by what its summary can hold (#45.9).

A 10,000-message session (2.3M tokens) opened with a small-window model was compacted in 75 s: the Record's
lines were ranked over every folded message, a cost growing with the square of the history. The Record now
reads the newest ``LEDGER_SPAN_BUDGETS`` input budgets of the fold; a fold within that (every compaction of
a session that stayed within its window) reads all of it as before. Counted in messages read, not timed:
the seconds are ``make perf-compaction``'s."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from myrm_tui.context.steps.summarize import LEDGER_SPAN_BUDGETS, Summarize
from myrm_tui.context.types import Message
from tests.helpers import COUNTER, config_for, run_pipeline


def _history(words: list[int]) -> list[Message]:
    msgs = [
        Message(role="system", content="You are a test agent.", id="s"),
        Message(role="user", content="Fix the bug.", id="u"),
    ]
    for i, n in enumerate(words):
        msgs.append(Message(role="user", content=f"and then {i}?", id=f"u{i}"))
        text = f"Answer {i}: " + " ".join(f"finding{i}x{k} holds" for k in range(n))
        msgs.append(Message(role="assistant", content=text, id=f"a{i}"))
    return msgs


FOLD_SETTINGS = settings(
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
WORDS = st.integers(4, 150).flatmap(lambda n: st.lists(st.integers(20, 400), min_size=n, max_size=n))
WINDOWS = st.sampled_from([4_000, 8_000])


# make test compacts the named fold and a fixed 5 generated ones (~0.15 s of CPU each); the long twin 12.
@settings(FOLD_SETTINGS, max_examples=5)
@given(words=WORDS, window=WINDOWS)
# A fold far over the span, first: a Record that read the whole fold fails here at once (a generated one is
# shrunk, and each shrink step compacts the whole fold again: the mutation run took over 300 s).
@example(words=[400] * 150, window=4_000)
def test_the_record_reads_at_most_its_span_of_the_fold(
    monkeypatch: pytest.MonkeyPatch, words: list[int], window: int
) -> None:
    reads_at_most_its_span(monkeypatch, words, window)


@pytest.mark.long
@settings(FOLD_SETTINGS, max_examples=12)
@given(words=WORDS, window=WINDOWS)
def test_long_the_record_reads_at_most_its_span_of_the_fold(
    monkeypatch: pytest.MonkeyPatch, words: list[int], window: int
) -> None:
    """The same property over 12 folds (``make test-long``)."""
    reads_at_most_its_span(monkeypatch, words, window)


def reads_at_most_its_span(monkeypatch: pytest.MonkeyPatch, words: list[int], window: int) -> None:
    read: list[str] = []
    original = Summarize._folded_lines

    def counted(self: Summarize, m: Message, *args: Any) -> Any:
        read.append(m.id)
        return original(self, m, *args)

    monkeypatch.setattr(Summarize, "_folded_lines", counted)
    raw = _history(words)
    _, run = asyncio.run(run_pipeline(raw, window=window, force_compaction=True))
    record = run.metrics.compaction
    assert record is not None
    folded = [item for item in record.left if item.how == "folded"]
    span = config_for(window).input_budget * LEDGER_SPAN_BUDGETS
    by_id = {m.id: m for m in raw}
    read_tokens = sum(COUNTER.message(by_id[i]) for i in read if i in by_id)
    folded_tokens = sum(COUNTER.message(by_id[i.message_id]) for i in folded if i.message_id in by_id)
    if folded_tokens <= span:
        assert len(set(read)) == len(folded)  # within the span: every folded message is read, as before
    else:
        # The newest of the fold, up to the span (plus the one message that crosses it), and no more.
        largest = max(COUNTER.message(m) for m in raw)
        assert read_tokens <= span + largest, (read_tokens, span)
        assert read and read[-1] == folded[-1].message_id  # the newest folded message is read
