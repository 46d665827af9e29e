"""One figure for "context now", everywhere, at every moment (#45.6), and the thresholds shown are the
pipeline's own (#45.5).

The ring, the health panel's "Window now" card and ``/context`` read one ``WindowUse`` (``LiveContext``):
a property over generated sessions — answers, tool outputs, compactions, a streaming reply, a resume —
checks after every event that the three show the same number, and that the panel's thresholds row and
the ring's colour are the levels Pre-Compact compares against."""

from __future__ import annotations

import asyncio
import re
import tempfile
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from myrm_tui.app.app import MyrmApp
from myrm_tui.app.screens.compact_preview import CompactPreviewScreen
from myrm_tui.app.widgets.chat_message import Notice
from myrm_tui.app.widgets.context_ring import ContextUsageIndicator
from myrm_tui.app.widgets.health_panel import SessionContextHealthPanel
from myrm_tui.app.widgets.prompt_input import PromptInput
from myrm_tui.context.report.window_use import Levels
from myrm_tui.context.types import Message
from myrm_tui.store.db import Store
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.helpers import send_turn, type_and_send, wait_until

IN_USE = re.compile(r"in use \(the ring\)\s+([\d,]+) of ([\d,]+)")
RING = re.compile(r"([\d,]+) / ([\d,]+) tokens")


def _num(s: str) -> int:
    return int(s.replace(",", ""))


def _panel(app: MyrmApp) -> tuple[int, int] | None:
    card = str(app.query_one(SessionContextHealthPanel).query_one("#window-now").render())
    m = IN_USE.search(card)
    return (_num(m.group(1)), _num(m.group(2))) if m else None


def _ring(app: MyrmApp) -> tuple[int, int] | None:
    m = RING.search(str(app.query_one(ContextUsageIndicator).render()))
    return (_num(m.group(1)), _num(m.group(2))) if m else None


def _contexts(app: MyrmApp) -> list[str]:
    return [str(n.render()) for n in app.query(Notice) if "Context window now" in str(n.render())]


async def _agree(pilot: Any, app: MyrmApp) -> int:
    """The ring, the panel and a fresh ``/context`` show one figure (and the ring's is the app's)."""
    await wait_until(pilot, lambda: _ring(app) is not None and _ring(app) == _panel(app))
    ring = _ring(app)
    assert ring == (app.live.tokens, app.live.window)
    shown = len(_contexts(app))
    await type_and_send(pilot, "/context")
    await wait_until(pilot, lambda: len(_contexts(app)) > shown)
    m = IN_USE.search(_contexts(app)[-1])
    assert m and (_num(m.group(1)), _num(m.group(2))) == ring == _panel(app)
    # The thresholds shown are the levels the pipeline compacts at, in the ring's tokens.
    agent = app.controller.agent
    assert agent is not None
    levels = Levels.of(agent.session.config, app.controller.schema_tokens())
    compaction = str(app.query_one(SessionContextHealthPanel).query_one("#compaction").render())
    assert f"thresholds         {levels.short()}" in compaction, compaction
    assert app.query_one(ContextUsageIndicator).level() == levels.colour(ring[0])
    return ring[0]


async def _mid_stream(pilot: Any, app: MyrmApp, resume: threading.Event) -> None:
    """While a reply streams (held mid-way by the emulator until ``resume``), the three still agree (the
    ring is not counting the reply up)."""
    try:
        await wait_until(pilot, lambda: app.busy and app.live.level != "-")
        assert _ring(app) == (app.live.tokens, app.live.window)
        await wait_until(pilot, lambda: _ring(app) == _panel(app))
    finally:
        resume.set()


Action = tuple[str, int]
actions = st.lists(
    st.one_of(
        st.tuples(st.just("say"), st.integers(1, 400)),  # an answer of that many words
        st.tuples(st.just("tool"), st.integers(1, 3000)),  # a bash output of that many lines
        st.tuples(st.just("stream"), st.integers(20, 120)),
        st.tuples(st.just("compact"), st.just(0)),
    ),
    min_size=1,
    max_size=5,
)


