"""The approvals of one reply are asked in its calls' order, and an "always" answers the calls still waiting.

Found by the coordinator: a reply with an edit of hello.py then a create of new.py asked about new.py first
(the calls run in parallel; the edit reads its file before asking), and "always" on the first edit still
left the second one's question, already waiting behind the approver's lock. Every test drives the real
agent loop through litellm to the provider emulator, with a scripted approver that records the questions.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from myrm_tui.agent.api import Sessions
from myrm_tui.agent.events import AssistantSaved, ToolFinished
from myrm_tui.agent.factory import serialized
from myrm_tui.agent.grants import SessionGrants
from myrm_tui.agent.permissions import Assessment
from myrm_tui.agent.repeat_guard import REPEAT_TOOL, RepeatGuard
from myrm_tui.store.db import Store
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.helpers import collect, make_agent, openai_settings

EDIT_HELLO = ("file_edit_tool", {"path": "hello.py", "old_string": "'hello'", "new_string": "'hi'"})
CREATE_NEW = ("file_edit_tool", {"path": "new.py", "new_string": "x = 1\n", "create": True})


class Answers:
    """An approver answering from a list (then "no"), recording each question as a short label: the
    command of a shell call, ``edit <path>`` of a file call."""

    def __init__(self, answers: list[str]) -> None:
        self.answers = list(answers)
        self.asked: list[str] = []

    async def __call__(self, tool: str, command: str, assessment: Assessment) -> str:
        self.asked.append(command if tool == "bash" else assessment.command)
        await asyncio.sleep(0)  # let the other calls of the reply run meanwhile (they reach the lock)
        return self.answers.pop(0) if self.answers else "no"


async def _turn(
    emulator: ProviderEmulator, store: Store, workspace: Path, calls: list[Any], answers: list[str]
) -> Answers:
    emulator.enqueue(Reply(tool_calls=calls), Reply(text="Done."))
    approver = Answers(answers)
    # repeat_limit 0: identical calls in a reply are this test's subject, not the repeat guard's
    agent = await make_agent(
        store, workspace, openai_settings(emulator, approval="ask", repeat_limit=0), approver=approver
    )
    await collect(agent, "change the files")
    assert emulator.rejected == []
    return approver


async def test_an_edit_then_a_create_are_asked_in_that_order_and_always_answers_both(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    approver = await _turn(emulator, store, workspace, [EDIT_HELLO, CREATE_NEW], ["always"])
    assert approver.asked == ["edit hello.py"]  # the first call's question, and no second one
    assert (workspace / "hello.py").read_text() == "def greet():\n    return 'hi'\n"
    assert (workspace / "new.py").read_text() == "x = 1\n"


async def test_yes_to_the_first_still_asks_about_the_second_in_order(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    approver = await _turn(emulator, store, workspace, [EDIT_HELLO, CREATE_NEW], ["yes", "no"])
    assert approver.asked == ["edit hello.py", "edit new.py"]
    assert "'hi'" in (workspace / "hello.py").read_text() and not (workspace / "new.py").exists()


async def test_always_for_a_command_answers_the_same_command_still_waiting(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    calls = [("bash", {"command": "printf one"}), ("bash", {"command": "printf two"})] * 2
    approver = await _turn(emulator, store, workspace, calls, ["always", "always"])
    assert approver.asked == ["printf one", "printf two"]


# -- the rule over generated replies ---------------------------------------------------------------------

_CALL = st.one_of(
    st.just(("glob",)),  # needs no approval
    st.tuples(st.just("edit")),  # a new file each: asked unless edits are allowed
    st.tuples(st.just("cmd"), st.sampled_from(["a", "b"])),  # ``printf a``: asked unless "always" for it
)
_ANSWER = st.sampled_from(["yes", "no", "always"])


def _expected(calls: list[tuple[str, ...]], answers: list[str]) -> list[str]:
    """A plain reading: each call's question in order, unless an earlier "always" covers it."""
    edits, commands, asked, left = False, set(), [], list(answers)
    for k, call in enumerate(calls):
        if call[0] == "glob" or (call[0] == "edit" and edits) or (call[0] == "cmd" and call[1] in commands):
            continue
        asked.append(f"edit f{k}.txt" if call[0] == "edit" else f"printf {call[1]}")
        answer = left.pop(0) if left else "no"
        if answer == "always" and call[0] == "edit":
            edits = True
        elif answer == "always":
            commands.add(call[1])
    return asked


