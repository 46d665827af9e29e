"""The TUI driven by Pilot with real key presses, against the provider emulator."""

from __future__ import annotations

import fcntl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Static

from myrm_tui.app.screens.approval import ApprovalScreen
from myrm_tui.app.screens.sessions import SessionPicker
from myrm_tui.app.widgets.chat_message import AssistantMessage, Notice
from myrm_tui.app.widgets.context_ring import ContextUsageIndicator
from myrm_tui.app.widgets.tool_call import ToolCallView
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.helpers import SMALL_SCREEN, approval_open, make_app, send_turn, started, type_and_send, wait_until


async def test_typing_a_message_streams_the_reply(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    app = make_app(emulator, tmp_path, workspace)
    emulator.enqueue(Reply(text="Hello from the **emulator**, streamed.", chunk_size=3, chunk_delay=0.01))
    async with started(app, size=SMALL_SCREEN) as pilot:
        await type_and_send(pilot, "hi there")
        await wait_until(pilot, lambda: not app.busy and bool(app.query(AssistantMessage)))
        assert app.query(AssistantMessage).last().markdown.source == "Hello from the **emulator**, streamed."
        # The turn's request ends with the message as typed. Not ``accepted[-1]``: the start-up preheat, sent
        # first, may be answered after the turn on a loaded machine (seen 4 of 6 runs at load 10).
        lasts = [r.body["messages"][-1]["content"] for r in emulator.accepted]
        assert "hi there" in lasts, lasts
        ring = app.query_one(ContextUsageIndicator)
        assert ring.tokens > 0 and 0 < ring.ratio < 0.5


async def test_shell_command_asks_for_approval_and_runs_on_y(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    app = make_app(emulator, tmp_path, workspace, approval="ask")
    # printf, not echo: echo is read-only and runs without asking
    emulator.enqueue(Reply(tool_calls=[("bash", {"command": "printf approved-run"})]), Reply(text="Done."))
    async with started(app, size=SMALL_SCREEN) as pilot:
        await type_and_send(pilot, "run it")
        await wait_until(pilot, lambda: approval_open(app))
        await pilot.press("y")
        await wait_until(pilot, lambda: not app.busy)
        view = app.query_one(ToolCallView)
        assert "approved-run" in str(view.query_one(".output").render())
        assert not view.has_class("-error")


async def test_approval_lists_the_parsed_commands_and_what_always_adds(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    app = make_app(emulator, tmp_path, workspace, approval="ask", allowed_commands=["git status"])
    emulator.enqueue(
        Reply(tool_calls=[("bash", {"command": "git status; touch pwned"})]),
        Reply(tool_calls=[("bash", {"command": "echo $(touch pwned)"})]),
        Reply(tool_calls=[("bash", {"command": "git status; printf '%s ' ok-run"})]),
        Reply(tool_calls=[("bash", {"command": "printf '%s ' ok-run again"})]),
        Reply(text="Done."),
    )

    def shown(selector: str) -> str:
        return str(app.screen.query_one(selector, Static).render())

    async with started(app, size=SMALL_SCREEN) as pilot:
        await type_and_send(pilot, "run them")
        await wait_until(pilot, lambda: approval_open(app))
        assert shown("#parsed").splitlines() == [
            "✓ git status   allowed by rule: git status",
            "✗ touch pwned  no rule allows it",
        ]
        assert "allows for this session: touch pwned" in shown("#always-note")
        await pilot.press("n")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen) and "$(" in app.screen.command)
        assert "command substitution $(…)" in shown("#parsed") and not app.screen.query("#always")
        await pilot.press("a")  # nothing to remember: "always" is not offered, the prompt stays
        await pilot.pause()
        assert isinstance(app.screen, ApprovalScreen) and "$(" in app.screen.command
        await pilot.press("n")
        await wait_until(
            pilot, lambda: isinstance(app.screen, ApprovalScreen) and "ok-run" in app.screen.command
        )
        await pilot.press("a")
        await wait_until(pilot, lambda: not app.busy)
        outputs = [str(v.query_one(".output").render()) for v in app.query(ToolCallView)]
        assert "ok-run" in outputs[2] and "ok-run again" in outputs[3]  # the last ran without a prompt
        assert not (workspace / "pwned").exists()


async def test_escape_cancels_a_running_turn(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    app = make_app(emulator, tmp_path, workspace)
    emulator.enqueue(Reply(text="slow " * 400, chunk_size=2, chunk_delay=0.02))
    async with started(app, size=SMALL_SCREEN) as pilot:
        await type_and_send(pilot, "talk")
        await wait_until(pilot, lambda: bool(app.query(AssistantMessage)))
        await pilot.press("escape")
        await wait_until(pilot, lambda: not app.busy)
        assert any("cancelled" in str(n.render()) for n in app.query(Notice))
        stored = await app.controller.messages()
        assert stored[-1].text.endswith("[interrupted by the user]")


async def test_ctrl_k_compacts_and_updates_the_ring(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    # 16K, auto-compaction off: only ctrl+k compacts; prose answers no per-request trim shortens. Four
    # turns: with two there is nothing ctrl+k would compact yet, three are the least that have some.
    app = make_app(emulator, tmp_path, workspace, context_window=16_000, auto_compact=False)
    for i in range(4):
        emulator.enqueue(
            Reply(tool_calls=[("bash", {"command": f"seq 1 {2000 + i}"})]),
            Reply(text=f"Counted {i}. " + " ".join(f"finding{i}x{k} holds" for k in range(150))),
        )
    async with started(app, size=(120, 40)) as pilot:
        for i in range(4):
            await send_turn(pilot, app, f"count {i}")
        ring = app.query_one(ContextUsageIndicator)
        before = ring.tokens
        await pilot.press("ctrl+k")
        from myrm_tui.app.screens.compact_preview import CompactPreviewScreen

        await wait_until(pilot, lambda: isinstance(app.screen, CompactPreviewScreen))  # a preview first
        await pilot.press("enter")
        await wait_until(pilot, lambda: not isinstance(app.screen, CompactPreviewScreen) and not ring.busy)
        await wait_until(pilot, lambda: ring.tokens < before)
        metrics = await app.controller.store.metrics(app.controller.session.id)  # type: ignore[union-attr]
        manual = [m for m in metrics if m.get("kind") == "manual_compaction"]
        assert len(manual) == 1 and manual[0]["compacted"]


async def test_ctrl_f_forks_and_ctrl_s_lists_both_sessions(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    app = make_app(emulator, tmp_path, workspace)
    emulator.enqueue(Reply(text="first reply"))
    async with started(app, size=SMALL_SCREEN) as pilot:
        await send_turn(pilot, app, "remember the word zebra")
        parent = app.controller.session.id  # type: ignore[union-attr]
        await pilot.press("ctrl+f")
        await wait_until(
            pilot, lambda: app.controller.session is not None and app.controller.session.id != parent
        )
        assert app.controller.session.parent_id == parent  # type: ignore[union-attr]
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionPicker))
        ids = {s.id for s in app.screen.sessions}  # type: ignore[attr-defined]
        assert parent in ids and app.controller.session.id in ids  # type: ignore[union-attr]
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, SessionPicker))


