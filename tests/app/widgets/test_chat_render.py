"""The transcript's rows (``chat_render``): a stored conversation becomes items in the order it
happened, each drawn as its widget (or, when it cannot be, as plain text)."""

from __future__ import annotations

import logging

import pytest

from myrm_tui.app.widgets.chat_message import AssistantMessage, UserMessage
from myrm_tui.app.widgets.chat_render import HEAD_LINES, UNFINISHED, Item, session_items, shown_user_text
from myrm_tui.app.widgets.compaction_row import CompactionRow
from myrm_tui.app.widgets.tool_call import ToolCallView
from myrm_tui.context.compaction.record import Compaction
from myrm_tui.context.types import Message, ToolCall


def _conversation() -> list[Message]:
    done, open_ = ToolCall("c1", "bash", '{"command": "ls"}'), ToolCall("c2", "bash", '{"command": "pwd"}')
    return [
        Message(role="system", content="sys", id="m0"),
        Message(role="user", content="list the files", id="m1"),
        Message(role="assistant", content="Looking.", id="m2", tool_calls=(done, open_)),
        Message(role="tool", content="a.py", id="m3", tool_call_id="c1", meta={"is_error": False}),
        Message(role="assistant", content="", id="m4"),  # nothing to show
    ]


def test_a_stored_conversation_lists_its_rows_in_order_with_each_result_on_its_call() -> None:
    record = Compaction("manual", "FULL", "manual", 9000, 100, 5.0, seq=2)
    unchanged = Compaction("manual", "FULL", "manual", 100, 100, 5.0, seq=1)
    items, calls = session_items(_conversation(), [record, unchanged], "welcome", {})
    assert [it.kind for it in items] == ["user", "compaction", "assistant", "tool", "tool"]
    assert items[1].record is record  # after the message it followed; one that changed nothing is not shown
    assert calls["c1"].result == ("a.py", False, {"is_error": False})
    assert calls["c2"].result == (UNFINISHED, True, {"interrupted": True})  # its turn ended before it did
    assert calls["c1"] is items[3] and calls["c2"] is items[4]


def test_the_welcome_shows_above_an_empty_conversation_only() -> None:
    items, _ = session_items([Message(role="system", content="sys")], [], "Welcome to myrm.", {})
    assert [(it.kind, it.text) for it in items] == [("welcome", "Welcome to myrm.")]
    assert "welcome" not in [it.kind for it in session_items(_conversation(), [], "Welcome", {})[0]]


def test_a_long_user_message_shows_its_first_lines_and_a_paste_its_label() -> None:
    long = "\n".join(f"line {i}" for i in range(100))
    shown = shown_user_text(long, {})
    assert shown.split("\n")[:HEAD_LINES] == long.split("\n")[:HEAD_LINES]
    assert shown.endswith(f"[… {100 - HEAD_LINES:,} more lines]")
    assert shown_user_text("see " + long, {"[pasted 100 lines]": long}) == "see [pasted 100 lines]"
    assert shown_user_text("short", {}) == "short"


def test_search_sees_a_calls_arguments_and_output_and_a_compactions_summary() -> None:
    call = Item("tool", call=ToolCall("c1", "grep", '{"pattern": "Needle"}'), result=("Found It", False, {}))
    assert "needle" in call.low and "found it" in call.low and call.copy_text().startswith("grep ")
    record = Compaction("manual", "FULL", "manual", 9000, 100, 5.0, summary="The PLAN so far", seq=1)
    assert "the plan so far" in Item("compaction", record=record).low


def test_each_kind_is_drawn_as_its_widget() -> None:
    record = Compaction("manual", "FULL", "manual", 9000, 100, 5.0, seq=1)
    assert isinstance(Item("user", "hi").build(), UserMessage)
    assert isinstance(Item("assistant", "hi").build(), AssistantMessage)
    assert isinstance(Item("tool", call=ToolCall("c1", "bash", "{}")).build(), ToolCallView)
    assert isinstance(Item("compaction", record=record).build(), CompactionRow)


def test_an_item_that_cannot_be_drawn_is_plain_text_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    broken = Item("tool", text="[bold]x[/]")  # a tool row without its call: its card cannot be built
    with caplog.at_level(logging.ERROR, logger="myrm_tui.app.widgets.chat_render"):
        widget = broken.build_or_plain()
    assert widget.has_class("-plain")
    assert any(r.exc_info is not None for r in caplog.records)
