"""The summary as a typed value: its JSON at the store boundary, its share of the window, and the user's
own words as its goal (issues 31 and 35)."""

from __future__ import annotations

import json
from functools import reduce
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from myrm_tui.agent.events import TurnDone
from myrm_tui.context.config import ContextConfig
from myrm_tui.context.state import ContextState
from myrm_tui.context.summary import fields as summary_model
from myrm_tui.context.summary import ledger
from myrm_tui.context.summary.fields import FIELDS, LIST_FIELDS, Summary, fit_block, merge
from myrm_tui.context.types import UNVERIFIED_CONTEXT_MARKER, Message, synthetic_user
from myrm_tui.store.db import Store
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.helpers import COUNTER, collect, conversation, make_agent, openai_settings, run_pipeline

# -- the typed value and its stored form -------------------------------------------------------------
_item = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=60)


@st.composite
def summaries(draw: st.DrawFn) -> Summary:
    values: dict[str, Any] = {}
    for f in FIELDS:
        values[f] = tuple(draw(st.lists(_item, max_size=4))) if f in LIST_FIELDS else draw(_item)
    return Summary(**values)


@given(summaries())
def test_a_summary_survives_its_json(s: Summary) -> None:
    assert Summary.from_json(json.loads(json.dumps(s.to_json()))) == s
    state = ContextState(summary=s)
    assert ContextState.from_json(state.to_json()).summary == s


def test_summaries_stored_by_older_versions_load() -> None:
    """Sessions on disk hold the summary as a plain dict, of whatever shape a model wrote into it."""
    old = {
        "user_goal": "fix the parser",
        "decisions": ["use a stack"],
        "errors": "one error as a string",  # a string where a list belongs
        "current_state": ["reading", "parser.py"],  # a list where a string belongs
        "key_facts": [42, None, "port 8080"],
        "next_steps": None,
        "renamed_field": ["ignored"],
    }
    state = ContextState.from_json(json.dumps({"summary": old}))
    assert state.summary == Summary(
        user_goal="fix the parser",
        decisions=("use a stack",),
        errors=("one error as a string",),
        current_state="reading parser.py",
        key_facts=("42", "port 8080"),
    )
    assert ContextState.from_json(json.dumps({"summary": None})).summary is None
    assert ContextState.from_json(json.dumps({"summary": "garbage"})).summary == Summary()
    # What is stored keeps the shape older versions wrote: one key a field, lists as arrays.
    stored = json.loads(state.to_json())["summary"]
    assert set(stored) == set(FIELDS) and stored["decisions"] == ["use a stack"]


# -- within its share of the window --------------------------------------------------------------------
WORDS = (
    "fix",
    "the",
    "parser",
    "in",
    "src/pager.py",
    "paginate",
    "off-by-one",
    "test_pages",
    "returncode",
    "1",
    "AssertionError",
    "expected",
    "10",
    "got",
    "9",
    "run",
    "pytest",
    "-q",
    "keep",
    "the",
    "public",
    "API",
    "unchanged",
    "use",
    "a",
    "stack",
    "not",
    "recursion",
    "page",
    "size",
    "is",
    "25",
    "vault://s/3f2a",
    "lines",
    "12:40",
    "migrate",
    "config.toml",
    "port",
    "8080",
    "retry",
    "timeout",
    "30",
    "s",
    "deploy",
    "staging",
)
_sentence = st.lists(st.sampled_from(WORDS), min_size=1, max_size=40).map(" ".join)
_items = st.lists(_sentence, max_size=12)


@st.composite
def parts(draw: st.DrawFn) -> Summary:
    """One compaction's fresh summary, bounded as every summary is before it is merged."""
    values: dict[str, Any] = {f: tuple(draw(_items)) for f in LIST_FIELDS}
    values["user_goal"] = draw(_sentence) + " " + draw(_sentence)
    values["current_state"] = draw(_sentence)
    return summary_model.bound(Summary(**values))


