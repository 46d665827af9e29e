"""One writer of ``ContextState``: tools, pins, handovers and late summaries ask through typed edits,
and only ``Transaction.apply`` turns them into state."""

from __future__ import annotations

import ast
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from myrm_tui.agent.tools import ToolContext
from myrm_tui.agent.tools.notes import SessionNotesTool
from myrm_tui.context.config import ContextConfig
from myrm_tui.context.edits import (
    MAX_NOTE_CHARS,
    MAX_NOTES,
    AddHandover,
    AddNote,
    ClearNotes,
    Pin,
    StateEdit,
    Unpin,
    UpgradeSummary,
)
from myrm_tui.context.pipeline import Transaction
from myrm_tui.context.state import ContextState
from myrm_tui.context.summary.fields import Summary
from myrm_tui.context.vault import ArtifactVault
from myrm_tui.store.db import Store
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.helpers import collect, make_agent, openai_settings

PACKAGE = Path(__file__).resolve().parents[2] / "myrm_tui"
STATE_FIELDS = {
    "base",
    "base_upto",
    "decisions",
    "summary",
    "notes",
    "artifacts",
    "artifact_clock",
    "observed_upto",
    "compactions",
    "low_yield_streak",
    "backoff_level",
    "last_request_at",
    "last_compaction",
    "last_fingerprints",
    "last_sizes",
    "cache_breaks",
    "handovers",
    "pinned",
}
MUTATORS = {"append", "extend", "clear", "pop", "remove", "insert", "update", "setdefault", "__setitem__"}


def _state_writes(tree: ast.AST) -> list[int]:
    """Lines that assign, mutate or delete a ``….state.<field>`` (or ``st.<field>`` of a state)."""

    def is_state_field(node: ast.AST) -> bool:
        return (
            isinstance(node, ast.Attribute)
            and node.attr in STATE_FIELDS
            and isinstance(node.value, ast.Attribute)
            and node.value.attr == "state"
        )

    def target_hits(t: ast.AST) -> bool:
        while isinstance(t, ast.Subscript):
            t = t.value
        return is_state_field(t)

    lines = []
    for node in ast.walk(tree):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        elif isinstance(node, ast.Delete):
            targets = list(node.targets)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in MUTATORS
            and is_state_field(node.func.value)
        ):
            lines.append(node.lineno)
        lines.extend(t.lineno for t in targets if target_hits(t))
    return sorted(lines)


def test_nothing_outside_the_context_package_writes_the_context_state() -> None:
    writers = {
        str(p.relative_to(PACKAGE)): hits
        for p in PACKAGE.rglob("*.py")
        if not p.is_relative_to(PACKAGE / "context")
        if (hits := _state_writes(ast.parse(p.read_text(encoding="utf-8"))))
    }
    assert writers == {}


def test_the_scanner_sees_each_kind_of_write() -> None:
    """The structural test above finds writes of every shape it claims to (no vacuous pass)."""
    src = """
a.state.notes.append(1)
a.state.pinned[:] = []
a.state.summary = {}
a.state.compactions += 1
del a.state.handovers[0]
a.state.cache_breaks["x"] = 1
x = a.state.notes  # a read
"""
    assert _state_writes(ast.parse(src)) == [2, 3, 4, 5, 6, 7]


async def test_the_notes_tool_reports_its_edit_and_never_writes_the_state(workspace: Path) -> None:
    state = ContextState()
    ctx = ToolContext(workspace=workspace, vault=ArtifactVault("s"), notes=lambda: tuple(state.notes))
    tool, tx = SessionNotesTool(), Transaction(state, ContextConfig())
    added = await tool.run({"action": "add", "text": "  remember X  "}, ctx)
    assert added.content == "note saved" and added.edits == (AddNote("remember X"),)
    assert state.notes == []  # only the transaction writes
    tx.apply(added.edits)
    assert state.notes == ["remember X"]
    assert (await tool.run({"action": "list"}, ctx)).content == "1. remember X"
    cleared = await tool.run({"action": "clear"}, ctx)
    assert cleared.edits == (ClearNotes(),) and state.notes == ["remember X"]
    tx.apply(cleared.edits)
    assert state.notes == [] and (await tool.run({"action": "list"}, ctx)).content == "no notes"


