"""Endless streams end (issue 44, item 7): a model that streams varied chunks for ever, never finishing,
is cut at the call's total limit — not after the chunks read meanwhile, however slowly they are taken —
and the turn ends with one clear line. The emulator's ``endless`` mode is the runaway model."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from myrm_tui.agent.events import TurnDone, TurnFailed
from myrm_tui.agent.factory import build_agent
from myrm_tui.llm.client import LLMClient, ModelSpec
from myrm_tui.llm.errors import InactivityTimeoutError, LLMTimeoutError
from myrm_tui.llm.events import TextDelta
from myrm_tui.llm.progress import BACKLOG, ProgressClock
from myrm_tui.store.db import Store
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.helpers import FakeTime, collect, openai_settings

LIMIT = 200  # seconds of the fake clock: one a chunk the reader takes


class _ChunkClocked(LLMClient):
    """Each call timed by a clock that moves with the chunks received, whatever the wall clock does: the
    one-second limit is reached at twice the read-ahead backlog, so the reader has taken chunks by then
    however slow it is (a limit reached while chunks wait unread is raised before them, by design)."""

    async def stream(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        made: list[ProgressClock] = []  # the clock reads its own count, once it exists
        progress = ProgressClock(lambda: made[0].items / (2 * BACKLOG) if made else 0.0)
        made.append(progress)
        kwargs["clock"] = progress
        async for event in super().stream(*args, **kwargs):
            yield event


async def test_an_endless_stream_is_cut_at_its_total_limit_not_after_the_backlog(
    emulator: ProviderEmulator,
) -> None:
    """The reader is slow (it waits a little on each chunk, as the UI does) and its clock says one second
    passes a chunk. The call must end at the chunk that passes the limit: the chunks the connection
    delivered meanwhile do not keep it going (they did for 628 s past a 600-s limit)."""
    emulator.enqueue(Reply(endless=True))
    clock = FakeTime()
    client = LLMClient(inactivity_timeout=10_000, total_timeout=LIMIT, check_interval=0.01)
    spec = ModelSpec("openai/gpt-4o-mini", emulator.openai_base, "sk-test")
    texts: list[str] = []
    with pytest.raises(LLMTimeoutError) as err:
        async for ev in client.stream(spec, [{"role": "user", "content": "go"}], clock=ProgressClock(clock)):
            if isinstance(ev, TextDelta):
                texts.append(ev.text)
                clock.t += 1.0
                await asyncio.sleep(0.001)  # a reader slower than the socket: the backlog grows
    assert not isinstance(err.value, InactivityTimeoutError)
    assert f"the {LIMIT} s ceiling" in str(err.value) and "\n" not in str(err.value)
    assert LIMIT - 1 <= len(texts) <= LIMIT + 1
    assert len(set(texts)) == len(texts)  # varied chunks: no repeat a cache or a dedup could fold


async def test_a_turn_on_an_endless_stream_ends_with_one_line_and_keeps_its_history_valid(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    """Through the agent, with a total limit of a second: the turn fails with one line naming the limit,
    what streamed is kept (marked), and the next turn's request is accepted. The call's clock moves
    with the chunks (a wall clock let a loaded machine reach the limit before any chunk came)."""
    settings = openai_settings(emulator)
    row = await store.create_session(model=settings.model, workspace=str(workspace))
    llm = _ChunkClocked(inactivity_timeout=60, total_timeout=1.0, check_interval=0.05)
    agent = await build_agent(store, row.id, settings, workspace, llm=llm)
    emulator.enqueue(Reply(text="more", endless=True), Reply(text="Short answer."))
    events = await collect(agent, "tell me everything")
    failed = [e for e in events if isinstance(e, TurnFailed)]
    assert len(failed) == 1 and isinstance(events[-1], TurnDone)
    assert "ceiling" in failed[0].error and "\n" not in failed[0].error
    kept = [m for m in await store.load_messages(row.id) if m.role == "assistant"]
    assert kept and kept[-1].text.startswith("more 1 ") and kept[-1].meta.get("interrupted")
    await collect(agent, "shorter please")
    assert emulator.accepted[-1].body["messages"][-1]["content"] == "shorter please"
    assert emulator.rejected == []
