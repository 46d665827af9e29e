"""Issue 33, driven by Pilot with real keys: pastes with CR line endings, the prompt queue, edit cards and
their approval, the approval wait, the footer's keys, plain words on screen."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from textual import events
from textual.widgets import Static

from myrm_tui.app.screens.approval import ApprovalScreen
from myrm_tui.app.widgets.chat_message import AssistantMessage
from myrm_tui.app.widgets.prompt_input import PromptInput
from myrm_tui.app.widgets.status_line import StatusLine
from myrm_tui.app.widgets.tool_call import ToolCallView
from myrm_tui.store.db import Store
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.app import test_tui
from tests.app.test_tui_cards import heading
from tests.helpers import (
    SMALL_SCREEN,
    approval_open,
    collect,
    make_agent,
    make_app,
    openai_settings,
    type_and_send,
    type_text,
    wait_until,
)

frozen = test_tui.frozen  # the snapshots' fixed ids, date and workspace


async def wait(pilot: Any, cond: Any, timeout: float = 60.0) -> None:
    await wait_until(pilot, cond, timeout)


def sixty_lines() -> list[str]:
    return [f"log line {i}: value={i * 7}" for i in range(60)]


async def user_texts(app: Any) -> list[str]:
    return [m.text for m in await app.controller.messages() if m.role == "user"]


@pytest.mark.parametrize("ending", ["\r", "\r\n"])
async def test_a_bracketed_paste_with_cr_line_endings_is_stored_line_by_line(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path, ending: str
) -> None:
    lines = sixty_lines()
    app = make_app(emulator, tmp_path, workspace)
    emulator.enqueue(Reply(text="Read it."))
    async with app.run_test(size=SMALL_SCREEN) as pilot:
        await wait(pilot, app.ready.is_set)
        box = app.query_one(PromptInput)
        app.post_message(events.Paste(ending.join(lines)))  # as tmux paste-buffer -p sends it
        await wait(pilot, lambda: box.text == "[pasted 60 lines]")
        await pilot.press("enter")
        await wait(pilot, lambda: not app.busy and bool(app.query(AssistantMessage)))
        assert any(r.body["messages"][-1]["content"] == "\n".join(lines) for r in emulator.accepted)
        stored = (await user_texts(app))[-1]
        assert stored.split("\n") == lines and "\r" not in stored


async def test_a_small_crlf_paste_keeps_its_lines_in_the_box(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    app = make_app(emulator, tmp_path, workspace)
    async with app.run_test(size=SMALL_SCREEN) as pilot:
        await wait(pilot, app.ready.is_set)
        box = app.query_one(PromptInput)
        app.post_message(events.Paste("one\r\ntwo\rthree"))
        await wait(pilot, lambda: box.document.line_count == 3)
        assert box.text == "one\ntwo\nthree"


async def test_an_unbracketed_paste_typed_out_with_cr_is_one_message_of_sixty_lines(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    """A terminal without bracketed paste types the paste out, each line end an Enter (CR) in one read:
    those Enters are new lines, the whole collapses into a label as a bracketed paste does (issue 45.8);
    the user's own Enter afterwards sends the message."""
    lines = sixty_lines()
    app = make_app(emulator, tmp_path, workspace)
    emulator.enqueue(Reply(text="Read it."))
    async with app.run_test(size=SMALL_SCREEN) as pilot:
        await wait(pilot, app.ready.is_set)
        box = app.query_one(PromptInput)
        driver = app._driver
        assert driver is not None
        for key in typed_out("\r".join(lines)):  # all at once, as the driver posts one read's keys
            driver.send_message(key)
        pasted = "\n".join(lines)
        await wait(pilot, lambda: box.text == "[pasted 60 lines]" and box.pastes.get(box.text) == pasted)
        # nothing sent the paste (a start-up warm-up request of the cache may come and go meanwhile)
        assert not app.busy and not any(lines[-1] in json.dumps(r.body) for r in emulator.requests)
        await pilot.press("enter")
        await wait(pilot, lambda: not app.busy and bool(app.query(AssistantMessage)))
        assert (await user_texts(app))[-1] == "\n".join(lines)