_edit = st.one_of(
    st.builds(AddNote, st.text(max_size=2_500)),
    st.just(ClearNotes()),
    st.builds(
        Pin,
        st.sampled_from(["vault://s/a", "vault://s/b"]),
        st.sampled_from(["1:5", "6:9"]),
        st.just("gist"),
        st.text(max_size=20),
    ),
    st.builds(Unpin, st.sampled_from(["vault://s/a", "vault://s/b"]), st.sampled_from(["1:5", "6:9"])),
    st.builds(AddHandover, st.fixed_dictionaries({"task": st.text(max_size=10)})),
)


@settings(max_examples=60, derandomize=True, deadline=None)
@given(st.lists(_edit, max_size=120))
def test_edits_keep_the_state_bounded_and_in_order(edits: list[StateEdit]) -> None:
    state = ContextState()
    tx = Transaction(state, ContextConfig())
    for e in edits:  # one by one and all at once give the same state
        tx.apply([e])
    batch = ContextState()
    Transaction(batch, ContextConfig()).apply(edits)
    assert (state.notes, state.pinned, state.handovers) == (batch.notes, batch.pinned, batch.handovers)

    assert len(state.notes) <= MAX_NOTES and all(len(n) <= MAX_NOTE_CHARS for n in state.notes)
    since_clear = edits[max((i for i, e in enumerate(edits) if isinstance(e, ClearNotes)), default=-1) + 1 :]
    added = [e.text[:MAX_NOTE_CHARS] for e in since_clear if isinstance(e, AddNote)]
    assert state.notes == added[-MAX_NOTES:]
    keys = [(p["uri"], p["line_range"]) for p in state.pinned]
    assert len(keys) == len(set(keys))  # a pin of an item already pinned replaces it
    for key in {(e.uri, e.line_range) for e in edits if isinstance(e, Pin | Unpin)}:
        last = [e for e in edits if isinstance(e, Pin | Unpin) and (e.uri, e.line_range) == key][-1]
        assert (key in keys) == isinstance(last, Pin)
    assert state.handovers == [e.handover for e in edits if isinstance(e, AddHandover)]


def test_a_late_summary_is_merged_redacted() -> None:
    state = ContextState(summary=Summary(user_goal="fix the parser", decisions=("use a stack",)))
    secret = "AKIA" + "Z" * 16
    Transaction(state, ContextConfig()).apply(
        [UpgradeSummary(Summary(decisions=("keep the API",), key_facts=(f"the key is {secret}",)))]
    )
    assert state.summary is not None and state.summary.user_goal == "fix the parser"
    assert "keep the API" in state.summary.decisions and "use a stack" in state.summary.decisions
    assert secret not in str(state.summary)


async def test_notes_from_the_tool_reach_the_state_and_survive_a_restart(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    settings_ = openai_settings(emulator)
    agent = await make_agent(store, workspace, settings_)
    emulator.enqueue(
        Reply(
            tool_calls=[
                ("session_notes", {"action": "add", "text": "the bug is in tz.py"}),
                ("session_notes", {"action": "add", "text": "tests live in t/"}),
            ]
        ),
        Reply(text="Noted."),
    )
    await collect(agent, "take notes")
    assert agent.session.state.notes == ["the bug is in tz.py", "tests live in t/"]  # in call order
    saved = await store.load_state(agent.session_id)
    assert saved is not None
    assert ContextState.from_json(saved).notes == ["the bug is in tz.py", "tests live in t/"]
    last = emulator.accepted[-1].body["messages"]
    assert [m["content"] for m in last if m["role"] == "tool"] == ["note saved", "note saved"]
    await agent.close()
