"""Replay mode: a recorded conversation through the real agent loop, pipeline, store and UI."""

from __future__ import annotations

from pathlib import Path

from myrm_tui.agent.api import Sessions
from myrm_tui.agent.events import ToolFinished, TurnDone
from myrm_tui.agent.replay import Replay, load_recording
from myrm_tui.app.app import MyrmApp
from myrm_tui.config import resolve
from myrm_tui.store.db import Store
from tests.conftest import FIXTURES, corpus_file
from tests.helpers import wait_until


async def test_recorded_turns_and_tool_outputs_are_replayed(store: Store, tmp_path: Path) -> None:
    rep = Replay(load_recording(f"{FIXTURES / 'mini.jsonl'}#a"), delay=0)
    agent = await rep.start(store, resolve({}, {}, {}, env={}), tmp_path)
    events = [ev async for ev in rep.play(Sessions(store, tmp_path).replay(agent))]
    tool = next(e for e in events if isinstance(e, ToolFinished))
    assert "KeyError: 'missing key'" in tool.message.text  # the recorded output, not a live run
    assert isinstance(events[-1], TurnDone)
    stored = await store.load_messages(agent.session_id)
    assert [m.role for m in stored] == ["system", "user", "assistant", "tool", "assistant"]
    assert stored[2].tool_calls[0].id == "c1" and stored[4].text == "The check failed with KeyError; done."
    session = await store.get_session(agent.session_id)
    assert session is not None and session.title.startswith("[replay]")


async def test_a_real_corpus_session_replays_with_compactions(store: Store, tmp_path: Path) -> None:
    target = f"{corpus_file('swe-dev.jsonl.gz')}#mswea-gemini3pro/astropy__astropy-13579"
    rep = Replay(load_recording(target), delay=0)
    agent = await rep.start(store, resolve({}, {}, {}, env={}), tmp_path)
    async for _ in rep.play(Sessions(store, tmp_path).replay(agent)):
        pass
    assert agent.session.state.compactions >= 1 and not rep.feed.replies
    assert await store.vault_list(agent.session_id)


async def test_replay_in_the_tui_pauses_and_is_labelled(tmp_path: Path) -> None:
    app = MyrmApp(
        db_path=tmp_path / "r.db", workspace=tmp_path, replay=f"{FIXTURES / 'mini.jsonl'}#a", replay_speed=0.3
    )
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.replayer is not None and "REPLAY" in app.sub_title)
        await pilot.press("ctrl+r")
        assert app.replayer is not None
        feed = app.replayer.feed
        assert not feed.running.is_set()
        # A reply already streaming may finish; the next one reaches the pause and is held there.
        await wait_until(pilot, feed.held.is_set)
        served = feed.served
        await pilot.pause()
        assert feed.served == served and feed.held.is_set()  # paused: nothing more is served
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: not feed.replies and not app.busy)
