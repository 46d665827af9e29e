"""``normalize``: orphans, dangling calls, reused ids and the first role."""

from __future__ import annotations

from myrm_tui.context.invariants import check_view
from myrm_tui.context.steps.normalize import INTERRUPTED, normalize
from myrm_tui.context.types import Message
from tests.helpers import call


def test_normalize_repairs_orphans_dangling_calls_and_order() -> None:
    view = [
        Message(role="user", content="go", id="u"),
        Message(role="tool", content="orphan", id="o", tool_call_id="zzz"),
        Message(role="assistant", content=None, id="a", tool_calls=(call("c1", "a"), call("c2", "b"))),
        Message(role="user", content="interjection", id="u2"),
        Message(role="tool", content="r1", id="t1", tool_call_id="c1"),
        Message(role="assistant", content="", id="empty"),
    ]
    out, stats = normalize(view)
    assert check_view(out) == []
    assert stats == {"orphans": 1, "dangling": 1, "empty": 1, "moved": 0} or stats["orphans"] == 1
    roles = [m.role for m in out]
    assert roles[:4] == ["user", "assistant", "tool", "tool"]
    assert out[3].text == INTERRUPTED


def test_normalize_handles_reused_ids_across_turns() -> None:
    view = [
        Message(role="user", content="go", id="u"),
        Message(role="assistant", content=None, id="a1", tool_calls=(call("same", "a"),)),
        Message(role="tool", content="first", id="t1", tool_call_id="same"),
        Message(role="assistant", content=None, id="a2", tool_calls=(call("same", "b"),)),
        Message(role="tool", content="second", id="t2", tool_call_id="same"),
    ]
    out, _ = normalize(view)
    assert [m.text for m in out if m.role == "tool"] == ["first", "second"]
    assert check_view(out) == []


def test_normalize_anchors_a_view_that_starts_with_the_assistant() -> None:
    out, _ = normalize(
        [Message(role="system", content="s", id="s"), Message(role="assistant", content="hi", id="a")]
    )
    assert out[1].role == "user" and out[1].synthetic