def typed_out(text: str, pauses: dict[int, float] | None = None) -> list[events.Key]:
    """``text`` as a terminal without bracketed paste types it in one read: one key a character, CR as
    Enter, stamped a microsecond apart as the driver's parser stamps one read's keys (made in a loop, a
    busy machine could pause the test between two keys longer than a person's gap). ``pauses``: before
    the key at this index the terminal's next chunk came that many seconds later."""
    from tests.app.test_focus_keys import key_event

    keys = [key_event("enter" if ch == "\r" else ch) for ch in text]
    at = keys[0].time
    for i, key in enumerate(keys):
        at += (pauses or {}).get(i, 1e-6)
        key.time = at
    return keys


def last_user(body: dict[str, Any]) -> str:
    """The user's own last message in a request (the environment reminder after it skipped)."""
    texts = [
        m["content"] if isinstance(m["content"], str) else " ".join(p.get("text", "") for p in m["content"])
        for m in body["messages"]
        if m["role"] == "user"
    ]
    own = [t for t in texts if not t.startswith("<system-reminder")]
    return own[-1] if own else ""  # a cache preheat carries no message of the user


def sent(emulator: ProviderEmulator, text: str) -> bool:
    return any(last_user(r.body) == text for r in emulator.requests)


def queued_line(app: Any) -> str:
    widget = app.screen.query_one("#queued", Static)
    return str(widget.render()) if widget.display else ""