def _norm(text: str) -> str:
    return " ".join(text.split())


def _survives(text: str, item: str, n: int) -> bool:
    return _norm(item)[:n] in _norm(text)


BLOCK_SETTINGS = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
BLOCKS = (
    st.lists(parts(), min_size=1, max_size=5),
    st.integers(4_000, 200_000),
    st.lists(_sentence, max_size=12),
    st.lists(_sentence, max_size=60),
    st.integers(1, 3),
)


# make test runs a fixed 20 blocks (~60 ms each), the long twin 60 new ones.
@settings(BLOCK_SETTINGS, max_examples=20)
@given(*BLOCKS)
def test_the_summary_block_stays_in_its_share_and_keeps_what_the_agent_must_act_on(
    seq: list[Summary], window: int, said: list[str], other: list[str], part: int
) -> None:
    block_keeps_what_matters(seq, window, said, other, part)


@pytest.mark.long
@settings(BLOCK_SETTINGS, max_examples=60)
@given(*BLOCKS)
def test_long_the_summary_block_stays_in_its_share_and_keeps_what_the_agent_must_act_on(
    seq: list[Summary], window: int, said: list[str], other: list[str], part: int
) -> None:
    """The same property over 60 blocks (``make test-long``)."""
    block_keeps_what_matters(seq, window, said, other, part)


