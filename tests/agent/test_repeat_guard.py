"""A model that asks for the same tool call again and again (a "doom loop") is noticed at ``repeat_limit``.

Found (model4): only ``max_steps`` stopped such a turn, after 40 identical calls and 40 paid requests.
Every test drives the real agent loop through litellm to the provider emulator, whose default reply
repeats one call for ever.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from myrm_tui.agent.api import Sessions
from myrm_tui.agent.events import Notice, ToolFinished, TurnDone
from myrm_tui.agent.grants import SessionGrants
from myrm_tui.agent.permissions import Assessment
from myrm_tui.agent.repeat_guard import REPEAT_TOOL, RepeatGuard, signature
from myrm_tui.context.types import ToolCall
from myrm_tui.store.db import Store
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.helpers import cli_env, collect, emulator_args, make_agent, openai_settings, run_myrm

STUCK = Reply(tool_calls=[("glob", {"pattern": "*.txt"})])
MD = Reply(tool_calls=[("glob", {"pattern": "*.md"})])


class Asked:
    """An approver answering from a list (then its last answer), recording each question."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.questions: list[tuple[str, str, Assessment]] = []

    async def __call__(self, tool: str, command: str, assessment: Assessment) -> str:
        self.questions.append((tool, command, assessment))
        return self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]


def _ran(events: list[Any]) -> list[str]:
    return [e.message.text for e in events if isinstance(e, ToolFinished)]


