"""Compaction you can see and steer (issue 24): the typed record, its row in the transcript, what left
and where it went, bringing it back, ``/context``, the preview, and forks that write only to the fork."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from textual.widgets import ListView, TextArea
from textual.widgets._collapsible import CollapsibleTitle

from myrm_tui.app.app import MyrmApp
from myrm_tui.app.screens.compact_preview import CompactPreviewScreen
from myrm_tui.app.widgets.chat_message import Notice
from myrm_tui.app.widgets.compaction_row import CompactionRow, LeftEntry
from myrm_tui.app.widgets.context_ring import ContextUsageIndicator
from myrm_tui.app.widgets.vault_pane import VaultPane
from myrm_tui.context.compaction.record import Compaction, LeftItem, compactions_of
from myrm_tui.context.state import ContextState
from myrm_tui.context.vault import ArtifactVault, readable
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.helpers import (
    SMALL_SCREEN,
    conversation,
    make_app,
    run_pipeline,
    send_turn,
    started,
    type_and_send,
)
from tests.helpers import wait_until as _wait_until

PATIENCE = 60.0  # the machine these run on may be busy: events are awaited, a slow one is not a failure


async def wait_until(pilot: Any, cond: Any, timeout: float = PATIENCE) -> None:
    await _wait_until(pilot, cond, max(timeout, PATIENCE))


PINNED_MARK = "brought back by the user"


async def test_a_compaction_freezes_a_typed_record_of_what_left_and_where_it_went() -> None:
    raw = conversation(24)
    vault = ArtifactVault("t")
    _, run = await run_pipeline(raw, 16_000, ContextState(), vault=vault, force_compaction=True)
    rec = run.metrics.compaction
    assert isinstance(rec, Compaction) and rec.trigger == "manual" and rec.changed
    # Counted like the ring: the request's view (no tool schemas in this config).
    assert (rec.tokens_before, rec.tokens_after) == (run.metrics.tokens_planned, run.metrics.tokens_out)
    assert rec.summary_source == "extractive" and "summary" in rec.summary.lower()
    assert rec.cache_cost > 0 and rec.duration_ms >= 0
    folded = [i for i in rec.left if i.how == "folded"]
    assert folded, rec.left
    by_id = {m.id: m for m in raw}
    for item in folded:  # each pointer's line range holds that message, as the vault pane numbers it
        entry = vault.get_cached(item.uri)
        assert entry is not None
        a, b = (int(x) for x in item.line_range.split(":"))
        block = "\n".join(readable(entry).splitlines()[a - 1 : b])
        original = by_id[item.message_id]
        assert block.startswith("─── #") and original.role in block.splitlines()[0]
        assert (original.text.splitlines() or [""])[0] in block
        assert item.gist and "\n" not in item.gist and len(item.gist) <= 100
    # The record travels typed and comes back from its stored form unchanged.
    assert Compaction.from_dict(json.loads(json.dumps(rec.to_dict()))) == rec
    assert "compaction" not in run.metrics.as_dict()  # it has its own row, not a copy in each request's


# A 16K window with auto-compaction off: the turns fill it and only ctrl+k compacts.
SMALL = {"context_window": 16_000, "auto_compact": False}


def _fill(emulator: ProviderEmulator, turns: int) -> None:
    """Turns whose answers are prose no per-request trim shortens: only a compaction can fold them."""
    for i in range(turns):
        emulator.enqueue(
            Reply(tool_calls=[("bash", {"command": f"seq 1 {200 + i}"})]),
            Reply(
                text=f"Counted {i}. " + " ".join(f"finding{i}x{k} holds" for k in range(150)), chunk_size=400
            ),
        )


async def _compact(pilot: Any, app: MyrmApp) -> CompactionRow:
    await pilot.press("ctrl+k")
    await wait_until(pilot, lambda: isinstance(app.screen, CompactPreviewScreen))
    await pilot.press("enter")
    # The row is in the DOM before its title is mounted (a loaded machine read it in between).

    def titled() -> bool:
        rows = app.query(CompactionRow)
        return bool(rows) and bool(rows.last().query(CollapsibleTitle))

    await wait_until(pilot, titled)
    return app.query(CompactionRow).last()


async def test_the_compaction_row_expands_opens_what_left_in_the_vault_and_brings_it_back(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    app = make_app(emulator, tmp_path, workspace, preheat=False, summarizer_model="extractive", **SMALL)
    _fill(emulator, 6)
    emulator.enqueue(Reply(text="pinned seen"), Reply(text="unpinned seen"))
    async with started(app, size=(140, 44)) as pilot:
        for i in range(6):
            await send_turn(pilot, app, f"count {i}")
        row = await _compact(pilot, app)
        title = str(row.query_one(CollapsibleTitle).render())
        assert re.search(r"manual · [\d.]+K → [\d.]+K · \d+ ms · extractive", title), title
        assert row.collapsed
        row.query_one(CollapsibleTitle).focus()
        await pilot.press("enter")  # expands: the summary and what left the view
        await wait_until(pilot, lambda: not row.collapsed)
        entries = list(row.query(LeftEntry))
        assert entries and len(entries) == len(row.record.left)
        item: LeftItem = entries[0].item
        row.query_one(ListView).focus()
        await pilot.press("enter")  # opens it in the vault pane, at its line range
        pane = app.query_one(VaultPane)
        await wait_until(pilot, lambda: pane.current_uri == item.uri)
        area = pane.query_one(TextArea)
        await wait_until(pilot, lambda: area.cursor_location[0] == item.first_line - 1)
        entry = await app.controller.vault_entry(item.uri)
        assert area.text == readable(entry)  # the numbering of the pointer's line range
        # b brings it back: the next request carries it, marked, until b again unpins it.
        await pilot.press("b")
        agent = app.controller.agent
        assert agent is not None
        await wait_until(pilot, lambda: bool(agent.session.state.pinned))
        app.query_one("#prompt").focus()
        await send_turn(pilot, app, "go on")
        body = json.dumps(emulator.accepted[-1].body["messages"])
        assert PINNED_MARK in body and item.uri in body
        row.query_one(ListView).focus()
        await pilot.press("b")
        await wait_until(pilot, lambda: not agent.session.state.pinned)
        app.query_one("#prompt").focus()
        await send_turn(pilot, app, "and now")
        assert PINNED_MARK not in json.dumps(emulator.accepted[-1].body["messages"])


async def test_compaction_rows_come_back_with_the_session(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    app = make_app(emulator, tmp_path, workspace, preheat=False, summarizer_model="extractive", **SMALL)
    _fill(emulator, 5)
    async with started(app, size=SMALL_SCREEN) as pilot:
        for i in range(5):
            await send_turn(pilot, app, f"count {i}")
        row = await _compact(pilot, app)
        headline = row.record.headline()
        sid = app.controller.session.id  # type: ignore[union-attr]
        app.switch_session(sid)  # reopen: the transcript is rebuilt from the store
        await wait_until(
            pilot, lambda: bool(app.query(CompactionRow)) and app.query(CompactionRow).last() is not row
        )
        assert app.query(CompactionRow).last().record.headline() == headline


async def test_slash_context_adds_up_to_the_ring(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    app = make_app(emulator, tmp_path, workspace, preheat=False, summarizer_model="extractive")
    emulator.enqueue(Reply(tool_calls=[("bash", {"command": "seq 1 300"})]), Reply(text="done"))
    async with started(app, size=(140, 44)) as pilot:
        await send_turn(pilot, app, "count")
        ring = app.query_one(ContextUsageIndicator)
        await type_and_send(pilot, "/context")
        await wait_until(
            pilot, lambda: any("Context window now" in str(n.render()) for n in app.query(Notice))
        )
        text = next(str(n.render()) for n in app.query(Notice) if "Context window now" in str(n.render()))
        rows = dict(
            (m.group(1).strip(), int(m.group(2).replace(",", "")))
            for m in re.finditer(r"^(\w[\w ]+?)\s+([\d,]+)\s+\d+%", text, re.M)
        )
        for name in ("system prompt", "tool schemas", "workspace rules", "messages", "tool outputs", "free"):
            assert name in rows, (name, text)
        parts = sum(n for k, n in rows.items() if k not in ("free", "reserved for reply"))
        assert parts == ring.tokens  # one number for "context now"
        assert parts + rows["free"] + rows["reserved for reply"] == ring.window
        await pilot.press("f3")
        card = app.query_one("#window-now")
        await wait_until(pilot, lambda: "tool schemas" in str(card.render()))


async def test_ctrl_k_says_why_there_is_nothing_to_compact_and_esc_cancels_a_preview(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    app = make_app(emulator, tmp_path, workspace, preheat=False, summarizer_model="extractive", **SMALL)
    emulator.enqueue(Reply(text="short answer"))
    _fill(emulator, 5)
    async with started(app, size=SMALL_SCREEN) as pilot:
        await send_turn(pilot, app, "hello")
        ring = app.query_one(ContextUsageIndicator)
        before = ring.tokens
        await pilot.press("ctrl+k")
        await wait_until(
            pilot, lambda: any("Nothing to compact:" in str(n.render()) for n in app.query(Notice))
        )
        assert not isinstance(app.screen, CompactPreviewScreen) and ring.tokens == before
        store, sid = app.controller.store, app.controller.session.id  # type: ignore[union-attr]
        assert store is not None
        assert not compactions_of(await store.metrics(sid))  # no "Compacted: 9,524 → 9,524"
        for i in range(5):
            await send_turn(pilot, app, f"count {i}")
        await pilot.press("ctrl+k")
        # The screen is pushed before its widgets are mounted (a loaded machine read it in between).
        await wait_until(
            pilot,
            lambda: isinstance(app.screen, CompactPreviewScreen) and bool(app.screen.query("#preview-items")),
        )
        preview = app.screen
        assert isinstance(preview, CompactPreviewScreen) and preview.record.left
        shown = str(preview.query_one("#preview-items").render())
        assert preview.record.left[0].gist[:30] in shown
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, CompactPreviewScreen))
        assert not compactions_of(await store.metrics(sid)) and not app.query(CompactionRow)


async def test_ctrl_f_during_a_running_turn_writes_only_to_the_fork(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    app = make_app(emulator, tmp_path, workspace, preheat=False, summarizer_model="extractive")
    emulator.enqueue(Reply(text="first"), Reply(text="slow " * 400, chunk_size=4, chunk_delay=0.02))
    emulator.enqueue(Reply(text="in the fork"))
    async with started(app, size=SMALL_SCREEN) as pilot:
        await send_turn(pilot, app, "one")
        parent = app.controller.session.id  # type: ignore[union-attr]
        await type_and_send(pilot, "two")
        await wait_until(pilot, lambda: len(emulator.accepted) >= 2 and app.busy)
        await pilot.press("ctrl+f")
        await wait_until(
            pilot, lambda: app.controller.session is not None and app.controller.session.id != parent
        )
        store = app.controller.store
        assert store is not None and not app.busy
        kept = len(await store.load_messages(parent))
        await send_turn(pilot, app, "three")
        assert len(await store.load_messages(parent)) == kept  # nothing more went to the parent
        fork = app.controller.session.id  # type: ignore[union-attr]
        assert [m.text for m in await store.load_messages(fork) if m.role == "user"][-1] == "three"


def _recording(path: Path, turns: int) -> str:
    """A recorded session (corpus format) with ``turns`` rounds of a sizeable tool output."""
    msgs: list[dict[str, Any]] = [{"role": "system", "content": "You are a recorded agent."}]
    for i in range(turns):
        msgs += [
            {"role": "user", "content": f"step {i}: look at file{i}.py"},
            {
                "role": "assistant",
                "content": f"Reading file{i}.py.",
                "tool_calls": [
                    {
                        "id": f"c{i}",
                        "type": "function",
                        "function": {"name": "bash", "arguments": json.dumps({"command": f"cat file{i}.py"})},
                    }
                ],
            },
            {
                "role": "tool",
                "tool_call_id": f"c{i}",
                "content": "<returncode>0</returncode>\n"
                + "\n".join(f"line {k}: value_{i}_{k} = {k * i} # {'x' * 30}" for k in range(60)),
            },
            {"role": "assistant", "content": f"file{i}.py holds values up to {59 * i}."},
        ]
    path.write_text(json.dumps({"id": "long", "messages": msgs}) + "\n")
    return f"{path}#long"


async def test_ctrl_f_during_a_replay_forks_into_a_live_compacted_session_that_fits_its_window(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    window = 6_000
    target = _recording(tmp_path / "rec.jsonl", 30)
    app = make_app(emulator, tmp_path, workspace, preheat=False, context_window=window)
    app.replay, app.replay_speed = target, 0.05
    emulator.enqueue(Reply(text="live in the fork"))
    async with app.run_test(size=SMALL_SCREEN) as pilot:
        await wait_until(pilot, lambda: app.replayer is not None and app.controller.session is not None)
        parent = app.controller.session.id  # type: ignore[union-attr]
        store = app.controller.store
        assert store is not None
        await wait_until(
            pilot,
            lambda: app.controller.agent is not None and app.controller.agent.session.state.compactions >= 1,
            timeout=60,
        )
        await pilot.press("ctrl+f")
        # The fork's session is current first; its header is set when the fork is shown, after.
        await wait_until(
            pilot,
            lambda: (
                app.controller.session is not None
                and app.controller.session.id != parent
                and "REPLAY" not in app.sub_title
            ),
            timeout=30,
        )
        assert app.replayer is None and not app.controller.replaying
        kept = len(await store.load_messages(parent))
        fork = app.controller.session.id  # type: ignore[union-attr]
        records = compactions_of(await store.metrics(fork))
        assert records and records[-1].trigger == "fork"
        agent = app.controller.agent
        assert agent is not None and agent.session_id == fork
        await send_turn(pilot, app, "and now live")
        assert len(await store.load_messages(parent)) == kept  # the replay did not go on in the parent
        sent = emulator.accepted[-1].body
        assert sent["messages"][-1]["content"] == "and now live"
        assert (
            agent.session.last_report is not None
            and agent.session.last_report.tokens + app.controller.schema_tokens() <= window
        )


async def test_a_failing_step_is_logged_with_its_traceback_to_the_log_file(
    tmp_path: Path, monkeypatch: Any
) -> None:
    from myrm_tui.context.pipeline import Pipeline
    from myrm_tui.context.step import NoSettings, Rewritten, Unconfigured, View
    from myrm_tui.logs import setup_logging
    from tests.helpers import PIPELINE, config_for, request_for

    class Broken(Unconfigured):
        name = "broken"

        async def run(self, view: View, settings: NoSettings) -> Rewritten:
            raise RuntimeError("disk full")

    log = tmp_path / "state" / "myrm.log"
    monkeypatch.setenv("MYRM_LOG", str(log))
    import logging

    logger = logging.getLogger("myrm_tui")
    monkeypatch.setattr(logger, "handlers", [])
    assert setup_logging() == log
    pipe = Pipeline([Broken(), *PIPELINE.steps])
    run = await pipe.run(request_for(conversation(3)), config_for(64_000), "log")
    assert "broken failed: RuntimeError: disk full" in run.metrics.events
    for h in logger.handlers:
        h.close()  # flushed, and not left open when monkeypatch puts the old handler list back
    text = log.read_text()
    assert (
        "pipeline step broken failed" in text
        and "Traceback" in text
        and 'raise RuntimeError("disk full")' in text
    )


async def test_the_app_is_not_left_busy_when_the_screen_keeps_the_turns_messages(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path, monkeypatch: Any
) -> None:
    """Busy used to be reset only when TurnDone bubbled back up from the chat screen."""
    from myrm_tui.app.messages import AgentEventMessage
    from myrm_tui.app.screens.main import MainScreen

    shown = MainScreen.on_agent_event_message

    async def keep(self: MainScreen, message: AgentEventMessage) -> None:
        await shown(self, message)
        message.stop()  # drawn, not passed on

    monkeypatch.setattr(MainScreen, "on_agent_event_message", keep)
    app = make_app(emulator, tmp_path, workspace, preheat=False, summarizer_model="extractive")
    emulator.enqueue(Reply(text="done"))
    async with started(app, size=SMALL_SCREEN) as pilot:
        await type_and_send(pilot, "hello")
        await wait_until(pilot, lambda: len(emulator.accepted) >= 1)
        await wait_until(pilot, lambda: not app.busy)


def _fixed_record() -> Compaction:
    left = (
        LeftItem("assistant", "bash: cat src/file0.py", "vault://s/0123456789abcdef", "1:6", 41, "m3"),
        LeftItem(
            "tool",
            "bash output: line 0 of file0.py: value_0_0 = 0",
            "vault://s/0123456789abcdef",
            "7:82",
            1_204,
            "m4",
        ),
        LeftItem(
            "tool",
            "bash output: <returncode>0</returncode>",
            "vault://s/fedcba9876543210",
            "1:2000",
            9_870,
            "m6",
            "shortened",
        ),
    )
    return Compaction(
        trigger="threshold",
        level="FULL",
        reason="threshold FULL",
        tokens_before=12_367,
        tokens_after=10_486,
        duration_ms=6.2,
        summary_source="extractive",
        summary="## Summary of earlier turns\nuser_goal: fix the bug in src/app.py\n"
        "files_examined: src/file0.py",
        cache_cost=8_100,
        left=left,
        seq=8,
    )


def test_snapshot_compaction_row_expanded(snap_compare: Any) -> None:
    from textual.app import App, ComposeResult

    class RowApp(App[None]):
        def compose(self) -> ComposeResult:
            yield CompactionRow(_fixed_record())

    async def run_before(pilot: Any) -> None:
        row = pilot.app.query_one(CompactionRow)
        row.query_one(CollapsibleTitle).focus()
        await pilot.press("enter")
        await pilot.pause()
        row.query_one(ListView).focus()
        await pilot.pause()

    assert snap_compare(RowApp(), terminal_size=(110, 18), run_before=run_before)


async def test_a_progress_line_shows_while_an_automatic_llm_summary_is_written(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    """The LLM summary is written in the background (a turn never waits for it): the status line says so
    while it is written, and says it is ready once it is."""
    from tests.app.test_fork import SUMMARY, route

    def slow_summary(body: dict[str, Any]) -> Reply:
        reply = route(body)
        return Reply(text=SUMMARY, chunk_size=40, chunk_delay=0.1) if reply.text == SUMMARY else reply

    emulator.default = slow_summary
    app = make_app(
        emulator, tmp_path, workspace, preheat=False, context_window=8000
    )  # at 4K the planned compaction comes first
    seen: list[str] = []
    async with app.run_test(size=(140, 44)) as pilot:

        def saw(status: str) -> None:
            seen.append(status)

        app.watch(app, "status", saw, init=False)
        await wait_until(pilot, app.ready.is_set)
        for i in range(8):
            await send_turn(pilot, app, f"count {i}")
            if any("writing the summary" in s for s in seen):
                break
        assert any("writing the summary of older messages in the background" in s for s in seen), seen
        await wait_until(pilot, lambda: "summary of older messages ready" in app.status)


def test_a_fit_step_compaction_is_named_and_lists_the_rounds_it_dropped() -> None:
    """The fit step can turn a request into a compaction ("fit to budget") and drop whole rounds: the
    record names that trigger and lists the dropped messages as left, each readable in the vault."""
    from myrm_tui.context.compaction.record import CompactionInput, build_compaction, trigger_for
    from tests.helpers import COUNTER

    raw = conversation(4)
    kept = [raw[0], raw[1], *raw[-2:]]  # rounds 0-2 dropped whole, none of them folded
    vault = ArtifactVault(namespace="t")
    record = build_compaction(
        CompactionInput(
            before=raw,
            after=kept,
            folded=(),
            reason="fit to budget",
            level="FULL",
            focus="",
            tokens_before=COUNTER.messages(raw),
            tokens_after=COUNTER.messages(kept),
            duration_ms=1.0,
            summary_source="",
            at=0.0,
            archive_uri=None,
            seq=len(raw),
            counter=COUNTER,
            vault=vault,
        )
    )
    assert record.trigger == "fit" and record.headline().startswith("fit to budget · ")
    assert [item.message_id for item in record.left] == [m.id for m in raw[2:-2]]
    entry = vault.get_cached(record.left[0].uri)
    assert entry is not None and "cat src/file0.py" in readable(entry)
    assert trigger_for("over budget", "LIGHT", "") == "emergency"  # a safety net, like the 90% one


async def test_a_view_over_the_budget_compacts_with_auto_compaction_off() -> None:
    """auto_compact off leaves the thresholds watching only; a view over the input budget is still
    compacted (a safety net, like the 90% one), and its record says so."""
    from dataclasses import replace as _replace

    from tests.helpers import config_for

    config = _replace(config_for(16_000), auto_compact=False, emergency_ratio=0.999)
    raw = conversation(22, output_chars=1500)  # outputs under the answered-output trim: not cut before
    _, run = await run_pipeline(raw, config=config)
    assert config.fit_budget < run.metrics.tokens_planned
    assert run.compacting and run.plan.reason.startswith("over budget"), run.metrics.events
    assert run.tokens <= config.fit_budget
    assert run.metrics.compaction is not None and run.metrics.compaction.trigger == "emergency"


async def test_nothing_to_compact_pressed_again_adds_no_second_row_or_toast(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    """Each ctrl+k (or click on the ring) with nothing to compact added one more identical row and toast."""
    app = make_app(emulator, tmp_path, workspace, preheat=False, summarizer_model="extractive", **SMALL)
    emulator.enqueue(Reply(text="short answer"))
    async with started(app, size=SMALL_SCREEN) as pilot:
        await send_turn(pilot, app, "hello")
        previews = app.controller.preview_compaction
        asked: list[str] = []

        async def counted(focus: str = "") -> Any:
            got = await previews(focus)
            asked.append(focus)  # the flow goes on to its row and toast without yielding: both are in
            return got

        app.controller.preview_compaction = counted  # type: ignore[method-assign]
        for n in range(1, 4):
            await pilot.press("ctrl+k")
            await wait_until(pilot, lambda n=n: len(asked) == n)  # type: ignore[misc]
        assert len([t for t in app._notifications if t.message.startswith("Nothing to compact:")]) == 1
        await send_turn(pilot, app, "more")  # the three presses' rows were shown before this message
        await pilot.press("ctrl+k")  # another row in between: the notice may come again
        await wait_until(pilot, lambda: len(asked) == 4)
        await send_turn(pilot, app, "last")

        def rows() -> list[str]:
            return [str(n.render()) for n in app.query(Notice) if "Nothing to compact:" in str(n.render())]

        assert len(rows()) == 2, rows()


async def test_esc_cancels_a_requested_compaction_while_its_summary_is_written_and_nothing_changes(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    """ctrl+k, Enter, and the summarizer takes its time: the status line says Esc cancels, and Esc does
    (it did nothing: the user could only wait). Nothing is stored, one line says so, and the next ctrl+k
    compacts as before."""
    import threading

    from tests.app.test_fork import route_holding_summaries

    gate = threading.Event()

    emulator.default = route_holding_summaries(gate)
    app = make_app(emulator, tmp_path, workspace, context_window=8000, preheat=False, keepalive=False)
    try:
        async with started(app, size=SMALL_SCREEN) as pilot:
            for i in range(3):
                await send_turn(pilot, app, f"count {i}")
            store, sid = app.controller.store, app.controller.session.id  # type: ignore[union-attr]
            assert store is not None
            made = len(compactions_of(await store.metrics(sid)))
            await pilot.press("ctrl+k")
            await wait_until(pilot, lambda: isinstance(app.screen, CompactPreviewScreen))
            keys = str(app.screen.query_one("#preview-keys").render())
            assert (
                keys == "Summary: writing the summary with openai/gpt-4o-mini… Enter compacts · Esc cancels"
            )
            await pilot.press("enter")
            await wait_until(pilot, lambda: app.compacting and "esc cancels" in app.status)
            await pilot.press("escape")
            await wait_until(pilot, lambda: not app.compacting)
            await wait_until(
                pilot, lambda: any("Compaction cancelled" in str(n.render()) for n in app.query(Notice))
            )
            assert len(compactions_of(await store.metrics(sid))) == made and not app.query(CompactionRow)
            assert "compacting" not in app.status
            gate.set()
            await pilot.press("ctrl+k")
            await wait_until(pilot, lambda: isinstance(app.screen, CompactPreviewScreen))
            await pilot.press("enter")
            await wait_until(pilot, lambda: bool(app.query(CompactionRow)) and not app.compacting)
            assert len(compactions_of(await store.metrics(sid))) == made + 1
    finally:
        gate.set()


async def test_ctrl_k_while_a_reply_streams_or_a_tool_runs_says_to_wait_and_the_turn_goes_on(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    """Lived: ctrl+k mid-turn (a reply held mid-stream, then a command that runs until the test lets it
    end) opens no preview and compacts nothing; a toast says to wait or press Esc; the turn ends as it
    would have, and ctrl+k after it opens the preview."""
    import threading

    app = make_app(emulator, tmp_path, workspace, preheat=False, summarizer_model="extractive", **SMALL)
    said: list[str] = []
    real_notify = app.notify

    def notify(message: str, **kw: Any) -> None:
        said.append(str(message))
        real_notify(message, **kw)

    app.notify = notify  # type: ignore[method-assign]
    _fill(emulator, 5)
    resume = threading.Event()
    wait_for_go = "while [ ! -f go ]; do sleep 0.05; done; echo went"
    emulator.enqueue(
        Reply(
            text="streaming " * 60,
            tool_calls=[("bash", {"command": wait_for_go})],
            chunk_size=10,
            pause_after=2,
            resume=resume,
        ),
        Reply(text="all done"),
    )
    async with started(app, size=SMALL_SCREEN) as pilot:
        for i in range(5):
            await send_turn(pilot, app, f"count {i}")
        store, sid = app.controller.store, app.controller.session.id  # type: ignore[union-attr]
        assert store is not None
        from myrm_tui.app.widgets.chat_log import ChatLog

        chat = app.screen.query_one(ChatLog)
        await type_and_send(pilot, "stream, then run")
        await wait_until(pilot, lambda: "streaming" in (chat.items[-1].text if chat.items else ""))
        await pilot.press("ctrl+k")
        await wait_until(pilot, lambda: any("Wait for the turn to finish" in s for s in said))
        assert app.busy and not isinstance(app.screen, CompactPreviewScreen)
        said.clear()
        resume.set()
        await wait_until(pilot, lambda: any(it.kind == "tool" and it.result is None for it in chat.items))
        await pilot.press("ctrl+k")
        await wait_until(pilot, lambda: any("Wait for the turn to finish" in s for s in said))
        assert app.busy and not isinstance(app.screen, CompactPreviewScreen)
        (workspace / "go").write_text("")
        await wait_until(pilot, lambda: not app.busy and "all done" in chat.items[-1].text)
        assert not compactions_of(await store.metrics(sid)) and not app.query(CompactionRow)
        assert any(it.kind == "tool" and "went" in (it.result or ("",))[0] for it in chat.items)
        await pilot.press("ctrl+k")
        await wait_until(pilot, lambda: isinstance(app.screen, CompactPreviewScreen))
