"""``/undo`` below the TUI: the real file tool writes real files in a tmp workspace (the model's calls come
through the provider emulator), its backups go to the real store, and undo restores them turn by turn."""

from __future__ import annotations

import asyncio
import contextlib
import json
import tempfile
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from myrm_tui.agent import undo
from myrm_tui.agent.agent import Agent
from myrm_tui.agent.events import TurnFailed
from myrm_tui.agent.factory import build_agent
from myrm_tui.context.types import Message, ToolCall
from myrm_tui.store.db import SessionRow, Store
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.helpers import anthropic_settings, collect, make_agent, openai_settings

ORIGINAL = "def greet():\n    return 'hello'\n"


def edit(path: str, old: str, new: str) -> tuple[str, dict[str, Any]]:
    return ("file_edit_tool", {"path": path, "old_string": old, "new_string": new})


def create(path: str, text: str) -> tuple[str, dict[str, Any]]:
    return ("file_edit_tool", {"path": path, "new_string": text, "create": True})


async def two_turns(emulator: ProviderEmulator, store: Store, workspace: Path) -> Agent:
    """Turn 1 edits hello.py and creates new.py; turn 2 edits hello.py again. Both through the model."""
    emulator.enqueue(
        Reply(tool_calls=[edit("hello.py", "'hello'", "'hi'"), create("new.py", "x = 1\n")]),
        Reply(text="Done one."),
        Reply(tool_calls=[edit("hello.py", "'hi'", "'hey'")]),
        Reply(text="Done two."),
    )
    agent = await make_agent(store, workspace, openai_settings(emulator))
    await collect(agent, "first change")
    await collect(agent, "second change")
    assert (workspace / "hello.py").read_text() == "def greet():\n    return 'hey'\n"
    return agent