def block_keeps_what_matters(
    seq: list[Summary], window: int, said: list[str], other: list[str], part: int
) -> None:
    merged = reduce(lambda a, b: merge(a, b), seq[1:], merge(None, seq[0]))
    fresh = seq[-1]
    lines = [
        *(ledger.Line(f"→ {t}", ledger.P_RESULT) for t in other[: len(other) // 2]),
        *(ledger.Line(f"user: {t}", ledger.P_USER) for t in said),
        *(ledger.Line(f"  {t}", ledger.P_CODE) for t in other[len(other) // 2 :]),
    ]
    share = int(ContextConfig(max_context_tokens=window).view_window * 0.2)
    stored: list[str] = []

    def vault() -> str:
        stored.append(summary_model.render(merged, 10))
        return "vault://t/whole"

    block = fit_block(fresh, merged, lines, set(), 10, part, share, COUNTER.text, None, vault)
    assert COUNTER.text(block.text) <= share
    text = block.text
    if part == 1:
        assert _survives(text, fresh.user_goal, 60)
    for t in said:  # the user's words (the Record's "user:" lines)
        assert _survives(text, f"user: {t}", 60)
    if fresh.errors:
        assert _survives(text, fresh.errors[-1], 40)
    for t in (*merged.next_steps, *merged.blocked_items):
        assert _survives(text, t, 40)
    if block.squeezed:  # what was shortened stays readable whole, behind a pointer
        assert "vault://t/whole" in text and stored


@settings(max_examples=40, deadline=None)
@given(summaries(), summaries(), st.lists(_item, max_size=30), st.integers(4_000, 200_000))
def test_any_text_stays_in_its_share(fresh: Summary, merged: Summary, said: list[str], window: int) -> None:
    """Text of many tokens a character (non-BMP, CJK, emoji) too: the share is never exceeded."""
    share = int(window * 0.2)
    lines = [ledger.Line(f"user: {t}", ledger.P_USER) for t in said]
    block = fit_block(fresh, merged, lines, set(), 3, 1, share, COUNTER.text)
    assert COUNTER.text(block.text) <= share


async def test_summary_blocks_take_at_most_their_share_at_every_request() -> None:
    """A long session, compacting at its thresholds: the blocks together never pass 20 % of the window
    (one replay showed 34 %); the goal and the newest next steps stay in them."""
    for window in (8_000, 16_000):
        state = ContextState()
        raw = conversation(160, output_chars=2400)
        share = ContextConfig(max_context_tokens=window).fit_summary_tokens
        worst = 0
        for end in range(4, len(raw) + 1, 2):
            view, _ = await run_pipeline(raw[:end], window=window, state=state)
            blocks = [m for m in view if m.meta.get("kind") == "summary"]
            worst = max(worst, COUNTER.messages(blocks))
            assert COUNTER.messages(blocks) <= share, (window, end, COUNTER.messages(blocks), share)
        assert state.compactions >= 3 and worst > share // 4
        assert "Fix the bug in src/app.py please." in state.summary.user_goal  # type: ignore[union-attr]


# -- the user's words, never a reminder --------------------------------------------------------------
GOAL = (
    "Fix the off-by-one in paginate() in src/pager.py: the last page repeats the previous page's last item."
)


def _reminder_first(turns: int) -> list[Message]:
    raw = conversation(turns, prefix="p")
    env = synthetic_user("<workspace_context>\ncwd: /work\n</workspace_context>", "penv", "environment")
    return [raw[0], env, Message(role="user", content=GOAL, id="pu"), *raw[2:]]


async def test_a_session_that_starts_with_a_reminder_takes_the_users_first_words_as_its_goal() -> None:
    state = ContextState()
    raw = _reminder_first(60)
    for end in range(6, len(raw) + 1, 2):
        await run_pipeline(raw[:end], window=8_000, state=state)
    assert state.compactions >= 2 and state.summary is not None
    assert state.summary.user_goal.startswith("Fix the off-by-one in paginate()")
    assert not any(UNVERIFIED_CONTEXT_MARKER in t for t in state.summary.texts())


async def test_a_stored_reminder_goal_is_repaired_when_next_merged_and_never_sent_as_previous() -> None:
    """An older version stored the environment reminder as the goal: the next compaction repairs it, and
    the "previous summary" the LLM summarizer is sent holds the user's words."""
    reminder = synthetic_user(
        "<workspace_context>\ncwd: /work\n</workspace_context>", "e", "environment"
    ).text
    state = ContextState.from_json(
        json.dumps({"summary": {"user_goal": reminder, "user_instructions": [reminder, "keep the API"]}})
    )
    bodies: list[str] = []

    async def summarizer(system: str, user: str) -> str:
        bodies.append(user)
        return json.dumps(Summary(current_state="reading src/pager.py").to_json())

    raw = _reminder_first(30)
    _, run = await run_pipeline(raw, window=8_000, state=state, summarizer=summarizer, force_compaction=True)
    assert run.compacting and bodies
    previous = bodies[0].split("Previous summary (merge into it):\n", 1)[1].split("\n\nFocus:", 1)[0]
    assert UNVERIFIED_CONTEXT_MARKER not in previous and "system-reminder" not in previous
    assert json.loads(previous)["user_goal"].startswith("Fix the off-by-one")
    assert json.loads(previous)["user_instructions"] == ["keep the API"]
    assert "<system-reminder" not in bodies[0]  # nor any inserted message in the span it is sent
    assert state.summary is not None and state.summary.user_goal.startswith("Fix the off-by-one")
    assert not any(UNVERIFIED_CONTEXT_MARKER in t for t in state.summary.texts())


def _files(workspace: Path) -> None:
    (workspace / "src").mkdir(exist_ok=True)
    for i in range(12):
        (workspace / "src" / f"pager{i}.py").write_text(
            "\n".join(
                f"def page_{i}_{k}(items, size):  # returns items[{k * 25}:{k * 25 + 25}]" for k in range(60)
            )
        )


def test_a_block_copies_the_goal_only_where_the_view_lacks_the_users_first_message() -> None:
    from myrm_tui.context.summary.fields import copies_of, extract

    words = "Fix the off-by-one in paginate() in src/pager.py.  It drops the last page " + "x " * 400
    goal = extract([], words).user_goal
    assert goal.endswith("…") and copies_of(goal, words)
    assert copies_of(extract([], "fix   the parser").user_goal, "fix the parser")
    assert not copies_of("fix the parser, then the lexer", "fix the parser")  # a goal a summarizer rewrote
    assert not copies_of(goal, "")  # the view lacks it (a session opened by a reminder): the block says it


async def test_the_agent_keeps_the_users_goal_through_automatic_compactions(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    """The session of issue 31: the environment reminder comes first, the user asks to fix paginate(),
    the turn compacts several times (20 reads compact four times; 36 did eight, at twice the CPU). The
    stored summary, the summary blocks of every request the model got and every "previous summary" a lite
    summarizer got name the user's goal, never the reminder."""
    _files(workspace)
    steps = {"n": 0}

    def reply(body: dict[str, Any]) -> Reply:
        text = str(body.get("messages"))
        if "Messages to summarize" in text:  # the lite summarizer: a model that knows no goal
            return Reply(text=json.dumps(Summary(current_state="reading the pager modules").to_json()))
        steps["n"] += 1
        if steps["n"] <= 20:
            return Reply(tool_calls=[("bash", {"command": f"cat src/pager{steps['n'] % 12}.py"})])
        return Reply(text="Fixed.")

    emulator.default = reply  # type: ignore[assignment]
    settings = openai_settings(emulator, summarizer_model="openai/gpt-4.1-nano", max_steps=50)
    agent = await make_agent(store, workspace, settings, window=16_000)
    events = await collect(agent, GOAL)
    assert isinstance(events[-1], TurnDone)
    await agent.session.preparer.wait()
    assert agent.session.state.compactions >= 2
    assert agent.session.state.summary is not None and agent.session.state.summary.user_goal.startswith(
        GOAL[:60]
    )
    saved = await store.load_state(agent.session_id)
    assert saved is not None and json.loads(saved)["summary"]["user_goal"].startswith(GOAL[:60])
    main = [r.body for r in emulator.accepted if "Messages to summarize" not in str(r.body.get("messages"))]
    compacted = [b for b in main if any("<compacted_summary" in str(m.get("content")) for m in b["messages"])]
    # Every request after a compaction has the user's goal in the user's own message (the protected head);
    # a block does not copy it again, and no block names the reminder as the goal.
    assert compacted and all(
        any(m["role"] == "user" and str(m.get("content")).startswith(GOAL[:60]) for m in b["messages"])
        for b in compacted
    )
    blocks = [str(m.get("content")) for b in compacted for m in b["messages"] if m["role"] == "assistant"]
    assert not any("## User goal" in t for t in blocks if "<compacted_summary" in t)
    previous = [
        str(m["content"]).split("Previous summary (merge into it):\n", 1)[1].split("\n\nMessages", 1)[0]
        for r in emulator.accepted
        for m in r.body.get("messages", [])
        if "Previous summary (merge into it)" in str(m.get("content"))
    ]
    assert previous and all(
        "system-reminder" not in p and UNVERIFIED_CONTEXT_MARKER not in p for p in previous
    )


@pytest.mark.parametrize("window", [2_000, 4_000, 16_000])
async def test_the_goal_is_in_every_compacted_request_in_the_head_or_in_the_block(window: int) -> None:
    """HeadAnchor may cut a long first message; where the cut left the goal out, the block says it."""
    from myrm_tui.context.summary.fields import extract
    from tests.helpers import conversation, run_pipeline

    task = "Port the billing service to the new queue. " + " ".join(
        f"Requirement {i}: invoices of kind {i} settle within {i + 3} days." for i in range(120)
    )
    raw = conversation(12, output_chars=1500)
    raw[1] = Message(role="user", content=task, id=raw[1].id)
    view, _ = await run_pipeline(raw, window=window, force_compaction=True)
    block = next(m.text for m in view if m.meta.get("kind") == "summary")
    goal = extract([], task).user_goal.rstrip("…")
    head = " ".join(next(m.text for m in view if m.role == "user" and not m.synthetic).split())
    said_in_block = "## User goal" in block
    assert said_in_block == (goal not in head)
    assert goal in head or goal in " ".join(block.split())