async def _run_reply(
    emulator: ProviderEmulator, tmp_path: Path, calls: list[tuple[str, ...]], answers: list[str]
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    emulator.script.clear()
    emulator.requests.clear()
    sent = [
        ("glob", {"pattern": "*.txt"})
        if c[0] == "glob"
        else ("file_edit_tool", {"path": f"f{k}.txt", "new_string": "x\n", "create": True})
        if c[0] == "edit"
        else ("bash", {"command": f"printf {c[1]}"})
        for k, c in enumerate(calls)
    ]
    store = await Store.open(tmp_path / "p.db")
    try:
        approver = await _turn(emulator, store, workspace, sent, answers)
        assert approver.asked == _expected(calls, answers)
    finally:
        await store.close()


@settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=12)
@example(calls=[("edit",), ("edit",), ("cmd", "a"), ("cmd", "a")], answers=["always", "always"])
@example(calls=[("glob",), ("cmd", "a"), ("edit",), ("cmd", "b"), ("edit",), ("cmd", "a")], answers=["yes"])
@given(calls=st.lists(_CALL, min_size=1, max_size=6), answers=st.lists(_ANSWER, max_size=6))
def test_a_replys_questions_come_in_call_order_and_none_that_an_always_covers(
    calls: list[tuple[str, ...]], answers: list[str], emulator: ProviderEmulator, tmp_path_factory: Any
) -> None:
    asyncio.run(_run_reply(emulator, tmp_path_factory.mktemp("reply"), calls, answers))


async def test_a_command_that_runs_unasked_does_not_hold_back_a_later_calls_question(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    """Only the questions wait on each other: the first call, allowed, reads a FIFO that only the second
    call's question writes to, so the turn can end only if that question is asked while the first runs."""
    fifo = workspace / "go.fifo"
    os.mkfifo(fifo)

    def release() -> None:
        with fifo.open("w") as f:  # blocks until the running ``cat`` opens it
            f.write("released\n")

    class Releasing(Answers):
        async def __call__(self, tool: str, command: str, assessment: Assessment) -> str:
            await asyncio.to_thread(release)
            return await super().__call__(tool, command, assessment)

    emulator.enqueue(
        Reply(tool_calls=[("bash", {"command": "cat go.fifo"}), CREATE_NEW]), Reply(text="Done.")
    )
    approver = Releasing(["yes"])
    settings_ = openai_settings(emulator, approval="ask", allowed_commands=["cat go.fifo"])
    agent = await make_agent(store, workspace, settings_, approver=approver)
    # a bound for a failure (the turn would never end), not a speed target
    events = await asyncio.wait_for(collect(agent, "go"), 120)
    assert approver.asked == ["edit new.py"]
    assert any("released" in e.message.text for e in events if isinstance(e, ToolFinished))


async def test_always_for_repeats_answers_a_repeat_question_still_waiting() -> None:
    """Parallel subagents share the session's grants and the approver's lock: a repeat question waiting
    while another agent's got "always" is not asked (each answer recorded as the turn does)."""
    grants = SessionGrants()
    guard = RepeatGuard(3, grants)
    user = Answers(["always", "no"])
    ask = serialized(user, grants)

    async def one(label: str) -> str:
        answer = await ask(REPEAT_TOOL, label, Assessment(label, ()))
        if answer in ("yes", "always"):
            guard.answered(answer, ())
        return answer

    assert await asyncio.gather(one("glob a"), one("glob b")) == ["always", "yes"]
    assert user.asked == ["glob a"]


# -- the rule over turns and rebuilds: asked iff no earlier answer covers it, each result its call's -------

# A turn: its reply's calls (as ``_CALL``) and whether a settings change rebuilds the agent before it.
_TURN = st.tuples(st.lists(_CALL, min_size=1, max_size=4), st.booleans())


def _sent(t: int, calls: list[tuple[str, ...]]) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("glob", {"pattern": "*.txt"})
        if c[0] == "glob"
        else ("file_edit_tool", {"path": f"t{t}f{k}.txt", "new_string": f"{t}.{k}\n", "create": True})
        if c[0] == "edit"
        else ("bash", {"command": f"printf {c[1]}"})
        for k, c in enumerate(calls)
    ]