async def test_with_no_one_to_ask_the_model_is_told_at_the_third_and_stopped_at_the_fourth(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("x")
    emulator.default = STUCK
    agent = await make_agent(store, workspace, openai_settings(emulator))
    events = await collect(agent, "find the text files")
    results = _ran(events)
    assert len(results) == 4 and results[0] == results[1] and "a.txt" in results[0]
    assert results[2].startswith("Error: not run. This is the same call")  # told, not run
    assert "Asked for again, the turn stops." in results[2]
    assert results[3].startswith("Error: not run.") and results[3] != results[2]  # stopped
    assert len(emulator.requests) == 4  # not 40
    told = emulator.accepted[3].body["messages"][-1]  # what the model read before its fourth request
    assert told["role"] == "tool" and "looks like a loop" in str(told["content"])
    notices = [e.text for e in events if isinstance(e, Notice)]
    assert any(n.startswith("The model asked for the same call 3 times in a row") for n in notices)
    assert any(
        n.startswith("Stopped: the model asked for the same call 3 times in a row again after it was told")
        for n in notices
    )
    assert isinstance(events[-1], TurnDone)
    emulator.default = Reply(text="ok")  # the next turn's request is one a provider takes
    await collect(agent, "go on")
    assert emulator.rejected == []
    tool_results = [m for m in emulator.accepted[-1].body["messages"] if m["role"] == "tool"]
    assert len(tool_results) == 4


async def test_with_no_one_to_ask_a_model_told_of_its_loop_may_check_another_way(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    """A legitimate wait (polling until something is ready) is not ended: told once, the model changes
    how it checks, and the turn goes on to its answer."""
    (workspace / "a.txt").write_text("x")
    emulator.script.extend([STUCK, STUCK, STUCK])
    emulator.enqueue(Reply(tool_calls=[("glob", {"pattern": "*.md"})]))
    emulator.enqueue(Reply(text="There is one text file."))
    agent = await make_agent(store, workspace, openai_settings(emulator))
    events = await collect(agent, "find the text files")
    results = _ran(events)
    assert len(results) == 4 and results[2].startswith("Error: not run. This is the same call")
    assert not results[3].startswith("Error")  # the changed call ran
    assert not any(e.text.startswith("Stopped") for e in events if isinstance(e, Notice))
    assert isinstance(events[-1], TurnDone) and len(emulator.requests) == 5


async def test_the_user_is_asked_and_yes_covers_the_run_it_answered(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    """One "yes" lets the repeated call go on for as long as the model keeps asking for it (it asked again
    two calls later, round 21); another call ends that run, and a new run of repeats is asked about."""
    (workspace / "a.txt").write_text("x")
    emulator.enqueue(*[STUCK] * 6, MD, *[STUCK] * 3)
    asked = Asked("yes", "no")
    agent = await make_agent(store, workspace, openai_settings(emulator, max_steps=40), approver=asked)
    events = await collect(agent, "find the text files")
    assert [q[0] for q in asked.questions] == [REPEAT_TOOL] * 2  # at the 3rd call, and the new run's 3rd
    assert asked.questions[0][1] == 'glob {"pattern": "*.txt"}'
    assert "3 times in a row" in asked.questions[0][2].reasons[0]
    results = _ran(events)
    assert len(results) == 10 and all(not r.startswith("Error") for r in results[:9])
    assert results[9].startswith("Error: not run.")
    assert len(emulator.requests) == 10


async def test_one_question_covers_identical_calls_in_one_reply(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    """A reply holding the same call four times (none run yet) is one question that says so; its yes lets
    all four run and the same call in the next reply is the same run."""
    (workspace / "a.txt").write_text("x")
    glob = ("glob", {"pattern": "*.txt"})
    emulator.enqueue(Reply(tool_calls=[glob] * 4), STUCK, Reply(text="One text file."))
    asked = Asked("yes")
    agent = await make_agent(store, workspace, openai_settings(emulator), approver=asked)
    events = await collect(agent, "find the text files")
    assert len(asked.questions) == 1
    reason = asked.questions[0][2].reasons[0]
    assert "4 times in a row, 4 of them in this one reply (none of those has run yet)" in reason, reason
    assert "the ones that ran" not in reason  # none had
    results = _ran(events)
    assert len(results) == 5 and all("a.txt" in r for r in results)
    assert emulator.rejected == [] and len(emulator.requests) == 3


async def test_one_question_names_every_repeated_call_of_a_reply(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    glob, grep = ("glob", {"pattern": "*.txt"}), ("grep", {"pattern": "x"})
    emulator.enqueue(Reply(tool_calls=[glob] * 3 + [grep] * 3), Reply(text="Done."))
    asked = Asked("no")
    agent = await make_agent(store, workspace, openai_settings(emulator), approver=asked)
    events = await collect(agent, "look")
    assert len(asked.questions) == 1
    assert asked.questions[0][1] == 'glob {"pattern": "*.txt"}\ngrep {"pattern": "x"}'
    assert len(asked.questions[0][2].reasons) == 2
    assert [r.startswith("Error: not run.") for r in _ran(events)] == [True] * 6


async def test_always_stops_the_questions_for_the_session(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    """Unlike "yes", "always" holds past another call and into the next turn."""
    emulator.enqueue(*[STUCK] * 4, MD, *[STUCK] * 3, Reply(text="Done."), *[STUCK] * 3, Reply(text="Done."))
    asked = Asked("always")
    agent = await make_agent(store, workspace, openai_settings(emulator), approver=asked)
    events = await collect(agent, "find the text files")
    events += await collect(agent, "again")
    assert len(asked.questions) == 1
    assert len(_ran(events)) == 11 and not any(r.startswith("Error") for r in _ran(events))


async def test_always_outlives_the_agent_rebuilt_after_a_settings_change(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    """A settings change rebuilds the session's agent: the user who said "always" (to a loop, to a
    command) is not asked again (round 21: the new agent had forgotten both)."""
    emulator.enqueue(Reply(tool_calls=[("bash", {"command": "touch made.txt"})]), *[STUCK] * 3)
    emulator.enqueue(Reply(text="Done."))
    emulator.enqueue(Reply(tool_calls=[("bash", {"command": "touch made.txt"})]), *[STUCK] * 3)
    emulator.enqueue(Reply(text="Done."))
    asked = Asked("always")
    door = Sessions(store, workspace, asked)
    chat = await door.start(openai_settings(emulator, approval="ask"))
    try:
        first = [ev async for ev in chat.send("find the text files")]
        assert [q[0] for q in asked.questions] == ["bash", REPEAT_TOOL]
        await chat.ready(openai_settings(emulator, approval="ask", max_steps=39))
        assert chat.cache.rebuilds == 1
        second = [ev async for ev in chat.send("again")]
    finally:
        await chat.close()
    assert len(asked.questions) == 2, asked.questions[2:]
    assert not any(r.startswith("Error") for r in _ran(first + second))


async def test_a_poll_whose_result_changes_is_not_a_loop(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    """Same call, a different answer each time (a build's output growing): progress, never asked about."""
    emulator.default = Reply(tool_calls=[("bash", {"command": "date +%s%N"})])
    asked = Asked("no")
    agent = await make_agent(store, workspace, openai_settings(emulator, max_steps=5), approver=asked)
    events = await collect(agent, "watch the clock")
    assert asked.questions == []
    results = _ran(events)
    assert len(results) == 5 and len(set(results)) == 5


async def test_repeat_limit_0_switches_the_check_off(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    emulator.default = STUCK
    agent = await make_agent(store, workspace, openai_settings(emulator, max_steps=5, repeat_limit=0))
    events = await collect(agent, "find the text files")
    assert len(_ran(events)) == 5 and not any(r.startswith("Error") for r in _ran(events))


def test_ask_ends_a_loop_with_one_line_and_no_false_hint(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    emulator.default = STUCK
    proc = run_myrm(
        ["ask", "find the text files", *emulator_args(emulator, workspace)], env=cli_env(tmp_path)
    )
    # the work was not done: a script's `myrm ask --yes … && git commit` must not go on (it exited 0, review5)
    assert proc.returncode == 1, proc.stderr
    assert "[warning] The model asked for the same call 3 times in a row" in proc.stderr, proc.stderr  # told
    assert "[warning] Stopped: the model asked for the same call 3 times in a row again" in proc.stderr
    assert "declined, non-interactive" not in proc.stderr  # --yes would not change it: not suggested
    assert len(emulator.requests) == 4


def test_ask_stream_json_reports_a_loop_stopped_turn_as_an_error(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    emulator.default = STUCK
    args = ["ask", "--yes", "--output-format", "stream-json", "find the text files"]
    proc = run_myrm([*args, *emulator_args(emulator, workspace)], env=cli_env(tmp_path))
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert proc.returncode == 1, proc.stderr
    assert [e["status"] for e in lines if e["type"] == "result"] == ["error"]
    assert any(e["type"] == "notice" and e["text"].startswith("Stopped: the model") for e in lines)


# -- the rule itself, over generated call sequences ------------------------------------------------------

_ARGS = st.sampled_from(
    ['{"a": 1, "b": 2}', '{"b": 2, "a": 1}', '{"a":1,"b":2}', '{"a": 3}', "[1]", "not json"]
)
_CALLS = st.tuples(st.sampled_from(["glob", "grep"]), _ARGS, st.sampled_from(["r1", "r2"]), st.booleans())
_ANSWERS = st.sampled_from(["yes", "no", "always"])


@given(st.lists(_CALLS, max_size=40), st.integers(min_value=0, max_value=5))
@example(
    seq=[("glob", "[1]", "r1", True)] * 4 + [("grep", "[1]", "r1", True)] + [("glob", "[1]", "r1", True)] * 3,
    limit=3,
)
def test_the_guard_asks_exactly_at_the_limitth_identical_call_with_identical_results(
    seq: list[tuple[str, str, str, bool]], limit: int
) -> None:
    """One call a reply; each question is answered (yes or no) and the call then runs either way, so the
    rule is checked at every point of the sequence against a plain reading of it: asked iff the last
    ``limit - 1`` runs are this call (compared as JSON values) with one result, unless a "yes" was given
    to this call and no other call has run since."""
    guard = RepeatGuard(limit)
    runs: list[tuple[tuple[str, str], str]] = []
    approved: tuple[str, str] | None = None  # the call a "yes" answered, while no other call has run
    for k, (name, args, result, yes) in enumerate(seq):
        call = ToolCall(f"c{k}", name, args)
        sig = signature(call)
        if runs and runs[-1][0] != sig:
            approved = None
        tail = runs[-(limit - 1) :] if limit > 1 else []
        expected = (
            limit > 0
            and approved != sig
            and len(tail) == limit - 1
            and all(s == sig for s, _ in tail)
            and len({r for _, r in tail}) <= 1
        )
        asked = guard.repeated((call,))
        assert bool(asked) == expected
        if expected:
            assert [r.call for r in asked] == [call]
            if yes:
                guard.answered("yes", asked)
                approved = sig
        guard.ran(call, result)
        runs.append((sig, result))


# A step: a call (as ``_CALLS``, its answer if asked: yes, no or always), or a new turn, or a rebuild of the
# agent between turns (a new guard holding the session's grants).
_GUARD_STEP = st.one_of(
    st.tuples(st.sampled_from(["glob", "grep"]), _ARGS, st.sampled_from(["r1", "r2"]), _ANSWERS),
    st.tuples(st.sampled_from(["turn", "rebuild"])),
)


@given(st.lists(_GUARD_STEP, max_size=40), st.integers(min_value=0, max_value=4))
@example(
    steps=[("glob", "[1]", "r1", "always")] * 3 + [("rebuild",)] + [("glob", "[1]", "r1", "no")] * 4,
    limit=3,
)
def test_a_repeat_is_asked_about_iff_no_earlier_answer_covers_it_across_turns_and_rebuilds(
    steps: list[tuple[str, ...]], limit: int
) -> None:
    """Over turns and rebuilds, with any answers: the ``limit``-th identical call in a row (identical
    results) is asked about unless "yes" answered this run (no other call ran since) or "always" was
    answered before in the session, which a rebuilt agent's new guard still holds."""
    grants = SessionGrants()
    guard = RepeatGuard(limit, grants)
    runs: list[tuple[tuple[str, str], str]] = []  # this turn's runs
    approved: tuple[str, str] | None = None
    always = False
    for k, step in enumerate(steps):
        if step[0] in ("turn", "rebuild"):
            if step[0] == "rebuild":
                guard = RepeatGuard(limit, grants)  # what a settings change builds: the session's grants
            guard.reset()  # the user spoke: a new turn
            runs, approved = [], None
            continue
        name, args, result, answer = step
        call = ToolCall(f"c{k}", name, args)
        sig = signature(call)
        if runs and runs[-1][0] != sig:
            approved = None
        tail = runs[-(limit - 1) :] if limit > 1 else []
        expected = (
            limit > 0
            and not always
            and approved != sig
            and len(tail) == limit - 1
            and all(s == sig for s, _ in tail)
            and len({r for _, r in tail}) <= 1
        )
        asked = guard.repeated((call,))
        assert bool(asked) == expected, (k, step)
        if asked and answer != "no":
            guard.answered(answer, asked)
            approved, always = sig, always or answer == "always"
        guard.ran(call, result)
        runs.append((sig, result))


@given(st.dictionaries(st.text(max_size=5), st.integers() | st.text(max_size=5), max_size=6), st.randoms())
def test_key_order_and_spacing_do_not_make_calls_different(args: dict[str, Any], rnd: Any) -> None:
    items = list(args.items())
    rnd.shuffle(items)
    assert signature(ToolCall("a", "t", json.dumps(args))) == signature(
        ToolCall("b", "t", json.dumps(dict(items), indent=2))
    )


# -- the rule through the agent loop, over generated call sequences --------------------------------------

_STEP = st.sampled_from(
    [("glob", {"pattern": "*.txt"}), ("glob", {"pattern": "*.md"}), ("grep", {"pattern": "x"})]
)


async def _run_sequence(emulator: ProviderEmulator, tmp_path: Path, seq: list[tuple[str, Any]]) -> None:
    tmp_path.mkdir(parents=True, exist_ok=True)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "a.txt").write_text("x")
    emulator.script.clear()
    emulator.requests.clear()
    emulator.enqueue(*[Reply(tool_calls=[step]) for step in seq], Reply(text="Done."))
    store = await Store.open(tmp_path / "p.db")
    try:
        asked = Asked("no")
        agent = await make_agent(store, workspace, openai_settings(emulator), approver=asked)
        events = await collect(agent, "work")
        # a plain reading: the first call that is the third of identical calls in a row (the workspace does
        # not change, so identical calls return identical results) is asked about and ends the turn
        stop = next((k for k in range(2, len(seq)) if seq[k] == seq[k - 1] == seq[k - 2]), None)
        results = _ran(events)
        if stop is None:
            assert asked.questions == [] and len(results) == len(seq)
            assert all(not r.startswith("Error") for r in results)
        else:
            assert len(asked.questions) == 1 and len(results) == stop + 1
            assert results[stop].startswith("Error: not run.")
            assert all(not r.startswith("Error") for r in results[:stop])
        assert emulator.rejected == []
    finally:
        await store.close()


@settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=8)
@example(seq=[("grep", {"pattern": "x"}), *[("glob", {"pattern": "*.txt"})] * 3, ("grep", {"pattern": "x"})])
@example(seq=[("glob", {"pattern": "*.txt"}), ("grep", {"pattern": "x"})] * 3)
@given(seq=st.lists(_STEP, min_size=1, max_size=7))
def test_generated_call_sequences_through_the_agent_stop_exactly_at_the_third_identical_call(
    seq: list[tuple[str, Any]], emulator: ProviderEmulator, tmp_path_factory: Any
) -> None:
    asyncio.run(_run_sequence(emulator, tmp_path_factory.mktemp("seq"), seq))


async def test_polling_a_background_job_that_still_runs_is_waiting_not_a_loop(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    """``bash_output`` on a job that still runs returns the same empty read until the job writes or ends:
    time passes between the polls, so ``myrm ask --yes "run the build in the background and report"``
    must not end its turn at the third poll as a loop (found in review5: it did, after two quiet reads)."""
    emulator.enqueue(Reply(tool_calls=[("bash", {"command": "sleep 60", "run_in_background": True})]))
    emulator.default = Reply(tool_calls=[("bash_output", {"job_id": "job-1"})])
    agent = await make_agent(store, workspace, openai_settings(emulator, max_steps=6))
    try:
        events = await collect(agent, "start the build and wait for it")
    finally:
        await agent.close()
    results = _ran(events)
    assert len(results) == 6
    assert all(r.startswith('<job id="job-1" status="running">') for r in results[1:])
    notices = [e.text for e in events if isinstance(e, Notice)]
    assert not any(n.startswith("Stopped: the model asked") for n in notices)
    assert any("step limit" in n for n in notices)
