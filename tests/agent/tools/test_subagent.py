"""Subagents: a child agent on the same pipeline; its 50K-char result reaches the parent distilled."""

from __future__ import annotations

from pathlib import Path

from myrm_tui.agent.distill import VAULT_CHARS, AgentHandoverState, auto_vault_or_truncate, truncate_result
from myrm_tui.agent.events import ToolFinished
from myrm_tui.context.types import Message
from myrm_tui.context.vault import ArtifactVault
from myrm_tui.store.db import Store
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.helpers import COUNTER, call, collect, make_agent, openai_settings

LOG = "\n".join(f"test_case_{i:05d} PASSED in 0.0{i % 10}s" for i in range(1600))  # ~50K chars


async def test_child_log_is_vaulted_and_the_parent_stays_in_budget(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    assert len(LOG) > 45_000
    agent = await make_agent(store, workspace, openai_settings(emulator))
    emulator.enqueue(
        Reply(tool_calls=[("subagent", {"task": "run the whole test suite and report"})]),  # parent delegates
        Reply(tool_calls=[("bash", {"command": "echo running suite"})]),  # child works...
        Reply(text=LOG),  # ...and answers with the full log
        Reply(text="All 1600 tests passed."),  # parent's final answer
    )
    events = await collect(agent, "run the tests with a subagent")
    result = next(e for e in events if isinstance(e, ToolFinished) and e.call.name == "subagent").message
    assert (
        COUNTER.text(result.text) <= agent.session.settings.max_subagent_result_tokens + 400
    )  # preview + pointer + handover
    uri = result.meta["vault_uri"]
    assert "file_read_tool" in result.text and uri in result.text and "<handover" in result.text
    from myrm_tui.agent.tools.files import FileReadTool

    read = await FileReadTool().run({"paths": [uri], "line_range": "800:801"}, agent.tool_runner.ctx)
    assert "800\ttest_case_00799 PASSED" in read.content and "801\ttest_case_00800" in read.content
    entry = await store.vault_get(uri)
    assert entry is not None and entry.content == LOG  # nothing the child returned is lost
    child = result.meta["child_session"]
    child_row = await store.get_session(child)
    assert child_row is not None and child_row.parent_id == agent.session_id
    assert [m.role for m in await store.load_messages(child)][-1] == "assistant"
    assert agent.session.state.handovers and agent.session.state.handovers[0]["task"].startswith(
        "run the whole test suite"
    )
    # The child ran with the same prompt-cache routing key as its parent (ContextVar inheritance).
    assert emulator.rejected == []


def test_distillation_tiers() -> None:
    short = "all good"
    assert auto_vault_or_truncate(short, ArtifactVault("p"), 100, COUNTER) == (short, None)
    vault = ArtifactVault("p")
    shown, uri = auto_vault_or_truncate("x\n" * VAULT_CHARS, vault, 300, COUNTER)
    assert uri is not None and uri in vault and len(shown) < VAULT_CHARS
    shown, uri = auto_vault_or_truncate("y\n" * VAULT_CHARS, None, 300, COUNTER)  # no vault: Tier 1 fallback
    assert uri is None and COUNTER.text(shown) <= 320
    assert COUNTER.text(truncate_result("word " * 5000, 200, COUNTER)) <= 220


def test_handover_state_extraction() -> None:
    transcript = [
        Message(role="user", content="fix the parser", id="u"),
        Message(
            role="assistant", content=None, id="a1", tool_calls=(call("c1", "sed -i 's/a/b/' src/parser.py"),)
        ),
        Message(role="tool", content="<returncode>0</returncode>\n", id="t1", tool_call_id="c1"),
        Message(
            role="assistant", content=None, id="a2", tool_calls=(call("c2", "pytest tests/test_parser.py"),)
        ),
        Message(
            role="tool",
            content="<returncode>1</returncode>\nAssertionError: bad token",
            id="t2",
            tool_call_id="c2",
        ),
        Message(
            role="assistant",
            content="The edit is in. Next, I will fix the failing assertion in test_parser.",
            id="a3",
        ),
    ]
    h = AgentHandoverState.extract("fix the parser", transcript)
    assert "src/parser.py" in h.relevant_files
    assert any("sed -i" in c for c in h.completed_tasks)
    assert any("pytest tests/test_parser.py" in r for r in h.risks)
    assert h.pending_todos and "failing assertion" in h.pending_todos[0]


async def test_child_summaries_are_marked_user_role_messages() -> None:
    from myrm_tui.context.config import ContextConfig
    from myrm_tui.context.invariants import check_view
    from tests.helpers import conversation, run_pipeline

    raw = conversation(20)
    view, _ = await run_pipeline(
        raw, force_compaction=True, config=ContextConfig(max_context_tokens=8_000, summary_role="user")
    )
    summary = next(m for m in view if m.meta.get("kind") == "summary")
    assert summary.role == "user" and summary.synthetic and "<system-reminder" in summary.text
    assert check_view(view, raw) == []
