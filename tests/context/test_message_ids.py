"""The pipeline on histories whose ids are empty, repeated or carry ``#`` (hypothesis): the steps key
messages by id, so the pipeline gives such messages positional ids on entry. The view is then valid, and
says what the same history with clean ids would make it say — on one request and on a growing session."""

from __future__ import annotations

import asyncio
from dataclasses import replace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from myrm_tui.context.invariants import check_view, with_unique_ids
from myrm_tui.context.pipeline import PipelineRun, build_pipeline
from myrm_tui.context.state import ContextState
from myrm_tui.context.types import Message
from tests.context.test_pipeline_properties import histories
from tests.helpers import config_for, conversation, request_for


@st.composite
def bad_ids(draw: st.DrawFn, raw: list[Message]) -> list[Message]:
    """``raw`` with some ids emptied, repeated (an earlier one's) or given a ``#``."""
    out: list[Message] = []
    for k, m in enumerate(raw):
        how = draw(st.sampled_from(["keep", "keep", "empty", "repeat", "hash"]))
        if how == "empty":
            m = replace(m, id="")
        elif how == "repeat" and k:
            m = replace(m, id=out[draw(st.integers(0, k - 1))].id)
        elif how == "hash":
            m = replace(m, id=f"{out[-1].id if out else 'x'}#trim")
        out.append(m)
    return out


def clean(raw: list[Message]) -> list[Message]:
    return [replace(m, id=f"m{k}") for k, m in enumerate(raw)]


def contents(view: list[Message]) -> list[tuple[str, object, tuple[str, ...]]]:
    return [(m.role, m.content, tuple(c.id for c in m.tool_calls)) for m in view]


async def run_pipeline(
    raw: list[Message], window: int, force_compaction: bool
) -> tuple[list[Message], PipelineRun]:
    """A pipeline of its own for each session: a step's caches (the summary's ledger) are keyed by id, and
    the sessions compared here reuse ids with other content."""
    run = await build_pipeline().run(
        request_for(raw, force_compaction=force_compaction), config_for(window), "test"
    )
    return run.messages, run


async def grown(raw: list[Message], window: int) -> list[list[Message]]:
    """The view of every request of a session that grows message by message, with one shared state and
    one pipeline."""
    state, views, pipeline = ContextState(), [], build_pipeline()
    for end in range(2, len(raw) + 1):
        run = await pipeline.run(request_for(raw[:end], state), config_for(window), "test")
        view = run.messages
        assert run.metrics.failures == []
        views.append(view)
    return views


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), st.sampled_from([2_000, 6_000]), st.booleans())
def test_bad_ids_give_the_view_clean_ids_give(data: st.DataObject, window: int, force: bool) -> None:
    raw = data.draw(histories())
    bad = data.draw(bad_ids(raw))
    before = list(bad)
    view, run = asyncio.run(run_pipeline(bad, window=window, force_compaction=force))
    assert run.metrics.failures == []
    assert check_view(view, bad) == [], check_view(view, bad)
    assert bad == before and [m.id for m in bad] == [m.id for m in before]  # the stored ids stay
    twin, _ = asyncio.run(run_pipeline(clean(raw), window=window, force_compaction=force))
    assert contents(view) == contents(twin)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_a_growing_session_with_bad_ids_is_the_session_with_clean_ids(data: st.DataObject) -> None:
    raw = data.draw(histories())
    bad = data.draw(bad_ids(raw))
    views = asyncio.run(grown(bad, 3_000))
    for view, end in zip(views, range(2, len(bad) + 1), strict=True):
        assert check_view(view, bad[:end]) == []
    assert [contents(v) for v in views] == [contents(v) for v in asyncio.run(grown(clean(raw), 3_000))]


def test_a_session_whose_ids_are_all_empty_still_carries_its_outputs() -> None:
    """Before: every tool result took the first one's filter decision (all keyed by ""), normalize dropped
    them as orphans, and the view fell to the system prompt and the task."""
    raw = conversation(40, 3_000)
    empty = [replace(m, id="") for m in raw]
    views = asyncio.run(grown(empty, 8_000))
    assert [contents(v) for v in views] == [contents(v) for v in asyncio.run(grown(raw, 8_000))]
    assert len(views[-1]) > 2


@given(st.lists(st.sampled_from(["", "a", "b", "a#x", "@1", "a@1", "c"]), max_size=12))
def test_positional_ids_are_unique_stable_and_leave_good_ids_alone(ids: list[str]) -> None:
    raw = [Message(role="user", content="x", id=i) for i in ids]
    fixed = [m.id for m in with_unique_ids(raw)]
    assert len(set(fixed)) == len(fixed) and all(f and "#" not in f for f in fixed)
    # appending never changes an earlier message's id (so decisions keyed by them hold across requests)
    assert fixed[:-1] == [m.id for m in with_unique_ids(raw[:-1])]
    # a first occurrence of a good id keeps it (one shaped like a positional id may have been taken)
    firsts = {i: k for k, i in reversed(list(enumerate(ids)))}
    assert all(fixed[k] == i for i, k in firsts.items() if i and "#" not in i and "@" not in i)