async def _run_turns(
    emulator: ProviderEmulator,
    tmp_path: Path,
    turns: list[tuple[list[tuple[str, ...]], bool]],
    answers: list[str],
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    emulator.script.clear()
    emulator.requests.clear()
    store = await Store.open(tmp_path / "p.db")
    approver = Answers(answers)
    door = Sessions(store, workspace, approver)
    # repeat_limit 0: identical calls are the repeat guard's subject (test_repeat_guard), not this one's
    quiet = {"approval": "ask", "repeat_limit": 0, "preheat": False, "keepalive": False}
    chat = await door.start(openai_settings(emulator, **quiet))
    edits, left, expected = False, list(answers), []  # what earlier answers cover: edits, commands
    commands: set[str] = set()
    try:
        for t, (calls, rebuild) in enumerate(turns):
            if rebuild:  # a settings change: a new agent, the session's grants kept
                await chat.ready(openai_settings(emulator, **quiet, max_steps=30 + t))
            sent = _sent(t, calls)
            emulator.enqueue(Reply(tool_calls=sent), Reply(text="Done."))
            events = [ev async for ev in chat.send(f"turn {t}")]
            reply = next(e.message for e in events if isinstance(e, AssistantSaved) and e.message.tool_calls)
            results = {e.call.id: e.message for e in events if isinstance(e, ToolFinished)}
            assert len(results) == len(sent) == len(reply.tool_calls)  # each call one result
            for k, (c, call) in enumerate(zip(calls, reply.tool_calls, strict=True)):
                name, args = sent[k]
                covered = c[0] == "glob" or (c[0] == "edit" and edits) or (c[0] == "cmd" and c[1] in commands)
                answer = "yes" if covered else (left.pop(0) if left else "no")
                if not covered:
                    expected.append(f"edit t{t}f{k}.txt" if c[0] == "edit" else f"printf {c[1]}")
                if answer == "always":
                    edits, commands = edits or c[0] == "edit", commands | ({c[1]} if c[0] == "cmd" else set())
                assert (call.name, call.parsed_arguments()) == (name, args)
                assert results[call.id].tool_call_id == call.id
                text = results[call.id].text
                if c[0] == "edit":  # its own file, written or declined as answered
                    ran = answer != "no"
                    assert (workspace / args["path"]).exists() == ran, (args, text)
                    assert text.startswith(f"created {args['path']}" if ran else "The user declined"), text
                elif c[0] == "cmd":  # its own output, or declined as answered
                    said = f"<returncode>0</returncode>\n<output>\n{c[1]}</output>"
                    assert text == (said if answer != "no" else "The user declined to run this command."), (
                        text
                    )
            assert approver.asked == expected, (approver.asked, expected)
            assert emulator.rejected == []
    finally:
        await chat.close()
        await store.close()


# Each example runs its approved commands (a bash process each): 5 in make test, 30 in the long twin.
@settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=5)
@example(  # always for a command and for edits, then a rebuild: neither is asked again
    turns=[([("cmd", "a"), ("edit",)], False), ([("edit",), ("cmd", "a"), ("cmd", "b")], True)],
    answers=["always", "always", "no"],
)
@example(turns=[([("edit",), ("cmd", "a"), ("edit",), ("glob",)], False)], answers=["yes", "no", "yes"])
@given(turns=st.lists(_TURN, min_size=1, max_size=3), answers=st.lists(_ANSWER, max_size=8))
def test_a_call_is_asked_iff_no_earlier_answer_covers_it_across_turns_and_rebuilds(
    turns: list[tuple[list[tuple[str, ...]], bool]],
    answers: list[str],
    emulator: ProviderEmulator,
    tmp_path_factory: Any,
) -> None:
    """For any replies over turns, mixing calls that need approval (a new file, a command) and calls that
    do not, any answers (yes, always, no), and settings changes that rebuild the agent between turns: the
    questions come in call order, a call is asked about iff no earlier "always" covers it (a rebuild keeps
    them), and each call's result is its own (its file written, its command's output, or declined)."""
    asyncio.run(_run_turns(emulator, tmp_path_factory.mktemp("turns"), turns, answers))


@pytest.mark.long
@settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=30)
@given(turns=st.lists(_TURN, min_size=1, max_size=4), answers=st.lists(_ANSWER, max_size=10))
def test_long_a_call_is_asked_iff_no_earlier_answer_covers_it_across_turns_and_rebuilds(
    turns: list[tuple[list[tuple[str, ...]], bool]],
    answers: list[str],
    emulator: ProviderEmulator,
    tmp_path_factory: Any,
) -> None:
    asyncio.run(_run_turns(emulator, tmp_path_factory.mktemp("turns"), turns, answers))
