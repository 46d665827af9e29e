"""Vault entries as the user reads them: archives of messages render as numbered messages, and the
model's ``file_read_tool`` line ranges address exactly the lines the vault pane shows."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import OptionList, TextArea

from myrm_tui.agent.tools.files import FileReadTool
from myrm_tui.context.state import message_to_dict
from myrm_tui.context.types import Message, ToolCall
from myrm_tui.context.vault import VaultEntry, readable, slice_lines
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.helpers import make_app, send_turn, started, wait_until


def _archive() -> VaultEntry:
    call = ToolCall(
        "call_1",
        "file_edit_tool",
        json.dumps({"path": "app.py", "old_string": "a - b", "new_string": "a +\nb"}),
    )
    msgs = [
        Message(role="system", content="You are myrm.\nBe brief.", id="m1"),
        Message(role="user", content="fix add", id="m2"),
        Message(role="assistant", content="Editing.", id="m3", tool_calls=(call,)),
        Message(role="tool", content="edited app.py", id="m4", tool_call_id="call_1", name="file_edit_tool"),
    ]
    return VaultEntry(
        "vault://s/a",
        json.dumps([message_to_dict(m) for m in msgs]),
        "archive",
        meta={"reason": "pre_compact"},
    )


def test_an_archive_renders_as_numbered_messages_with_tool_calls_and_results() -> None:
    lines = readable(_archive()).splitlines()
    assert lines[0] == "─── #1 · system ───" and lines[1:3] == ["You are myrm.", "Be brief."]
    assert "─── #2 · user ───" in lines and "fix add" in lines
    i = lines.index("─── #3 · assistant ───")
    assert lines[i + 1 : i + 7] == [
        "Editing.",
        "→ tool call file_edit_tool (call_1)",
        "    path: app.py",
        "    old_string: a - b",
        "    new_string:",
        "      a +",
    ]
    assert "─── #4 · tool · file_edit_tool · call_1 ───" in lines and lines[-1] == "edited app.py"


def test_an_emergency_shrunk_message_renders_as_one_message() -> None:
    body = json.dumps(
        {"content": "long text", "tool_calls": [ToolCall("c2", "bash", '{"command": "ls"}').to_api()]}
    )
    text = readable(VaultEntry("vault://s/b", body, "archive", "bash"))
    assert text.splitlines() == [
        "─── #1 · message ───",
        "long text",
        "→ tool call bash (c2)",
        "    command: ls",
    ]


def test_other_entries_are_shown_as_stored() -> None:
    for entry in (
        VaultEntry("vault://s/c", "plain tool output\nline 2", "archive"),  # a TTL-pruned output
        VaultEntry("vault://s/d", '[{"id": 1, "name": "x"}]', "archive"),  # an output that is JSON itself
        VaultEntry("vault://s/e", '[{"role": "user", "content": "hi"}]', "tool_output"),
        VaultEntry("vault://s/f", "[not json", "archive"),
    ):
        assert readable(entry) == entry.content


async def test_vault_pane_lines_are_the_lines_file_read_tool_numbers(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    from myrm_tui.app.widgets.context_ring import ContextUsageIndicator
    from myrm_tui.app.widgets.vault_pane import VaultPane

    # 16K, auto-compaction off, prose answers no per-request trim shortens: each ctrl+k has something to
    # fold (a compaction that would save nothing no longer runs, so it no longer archives).
    app = make_app(emulator, tmp_path, workspace, context_window=16_000, auto_compact=False)

    def prose(i: int) -> Reply:
        return Reply(text=f"Noted {i}. " + " ".join(f"finding{i}x{k} holds" for k in range(150)))

    emulator.enqueue(Reply(tool_calls=[("bash", {"command": "seq 1 300"})]), prose(0), prose(1))
    for i in range(4):
        emulator.enqueue(Reply(tool_calls=[("bash", {"command": f"seq 1 {250 + i}"})]), prose(2 + i))
    async with started(app, size=(140, 44)) as pilot:
        for text in ("count", "again"):
            await send_turn(pilot, app, text)
        ring = app.query_one("#ring", ContextUsageIndicator)
        # compact, talk, compact: the second compaction archives the first's view
        for said in (None, "once more", None):
            if said is None:
                from myrm_tui.app.screens.compact_preview import CompactPreviewScreen

                await pilot.press("ctrl+k")  # a preview first: Enter compacts
                await wait_until(pilot, lambda: isinstance(app.screen, CompactPreviewScreen))
                await pilot.press("enter")
                await wait_until(pilot, lambda: not isinstance(app.screen, CompactPreviewScreen))
                await wait_until(pilot, lambda: not ring.busy)
            else:
                for i in range(4):
                    await send_turn(pilot, app, f"{said} {i}")
        await pilot.press("f4")
        pane = app.query_one(VaultPane)
        options = pane.query_one(OptionList)

        def base_archive(e: Any) -> bool:  # the view before a compaction (what left it is archived too)
            return e.get("kind") == "archive" and e.get("meta", {}).get("reason") == "pre_compact"

        await wait_until(pilot, lambda: any(base_archive(e) for e in pane._entries))
        index = next(i for i, e in enumerate(pane._entries) if base_archive(e))
        uri = pane._entries[index]["uri"]
        options.focus()
        options.highlighted = 0
        await pilot.press(*["down"] * index, "enter")
        await wait_until(pilot, lambda: pane.current_uri == uri)
        shown = pane.query_one(TextArea).text.splitlines()
        assert shown[0] == "─── #1 · system ───" and any(
            line.startswith("─── #") and "user" in line for line in shown
        )
        assert not shown[0].startswith("[{")  # not one long JSON line
        agent = app.controller.agent
        assert agent is not None
        result = await FileReadTool().run({"paths": [uri], "line_range": "2:12"}, agent.tool_runner.ctx)
        numbered = result.content.splitlines()[1:]
        assert [line.split("\t", 1)[1] for line in numbered] == shown[1:12]
        assert [int(line.split("\t", 1)[0]) for line in numbered] == list(range(2, 13))
        entry = await app.controller.vault_entry(uri)
        assert numbered == slice_lines(readable(entry), "2:12").splitlines()


PY_OUTPUT = "import os\n\n\ndef main() -> None:\n    print(os.getcwd())\n"


async def test_an_output_that_looks_like_code_opens_highlighted_and_its_document_is_built_once(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file read's Python is highlighted with the installed grammar (opening one made the app fail
    when none was installed); other outputs are plain. Each open builds the text's document once."""
    from myrm_tui.app.messages import VaultEntryLoaded
    from myrm_tui.app.widgets.vault_pane import HIGHLIGHT_MAX_CHARS, VaultPane

    builds: list[str | None] = []
    real = TextArea._set_document

    def counted(self: TextArea, text: str, language: str | None) -> None:
        if self.id == "vault-text" and text:
            builds.append(language)
        real(self, text, language)

    monkeypatch.setattr(TextArea, "_set_document", counted)
    app = make_app(emulator, tmp_path, workspace)
    async with started(app, size=(140, 44)) as pilot:
        pane = app.query_one(VaultPane)
        big = "def f():\n    pass\n" * (HIGHLIGHT_MAX_CHARS // 10)
        shown = [
            ("vault://s/py", PY_OUTPUT, "python"),
            ("vault://s/json", '{"files": ["a.py"], "note": "import os"}', None),
            ("vault://s/big", big, None),  # too large to highlight on the UI thread: plain
            ("vault://s/log", "plain tool output\nline 2", None),
        ]
        for uri, body, language in shown:
            builds.clear()
            app.screen.post_message(VaultEntryLoaded(uri, VaultEntry(uri, body, "tool_output")))
            await wait_until(pilot, functools.partial(lambda u: pane.current_uri == u, uri))
            area = pane.query_one("#vault-text", TextArea)
            assert (area.text, area.language) == (body, language)
            assert builds == [language], uri
        assert app.is_running


async def test_without_a_grammar_an_entry_is_shown_as_plain_text(
    emulator: ProviderEmulator,
    tmp_path: Path,
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    from textual.widgets import _text_area

    from myrm_tui.app.messages import VaultEntryLoaded
    from myrm_tui.app.widgets.vault_pane import VaultPane

    monkeypatch.setattr(_text_area, "get_language", lambda name: None)  # tree-sitter, no grammar
    app = make_app(emulator, tmp_path, workspace)
    async with started(app, size=(140, 44)) as pilot:
        pane = app.query_one(VaultPane)
        for n in (1, 2):  # the text area made, then reused
            uri = f"vault://s/py{n}"
            app.screen.post_message(VaultEntryLoaded(uri, VaultEntry(uri, PY_OUTPUT * n, "tool_output")))
            await wait_until(pilot, functools.partial(lambda u: pane.current_uri == u, uri))
            area = pane.query_one("#vault-text", TextArea)
            assert (area.text, area.language) == (PY_OUTPUT * n, None)
        assert app.is_running
    assert "vault pane: no python grammar installed; shown as plain text" in caplog.text


async def test_f4_in_a_new_session_says_the_vault_is_empty_and_why(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    """F4 before anything was vaulted showed an empty list and an empty search box, nothing else."""
    from textual.widgets import Static

    from myrm_tui.app.widgets.vault_pane import VaultPane

    app = make_app(emulator, tmp_path, workspace, preheat=False)
    async with started(app, size=(120, 36)) as pilot:
        await pilot.press("f4")
        pane = app.query_one(VaultPane)
        await wait_until(pilot, lambda: app.focused is pane.query_one(OptionList))
        info = pane.query_one("#vault-info", Static)
        assert pane.query_one(OptionList).option_count == 0
        assert "The vault is empty" in str(info.render())