def _app(emu: ProviderEmulator, db: Path, workspace: Path, window: int, sid: str | None = None) -> MyrmApp:
    return MyrmApp(
        db_path=db,
        workspace=workspace,
        session_id=sid,
        cli={
            "model": "openai/gpt-4o-mini",
            "api_base": emu.openai_base,
            "api_key": "sk-test",
            "approval": "auto",
            "preheat": False,
            "summarizer_model": "extractive",
            "context_window": window,
        },
    )


async def _session(emu: ProviderEmulator, tmp: Path, plan: list[Action], window: int) -> None:
    workspace = tmp / "ws"
    workspace.mkdir()
    db = tmp / "tui.db"
    app = _app(emu, db, workspace, window)
    async with app.run_test(size=(140, 44)) as pilot:
        await wait_until(pilot, app.ready.is_set, 60)
        await _agree(pilot, app)  # the baseline, before anything is sent
        for i, (kind, n) in enumerate(plan):
            if kind == "compact":
                await pilot.press("ctrl+k")
                await wait_until(
                    pilot,
                    lambda: (
                        isinstance(app.screen, CompactPreviewScreen)
                        or any("Nothing to compact" in str(x.render()) for x in app.query(Notice))
                    ),
                )
                if isinstance(app.screen, CompactPreviewScreen):
                    await pilot.press("enter")
                    await wait_until(pilot, lambda: not app.compacting and not app.busy)
            else:
                if kind == "say":
                    emu.enqueue(Reply(text=" ".join(f"w{i}x{k}" for k in range(n))))
                elif kind == "tool":
                    emu.enqueue(Reply(tool_calls=[("bash", {"command": f"seq 1 {n}"})]), Reply(text="ok"))
                else:
                    resume = threading.Event()
                    emu.enqueue(Reply(text="slow " * n, chunk_size=3, pause_after=2, resume=resume))
                await type_and_send(pilot, f"step {i}")
                # Taken once the box is empty: until then the Enter may still be held as a burst's (50 ms),
                # and the next keys typed would make it a line end (see send_turn).
                await wait_until(pilot, lambda: not app.screen.query_one(PromptInput).text)
                if kind == "stream":
                    await _mid_stream(pilot, app, resume)
                await wait_until(pilot, lambda: not app.busy)
            await _agree(pilot, app)
        sid = app.controller.session.id  # type: ignore[union-attr]
    if all(kind == "compact" for kind, _ in plan):
        return  # nothing was said: an unused session is not kept to be resumed
    # Resumed: the same three agree before the first request and after it.
    again = _app(emu, db, workspace, window, sid)
    emu.enqueue(Reply(text="back"))
    async with again.run_test(size=(140, 44)) as pilot:
        await wait_until(pilot, again.ready.is_set, 60)
        await _agree(pilot, again)
        await send_turn(pilot, again, "again")
        await _agree(pilot, again)


def _one_figure(emulator: ProviderEmulator, plan: list[Action], window: int) -> None:
    emulator.script.clear()
    with tempfile.TemporaryDirectory(prefix="myrm-agree-") as tmp:
        asyncio.run(_session(emulator, Path(tmp), plan, window))


# Every kind of event in one session, at a window small enough that the answers and the output make a
# compaction worth doing: whatever the draws, each run of the bounded property sees them all.
EVERY_KIND: list[Action] = [("say", 300), ("tool", 2000), ("compact", 0), ("stream", 60)]
ONE_FIGURE = settings(
    deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)


@settings(ONE_FIGURE, max_examples=2)
@given(plan=actions, window=st.sampled_from([8_000, 16_000, 128_000]))
@example(plan=EVERY_KIND, window=8_000)
def test_the_ring_the_panel_and_slash_context_show_one_figure(
    emulator: ProviderEmulator, plan: list[Action], window: int
) -> None:
    _one_figure(emulator, plan, window)


