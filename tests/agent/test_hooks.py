"""Hooks end to end through the agent loop and the provider emulator, and the L6 hook-output spiller."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from myrm_tui.agent.events import Notice, TurnDone, TurnFailed
from myrm_tui.agent.hooks import HookRunner, HookSpec
from myrm_tui.agent.tools.files import FileReadTool
from myrm_tui.context.tokens import TokenCounter
from myrm_tui.store.db import Store
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.helpers import anthropic_settings, collect, make_agent, openai_settings

ECHO_PAYLOAD = (
    'python3 -c \'import json,sys; d=json.load(sys.stdin); print("saw", d["event"], '
    'd["tool_name"], d["tool_input"]["command"])\''
)


def _tool_messages(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


async def test_post_tool_use_output_is_appended_to_the_result_the_model_reads(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    hooks = [{"event": "post_tool_use", "matcher": "bash", "command": ECHO_PAYLOAD}]
    agent = await make_agent(store, workspace, openai_settings(emulator, hooks=hooks))
    emulator.enqueue(Reply(tool_calls=[("bash", {"command": "echo hi"})]), Reply(text="done"))
    await collect(agent, "say hi")
    sent = _tool_messages(emulator.accepted[-1].body)[-1]
    assert sent.startswith("<returncode>0</returncode>") and "saw post_tool_use bash echo hi" in sent
    assert '<hook event="post_tool_use"' in sent and emulator.rejected == []


async def test_pre_tool_use_exit_2_blocks_the_tool_and_says_why(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    hooks = [
        {"event": "pre_tool_use", "matcher": "bash", "command": "echo 'no shell writes here' >&2; exit 2"},
        {"event": "pre_tool_use", "matcher": "file_edit_tool", "command": "exit 2"},
    ]
    agent = await make_agent(store, workspace, openai_settings(emulator, hooks=hooks))
    emulator.enqueue(
        Reply(tool_calls=[("bash", {"command": "touch made.txt"}), ("grep", {"pattern": "greet"})]),
        Reply(text="ok"),
    )
    await collect(agent, "make a file")
    assert not (workspace / "made.txt").exists()
    tools = [m for m in await store.load_messages(agent.session_id) if m.role == "tool"]
    assert (
        tools[0].meta.get("blocked_by_hook")
        and "no shell writes here" in tools[0].text
        and tools[0].meta.get("is_error")
    )
    assert "greet" in tools[1].text and not tools[1].meta.get(
        "blocked_by_hook"
    )  # the matcher left grep alone


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_user_prompt_submit_adds_marked_context_in_a_valid_request(
    emulator: ProviderEmulator, store: Store, workspace: Path, provider: str
) -> None:
    hooks = [{"event": "user_prompt_submit", "command": "echo 'open ticket: ABC-123 (login fails)'"}]
    settings = (openai_settings if provider == "openai" else anthropic_settings)(emulator, hooks=hooks)
    agent = await make_agent(store, workspace, settings)
    await collect(agent, "what should I work on?")
    assert emulator.rejected == [] and len(emulator.accepted) == 1
    assert "open ticket: ABC-123" in json.dumps(emulator.accepted[0].body)
    hook_msgs = [m for m in await store.load_messages(agent.session_id) if m.meta.get("kind") == "hook"]
    assert len(hook_msgs) == 1 and hook_msgs[0].synthetic and "ABC-123" in hook_msgs[0].text


async def test_user_prompt_submit_exit_2_refuses_the_message_before_any_call(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    hooks = [
        {
            "event": "user_prompt_submit",
            "command": "grep -q password && { echo 'looks like a secret' ; exit 2; } ; exit 0",
        }
    ]
    agent = await make_agent(store, workspace, openai_settings(emulator, hooks=hooks))
    before = len(await store.load_messages(agent.session_id))
    events = await collect(agent, "my password is hunter2")
    assert (
        isinstance(events[0], TurnFailed)
        and events[0].kind == "hook_blocked"
        and "looks like a secret" in events[0].error
    )
    assert isinstance(events[-1], TurnDone) and emulator.requests == []
    assert len(await store.load_messages(agent.session_id)) == before
    await collect(agent, "a harmless question")
    assert len(emulator.accepted) == 1


async def test_oversized_hook_output_is_spilled_to_the_vault_with_a_preview(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    hooks = [{"event": "post_tool_use", "command": "seq 1 20000"}]
    agent = await make_agent(store, workspace, openai_settings(emulator, hooks=hooks))
    emulator.enqueue(Reply(tool_calls=[("bash", {"command": "true"})]), Reply(text="done"))
    await collect(agent, "run it")
    sent = _tool_messages(emulator.accepted[-1].body)[-1]
    assert (
        TokenCounter().text(sent) < 2_500 + 200 and "20000" in sent and "\n10000\n" not in sent
    )  # head and tail only
    uri = next(w for w in sent.replace('"', " ").split() if w.startswith("vault://"))
    entry = await store.vault_get(uri)
    assert (
        entry is not None
        and entry.kind == "hook_output"
        and entry.content.splitlines() == [str(i) for i in range(1, 20_001)]
    )
    part = await FileReadTool().run({"paths": [uri], "line_range": "10000:10001"}, agent.tool_runner.ctx)
    assert "10000" in part.content and "10001" in part.content


def test_hook_spiller_keeps_small_output_and_truncates_without_a_vault(workspace: Path) -> None:
    spec = HookSpec("post_tool_use", "x")
    runner = HookRunner([spec], workspace, None, TokenCounter(), "s", max_tokens=100)
    assert runner.spill("short", spec) == ("short", None)
    text, uri = runner.spill("word " * 5_000, spec)
    assert uri is None and len(text) < 400 and "cut at 200 of 25,000 chars" in text


async def test_failing_hung_and_binary_hooks_are_reported_and_never_block(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    hooks = [
        {"event": "post_tool_use", "command": "echo broken; exit 1"},
        {"event": "post_tool_use", "command": "sleep 30", "timeout": 0.5},
        {"event": "post_tool_use", "command": "printf 'bin\\x00\\xff'"},
    ]
    agent = await make_agent(store, workspace, openai_settings(emulator, hooks=hooks))
    emulator.enqueue(Reply(tool_calls=[("bash", {"command": "echo ran > ran.txt"})]), Reply(text="done"))
    events = await collect(agent, "go")
    assert isinstance(events[-1], TurnDone) and (workspace / "ran.txt").read_text() == "ran\n"
    sent = _tool_messages(emulator.accepted[-1].body)[-1]
    assert 'status="exit 1"' in sent and 'status="timed out"' in sent and "[binary output" in sent


async def test_session_start_output_is_context_and_bad_entries_are_reported(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    hooks = [
        {"event": "session_start", "command": "echo 'on branch feature/login'"},
        {"event": "on_save", "command": "x"},
        {"event": "pre_tool_use", "matcher": "(", "command": "x"},
    ]
    agent = await make_agent(store, workspace, openai_settings(emulator, hooks=hooks))
    events = await collect(agent, "where am I?")
    problems = [e.text for e in events if isinstance(e, Notice) and "hook skipped" in e.text]
    assert len(problems) == 2 and "on_save" in problems[0]
    assert "on branch feature/login" in json.dumps(emulator.accepted[0].body) and emulator.rejected == []


@pytest.mark.timeout(120, method="thread")  # an unbounded match on the name below backtracks for years
def test_a_catastrophic_matcher_on_a_model_chosen_tool_name_runs_bounded_and_runs_the_hook() -> None:
    """The tool name is the model's to choose; the user's matcher runs on it with a deadline. Past it the
    hook runs: a pre_tool_use hook may be what stops the call."""
    spec = HookSpec.from_dict({"event": "pre_tool_use", "matcher": "(a|aa)+", "command": "exit 2"})
    assert spec.matches("pre_tool_use", "a" * 90 + "!")
    assert spec.matches("pre_tool_use", "aaaa") and not spec.matches("pre_tool_use", "bash")
    with pytest.raises(ValueError, match="counted repeats too large"):
        HookSpec.from_dict({"event": "pre_tool_use", "matcher": "(a{1000}){1000}", "command": "x"})
