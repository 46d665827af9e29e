"""Nothing one reply stores can poison the rest of the session.

Each test stores the poison through the real agent loop (litellm → the provider emulator), then
checks that the next turns still work: the emulator, which applies the providers' validation rules,
accepts every later request, and the raw body it received is what a provider would take.
"""

from __future__ import annotations

import json
from pathlib import Path

from myrm_tui.agent.events import TextChunk, ToolFinished, TurnFailed
from myrm_tui.context.state import ContextState
from myrm_tui.context.steps.normalize import TOOL_NAME
from myrm_tui.context.summary import fields as summary_model
from myrm_tui.context.types import Message
from myrm_tui.store.db import Store
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.helpers import collect, conversation, make_agent, openai_settings, run_pipeline


async def test_a_bad_tool_name_gets_an_error_naming_it_and_later_requests_stay_valid(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    agent = await make_agent(store, workspace, openai_settings(emulator))
    emulator.enqueue(
        Reply(tool_calls=[("functions.bash", {"command": "ls"}), ("../../bin/sh", {"command": "id"})]),
        Reply(text="Sorry, wrong names."),
    )
    events = await collect(agent, "list the files")
    assert not [e for e in events if isinstance(e, TurnFailed)]
    emulator.enqueue(Reply(text="Still here."))
    events = await collect(agent, "and now?")
    assert not [e for e in events if isinstance(e, TurnFailed)]
    assert emulator.rejected == []
    body = emulator.accepted[-1].body
    names = [c["function"]["name"] for m in body["messages"] for c in m.get("tool_calls") or []]
    assert names and all(n.startswith("invalid_") for n in names)
    errors = [m["content"] for m in body["messages"] if m["role"] == "tool"]
    assert any("'functions.bash'" in e for e in errors) and any("'../../bin/sh'" in e for e in errors)
    # Nothing a provider would reject was stored, either.
    stored = await store.load_messages(agent.session.session_id)
    assert all(TOOL_NAME.match(c.name) for m in stored for c in m.tool_calls)


async def test_a_call_without_a_name_is_answered_and_the_turn_goes_on(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    """Found (redteam3): a reply whose one tool call had arguments and an empty name (a local server's
    broken grammar) ended the turn with no answer, no error and, in myrm ask, exit code 0. The call now
    gets the invalid-name error and the model its next step."""
    agent = await make_agent(store, workspace, openai_settings(emulator))
    emulator.enqueue(Reply(tool_calls=[("", {"command": "ls"})]), Reply(text="Named it now."))
    events = await collect(agent, "list the files")
    assert not [e for e in events if isinstance(e, TurnFailed)]
    results = [e.message.text for e in events if isinstance(e, ToolFinished)]
    assert len(results) == 1 and results[0].startswith("Error: invalid tool name ''")
    assert any(isinstance(e, TextChunk) and "Named it now." in e.text for e in events)
    emulator.enqueue(Reply(text="Still here."))
    await collect(agent, "and now?")
    assert emulator.rejected == []


async def test_two_calls_sharing_one_id_each_get_their_own_result(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    agent = await make_agent(store, workspace, openai_settings(emulator))
    emulator.enqueue(
        Reply(
            tool_calls=[("bash", {"command": "echo FIRST-ONE"}), ("bash", {"command": "echo SECOND-TWO"})],
            call_ids=["call_same", "call_same"],
        ),
        Reply(text="Both ran."),
    )
    events = await collect(agent, "run both")
    assert not [e for e in events if isinstance(e, TurnFailed)]
    assert emulator.rejected == []
    body = emulator.accepted[-1].body
    calls = {
        c["id"]: json.loads(c["function"]["arguments"])["command"]
        for m in body["messages"]
        for c in m.get("tool_calls") or []
    }
    assert len(calls) == 2  # made unique before anything ran
    results = {m["tool_call_id"]: m["content"] for m in body["messages"] if m["role"] == "tool"}
    assert set(results) == set(calls)
    for cid, command in calls.items():  # each call is shown its own output
        assert command.split()[-1] in results[cid]


async def test_a_failing_redaction_degrades_once_and_the_compaction_commits(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    def broken(
        s: summary_model.Summary,
    ) -> summary_model.Summary:  # the field-separator bug: a key's BEGIN and END in two items
        raise StopIteration

    monkeypatch.setattr(summary_model, "redact_summary", broken)
    state = ContextState()
    raw = conversation(24)
    raw[3] = Message(
        role="tool",
        content="-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\n-----END RSA PRIVATE KEY-----",
        id=raw[3].id,
        tool_call_id=raw[3].tool_call_id,
    )
    for end in (26, len(raw)):  # two compacting turns: neither fails, each says so once
        view, run = await run_pipeline(raw[:end], window=6_000, state=state, force_compaction=True)
        assert run.compacting and state.summary is not None
        failures = [e for e in run.metrics.events if "redaction failed" in e]
        assert len(failures) == 1
        assert not any("failed:" in e for e in run.metrics.events)  # no step failed
    assert state.summary is not None and "MIIEowIBAAKCAQEA7" not in json.dumps(state.summary.to_json())
    assert all("MIIEowIBAAKCAQEA7" not in m.text for m in view if m.meta.get("kind") == "summary")


async def test_fifty_long_notes_still_let_every_turn_through(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    agent = await make_agent(store, workspace, openai_settings(emulator, max_steps=60), window=16_000)
    emulator.enqueue(
        *[
            Reply(tool_calls=[("session_notes", {"action": "add", "text": f"note {i}: " + "n" * 1_990})])
            for i in range(50)
        ],
        Reply(text="Noted everything."),
    )
    await collect(agent, "take fifty notes")
    assert len(agent.session.state.notes) == 50
    emulator.enqueue(Reply(tool_calls=[("session_notes", {"action": "clear"})]), Reply(text="Cleared."))
    events = await collect(agent, "clear the notes")
    assert not [e for e in events if isinstance(e, TurnFailed)]
    assert agent.session.state.notes == []
    emulator.enqueue(Reply(text="Fine."))
    events = await collect(agent, "hello again")
    assert not [e for e in events if isinstance(e, TurnFailed)]
    assert emulator.rejected == []
    assert all(r.body for r in emulator.accepted)


async def test_no_summarizer_call_is_paid_for_a_turn_that_cannot_fit(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    settings = openai_settings(emulator, summarizer_model="openai/gpt-4o-mini")
    agent = await make_agent(store, workspace, settings, window=2_000)  # the prompt alone is over it
    for turn in conversation(12)[2:]:  # something to fold
        await agent.session.append(turn)
    # A manual compaction summarizes inline (no background preparation): it must not call the model.
    _, run = await agent.session.prepare(force=True)
    assert run.tokens > agent.session.config.input_budget
    assert any("summarizer skipped" in e for e in run.metrics.events)
    assert emulator.requests == []  # no summary was paid for
    events = await collect(agent, "please review hello.py")
    failed = [e for e in events if isinstance(e, TurnFailed)]
    assert failed and failed[0].kind == "preflight"
    assert emulator.requests == []  # neither the turn nor a summary was sent


async def test_a_stored_bad_tool_name_is_repaired_on_the_way_out() -> None:
    from myrm_tui.context.types import ToolCall
    from myrm_tui.testing.validation import validate_openai

    raw = [
        Message(role="system", content="sys", id="s"),
        Message(role="user", content="go", id="u"),
        Message(role="assistant", content=None, id="a", tool_calls=(ToolCall("c1", "functions.bash", "{}"),)),
        Message(role="tool", content="Error: unknown tool", id="t", tool_call_id="c1"),
    ]
    view, _ = await run_pipeline(raw, window=16_000)
    assert validate_openai({"messages": [m.to_api() for m in view]}) is None


async def test_notes_enter_the_view_within_their_share() -> None:
    from myrm_tui.context.step import CompactionPlan, Level
    from myrm_tui.context.steps.notes import SessionNotes
    from tests.helpers import COUNTER, config_for, run_step, view_for

    state = ContextState(notes=[f"note {i}: " + "n" * 1_990 for i in range(50)])
    raw = conversation(3)
    plan = CompactionPlan(Level.FULL, True, "test")
    result = await run_step(SessionNotes(), view_for(raw, state, plan=plan), window=16_000)
    notes = next(m for m in result.messages if m.meta.get("kind") == "session_notes")
    assert COUNTER.message(notes) <= config_for(16_000).injected_tokens + 50
    assert "note 49:" in notes.text  # the newest note stays whole
    assert "vault://" in notes.text  # and all of them are one read away


async def test_a_first_message_of_half_the_window_lets_a_session_run_ninety_tool_steps(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    from myrm_tui.agent.events import ToolFinished

    window = 16_000
    agent = await make_agent(store, workspace, openai_settings(emulator, max_steps=100), window=window)
    spec = "Implement the spec below.\n" + "\n".join(
        f"{i}. the service shall handle request kind {i} within {i % 90 + 10} ms" for i in range(560)
    )
    assert agent.session.counter.text(spec) > window // 2
    steps = 90
    emulator.enqueue(
        *[Reply(tool_calls=[("bash", {"command": f"seq {k} {k + 110}"})]) for k in range(steps)],
        Reply(text="All ninety steps done."),
    )
    events = await collect(agent, spec)
    assert not [e for e in events if isinstance(e, TurnFailed)]
    assert sum(isinstance(e, ToolFinished) for e in events) == steps
    assert emulator.rejected == [] and len(emulator.accepted) >= steps + 1
    # Every request fits the budget by our count, which keeps room for the reply.
    counter, budget = agent.session.counter, agent.session.config.input_budget
    sizes = [counter.messages([Message.from_api(m) for m in r.body["messages"]]) for r in emulator.accepted]
    assert max(sizes) <= budget, (max(sizes), budget)


async def test_head_anchor_cuts_a_first_message_over_its_share_before_compress() -> None:
    from myrm_tui.context.invariants import extract_protected_head
    from myrm_tui.context.step import CompactionPlan, Level
    from myrm_tui.context.steps.fit import HeadAnchor
    from tests.helpers import COUNTER, config_for, run_step, view_for

    spec = "Build it.\n" + "\n".join(f"requirement {i}: latency under {i} ms" for i in range(800))
    raw = [Message(role="system", content="sys", id="s"), Message(role="user", content=spec, id="u")]
    raw += conversation(3)[2:]
    config = config_for(16_000)
    assert COUNTER.messages(raw[:2]) > config.head_limit_tokens
    plan = CompactionPlan(Level.FULL, True, "test")
    view = view_for(raw, plan=plan, protected_head=tuple(extract_protected_head(raw)))
    result = await run_step(HeadAnchor(), view, config=config)
    anchor = result.messages[1]
    assert anchor.id == "u#headcut" and COUNTER.message(anchor) <= config.anchor_tokens + 20
    assert anchor.text.startswith("Build it.") and "requirement 799" in anchor.text  # opening and end
    assert anchor.meta["vault_uri"] in anchor.text
    # Without a compaction the head is left as it is (the cache keeps it).
    unplanned = await run_step(HeadAnchor(), view_for(raw), config=config)
    assert unplanned.messages[1] is raw[1]