@pytest.mark.long
@settings(ONE_FIGURE, max_examples=24)
@given(plan=actions, window=st.sampled_from([8_000, 16_000, 128_000]))
def test_long_the_ring_the_panel_and_slash_context_show_one_figure(
    emulator: ProviderEmulator, plan: list[Action], window: int
) -> None:
    """The same property over many more generated sessions (``make test-long``)."""
    _one_figure(emulator, plan, window)


async def test_the_embedded_model_is_counted_only_what_it_is_sent(store: Store, workspace: Path) -> None:
    """The environment block is for models that use tools and the embedded model is never sent it: it
    is not stored for it either, so the ring (237) no longer counts 92 tokens the provider never saw
    (it counted 146)."""
    from myrm_tui.config import resolve
    from myrm_tui.llm.local import to_plain_chat
    from tests.helpers import make_agent

    settings = resolve({}, {}, {"model": "local/smollm2-135m", "approval": "auto"}, env={})
    agent = await make_agent(store, workspace, settings)
    await agent.load()
    view = [*agent.session.state.base, *agent.session.history[agent.session.state.base_upto :]]
    sent = "\n".join(m["content"] for m in to_plain_chat([m.to_api() for m in view]))
    assert view and all(m.text.strip() in sent for m in view)  # every message counted is sent
    use = agent.window_use()
    assert dict(use.parts)["workspace rules"] == 0 and use.used == agent.session.counter.messages(view)


# -- what drove each compaction (#45.5, #46.6) ---------------------------------------------------------


LABELS = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
SESSIONS = {
    "sizes": st.lists(st.integers(50, 1_500), min_size=6, max_size=24),
    "window": st.sampled_from([8_000, 16_000]),
}


# Each session runs the pipeline once a message: make test runs a fixed 10, the long twin 25 new ones.
@settings(LABELS, max_examples=10)
@given(**SESSIONS)
def test_a_planned_compaction_never_reads_as_an_emergency(sizes: list[int], window: int) -> None:
    """Live requests over a session of answers of generated sizes: every compaction's label names what
    drove it, and one Pre-Compact planned (a ``threshold`` reason, even when the round carried the view
    past the 90 % level: 12 of 22 in a replay at 8K read ``threshold EMERGENCY``) says ``planned`` at its
    depth, never EMERGENCY; the net says it was the net."""
    labels_name_what_drove_them(sizes, window)


@pytest.mark.long
@settings(LABELS, max_examples=25)
@given(**SESSIONS)
def test_long_a_planned_compaction_never_reads_as_an_emergency(sizes: list[int], window: int) -> None:
    """The same property over 25 sessions (``make test-long``)."""
    labels_name_what_drove_them(sizes, window)


def labels_name_what_drove_them(sizes: list[int], window: int) -> None:
    from myrm_tui.context.state import ContextState
    from tests.helpers import run_pipeline

    async def session() -> list[Any]:
        raw = [
            Message(role="system", content="You are a test agent.", id="s"),
            Message(role="user", content="Fix the bug.", id="u"),
        ]
        state, records = ContextState(), []
        for i, words in enumerate(sizes):
            answer = f"Answer {i}: " + " ".join(f"finding{i}x{k} holds" for k in range(words))
            raw += [
                Message(role="assistant", content=answer, id=f"a{i}"),
                Message(role="user", content=f"and then {i}?", id=f"u{i}"),
            ]
            _, run = await run_pipeline(list(raw), window=window, state=state, now=float(i))
            if run.metrics.compaction is not None:
                records.append(run.metrics.compaction)
        return records

    records = asyncio.run(session())
    for record in records:
        label = record.trigger_label
        assert "EMERGENCY" not in record.headline(), record.headline()
        if record.reason.startswith("threshold"):
            assert record.trigger == "threshold", record
            assert label in ("planned (FULL level)", "planned (LIGHT level)"), label
        elif record.trigger == "emergency":
            assert label.startswith("emergency net ("), label
        else:
            assert record.trigger in ("fit", "overflow", "manual"), record