async def test_huge_paste_is_refused_and_kept_in_the_box(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    app = make_app(emulator, tmp_path, workspace)
    async with started(app, size=SMALL_SCREEN) as pilot:
        from myrm_tui.app.widgets.prompt_input import PromptInput

        box = app.query_one(PromptInput)
        huge = "paste " * 200_000
        box.load_text(huge)  # typed out (a terminal without bracketed paste): not a label
        await pilot.press("enter")
        await wait_until(pilot, lambda: not app.busy and bool(app.query(Notice)))
        assert any("refused" in str(n.render()) for n in app.query(Notice))
        # The text is back before the refusal is drawn, so it is there once the notice is.
        assert all(
            r.body.get("max_tokens") == 1 for r in emulator.requests
        )  # only the start-up preheat was sent
        # The refused text is back in the box, whole: too big to lay out, as a label that sends all of it.
        assert box.text == "[pasted 1,200,000 chars]" and box.expand_pastes(box.text) == huge


async def test_a_message_blocked_by_a_hook_goes_back_to_the_box(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    hooks = [
        {
            "event": "user_prompt_submit",
            "command": "grep -q DROP && { echo 'no SQL in prompts'; exit 2; }; exit 0",
        }
    ]
    app = make_app(emulator, tmp_path, workspace, hooks=hooks)
    async with started(app, size=SMALL_SCREEN) as pilot:
        from myrm_tui.app.widgets.prompt_input import PromptInput

        box = app.query_one(PromptInput)
        await pilot.press(*"DROP TABLE users")
        await pilot.press("enter")
        await wait_until(pilot, lambda: not app.busy and bool(app.query(Notice)))
        assert any("no SQL in prompts" in str(n.render()) for n in app.query(Notice))
        assert box.text == "DROP TABLE users" and all(
            r.body.get("max_tokens") == 1 for r in emulator.requests
        )


async def test_a_refused_message_comes_back_with_the_cursor_at_its_end(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    """Refused and given back, the text had the cursor at its start: the next keys went in front of it,
    and Backspace (to drop a refused paste's label) did nothing (seen with a 5 MB paste in tmux)."""
    hooks = [{"event": "user_prompt_submit", "command": "grep -q DROP && exit 2; exit 0"}]
    app = make_app(emulator, tmp_path, workspace, hooks=hooks)
    async with started(app, size=SMALL_SCREEN) as pilot:
        from myrm_tui.app.widgets.prompt_input import PromptInput

        box = app.query_one(PromptInput)
        await pilot.press(*"DROP it")
        await pilot.press("enter")
        # The refusal shown (the text was back before it): the box held the same text before the Enter.
        await wait_until(pilot, lambda: not app.busy and bool(app.query(Notice)))
        assert box.text == "DROP it"
        await pilot.press("backspace", *"all")
        await wait_until(pilot, lambda: box.text != "DROP it")
        assert box.text == "DROP iall"


@pytest.fixture
def frozen(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """Deterministic session ids, date and workspace path, for snapshots. The path is one for every test
    process, so a snapshot test holds it alone (a lock) and finds it empty: two workers editing one
    app.py at once made an edit fail in a snapshot now and then."""
    import itertools
    import uuid

    counter = itertools.count()
    monkeypatch.setattr("myrm_tui.store.sessions.uuid.uuid4", lambda: uuid.UUID(int=next(counter)))
    monkeypatch.setattr("myrm_tui.agent.prompts.time.strftime", lambda fmt, t=None: "2026-01-01")
    monkeypatch.setattr(
        "myrm_tui.context.pipeline.perf_counter", lambda: 0.0
    )  # pipeline timings shown as 0.0 ms
    # A private copy of the prompts: an edit in the repo's prompts/ during the run would put the file
    # watcher's "agent is rebuilt" toast into the snapshot.
    import shutil

    from myrm_tui.paths import prompts_dir

    prompts = shutil.copytree(prompts_dir(), tmp_path / "prompts")
    monkeypatch.setenv("MYRM_PROMPTS_DIR", str(prompts))
    ws = Path("/tmp/myrm-snapshot-workspace")
    with open(f"{ws}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        shutil.rmtree(ws, ignore_errors=True)
        ws.mkdir()
        yield ws


def test_snapshot_main_screen(
    snap_compare: Any, emulator: ProviderEmulator, tmp_path: Path, frozen: Path
) -> None:
    emulator.enqueue(
        Reply(tool_calls=[("bash", {"command": "echo snapshot"})]),
        Reply(text="## Result\n\nThe command printed `snapshot`."),
    )
    # No background requests (preheat, LLM title) whose timing would change the numbers on screen.
    app = make_app(emulator, tmp_path, frozen, preheat=False, keepalive=False, summarizer_model="extractive")

    async def run_before(pilot: Pilot[Any]) -> None:
        await wait_until(pilot, app.ready.is_set)
        await send_turn(pilot, app, "run the snapshot command")
        from myrm_tui.app.widgets.health_panel import SessionContextHealthPanel

        panel = app.query_one(SessionContextHealthPanel)
        await wait_until(pilot, lambda: "Compaction" in str(panel.query_one("#compaction").render()))
        from myrm_tui.app.widgets.prompt_input import PromptInput

        app.query_one(PromptInput).cursor_blink = False
        app.set_focus(None)  # no focused input: a blinking cursor would make the snapshot flaky
        await pilot.pause(0.5)

    assert snap_compare(app, terminal_size=(120, 36), run_before=run_before)


async def test_vault_card_opens_the_output_in_the_vault_pane(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    from myrm_tui.app.widgets.health_panel import SessionContextHealthPanel
    from myrm_tui.app.widgets.vault_card import VaultArtifactCard
    from myrm_tui.app.widgets.vault_pane import VaultPane

    app = make_app(emulator, tmp_path, workspace)
    emulator.enqueue(
        Reply(tool_calls=[("bash", {"command": "seq 1 30000"})]), Reply(text="Printed the numbers.")
    )
    async with started(app, size=(140, 44)) as pilot:
        await type_and_send(pilot, "count to thirty thousand")
        await wait_until(pilot, lambda: not app.busy and bool(app.query(VaultArtifactCard)))
        card = app.query_one(VaultArtifactCard)
        card.focus()
        await pilot.press("enter")
        pane = app.query_one(VaultPane)
        await wait_until(pilot, lambda: pane.current_uri == card.uri)
        from textual.widgets import TextArea

        text = pane.query_one(TextArea).text
        assert text.splitlines()[-2] == "30000"  # the whole output, not the shortened one the model saw
        await pilot.press("f3")
        health = str(app.query_one(SessionContextHealthPanel).query_one("#pruning").render())
        assert "smart_filter" in health or "budget_guard" in health


async def test_settings_change_rebuilds_the_agent_and_the_next_request_uses_the_new_model(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    from textual.widgets import Input

    from myrm_tui.app.screens.settings import SettingsScreen

    app = make_app(emulator, tmp_path, workspace)
    emulator.enqueue(Reply(text="first"), Reply(text="second"))
    async with started(app, size=(120, 44)) as pilot:
        await send_turn(pilot, app, "hello")
        first_fp = app.controller.cache.fingerprint
        await pilot.press("f2")
        await wait_until(pilot, lambda: isinstance(app.screen, SettingsScreen))
        app.screen.query_one("#f-model", Input).value = "openai/gpt-4o"
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: not isinstance(app.screen, SettingsScreen))
        await type_and_send(pilot, "again")
        await wait_until(pilot, lambda: not app.busy and app.controller.cache.rebuilds >= 1)
        assert app.controller.cache.fingerprint != first_fp
        assert emulator.accepted[-1].body["model"] == "gpt-4o"
        assert await app.controller.store.get_setting("model") == "openai/gpt-4o"  # type: ignore[union-attr]


def test_snapshot_high_usage_with_the_fork_hint(
    snap_compare: Any, emulator: ProviderEmulator, tmp_path: Path, frozen: Path
) -> None:
    emulator.enqueue(Reply(text="Hello."), Reply(text="Here is a long answer. " * 60))
    app = make_app(
        emulator,
        tmp_path,
        frozen,
        preheat=False,
        keepalive=False,
        summarizer_model="extractive",
        context_window=2800,
    )

    async def run_before(pilot: Pilot[Any]) -> None:
        await wait_until(pilot, app.ready.is_set)
        from myrm_tui.app.widgets.prompt_input import PromptInput

        # A long first message would be cut into the vault at the compaction (the fit step): the usage
        # stays high when the newest message is the long one, which a compaction keeps whole.
        app.query_one(PromptInput).load_text("hi")
        await pilot.press("enter")
        await wait_until(pilot, lambda: not app.busy and len(emulator.accepted) >= 1)
        app.query_one(PromptInput).load_text("explain everything " * 300)  # pasted, not typed key by key
        await pilot.press("enter")
        await wait_until(pilot, lambda: not app.busy and len(emulator.accepted) >= 2)
        from myrm_tui.app.widgets.health_panel import SessionContextHealthPanel
        from myrm_tui.app.widgets.prompt_input import PromptInput

        panel = app.query_one(SessionContextHealthPanel)
        await wait_until(pilot, lambda: "Compaction" in str(panel.query_one("#compaction").render()))
        assert app.query_one(ContextUsageIndicator).level() == "red"
        app.query_one(PromptInput).cursor_blink = False
        app.set_focus(None)
        await pilot.pause(0.5)

    assert snap_compare(app, terminal_size=(130, 40), run_before=run_before)


def test_snapshot_vault_pane(
    snap_compare: Any,
    emulator: ProviderEmulator,
    tmp_path: Path,
    frozen: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("myrm_tui.app.widgets.vault_pane.time.strftime", lambda fmt, t=None: "12:00:00")
    emulator.enqueue(
        Reply(tool_calls=[("bash", {"command": "seq 1 30000"})]), Reply(text="Printed the numbers.")
    )
    app = make_app(emulator, tmp_path, frozen, preheat=False, keepalive=False, summarizer_model="extractive")

    async def run_before(pilot: Pilot[Any]) -> None:
        from myrm_tui.app.widgets.vault_card import VaultArtifactCard
        from myrm_tui.app.widgets.vault_pane import VaultPane

        await wait_until(pilot, app.ready.is_set)
        await type_and_send(pilot, "count")
        await wait_until(pilot, lambda: not app.busy and bool(app.query(VaultArtifactCard)))
        card = app.query_one(VaultArtifactCard)
        app.post_message(VaultPane.OpenRequested(card.uri))
        pane = app.query_one(VaultPane)
        await wait_until(pilot, lambda: pane.current_uri == card.uri)
        app.set_focus(None)
        await pilot.pause(0.5)

    assert snap_compare(app, terminal_size=(130, 40), run_before=run_before)


async def test_fork_at_a_selected_message(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    app = make_app(emulator, tmp_path, workspace)
    emulator.enqueue(Reply(text="answer one"), Reply(text="answer two"))
    async with started(app, size=SMALL_SCREEN) as pilot:
        for text in ("first question", "second question"):
            await send_turn(pilot, app, text)
        parent = app.controller.session.id  # type: ignore[union-attr]
        await type_and_send(pilot, "/fork 1")
        await wait_until(
            pilot, lambda: app.controller.session is not None and app.controller.session.id != parent
        )
        texts = [m.text for m in await app.controller.messages() if not m.synthetic]
        assert "answer one" in texts and "second question" not in texts
