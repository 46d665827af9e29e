"""The per-message token cache never answers for a different message."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from myrm_tui.context.tokens import TokenCounter
from myrm_tui.context.types import Message, ToolCall

texts = st.text(max_size=300)
calls = st.lists(
    st.builds(ToolCall, st.just("call_1"), st.sampled_from(["file_read_tool", "bash"]), texts), max_size=3
)
parts = st.lists(
    st.one_of(
        st.builds(lambda t: {"type": "text", "text": t}, texts),
        st.builds(lambda u: {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{u}"}}, texts),
    ),
    min_size=1,
    max_size=3,
)
thinking = st.lists(st.builds(lambda t, s: {"type": "thinking", "thinking": t, "signature": s}, texts, texts))
messages = st.builds(
    Message,
    role=st.just("assistant"),
    content=st.one_of(st.none(), texts, parts),
    tool_calls=calls.map(tuple),
    reasoning=st.one_of(st.none(), texts),
    thinking_blocks=thinking.map(tuple),
    id=st.just("m3#shrink"),
)


@settings(max_examples=100, derandomize=True)
@given(first=messages, second=messages)
def test_a_message_that_shares_an_id_with_another_is_counted_afresh(first: Message, second: Message) -> None:
    # The fit step derives one id ("…#shrink") for each ever tighter cut of a call: the cache is keyed by
    # all that is counted, or the second cut is charged the first one's size and nothing fits.
    counter = TokenCounter()
    counter.message(first)
    assert counter.message(second) == TokenCounter().message(second)
