"""A turn on a history far over the model's window (#45.9): the UI is told a compaction runs before the
request, and every compaction the turn made leaves its row (the export listed one the transcript never
showed)."""

from __future__ import annotations

from pathlib import Path

from myrm_tui.agent.events import CompactionMade, CompactionStarted, ContextReport
from myrm_tui.context.compaction.record import compactions_of
from myrm_tui.context.types import Message
from myrm_tui.store.db import Store
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.helpers import collect, openai_settings


async def test_a_history_over_the_window_says_it_compacts_and_leaves_every_row(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    from myrm_tui.agent.factory import build_agent

    settings = openai_settings(emulator)
    row = await store.create_session(model=settings.model, workspace=str(workspace))
    await store.append_message(row.id, Message(role="system", content="You are a test agent."))
    for i in range(120):  # ~60K tokens: many times an 8K window
        await store.append_message(row.id, Message(role="user", content=f"question {i}"))
        text = f"Answer {i}: " + " ".join(f"finding{i}x{k} holds" for k in range(80))
        await store.append_message(row.id, Message(role="assistant", content=text))
    agent = await build_agent(store, row.id, settings, workspace, window=8_000)
    await agent.load()
    emulator.enqueue(Reply(text="fits now"))
    events = await collect(agent, "and now?")
    kinds = [type(e) for e in events]
    started = next(e for e in events if isinstance(e, CompactionStarted))
    assert started.tokens > started.budget == agent.session.config.input_budget
    assert kinds.index(CompactionStarted) < kinds.index(ContextReport)  # said before the pipeline runs
    made = [e.record for e in events if isinstance(e, CompactionMade)]
    stored = [c for c in compactions_of(await store.metrics(row.id)) if c.changed]
    assert made and [c.to_dict() for c in made] == [c.to_dict() for c in stored]
    assert all(not c.trigger_label.startswith("planned") for c in made)  # the net, named as such