async def test_a_message_sent_during_a_turn_is_queued_and_sent_when_the_turn_ends(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    hold = threading.Event()
    emulator.enqueue(Reply(text="first answer", gate=hold))
    emulator.default = lambda body: Reply(text="second answer" if last_user(body) == "second task" else "ok")
    app = make_app(emulator, tmp_path, workspace)
    try:
        async with app.run_test(size=SMALL_SCREEN) as pilot:
            await wait(pilot, app.ready.is_set)
            box = app.query_one(PromptInput)
            await type_and_send(pilot, "first task")
            await wait(pilot, lambda: app.busy and sent(emulator, "first task"))
            await type_and_send(pilot, "second task")
            await wait(pilot, lambda: "queued: second task" in queued_line(app))
            assert box.text == "" and app.busy
            await type_and_send(pilot, "third thought")
            await wait(pilot, lambda: "queued: third thought" in queued_line(app))
            await pilot.press("up")  # the newest queued message back in the box, to edit
            assert box.text == "third thought" and "third thought" not in queued_line(app)
            await pilot.press("escape")  # removes it; the turn goes on
            assert box.text == "" and app.busy and "queued: second task" in queued_line(app)
            assert not sent(emulator, "second task")
            hold.set()
            await wait(pilot, lambda: not app.busy and len(app.query(AssistantMessage)) == 2)
            assert queued_line(app) == ""
            users = [u for r in emulator.accepted if r.body.get("tools") and (u := last_user(r.body))]
            assert users == ["first task", "second task"]
            stored = [t for t in await user_texts(app) if not t.startswith("<system-reminder")]
            assert stored == ["first task", "second task"]
    finally:
        hold.set()


async def test_esc_in_the_empty_box_still_cancels_the_turn_and_gives_the_queue_back(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    hold = threading.Event()
    emulator.enqueue(Reply(text="never seen", gate=hold))
    app = make_app(emulator, tmp_path, workspace)
    try:
        async with app.run_test(size=SMALL_SCREEN) as pilot:
            await wait(pilot, app.ready.is_set)
            box = app.query_one(PromptInput)
            await type_and_send(pilot, "first task")
            await wait(pilot, lambda: app.busy and sent(emulator, "first task"))
            await type_and_send(pilot, "later task")
            await wait(pilot, lambda: "queued: later task" in queued_line(app))
            await pilot.press("escape")
            await wait(pilot, lambda: not app.busy and box.text == "later task")
            assert queued_line(app) == "" and not sent(emulator, "later task")
    finally:
        hold.set()


def edit_reply(path: str = "hello.py") -> Reply:
    return Reply(
        tool_calls=[
            (
                "file_edit_tool",
                {"path": path, "old_string": "    return 'hello'\n", "new_string": "    return 'hi'\n"},
            )
        ]
    )


def tool_results(emulator: ProviderEmulator) -> list[str]:
    return [m["content"] for r in emulator.accepted for m in r.body["messages"] if m["role"] == "tool"]


async def test_an_edit_under_ask_shows_its_diff_and_waits_for_the_answer(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    big = "".join(f"line {i}\n" for i in range(1, 21))
    (workspace / "big.py").write_text(big)
    emulator.enqueue(
        Reply(
            tool_calls=[
                ("file_edit_tool", {"path": "big.py", "old_string": "line 10\n", "new_string": "line ten\n"})
            ]
        ),
        edit_reply(),
        Reply(text="Done."),
    )
    app = make_app(emulator, tmp_path, workspace, approval="ask")
    async with app.run_test(size=SMALL_SCREEN) as pilot:
        await wait(pilot, app.ready.is_set)
        await type_and_send(pilot, "edit both")
        await wait(pilot, lambda: approval_open(app))
        dialog = str(app.screen.query_one("#command", Static).render()).splitlines()
        # the file's name, its line numbers, 3 lines of context on each side
        assert dialog == [
            "big.py",
            "    7  line 7",
            "    8  line 8",
            "    9  line 9",
            "   10 -line 10",
            "   10 +line ten",
            "   11  line 11",
            "   12  line 12",
            "   13  line 13",
        ]
        status = app.screen_stack[0].query_one(StatusLine)
        assert str(status.render()) == "waiting for your approval (edit)"
        card = app.screen_stack[0].query_one(ToolCallView)
        await wait(pilot, lambda: "waiting for your approval" in heading(card))
        assert heading(card) == "▶ … edit big.py (+1 −1)  · waiting for your approval"
        assert (workspace / "big.py").read_text() == big  # nothing written before the answer
        await pilot.press("n")
        await wait(
            pilot,
            lambda: (
                isinstance(app.screen, ApprovalScreen) and app.screen.assessment.command == "edit hello.py"
            ),
        )
        await pilot.press("y")
        await wait(pilot, lambda: not app.busy)
        declined, applied = app.query(ToolCallView)
        assert heading(declined).startswith("▶ ⊘ edit big.py (+1 −1)") and "declined" in heading(declined)
        assert heading(applied) == "▼ ✓ edit hello.py (+1 −1)"
    assert (workspace / "big.py").read_text() == big
    assert (workspace / "hello.py").read_text() == "def greet():\n    return 'hi'\n"
    results = tool_results(emulator)
    assert any("declined this edit of big.py" in r for r in results), results


async def test_a_command_waiting_for_approval_says_so_instead_of_counting(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    emulator.enqueue(Reply(tool_calls=[("bash", {"command": "touch made-here"})]), Reply(text="Done."))
    app = make_app(emulator, tmp_path, workspace, approval="ask")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait(pilot, app.ready.is_set)
        await type_and_send(pilot, "go")
        await wait(pilot, lambda: approval_open(app))
        card = app.screen_stack[0].query_one(ToolCallView)
        await wait(pilot, lambda: "waiting for your approval" in heading(card))
        card._tick()  # the second's tick changes nothing while the dialog is open
        assert heading(card) == "▶ … bash touch made-here  · waiting for your approval"
        status = app.screen_stack[0].query_one(StatusLine)
        assert str(status.render()) == "waiting for your approval (bash)"
        await pilot.press("y")
        await wait(pilot, lambda: not app.busy)
        assert heading(card).startswith("▶ ✓ bash touch made-here")
    assert (workspace / "made-here").exists()


@pytest.mark.parametrize(
    ("extra", "asked"),
    [
        ({"approval": "ask"}, True),
        ({"approval": "auto"}, False),
        ({"approval": "ask", "allowed_commands": ["file_edit_tool"]}, False),
    ],
)
async def test_the_agent_asks_before_an_edit_only_under_ask_without_an_edit_rule(
    emulator: ProviderEmulator, store: Store, workspace: Path, extra: dict[str, Any], asked: bool
) -> None:
    seen: list[tuple[str, str, str]] = []

    async def approver(tool: str, diff: str, assessment: Any) -> str:
        seen.append((tool, diff, assessment.command))
        return "no"

    agent = await make_agent(store, workspace, openai_settings(emulator, **extra), approver=approver)
    emulator.enqueue(edit_reply(), Reply(text="Done."))
    await collect(agent, "edit it")
    if asked:
        assert [(t, c) for t, _, c in seen] == [("file_edit_tool", "edit hello.py")]
        assert seen[0][1].splitlines()[:2] == ["--- hello.py", "+++ hello.py"]
        assert "-    return 'hello'" in seen[0][1] and "+    return 'hi'" in seen[0][1]
        assert (workspace / "hello.py").read_text() == "def greet():\n    return 'hello'\n"
        assert any("declined this edit of hello.py" in r for r in tool_results(emulator))
    else:
        assert seen == []
        assert (workspace / "hello.py").read_text() == "def greet():\n    return 'hi'\n"


async def ready_footer(pilot: Any, app: Any) -> tuple[Any, list[Any]]:
    """The chat screen's footer once the app is ready and the footer shows its keys; and those keys."""
    from textual.widgets._footer import FooterKey

    from myrm_tui.app.widgets.footer import KeysFooter

    await wait(pilot, app.ready.is_set)
    footer = app.screen.query_one(KeysFooter)
    await wait(pilot, lambda: bool(footer.query(FooterKey)))
    return footer, list(footer.query(FooterKey))


@pytest.mark.parametrize(
    ("size", "expected"),
    [
        (
            (120, 40),
            ["Compact", "Quit", "Help", "Cancel", "Fork", "New", "Sessions", "Settings", "Health", "Vault"],
        ),
        ((90, 30), ["Compact", "Help", "Cancel", "Fork", "Settings", "Health", "Vault"]),
        ((80, 24), ["Compact", "Cancel", "Fork", "Settings", "Health", "Vault"]),
    ],
)
async def test_the_footer_shows_whole_keys_at_every_width(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path, size: tuple[int, int], expected: list[str]
) -> None:
    app = make_app(emulator, tmp_path, workspace, preheat=False)
    async with app.run_test(size=size) as pilot:
        footer, keys = await ready_footer(pilot, app)
        assert [k.description for k in keys] == [*expected, "palette"]
        for key in keys:  # each one drawn whole inside the footer: none clipped at the edge
            assert key.region.width >= len(key.render().plain), key.description
            assert key.region.right <= footer.region.right, key.description


async def test_the_footer_is_rebuilt_when_what_it_shows_changes_not_at_every_binding_refresh(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    from textual.widgets._footer import FooterKey

    from myrm_tui.app.widgets.chat_log import ChatLog

    app = make_app(emulator, tmp_path, workspace, preheat=False)
    emulator.enqueue(Reply(text="Hello there."))
    async with app.run_test(size=(120, 40)) as pilot:
        footer, keys = await ready_footer(pilot, app)
        names = [k.description for k in keys]
        await type_and_send(pilot, "hi")
        await wait(pilot, lambda: not app.busy and bool(app.query(AssistantMessage)))
        for _ in range(3):  # as Textual does after actions, focus moves and screens: nothing shown changed
            app.screen.refresh_bindings()
            await pilot.pause()
        assert list(footer.query(FooterKey)) == keys
        app.query_one(ChatLog).focus()  # the conversation's own keys are shown: a new footer
        await wait(pilot, lambda: any(k.description == "Open / expand" for k in footer.query(FooterKey)))
        app.query_one(PromptInput).focus()
        await wait(pilot, lambda: [k.description for k in footer.query(FooterKey)] == names)


async def test_changes_that_come_together_build_the_footer_once(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from myrm_tui.app.widgets import footer

    built: list[int] = []  # the width of each build of the keys
    compose = footer.KeysFooter.compose

    def counted(self: footer.KeysFooter) -> Any:
        if self._bindings_ready:
            built.append(self.app.size.width)
        return compose(self)

    monkeypatch.setattr(footer.KeysFooter, "compose", counted)
    app = make_app(emulator, tmp_path, workspace, preheat=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready_footer(pilot, app)
        await pilot.pause()
        assert built == [120]  # the first size and the start-up's binding refreshes: one build
        await pilot.resize_terminal(90, 30)
        app.screen.refresh_bindings()
        await wait(pilot, lambda: len(built) > 1)
        await pilot.pause()
        assert built == [120, 90]


@pytest.mark.parametrize(("size", "hidden"), [((80, 24), True), ((140, 40), False)])
async def test_the_panel_is_placed_before_the_screens_widgets_are_styled(
    emulator: ProviderEmulator,
    tmp_path: Path,
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
    size: tuple[int, int],
    hidden: bool,
) -> None:
    """A narrow terminal starts with the panel collapsed and no restyle of the whole screen at mount."""
    from myrm_tui.app.screens.main import MainScreen

    at_mount: list[bool] = []
    on_mount = MainScreen.on_mount

    def seen(self: MainScreen) -> None:
        at_mount.append(self.has_class("-hide-panel"))
        on_mount(self)

    monkeypatch.setattr(MainScreen, "on_mount", seen)
    app = make_app(emulator, tmp_path, workspace, preheat=False)
    async with app.run_test(size=size) as pilot:
        await ready_footer(pilot, app)
        assert at_mount == [hidden] and app.screen.has_class("-hide-panel") is hidden


@pytest.mark.parametrize("size", [(80, 24), (90, 30), (120, 40)])
def test_snapshot_main_screen_at_each_size(
    snap_compare: Any, emulator: ProviderEmulator, tmp_path: Path, frozen: Path, size: tuple[int, int]
) -> None:
    """The main screen after an edit and a reply, at the sizes people use: whole footer keys, the edit
    card titled by its file, no internal tag."""
    (frozen / "app.py").write_text("def add(a, b):\n    return a - b\n")
    emulator.enqueue(
        Reply(
            tool_calls=[("file_edit_tool", {"path": "app.py", "old_string": "a - b", "new_string": "a + b"})]
        ),
        Reply(text="Fixed: `add` now adds."),
    )
    app = make_app(emulator, tmp_path, frozen, preheat=False, keepalive=False, summarizer_model="extractive")

    async def run_before(pilot: Any) -> None:
        await wait_until(pilot, app.ready.is_set, 60)
        await type_and_send(pilot, "fix add")
        await wait_until(pilot, lambda: not app.busy and bool(app.query(AssistantMessage)), 60)
        app.query_one(PromptInput).cursor_blink = False
        app.set_focus(None)  # no blinking cursor in the snapshot
        await pilot.pause(0.5)

    assert snap_compare(app, terminal_size=size, run_before=run_before)


async def test_a_compaction_row_and_the_vault_list_say_in_words_what_the_tags_mean() -> None:
    from textual.app import App, ComposeResult
    from textual.widgets import OptionList
    from textual.widgets._collapsible import CollapsibleTitle

    from myrm_tui.app.widgets.compaction_row import CompactionRow
    from myrm_tui.app.widgets.vault_pane import VaultPane
    from myrm_tui.context.compaction.record import Compaction, LeftItem

    record = Compaction(
        trigger="threshold",
        level="FULL",
        reason="threshold FULL",
        tokens_before=12_000,
        tokens_after=9_000,
        duration_ms=3.0,
        summary='<compacted_summary part="1" messages="40">\n## Goal\nfix app.py\n</compacted_summary>',
        left=(LeftItem("tool", "bash output: <returncode>0</returncode>", "vault://s/ab", "1:9", 900, "m4"),),
    )

    class RowApp(App[None]):
        def compose(self) -> ComposeResult:
            yield CompactionRow(record)
            yield VaultPane()

    app = RowApp()
    async with app.run_test(size=(120, 40)) as pilot:
        row = app.query_one(CompactionRow)
        row.query_one(CollapsibleTitle).focus()
        await pilot.press("enter")
        await wait(pilot, lambda: not row.collapsed)
        summary = str(row.query_one(".summary", Static).render())
        assert summary == "Summary of 40 earlier messages (part 1):\n## Goal\nfix app.py"
        entry = str(row.query_one("ListItem Label").render())
        assert "bash output: exit 0" in entry and "<" not in entry
        pane = app.query_one(VaultPane)
        pane.show_entries(
            [
                {
                    "uri": "vault://s/ab",
                    "kind": "archive",
                    "tool_name": "",
                    "size": 10,
                    "created_at": 0,
                    "meta": {"reason": "compaction_left"},
                }
            ]
        )
        label = str(pane.query_one(OptionList).get_option_at_index(0).prompt)
        assert "archived messages" in label and "left the view at a compaction" in label
        assert "compaction_left" not in label and " archive " not in label


async def test_a_gemini_model_without_its_key_names_the_variable_myrm_reads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from myrm_tui.provider_keys import missing_keys

    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    assert await missing_keys("gemini/gemini-2.5-flash") == ["GEMINI_API_KEY"]


async def test_the_welcome_says_which_model_a_provider_key_picked_and_why(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from myrm_tui.app.app import MyrmApp

    for var in ("ANTHROPIC_API_KEY", "MYRM_MODEL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    app = MyrmApp(db_path=tmp_path / "w.db", workspace=workspace, cli={"api_base": emulator.openai_base})
    async with app.run_test(size=SMALL_SCREEN) as pilot:
        await wait(pilot, lambda: bool(app.query("#welcome")))
        welcome = str(app.query_one("#welcome", Static).render())
        assert "Model: gpt-4o-mini (picked because OPENAI_API_KEY is set;" in welcome, welcome


# -- issue 45.7: ctrl+c stops a turn, twice quits, copies a selection when idle ----------------------------


async def test_ctrl_c_stops_a_running_turn_and_a_second_press_quits(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    from myrm_tui.app.widgets.chat_message import Notice

    app = make_app(emulator, tmp_path, workspace)
    emulator.enqueue(Reply(text="slow " * 400, chunk_size=2, chunk_delay=0.02))
    async with app.run_test(size=SMALL_SCREEN) as pilot:
        await wait(pilot, app.ready.is_set)
        await type_and_send(pilot, "talk")
        await wait(pilot, lambda: bool(app.query(AssistantMessage)))
        await pilot.press("ctrl+c")
        await wait(pilot, lambda: not app.busy)
        assert app.is_running  # the first press only stopped the turn, as Esc does
        assert any("cancelled" in str(n.render()) for n in app.query(Notice))
        stored = await app.controller.messages()
        assert stored[-1].text.endswith("[interrupted by the user]")  # the partial answer kept
        await pilot.press("ctrl+c")
        await wait(pilot, lambda: not app.is_running)


async def test_ctrl_c_when_idle_asks_once_then_quits_and_not_after_the_window(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from myrm_tui.app import app as app_module

    app = make_app(emulator, tmp_path, workspace, preheat=False)
    async with app.run_test(size=SMALL_SCREEN) as pilot:
        await wait(pilot, app.ready.is_set)
        monkeypatch.setattr(app_module, "QUIT_WINDOW_S", 0.0)  # the second press comes too late
        await pilot.press("ctrl+c")
        await wait(pilot, lambda: any("ctrl+c again to quit" in n.message for n in app._notifications))
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.is_running
        monkeypatch.setattr(app_module, "QUIT_WINDOW_S", 60.0)
        await pilot.press("ctrl+c")
        await wait(pilot, lambda: not app.is_running)


async def test_ctrl_c_with_text_selected_copies_it_and_never_quits(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    app = make_app(emulator, tmp_path, workspace, preheat=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait(pilot, app.ready.is_set)
        box = app.query_one(PromptInput)
        await type_text(pilot, "copy me")
        box.select_all()
        await pilot.press("ctrl+c")
        await wait(pilot, lambda: app.clipboard == "copy me")
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.is_running and box.text == "copy me"


async def test_ctrl_d_in_the_empty_box_asks_once_then_quits_and_with_text_deletes_forward(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    """A shell's end of input, as Claude Code, Codex and aider take it: ctrl+d did nothing at all."""
    app = make_app(emulator, tmp_path, workspace, preheat=False)
    async with app.run_test(size=SMALL_SCREEN) as pilot:
        await wait(pilot, app.ready.is_set)
        box = app.query_one(PromptInput)
        await type_text(pilot, "abc")
        await pilot.press("home", "ctrl+d", "ctrl+d")  # with text: deletes forward, never quits
        await wait(pilot, lambda: box.text == "c")
        await pilot.press("ctrl+d", "ctrl+d")  # the second ctrl+d: in an empty box
        await wait(pilot, lambda: any("ctrl+d again to quit" in n.message for n in app._notifications))
        assert app.is_running and box.text == ""
        await pilot.press("ctrl+d")
        await wait(pilot, lambda: not app.is_running)
    assert app.return_code == 0


# -- issue 45.8: an unbracketed paste typed out in one burst ----------------------------------------------


async def test_a_200_line_unbracketed_paste_collapses_and_does_not_send_itself(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    lines = [f"row {i}: {'x' * (i % 50)}" for i in range(200)]
    pasted = "\n".join(lines) + "\n"  # copied whole lines: it ends with a line end
    app = make_app(emulator, tmp_path, workspace, preheat=False)
    emulator.enqueue(Reply(text="Read it."))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait(pilot, app.ready.is_set)
        box = app.query_one(PromptInput)
        driver = app._driver
        assert driver is not None
        for event in typed_out(pasted.replace("\n", "\r")):
            driver.send_message(event)
        await wait(pilot, lambda: box.pastes.get(box.text) == pasted and not app.key_router.keys_waiting)
        assert box.text == "[pasted 201 lines]"
        await pilot.pause()
        assert box.outer_size.height == 3  # one line in the box, not the paste over the screen
        assert not app.busy and not emulator.requests  # its last line end did not send it
        await pilot.press("enter")  # the user's own Enter sends the whole text
        await wait(pilot, lambda: not app.busy and bool(app.query(AssistantMessage)))
        assert (await user_texts(app))[-1] == pasted


async def test_a_one_line_burst_ending_in_enter_sends_and_a_burst_with_more_after_enter_does_not(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    """``tmux send-keys 'hello' Enter``: one read, the Enter last and alone after the text: a send. In
    ``abc`` Enter ``def`` the Enter has more of the burst after it: a line end."""
    app = make_app(emulator, tmp_path, workspace, preheat=False)
    emulator.enqueue(Reply(text="Hi."))
    async with app.run_test(size=SMALL_SCREEN) as pilot:
        await wait(pilot, app.ready.is_set)
        box = app.query_one(PromptInput)
        driver = app._driver
        assert driver is not None
        for event in typed_out("abc\rdef"):
            driver.send_message(event)
        await wait(pilot, lambda: box.text == "abc\ndef" and not app.key_router.keys_waiting)
        await pilot.press("ctrl+u", "ctrl+u", "backspace", "ctrl+u")  # emptied
        await wait(pilot, lambda: box.text == "")
        for event in typed_out("hello\r"):
            driver.send_message(event)
        await wait(pilot, lambda: not app.busy and bool(app.query(AssistantMessage)))
        assert (await user_texts(app))[-1] == "hello" and box.text == ""


async def test_a_paste_written_in_chunks_with_pauses_between_is_still_one_paste(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    """A terminal writes a long paste in chunks; on a busy machine the driver reads the next one up to
    130 ms later (seen in tmux at a load of 14). A pause right before a line end, or right after one,
    neither sends the paste nor splits it."""
    lines = [f"line {i}" for i in range(40)]
    text = "\r".join(lines)
    before_enter = text.index("\r", 100)  # a chunk ends just before a line end...
    after_enter = text.index("\r", 200) + 1  # ...and one just after another
    app = make_app(emulator, tmp_path, workspace, preheat=False)
    async with app.run_test(size=SMALL_SCREEN) as pilot:
        await wait(pilot, app.ready.is_set)
        box = app.query_one(PromptInput)
        driver = app._driver
        assert driver is not None
        for key in typed_out(text, {before_enter: 0.13, after_enter: 0.13}):
            driver.send_message(key)
        await wait(pilot, lambda: box.pastes.get(box.text) == "\n".join(lines))
        assert box.text == "[pasted 40 lines]" and not app.busy and not emulator.requests