async def test_undo_goes_back_one_turn_at_a_time_and_tells_the_model(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    agent = await two_turns(emulator, store, workspace)
    files = agent.files
    assert files is not None
    plan = await files.plan()
    assert plan is not None and plan.prompt == "second change"
    assert [(f.shown, f.existed, f.changed) for f in plan.files] == [("hello.py", True, False)]
    assert "shell commands are not tracked" in plan.question().lower()
    out = await files.apply(plan, overwrite_changed=False)
    assert out.restored == ["hello.py"] and out.left == []
    assert (workspace / "hello.py").read_text() == "def greet():\n    return 'hi'\n"
    note = agent.session.history[-1]
    assert note.synthetic and "undid your file edits" in note.text and "'second change'" in note.text
    emulator.enqueue(Reply(text="Noted."))
    await collect(agent, "what is in hello.py now?")  # the next request carries the note to the model
    sent = json.dumps(emulator.requests[-1].body["messages"])
    assert "undid your file edits from the turn 'second change'" in sent

    plan = await files.plan()  # a second /undo: the turn before
    assert plan is not None and plan.prompt == "first change"
    assert {f.shown: f.existed for f in plan.files} == {"hello.py": True, "new.py": False}
    assert "new.py: will be removed (the agent created it)" in plan.question()
    await files.apply(plan, overwrite_changed=False)
    assert (workspace / "hello.py").read_text() == ORIGINAL
    assert not (workspace / "new.py").exists()  # the new file is removed
    assert await files.plan() is None


async def test_a_file_changed_since_is_named_and_left_unless_the_user_says_so(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    agent = await two_turns(emulator, store, workspace)
    assert agent.files is not None
    (workspace / "hello.py").write_text("the user's own text\n")
    plan = await agent.files.plan()
    assert plan is not None and [f.changed for f in plan.files] == [True]
    assert "hello.py: CHANGED SINCE" in plan.question()
    out = await agent.files.apply(plan, overwrite_changed=False)
    assert out.restored == [] and out.left == ["hello.py (changed since; left as it is)"]
    assert (workspace / "hello.py").read_text() == "the user's own text\n"
    assert "Not restored: hello.py" in agent.session.history[-1].text

    (workspace / "new.py").unlink()  # turn 1's new file, deleted by the user: nothing to undo for it
    plan = await agent.files.plan()
    assert plan is not None and [f.shown for f in plan.files] == ["hello.py"]
    await agent.files.apply(plan, overwrite_changed=True)  # "a": the user's text is overwritten
    assert (workspace / "hello.py").read_text() == ORIGINAL


async def test_a_file_deleted_since_is_restored(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    agent = await two_turns(emulator, store, workspace)
    assert agent.files is not None
    (workspace / "hello.py").unlink()
    plan = await agent.files.plan()
    assert plan is not None and [(f.shown, f.changed) for f in plan.files] == [("hello.py", True)]
    out = await agent.files.apply(plan, overwrite_changed=True)
    assert out.restored == ["hello.py"]
    assert (workspace / "hello.py").read_text() == "def greet():\n    return 'hi'\n"


async def test_a_folder_in_the_files_place_is_named_and_not_written_over(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    agent = await two_turns(emulator, store, workspace)
    assert agent.files is not None
    (workspace / "hello.py").unlink()
    (workspace / "hello.py").mkdir()
    plan = await agent.files.plan()
    assert plan is not None and [(f.shown, f.changed) for f in plan.files] == [("hello.py", True)]
    out = await agent.files.apply(plan, overwrite_changed=True)
    assert out.restored == [] and out.left[0].startswith("hello.py (cannot write:")
    assert (workspace / "hello.py").is_dir()


async def test_undo_state_comes_from_the_database_after_a_resume_and_a_fork_sees_its_parents(
    emulator: ProviderEmulator, store: Store, workspace: Path, tmp_path: Path
) -> None:
    agent = await two_turns(emulator, store, workspace)
    sid = agent.session_id
    assert agent.files is not None
    plan = await agent.files.plan()
    assert plan is not None
    await agent.files.apply(plan, overwrite_changed=False)
    await agent.close()
    await store.release_lease(sid)
    await store.close()

    reopened = await Store.open(tmp_path / "test.db")
    try:
        resumed = await build_agent(reopened, sid, openai_settings(emulator), workspace)
        assert resumed.files is not None
        plan = await resumed.files.plan()
        assert plan is not None and plan.prompt == "first change"  # turn 2 stays undone
        fork = await reopened.fork_session(sid)
        forked = await build_agent(reopened, fork.id, openai_settings(emulator), workspace)
        assert forked.files is not None
        fplan = await forked.files.plan()
        assert fplan is not None and (fplan.owner, fplan.prompt) == (sid, "first change")
        await forked.files.apply(fplan, overwrite_changed=False)
        assert (workspace / "hello.py").read_text() == ORIGINAL
        assert await forked.files.plan() is None
        await resumed.close()
        await forked.close()
    finally:
        await reopened.close()


async def test_a_file_over_the_kept_size_is_named_and_not_restored(
    emulator: ProviderEmulator, store: Store, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(undo, "MAX_KEPT_BYTES", 10)
    agent = await two_turns(emulator, store, workspace)
    assert agent.files is not None
    plan = await agent.files.plan()
    assert plan is not None and [(f.shown, f.kept) for f in plan.files] == [("hello.py", False)]
    assert "hello.py: cannot be restored" in plan.question()
    out = await agent.files.apply(plan, overwrite_changed=True)
    assert out.left == ["hello.py (too big to have been kept)"]
    assert (workspace / "hello.py").read_text() == "def greet():\n    return 'hey'\n"
    rows = await store.last_undoable_turn(await store.undo_lineage(agent.session_id))
    assert rows and all(r.content is None or len(r.content) <= 10 for r in rows)


async def test_a_backup_that_cannot_be_stored_refuses_the_edit(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    agent = await make_agent(store, workspace, openai_settings(emulator))
    await store.conn.execute("DROP TRIGGER file_backups_no_update")  # any statement error will do:
    await store.conn.execute("ALTER TABLE file_backups RENAME TO gone")  # the table is not there
    result = await agent.tool_runner.execute(
        ToolCall("c1", "file_edit_tool", _args("hello.py", "hello", "hi"))
    )
    assert result.is_error and "could not be kept for /undo" in result.content
    assert (workspace / "hello.py").read_text() == ORIGINAL


def _args(path: str, old: str, new: str) -> str:
    return json.dumps({"path": path, "old_string": old, "new_string": new})


# -- the property: any edits over a few files, then undo of every turn: the workspace as it started -------

NAMES = ("a.txt", "b.txt", "sub/deeper/c.txt")
START = {"a.txt": "alpha\n"}  # b.txt and sub/deeper/c.txt do not exist at the start
texts = st.text(st.sampled_from("xyz\n é"), min_size=1, max_size=12)
turns = st.lists(st.lists(st.tuples(st.sampled_from(NAMES), texts), max_size=4), min_size=1, max_size=4)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(plan=turns)
def test_undoing_every_turn_restores_the_workspace(
    emulator_server: ProviderEmulator, plan: list[list[tuple[str, str]]]
) -> None:
    asyncio.run(_edit_then_undo_all(emulator_server, plan))


@contextlib.asynccontextmanager
async def _scratch(emu: ProviderEmulator) -> AsyncIterator[tuple[Path, Store, SessionRow, Agent]]:
    """A workspace holding START, a store and a session's agent, for one generated example."""
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        ws.mkdir()
        for name, text in START.items():
            (ws / name).write_text(text)
        store = await Store.open(Path(tmp) / "p.db")
        try:
            row = await store.create_session(workspace=str(ws))
            yield ws, store, row, await build_agent(store, row.id, openai_settings(emu), ws)
        finally:
            await store.close()


def _tree(ws: Path) -> dict[str, str]:
    return {str(p.relative_to(ws)): p.read_text() if p.is_file() else "/" for p in ws.rglob("*")}


async def _edit_then_undo_all(emu: ProviderEmulator, plan: list[list[tuple[str, str]]]) -> None:
    async with _scratch(emu) as (ws, _store, _row, agent):
        now = dict(START)
        for n, ops in enumerate(plan):
            agent.session.turn = n + 1  # what a turn's user message does; the model is not needed here
            for i, (name, text) in enumerate(ops):
                args: dict[str, Any] = {"path": name, "new_string": text}
                args |= {"old_string": now[name]} if name in now else {"create": True}
                res = await agent.tool_runner.execute(
                    ToolCall(f"c{n}-{i}", "file_edit_tool", json.dumps(args))
                )
                assert not res.is_error, res.content
                now[name] = text
        assert agent.files is not None
        while (undoing := await agent.files.plan()) is not None:
            out = await agent.files.apply(undoing, overwrite_changed=False)
            assert out.left == []
        assert _tree(ws) == START  # no file, and no folder made for one, is left
        await agent.close()


async def test_a_fork_sees_its_parents_turns_up_to_the_fork_only(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    agent = await two_turns(emulator, store, workspace)
    done_one = next(m for m in agent.session.history if m.text == "Done one.")
    fork = await store.fork_session(agent.session_id, upto_seq=int(done_one.id[1:]))
    forked = await build_agent(store, fork.id, openai_settings(emulator), workspace)
    assert forked.files is not None
    plan = await forked.files.plan()  # turn 2 came after the fork point: not the fork's to undo
    assert plan is not None and plan.prompt == "first change"
    await forked.close()


async def test_a_subagents_edits_are_undone_with_the_parents_turn(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    agent = await make_agent(store, workspace, openai_settings(emulator))
    emulator.enqueue(
        Reply(tool_calls=[("subagent", {"task": "greet differently"})]),  # the parent delegates
        Reply(tool_calls=[edit("hello.py", "'hello'", "'yo'")]),  # the child edits
        Reply(text="Changed it."),  # the child's answer
        Reply(text="The subagent changed it."),  # the parent's
    )
    await collect(agent, "delegate the change")
    assert (workspace / "hello.py").read_text() == "def greet():\n    return 'yo'\n"
    assert agent.files is not None
    plan = await agent.files.plan()
    assert plan is not None and plan.prompt == "delegate the change"
    assert [f.shown for f in plan.files] == ["hello.py"]
    await agent.files.apply(plan, overwrite_changed=False)
    assert (workspace / "hello.py").read_text() == ORIGINAL


async def test_the_turn_after_an_undo_works_with_anthropic(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    """Two user-role messages in a row (the note, then the next message) are a request Anthropic takes."""
    emulator.enqueue(Reply(tool_calls=[edit("hello.py", "'hello'", "'hi'")]), Reply(text="Done."))
    agent = await make_agent(store, workspace, anthropic_settings(emulator))
    await collect(agent, "change it")
    assert agent.files is not None
    plan = await agent.files.plan()
    assert plan is not None
    await agent.files.apply(plan, overwrite_changed=False)
    emulator.enqueue(Reply(text="It says hello again."))
    events = await collect(agent, "and now?")
    assert not [e for e in events if isinstance(e, TurnFailed)]
    assert agent.session.history[-1].text == "It says hello again."
    assert "undid your file edits" in json.dumps(emulator.requests[-1].body["messages"])


# -- the session's cap on its backups (``undo_backups_mb``) -------------------------------------------------


async def test_the_setting_caps_a_sessions_backups_and_undo_names_a_dropped_turns_files(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    """Round 22 left it: a file's backup was capped at 5 MB, a session's not at all (a 4 MB file rewritten
    200 times kept 800 MB). With ``undo_backups_mb`` = 1, three turns each rewriting a 400 KB file keep
    the newest two; /undo of the oldest names the file as not restorable and changes nothing."""
    big = workspace / "big.txt"
    body = "a line of the big file, forty-nine characters\n" * 8_000 + "END\n"  # 368,004 bytes
    big.write_text(body)
    agent = await make_agent(store, workspace, openai_settings(emulator, undo_backups_mb=1))
    for n in range(3):
        emulator.enqueue(Reply(tool_calls=[edit("big.txt", "END", f"{n}\nEND")]), Reply(text=f"Done {n}."))
        await collect(agent, f"change {n}")
    sizes = await store.conn.execute_fetchall(
        "SELECT turn, dropped, bytes, content IS NULL FROM file_backups WHERE session_id = ? ORDER BY id",
        (agent.session_id,),
    )
    assert [tuple(r) for r in sizes] == [(1, 1, 368_004, 1), (2, 0, 368_006, 0), (3, 0, 368_008, 0)]
    files = agent.files
    assert files is not None
    for _ in range(2):  # the newest two: restored
        plan = await files.plan()
        assert plan is not None
        assert (await files.apply(plan, overwrite_changed=False)).restored == ["big.txt"]
    assert big.read_text() == body.replace("END", "0\nEND")
    plan = await files.plan()
    assert plan is not None and plan.prompt == "change 0"
    assert f"big.txt: cannot be restored: {undo.DROPPED}" in plan.question()
    out = await files.apply(plan, overwrite_changed=True)
    assert out.restored == [] and out.left == ["big.txt (its backup was dropped: over undo_backups_mb)"]
    assert big.read_text() == body.replace("END", "0\nEND")  # left as it is
    assert await files.plan() is None


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(plan=turns, cap=st.integers(0, 40))
# A turn that only made a file, older than one whose content goes: it goes too (it stayed, not the oldest
# kept, and /undo of it after the dropped one could not give back the workspace as it was).
@example(plan=[[("b.txt", "x")], [("a.txt", "x")], [("a.txt", "x")]], cap=1)
def test_over_the_cap_only_the_oldest_turns_are_dropped_and_every_kept_turn_undoes_exactly(
    emulator_server: ProviderEmulator, plan: list[list[tuple[str, str]]], cap: int
) -> None:
    """Any edits over a few files under any cap (bytes; 0: none): the contents kept are within the cap or
    are the newest turn's alone; the dropped turns are the oldest; /undo of each kept turn gives back the
    workspace as it was before that turn; a dropped turn's files that existed are named, not restored."""
    asyncio.run(_edit_under_a_cap(emulator_server, plan, cap))


async def _edit_under_a_cap(emu: ProviderEmulator, plan: list[list[tuple[str, str]]], cap: int) -> None:
    async with _scratch(emu) as (ws, store, row, agent):
        assert agent.files is not None
        agent.files.max_bytes = cap
        now = dict(START)
        before: dict[int, dict[str, str]] = {}
        for n, ops in enumerate(plan, start=1):
            agent.session.turn = n
            before[n] = _tree(ws)
            for i, (name, text) in enumerate(ops):
                args: dict[str, Any] = {"path": name, "new_string": text}
                args |= {"old_string": now[name]} if name in now else {"create": True}
                res = await agent.tool_runner.execute(
                    ToolCall(f"c{n}-{i}", "file_edit_tool", json.dumps(args))
                )
                assert not res.is_error, res.content
                now[name] = text
        rows = await store.conn.execute_fetchall(
            "SELECT turn, MAX(dropped), SUM(bytes) FROM file_backups WHERE session_id = ? GROUP BY turn "
            "ORDER BY MIN(id)",
            (row.id,),
        )
        kept = [b for _, d, b in rows if not d and b]  # turns whose backups hold content
        dropped = [t for t, d, _ in rows if d]
        assert [t for t, _, _ in rows][: len(dropped)] == dropped  # the oldest
        assert (cap == 0 and not dropped) or sum(kept) <= cap or len(kept) == 1
        while (undoing := await agent.files.plan()) is not None:
            out = await agent.files.apply(undoing, overwrite_changed=False)
            if undoing.turn in dropped:
                assert all(
                    f.restorable or f.shown + " (its backup" in " ".join(out.left) for f in undoing.files
                )
            else:
                assert out.left == [] and _tree(ws) == before[undoing.turn]
        await agent.close()


async def test_two_subagents_editing_one_file_at_once_are_undone_together_to_the_first_content(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    """Round 22 left it unchecked: two subagents of one reply run in parallel and edit the same file. The
    first child's reply is held until the second child has asked (both are running); each edit is kept
    as the parent's turn, so one /undo puts back the content from before the turn, not an in-between."""
    b_asked = threading.Event()

    def route(body: dict[str, Any]) -> Reply:
        msgs = body["messages"]
        users = " ".join(str(m.get("content")) for m in msgs if m.get("role") == "user")
        last = msgs[-1]["role"]
        if "rename the function" in users:  # child A
            return (
                Reply(text="Renamed.")
                if last == "tool"
                else Reply(tool_calls=[edit("hello.py", "def greet", "def greet_all")], gate=b_asked)
            )
        if "change the greeting" in users:  # child B
            b_asked.set()
            return (
                Reply(text="Changed.")
                if last == "tool"
                else Reply(tool_calls=[edit("hello.py", "'hello'", "'hi'")])
            )
        if last == "tool":
            return Reply(text="Both done.")
        return Reply(
            tool_calls=[
                ("subagent", {"task": "rename the function greet to greet_all in hello.py"}),
                ("subagent", {"task": "change the greeting in hello.py to hi"}),
            ]
        )

    emulator.default = route
    agent = await make_agent(store, workspace, openai_settings(emulator))
    await collect(agent, "two helpers at once")
    assert (workspace / "hello.py").read_text() == "def greet_all():\n    return 'hi'\n"
    assert agent.files is not None
    plan = await agent.files.plan()
    assert plan is not None and plan.prompt == "two helpers at once"
    assert [(f.shown, f.changed, f.content) for f in plan.files] == [("hello.py", False, ORIGINAL)]
    out = await agent.files.apply(plan, overwrite_changed=False)
    assert out.restored == ["hello.py"] and out.left == []
    assert (workspace / "hello.py").read_text() == ORIGINAL
    assert await agent.files.plan() is None


# -- the property: any edits across turns, the user's changes between them, /undo with y or a, a fork -------

# A step: ("turn", [(name, text)]) the agent's edits of one turn; ("user", name, text or None) the user writes
# or deletes a file between turns; ("undo", "y" or "a") /undo answered; ("fork",) the fork is taken here.
_U_TEXT = st.text(st.sampled_from("xyu\n"), min_size=1, max_size=6)
_U_STEP = st.one_of(
    st.tuples(st.just("turn"), st.lists(st.tuples(st.sampled_from(NAMES), _U_TEXT), min_size=1, max_size=3)),
    st.tuples(st.just("user"), st.sampled_from(NAMES), st.none() | _U_TEXT),
    st.tuples(st.just("undo"), st.sampled_from("ya")),
)
_U_SCRIPT = st.tuples(
    st.lists(_U_STEP, min_size=1, max_size=9),
    st.none() | st.integers(0, 9),  # where the fork is taken (None: no fork)
    st.lists(st.sampled_from("ya"), max_size=5),  # the fork's /undo answers, after the parent's script
    st.booleans(),  # the fork is made after the parent's script, at that point (/fork N), not then
)


def _disk(ws: Path) -> dict[str, str]:
    return {str(p.relative_to(ws)): p.read_text() for p in ws.rglob("*") if p.is_file()}


class _Turn:
    """A turn as the user saw it: each file's content before the agent's first write, and its last write."""

    def __init__(self, owner: str, number: int) -> None:
        self.owner, self.number = owner, number
        self.before: dict[str, str | None] = {}
        self.wrote: dict[str, str] = {}


async def _undo_once(agent: Any, ws: Path, turns: list[_Turn], answer: str) -> _Turn | None:
    """One /undo answered ``answer``: the newest turn of ``turns`` is the one planned, and each of its
    files ends as it was before that turn, or is named as not restored and left exactly as it was."""
    plan = await agent.files.plan()
    if not turns:
        assert plan is None
        return None
    turn = turns.pop()
    assert plan is not None and (plan.owner, plan.turn) == (turn.owner, turn.number)
    was = _disk(ws)
    out = await agent.files.apply(plan, overwrite_changed=answer == "a")
    now = _disk(ws)
    left = {entry.split(" (")[0] for entry in out.left}
    for name, before in turn.before.items():
        if name in left:  # named, never silently different: left as it was
            assert now.get(name) == was.get(name), name
            assert answer == "y" and was.get(name) != turn.wrote[name], name  # only a changed file is left
        else:
            assert now.get(name) == before, (name, now.get(name), before)
            # y keeps the user's own change: only a file as the agent left it (or as before) is restored
            assert answer == "a" or was.get(name) in (turn.wrote[name], before), name
    assert {n: t for n, t in now.items() if n not in turn.before} == {
        n: t for n, t in was.items() if n not in turn.before
    }  # no other file touched
    return turn


async def _undo_script(
    emu: ProviderEmulator,
    steps: list[tuple[Any, ...]],
    fork_at: int | None,
    fork_answers: list[str],
    made_later: bool = False,
) -> None:
    async with _scratch(emu) as (ws, store, row, agent):
        assert agent.files is not None
        turns: list[_Turn] = []  # the parent's turns that made edits and are not undone, oldest first
        fork_turns: list[_Turn] | None = None
        for k, step in enumerate(steps):
            if k == fork_at:
                history = agent.session.history
                upto = int(history[-1].id[1:]) if history else -1
                fork = None if made_later else await store.fork_session(row.id)
                fork_turns = list(turns)
            if step[0] == "turn":
                await agent.session.append(Message(role="user", content=f"turn {k}"))
                agent.session.turn += 1
                turn = _Turn(row.id, agent.session.turn)
                for i, (name, text) in enumerate(step[1]):
                    path = ws / name
                    args: dict[str, Any] = {"path": name, "new_string": text}
                    old = path.read_text() if path.is_file() else None
                    args |= {"old_string": old} if old is not None else {"create": True}
                    call = ToolCall(f"c{k}-{i}", "file_edit_tool", json.dumps(args))
                    await agent.session.append(Message(role="assistant", content="", tool_calls=(call,)))
                    res = await agent.tool_runner.execute(call)
                    assert not res.is_error, res.content
                    await agent.session.append(
                        Message(role="tool", content=res.content, tool_call_id=call.id)
                    )
                    turn.before.setdefault(name, old)
                    turn.wrote[name] = text
                turns.append(turn)
            elif step[0] == "user":
                path = ws / step[1]
                if step[2] is None:
                    path.unlink(missing_ok=True)
                else:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_text(step[2])
            else:
                undone = await _undo_once(agent, ws, turns, step[1])
                if undone is not None and fork_turns is not None and undone in fork_turns:
                    fork_turns.remove(undone)  # undone in the parent: not the fork's to undo again
        if fork_at is not None and fork_turns is None:  # the fork is taken after the last step
            fork = await store.fork_session(row.id)
            fork_turns = list(turns)
        elif fork_turns is not None and made_later:  # /fork N: the parent's later turns already there
            fork = await store.fork_session(row.id, upto_seq=upto)
        await agent.close()
        if fork_turns is not None:  # the fork sees its parent's turns up to the fork, and no later one
            assert fork is not None
            forked = await build_agent(store, fork.id, openai_settings(emu), ws)
            for answer in fork_answers:
                await _undo_once(forked, ws, fork_turns, answer)
            await forked.close()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@example(  # the parent goes on after the fork: the fork undoes the turn before it, then has none left
    script=(
        [("turn", [("a.txt", "x")]), ("turn", [("b.txt", "y"), ("a.txt", "u")])],
        1,
        ["y", "a", "y"],
        True,
    )
)
@example(  # the user changes a file the agent wrote, then deletes the one it created: y, then a
    script=(
        [
            ("turn", [("a.txt", "x"), ("b.txt", "y")]),
            ("user", "a.txt", "u"),
            ("user", "b.txt", None),
            ("undo", "y"),
            ("undo", "a"),
        ],
        None,
        [],
        False,
    )
)
@given(script=_U_SCRIPT)
def test_each_undo_restores_its_turns_files_or_names_them(
    emulator_server: ProviderEmulator, script: tuple[list[tuple[Any, ...]], int | None, list[str], bool]
) -> None:
    """For any edits and creates across turns, any changes of the user between them, /undo answered y or
    a, and a fork taken anywhere: each /undo takes back the newest turn not undone (a fork's: its parent's
    up to the fork), and each of that turn's files ends exactly as it was before the turn, or is named as
    not restored and left as it was (with y, only a file changed since the agent wrote it)."""
    asyncio.run(_undo_script(emulator_server, *script))


@pytest.mark.long
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(script=_U_SCRIPT)
def test_long_each_undo_restores_its_turns_files_or_names_them(
    emulator_server: ProviderEmulator, script: tuple[list[tuple[Any, ...]], int | None, list[str], bool]
) -> None:
    asyncio.run(_undo_script(emulator_server, *script))
