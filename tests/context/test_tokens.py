"""The per-message token cache never answers for a different message."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from myrm_tui.context.pipeline import build_pipeline
from myrm_tui.context.state import ContextState
from myrm_tui.context.tokens import TokenCounter, get_encoding
from myrm_tui.context.types import Message, ToolCall
from myrm_tui.context.vault import ArtifactVault
from tests.context.test_memo import sessions
from tests.helpers import config_for, request_for

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


_history_ops = st.lists(
    st.one_of(
        st.tuples(st.just("append"), st.integers(1, 4)),
        st.tuples(st.just("system"), st.integers(0, 0)),  # the prompt in force replaces the stored one
        st.tuples(st.just("truncate"), st.integers(0, 6)),
        st.tuples(st.just("switch"), st.integers(0, 0)),  # another session's history on the same counter
        st.tuples(st.just("copy"), st.integers(0, 0)),  # the same messages in a new list
    ),
    max_size=25,
)


# too_slow: on a loaded machine one draw once stalled a second (the process waiting for a CPU).
@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(ops=_history_ops, sizes=st.lists(st.integers(0, 400), min_size=1, max_size=8))
# Another history as long as the one counted last: counting on from that one's memo is wrong. Random
# search found it most runs, not every one (a protection survived once).
@example(ops=[("append", 2), ("switch", 0), ("append", 2)], sizes=[0, 0, 1, 1, 50, 50])
def test_a_growing_history_is_counted_as_a_whole_one_is(ops: list[tuple[str, int]], sizes: list[int]) -> None:
    """``history`` (counted on from the last call) equals ``messages`` (counted whole) whatever the
    history did since: grew, changed its first message, shrank, was another one, or was copied."""
    counter = TokenCounter()
    made = iter(range(10**6))

    def new() -> Message:
        i = next(made)
        return Message(
            role="user" if i % 2 else "assistant", content="w " * sizes[i % len(sizes)], id=f"m{i}"
        )

    histories: list[list[Message]] = [[new()], [new()]]
    current = 0
    for op, arg in ops:
        h = histories[current]
        if op == "append":
            h.extend(new() for _ in range(arg))
        elif op == "system":
            h[0] = Message(role="system", content=f"prompt {next(made)}", id="sys")
        elif op == "truncate":
            del h[max(1, len(h) - arg) :]
        elif op == "switch":
            current = 1 - current
        else:
            histories[current] = list(h)
        h = histories[current]
        assert counter.history(h) == counter.messages(h)


@settings(max_examples=60, deadline=None)  # the first example builds the whole encoding (~1 s)
@given(text=st.text(max_size=400))
def test_the_encoding_without_its_python_rank_copy_counts_as_tiktokens_own(text: str) -> None:
    """The loaded encoding drops tiktoken's Python copy of its ranks (idle memory); counts, decoding and
    pickling are those of an encoding built whole."""
    import pickle

    import tiktoken
    from tiktoken_ext.openai_public import o200k_base

    enc = get_encoding()
    assert enc._mergeable_ranks == {}  # the copy is gone
    whole = _whole_o200k(tiktoken.Encoding, o200k_base)
    tokens = enc.encode_ordinary(text)
    assert tokens == whole.encode_ordinary(text)
    assert enc.decode(tokens) == whole.decode(tokens)
    assert pickle.loads(pickle.dumps(enc)) is not None


_whole: list[Any] = []


def _whole_o200k(encoding: Any, spec: Any) -> Any:
    if not _whole:
        _whole.append(encoding(**spec()))
    return _whole[0]


# Texts of many lines made of what tiktoken's pre-tokenizer treats apart: newlines, ``\r``, spaces and tabs
# at a line's start, ``/`` (o200k joins ``.\n/``), punctuation, letters, digits, marks, other white space.
_bits = st.sampled_from(
    ["\n", "\n", "\r", " ", "  ", "\t", "/", ".", "a", "Ab", "1", "234", "'s", "\x0b", "\xa0", "é", "\u0301",
     "-", "(", "x.", ":", "\u2028", "\x1c", "→", "  used later: ", "$ ls /tmp"]
)  # fmt: skip
_many_lines = st.lists(_bits, max_size=80).map("".join).map(lambda t: t * (256 // max(len(t), 1) + 1))


# deadline: the first example loads an encoding (0.4 s on a loaded machine).
@settings(max_examples=300, deadline=None)
@given(
    texts=st.lists(_many_lines, min_size=1, max_size=4),
    encoding=st.sampled_from(["o200k_base", "cl100k_base"]),
)
@example(texts=["x).\n/y " * 40], encoding="o200k_base")  # a piece runs on past the newline into a slash
@example(texts=["x\n \n b" * 50], encoding="cl100k_base")  # or over a blank line's spaces
def test_a_text_counted_by_its_chunks_is_counted_as_a_whole(texts: list[str], encoding: str) -> None:
    """``joined`` (the sum of cached chunk counts: the summary block's count at every fit) equals the
    whole text encoded, for each text in turn on one counter (a chunk counted before is looked up, and so
    is a line ``count_lines`` counted ahead: the first text's)."""
    counter = TokenCounter(encoding)
    enc = get_encoding(encoding)
    counter.count_lines(texts[0].split("\n"))
    for text in texts:
        assert counter.joined(text) == len(enc.encode_ordinary(text)) == counter.text(text)


async def _replay_counted(raw: list[Message], window: int, every: int, whole: bool) -> list[Any]:
    """What each request of a session grown message by message sends (every ``every``-th compacts), counted
    by a counter of its own: the summary block by its chunks (as myrm runs), or ``whole`` by encoding it."""
    counter = TokenCounter()
    if whole:
        counter.joined = counter.text  # type: ignore[method-assign]
        counter.count_lines = lambda lines: None  # type: ignore[method-assign]
    state, pipeline, vault = ContextState(), build_pipeline(), ArtifactVault("block-count")
    out: list[Any] = []
    for end in range(3, len(raw) + 1):
        force = end % every == 0
        request = request_for(raw[:end], state, vault=vault, now=float(end), force_compaction=force)
        run = await pipeline.run(replace(request, counter=counter), config_for(window), "block-count")
        out.append([m.to_api() for m in run.messages])
    return out


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    phases=[Phase.explicit, Phase.reuse, Phase.generate],  # a shrink replays whole sessions: minutes
)
@given(sessions(), st.sampled_from([2_500, 8_000]), st.sampled_from([3, 5]))
def test_a_session_sends_the_same_with_blocks_counted_by_their_chunks(
    raw: list[Message], window: int, every: int
) -> None:
    """The summary blocks counted by their cached chunks, a message's Record lines counted when it enters
    (chunks of earlier blocks and compactions looked up again), on generated sessions with edited messages
    and compactions: every request sends what it sends with each block encoded whole."""
    chunked = asyncio.run(_replay_counted(raw, window, every, whole=False))
    assert chunked == asyncio.run(_replay_counted(raw, window, every, whole=True))
