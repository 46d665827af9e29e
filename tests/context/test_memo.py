"""The session memo (``context/memo.py``) is a pure speed-up: with it, every request of a session sends what
it sends without it, whatever the session holds and however its messages were edited; it stays bounded and
goes with the session."""

from __future__ import annotations

import asyncio
import json
from dataclasses import asdict, replace
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from myrm_tui.context import memo
from myrm_tui.context.compaction.record import gist
from myrm_tui.context.memo import Memo, memoized
from myrm_tui.context.pipeline import build_pipeline
from myrm_tui.context.state import ContextState
from myrm_tui.context.summary import ledger
from myrm_tui.context.text import signals
from myrm_tui.context.types import Message, ToolCall
from myrm_tui.context.vault import ArtifactVault
from tests.helpers import config_for, conversation, request_for

# Text with what the ledger looks for: paths, ids, numbers, code, decisions, backticked spans, results.
PIECES = [
    "Traceback (most recent call last):\nValueError: bad date",
    "diff --git a/src/app.py b/src/app.py",
    "src/app.py",
    "tests/test_x.py:42",
    "HAT229",
    "value_1",
    "self.as_sql(compiler)",
    "`timeout = 60`",
    "I will set timeout to 30 instead.",
    "the fix is in parse_date",
    "FAILED (failures=2)",
    "3 passed",
    "Error: not enough seats",
    "def parse_date(s):",
    "return x",
    "ok",
    "the",
    "\n",
    " ",
]
texts = st.lists(st.sampled_from(PIECES), min_size=1, max_size=25).map(" ".join)


@st.composite
def sessions(draw: st.DrawFn) -> list[Message]:
    """A session of tool rounds, replies and user turns; ``edit`` reuses an earlier message's id with other
    content (a store that rewrote a message: the memo must not hand back the old one's results)."""
    msgs = [
        Message(role="system", content="You are a test agent.", id="s"),
        Message(role="user", content="task: " + draw(texts), id="u"),
    ]
    for n in range(draw(st.integers(2, 14))):
        kind = draw(st.sampled_from(["tool", "tool", "json", "reply", "user", "edit"]))
        if kind == "reply":
            msgs.append(Message(role="assistant", content=draw(texts), id=f"a{n}"))
        elif kind == "user":
            msgs.append(Message(role="user", content=draw(texts), id=f"u{n}"))
        else:
            reused = kind == "edit" and n > 0
            cid = f"c{n}"
            args = json.dumps({"command": "cat src/app.py\n" + draw(texts) + "\necho done"})
            msgs.append(
                Message(
                    role="assistant",
                    content=draw(texts),
                    id="a0" if reused else f"a{n}",
                    tool_calls=(ToolCall(cid, "bash", args),),
                )
            )
            if kind == "json":
                body = json.dumps([{"id": draw(st.sampled_from(PIECES)), "n": k} for k in range(8)])
            else:
                body = "\n".join(draw(texts) for _ in range(draw(st.sampled_from([1, 20, 80]))))
            msgs.append(
                Message(
                    role="tool",
                    content=f"<returncode>{n % 2}</returncode>\n{body}",
                    id=f"t{n}",
                    tool_call_id=cid,
                    name="bash",
                )
            )
    return msgs


async def _replay(raw: list[Message], window: int, state: ContextState, every: int) -> list[Any]:
    """Each request of a session grown message by message (every ``every``-th compacts, as ``/compact``
    would): what it sent, and its compaction's record."""
    # A pipeline of its own: Summarize keeps ledger lines per message id across the sessions one pipeline
    # serves, so with a shared one the second replay would see the first's (and earlier examples').
    pipeline, vault = build_pipeline(), ArtifactVault("memo-test")
    out: list[Any] = []
    for end in range(3, len(raw) + 1):
        force = end % every == 0
        request = request_for(raw[:end], state, vault=vault, now=float(end), force_compaction=force)
        run = await pipeline.run(request, config_for(window), "memo-test")
        view = run.messages
        record = asdict(run.metrics.compaction) if run.metrics.compaction is not None else None
        if record is not None:
            record.pop("duration_ms")
        out.append(([m.to_api() for m in view], record))
    out.append(state.summary)
    return out


# No shrinking: a failing session is replayed whole at each shrink step, which took minutes; the example
# as generated is small enough to read. make test replays a fixed 6 sessions (each twice, ~0.13 s of CPU
# an example), the long twin 15 new ones.
MEMO_SETTINGS = settings(
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
)
MEMO_CASES = (sessions(), st.sampled_from([2_500, 8_000]), st.sampled_from([4, 7, 1_000]))


@settings(MEMO_SETTINGS, max_examples=6)
@given(*MEMO_CASES)
def test_a_session_sends_the_same_with_its_memo_as_without(
    raw: list[Message], window: int, every: int
) -> None:
    """The property the memo promises: the cached result equals the uncached one (a memo of no entries
    computes everything again), on generated sessions with edited messages and compactions."""
    sends_the_same(raw, window, every)


@pytest.mark.long
@settings(MEMO_SETTINGS, max_examples=15)
@given(*MEMO_CASES)
def test_long_a_session_sends_the_same_with_its_memo_as_without(
    raw: list[Message], window: int, every: int
) -> None:
    """The same property over 15 sessions (``make test-long``)."""
    sends_the_same(raw, window, every)


async def _forked(raw: list[Message], window: int, every: int, cached: bool) -> list[Any]:
    """A session replayed to its middle, then forked (its state as stored, a memo of its own: empty, or
    of no entries when ``not cached``) and both replayed on to the end by the one pipeline that served
    the parent (it keeps the ledger lines of the parent's messages, which the fork holds copies of)."""
    pipeline, vault = build_pipeline(), ArtifactVault("memo-fork")
    parent = ContextState() if cached else ContextState(memo=Memo(entries=0))
    out: list[Any] = []
    fork_at = max(3, len(raw) // 2)
    stored = ""

    async def run(state: ContextState, end: int, sid: str) -> None:
        force = end % every == 0
        request = request_for(raw[:end], state, vault=vault, now=float(end), force_compaction=force)
        got = await pipeline.run(request, config_for(window), sid)
        out.append([m.to_api() for m in got.messages])

    for end in range(3, len(raw) + 1):
        if end == fork_at:
            stored = parent.to_json()
        await run(parent, end, "parent")
    child = ContextState.from_json(stored)
    if not cached:
        child.memo = Memo(entries=0)
    for end in range(fork_at, len(raw) + 1):
        await run(child, end, "child")
    out += [parent.summary, child.summary]
    return out


@settings(MEMO_SETTINGS, max_examples=4)
@given(*MEMO_CASES)
def test_a_forked_session_sends_the_same_with_its_memo_as_without(
    raw: list[Message], window: int, every: int
) -> None:
    """After a fork the child's memo starts empty while the pipeline knows the parent's messages: the
    parent and the child send what they send with no memo, through appends and compactions on both."""
    assert asyncio.run(_forked(raw, window, every, True)) == asyncio.run(_forked(raw, window, every, False))


def sends_the_same(raw: list[Message], window: int, every: int) -> None:
    cached, uncached = ContextState(), ContextState(memo=Memo(entries=0))
    with_memo = asyncio.run(_replay(raw, window, cached, every))
    without = asyncio.run(_replay(raw, window, uncached, every))
    assert with_memo == without
    assert len(uncached.memo) == 0
    if len(raw) > 6:
        assert len(cached.memo) > 0  # it was used


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(texts, texts), min_size=1, max_size=12))
def test_each_memoized_reader_returns_what_it_computes(pairs: list[tuple[str, str]]) -> None:
    """Warm entries never stand in for another input: every reader, called on texts that share prefixes,
    words and ids with what the memo already holds, returns what its uncached function returns."""
    m = Memo()
    with memo.active(m):
        for text, args in pairs:
            msg = Message(
                role="assistant", content=text, id="same-id", tool_calls=(ToolCall("c", "bash", args),)
            )
            part = ledger.use_text(text, (args,))
            for fn, arg in (
                (ledger.use_text, (text, (args,))),
                (ledger.use_words, (part,)),
                (ledger.use_tokens, (part,)),
                (ledger.redundant_shape, (text,)),
                (ledger.subject, (text,)),
                (ledger.line_facts, (text,)),
                (ledger.stated_facts, (msg,)),
                (gist, (msg,)),
                (signals.last_exception_line, (text,)),
                (signals._diff_files, (text,)),
            ):
                assert fn(*arg) == fn.uncached(*arg)  # type: ignore[union-attr]


def test_the_memo_is_bounded_and_drops_its_oldest_first() -> None:
    calls: list[str] = []

    @memoized()
    def upper(s: str) -> str:
        calls.append(s)
        return s.upper()

    m = Memo(entries=3, chars=10)
    with memo.active(m):
        assert [upper(s) for s in ("a", "b", "c", "d")] == ["A", "B", "C", "D"]
        assert len(m) == 3  # "a" dropped
        upper("a")
        assert calls == ["a", "b", "c", "d", "a"]
        upper("xxxxxxxxx")  # 9 chars: the others go to stay within 10
        assert m.chars <= 10 and len(m) == 2
    upper("d")  # no session's run under way: computed, kept nowhere
    assert calls[-1] == "d" and len(m) == 2


def test_the_memo_goes_with_the_session() -> None:
    """Each session's state has its own memo, never serialized: a reopened session starts empty."""
    a, b = ContextState(), ContextState()
    assert a.memo is not b.memo
    with memo.active(a.memo):
        ledger.use_words("one two")
    assert len(a.memo) == 1 and len(b.memo) == 0
    assert "memo" not in json.loads(a.to_json())
    assert len(ContextState.from_json(a.to_json()).memo) == 0


def test_a_reopened_session_fills_its_own_memo() -> None:
    """One pipeline serves every session of an agent and keeps the ledger lines of the messages it saw; a
    session opened again (a new state, an empty memo) still reads its messages into its own memo, so its
    first compaction looks them up instead of reading them."""
    raw = conversation(6)
    pipeline = build_pipeline()

    async def request(state: ContextState) -> None:
        await pipeline.run(request_for(raw, state, vault=ArtifactVault("t")), config_for(16_000), "s")

    first, reopened = ContextState(), ContextState()
    asyncio.run(request(first))
    asyncio.run(request(reopened))
    assert len(first.memo) > 0
    assert set(reopened.memo._d) == set(first.memo._d)


def test_an_output_as_it_came_is_read_when_it_enters_not_when_it_is_folded() -> None:
    """The Record's "referred" mark reads later outputs as they came (the vault originals, not their filtered
    copies): those reads are made on the request an output enters, so the compacting request looks them up
    (it read every original of the fold otherwise: a tenth of a compaction on the foreign sessions)."""
    state, vault = ContextState(), ArtifactVault("t")
    request = request_for(conversation(6, output_chars=6000), state, vault=vault)
    run = asyncio.run(build_pipeline().run(request, config_for(128_000), "s"))
    assert not run.metrics.compacted  # the reads are the entering request's own
    shortened = [m for m in run.messages if m.role == "tool" and m.meta.get("vault_uri")]
    assert shortened, "the filter shortened no output: nothing to read as it came"
    for m in shortened:
        entry = vault.original(m.meta["vault_uri"], "tool_output")
        assert entry is not None and entry.content != m.text
        part = ledger.use_text.uncached(entry.content, ())  # type: ignore[attr-defined]
        assert (ledger.use_text, (entry.content, ())) in state.memo._d
        assert (ledger.use_words, (part,)) in state.memo._d
        assert (ledger.use_tokens, (part,)) in state.memo._d
        # Nothing reads the filtered copy's own words (a third of the reads of a large output, wasted).
        assert (ledger.use_text, (m.text, ())) not in state.memo._d


@given(keys=st.lists(st.text(max_size=8), max_size=30))
def test_the_memo_counts_each_key_it_holds_once(keys: list[str]) -> None:
    """Its character bound reads ``chars``: a key put again (a value replaced) is not counted twice."""
    memo = Memo()
    for k in keys:
        memo.put(("f", k), k)
    assert memo.chars == sum(len(k) + 1 for k in set(keys))


@settings(max_examples=60, deadline=None)
@given(st.lists(texts, max_size=20), st.booleans())
def test_each_is_the_memoized_function_called_on_each(args: list[str], active: bool) -> None:
    """``memo.each`` returns what calling the function on each argument returns, keeps what the function's
    own calls would (a later call hits) and computes each distinct argument once."""
    calls: list[str] = []

    @memoized()
    def shape(s: str) -> tuple[str, int]:
        calls.append(s)
        return s.lower(), len(s)

    m = Memo()
    if not active:
        assert memo.each(shape, args) == [shape.uncached(a) for a in args]  # type: ignore[attr-defined]
        assert len(m) == 0
        return
    with memo.active(m):
        assert memo.each(shape, args) == [shape.uncached(a) for a in args]  # type: ignore[attr-defined]
        assert len(calls) == len(set(args)) + len(args)  # each distinct one by ``each``, all by ``uncached``
        before = len(calls)
        assert [shape(a) for a in args] == [shape.uncached(a) for a in args]  # type: ignore[attr-defined]
        assert len(calls) == before + len(args)  # only the uncached calls: the wrapper hit every one
    assert len(m) == len(set(args))


def test_a_suspended_memo_keeps_nothing_and_comes_back() -> None:
    m = Memo()
    with memo.active(m):
        with memo.suspended():
            ledger.use_words("one two")
        assert len(m) == 0
        ledger.use_words("one two")
    assert len(m) == 1


def test_a_file_views_rows_are_not_kept_in_the_session_memo() -> None:
    """The rows of a file view being cut are read for that cut only (the Record reads the output's own
    lines): they stay out of the session's memo, which they crowded (49,000 of the foreign sessions'
    entries), and the cut is the same."""
    from myrm_tui.context.text.referred import file_view_cut

    rows = (f"{i:>6}\tvalue_{i} = compute(x_{i % 7}, 'src/app.py')  # step {i}" for i in range(1, 400))
    view = "\n".join(rows)
    m = Memo()
    with memo.active(m):
        cut = file_view_cut(view, 2000)
    assert cut == file_view_cut(view, 2000)  # as without a memo
    assert not any(isinstance(k, tuple) and k[0] is ledger.redundant_shape for k in m._d)


@given(st.recursive(st.text(max_size=5) | st.integers(), lambda kids: st.lists(kids, max_size=4).map(tuple)))
def test_a_keys_size_is_the_length_of_every_string_in_it(key: Any) -> None:
    def plain(k: Any) -> int:
        return len(k) if isinstance(k, str) else sum(plain(x) for x in k) if isinstance(k, tuple) else 0

    assert memo._chars(key) == plain(key)


async def _replay_later(raw: list[Message], window: int, every: int, settles: list[int] | None) -> list[Any]:
    """``_replay`` with each request's reads of its new messages left for after it is sent
    (``reads_later``), then made by ``Pipeline.settle`` — after the request at each position in ``settles``
    (a request the model answered at once is followed by the next before they are made) — or, when
    ``settles`` is None, every request reading them itself."""
    pipeline, vault, state = build_pipeline(), ArtifactVault("memo-later"), ContextState()
    out: list[Any] = []
    for end in range(3, len(raw) + 1):
        request = request_for(
            raw[:end], state, vault=vault, now=float(end), force_compaction=end % every == 0
        )
        if settles is not None:
            request = replace(request, reads_later=True)
        run = await pipeline.run(request, config_for(window), "memo-later")
        record = asdict(run.metrics.compaction) if run.metrics.compaction is not None else None
        if record is not None:
            record.pop("duration_ms")
        # The checkpoint (with the base's JSON, made after sending near the point) beside what was sent.
        backup = json.loads(run.plan.backup) if run.plan.backup else None
        if backup is not None:
            backup["last_compaction"].pop("duration_ms", None)  # a time
        out.append(([m.to_api() for m in run.messages], record, backup))
        if settles is not None and end in settles:
            pipeline.settle()
    out.append(state.summary)
    # Every archive written: the base's at each compaction, the folded messages' (made after sending).
    out.append(sorted((e.uri, e.kind, e.content) for e in vault.entries()))
    return out


@settings(MEMO_SETTINGS, max_examples=8)
@given(*MEMO_CASES, st.lists(st.integers(3, 20), max_size=10))
def test_a_session_that_reads_after_sending_sends_the_same(
    raw: list[Message], window: int, every: int, settles: list[int]
) -> None:
    """Reading a request's new messages after it is sent (``Request.reads_later``; the agent does it while
    the model answers), and writing then what a compaction near its point would write of the base and of the
    messages it may fold (``prepare_fold``), changes no request: each sends what it sends, and each
    compaction records and archives what it does, when every request reads them itself, whether they are
    read after each request, after some (the next request reads what is left first) or never, through
    compactions and edited messages."""
    later = asyncio.run(_replay_later(raw, window, every, settles))
    assert later == asyncio.run(_replay_later(raw, window, every, None))


def test_a_request_that_reads_later_leaves_its_reads_for_settle() -> None:
    """With ``reads_later`` a request that does not compact leaves the reads of its new messages (an output
    as it came: its words and tokens, for a later compaction) out of its own run; ``Pipeline.settle`` makes
    them, into the session's memo."""
    state, vault, pipeline = ContextState(), ArtifactVault("t"), build_pipeline()
    request = request_for(conversation(6, output_chars=6000), state, vault=vault)
    run = asyncio.run(pipeline.run(replace(request, reads_later=True), config_for(128_000), "s"))
    assert not run.metrics.compacted
    shortened = [m for m in run.messages if m.role == "tool" and m.meta.get("vault_uri")]
    assert shortened, "the filter shortened no output: nothing to read as it came"
    keys = []
    for m in shortened:
        entry = vault.original(m.meta["vault_uri"], "tool_output")
        assert entry is not None
        keys.append((ledger.use_text, (entry.content, ())))
    assert not any(k in state.memo._d for k in keys)  # not read on the request's path
    assert pipeline.settle() == 0  # nothing left
    assert all(k in state.memo._d for k in keys)


async def _forked_later(raw: list[Message], window: int, every: int, settles: list[int] | None) -> list[Any]:
    """``_forked`` (one pipeline, the parent replayed to its middle, then the child from the parent's stored
    state, then the parent on to the end; each request compacting every ``every``-th), with each request's
    reads left for ``Pipeline.settle`` after the requests at the positions ``settles``, or (None) every
    request reading them itself. The child's requests come before the parent's last ones: what one
    session left unread is read by the other's next request, in order."""
    pipeline, vault = build_pipeline(), ArtifactVault("memo-fork-later")
    parent = ContextState()
    out: list[Any] = []
    fork_at = max(3, len(raw) // 2)
    stored = ""

    async def run(state: ContextState, end: int, sid: str) -> None:
        request = request_for(
            raw[:end], state, vault=vault, now=float(end), force_compaction=end % every == 0
        )
        if settles is not None:
            request = replace(request, reads_later=True)
        got = await pipeline.run(request, config_for(window), sid)
        out.append([m.to_api() for m in got.messages])
        if settles is not None and end in settles:
            pipeline.settle()

    for end in range(3, fork_at + 1):
        if end == fork_at:
            stored = parent.to_json()
        await run(parent, end, "parent")
    child = ContextState.from_json(stored)
    for end in range(fork_at, len(raw) + 1):
        await run(child, end, "child")
    for end in range(fork_at + 1, len(raw) + 1):
        await run(parent, end, "parent")
    out += [parent.summary, child.summary]
    return out


@settings(MEMO_SETTINGS, max_examples=4)
@given(*MEMO_CASES, st.lists(st.integers(3, 20), max_size=10))
def test_a_forked_session_that_reads_after_sending_sends_the_same(
    raw: list[Message], window: int, every: int, settles: list[int]
) -> None:
    """A parent and its fork served by one pipeline, each request's reads left for after sending: both send
    what they send when every request reads them itself, through appends and compactions on both."""
    later = asyncio.run(_forked_later(raw, window, every, settles))
    assert later == asyncio.run(_forked_later(raw, window, every, None))


# Texts that JSON escapes or that the archive's rendering reads: quotes, backslashes, control characters,
# line breaks of every kind, characters outside ASCII, a line that looks like a block's head.
ODD = [
    "plain",
    '"q"',
    "back\\slash",
    "tab\t",
    "cr\r",
    "\r\n",
    "\n",
    "\u2028",
    "é ü",
    "日本",
    "\x00",
    "─── #3 x",
]
odd_texts = st.lists(st.sampled_from(ODD), max_size=8).map("".join)
# A message's content as text, or as multimodal parts (text, an image, a part of no known type).
odd_contents = st.one_of(
    odd_texts,
    st.lists(
        st.one_of(
            odd_texts.map(lambda t: {"type": "text", "text": t}),
            st.just({"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}),
            st.just({"kind": "untyped"}),
        ),
        max_size=3,
    ),
)


@st.composite
def odd_messages(draw: st.DrawFn) -> list[Message]:
    out = []
    for n in range(draw(st.integers(0, 6))):
        role: Any = draw(st.sampled_from(["user", "assistant", "tool"]))
        calls = (
            (ToolCall(f"c{n}", "bash", json.dumps({"command": draw(odd_texts)})),)
            if role == "assistant"
            else ()
        )
        out.append(
            Message(
                role=role,
                content=draw(odd_contents),
                id=f"m{n}",
                tool_calls=calls,
                tool_call_id=f"c{n}" if role == "tool" else None,
                name="bash" if role == "tool" else None,
                reasoning=draw(st.none() | odd_texts) if role == "assistant" else None,
                synthetic=draw(st.booleans()),
                meta={"vault_uri": draw(odd_texts)} if draw(st.booleans()) else {},
            )
        )
    return out


def _block_as_written(n: int, d: dict[str, Any]) -> str:
    """The vault's block of one archived message as it was written in one piece (before ``block_parts``)."""
    from myrm_tui.context.vault import _arguments

    head = [f"#{n}", str(d["role"])]
    if d.get("role") == "tool":
        head += [d.get("name") or "", d.get("tool_call_id") or ""]
    if d.get("synthetic"):
        head.append("(synthetic)")
    lines = [f"─── {' · '.join(h for h in head if h)} ───"]
    content = d.get("content")
    if isinstance(content, list):  # multimodal parts: text kept, media named
        content = "\n".join(
            str(p.get("text", "")) if p.get("type") == "text" else f"[{p.get('type', 'part')}]"
            for p in content
            if isinstance(p, dict)
        )
    if d.get("reasoning_content"):
        lines += ["(reasoning)", *str(d["reasoning_content"]).splitlines()]
    if content:
        lines += str(content).splitlines()
    for call in d.get("tool_calls") or []:
        fn = call.get("function") or {}
        lines.append(f"→ tool call {fn.get('name', '?')} ({call.get('id', '')})")
        lines += _arguments(fn.get("arguments"))
    return "\n".join(lines)


@settings(max_examples=60, deadline=None)
@given(odd_messages(), odd_messages(), st.lists(odd_texts, max_size=3))
def test_the_json_made_ahead_is_what_json_dumps_writes(
    base: list[Message], other: list[Message], notes: list[str]
) -> None:
    """The base's JSON made once a base (``ContextState.base_json``), the checkpoint spliced around it
    (``to_json``) and a compaction's archive of the folded messages joined from each message's JSON made
    ahead (``message_json``) are, byte for byte, what ``json.dumps`` writes of them whole, and the archive's
    line spans are ``readable``'s; a new base is written anew."""
    from myrm_tui.context.compaction import record
    from myrm_tui.context.state import message_to_dict
    from myrm_tui.context.vault import readable
    from tests.helpers import COUNTER

    def whole(state: ContextState) -> str:
        d = json.loads(state.to_json())
        d["base"] = [message_to_dict(m) for m in state.base]
        return json.dumps(d, ensure_ascii=False)

    state = ContextState(base=list(base), notes=notes)
    for _ in range(2):  # made, then found made
        assert state.base_json() == json.dumps([message_to_dict(m) for m in base], ensure_ascii=False)
        assert state.to_json() == whole(state)
    state.base = [*other, *base[:1]]  # a compaction froze another base
    assert state.base_json() == json.dumps([message_to_dict(m) for m in state.base], ensure_ascii=False)
    assert state.to_json() == whole(state)

    real = [m for m in [*base, *other] if m.meta.get("kind") != "summary"]
    vault = ArtifactVault("json-ahead")
    left = record._folded(real, vault, COUNTER)
    if not real:
        assert left == []
        return
    content = json.dumps([message_to_dict(m) for m in real], ensure_ascii=False)
    (entry,) = vault.entries()
    assert entry.content == content
    shown = readable(entry)
    assert shown == "\n\n".join(_block_as_written(n, d) for n, d in enumerate(json.loads(content), 1))
    spans = record._block_spans(shown)
    assert [item.line_range for item in left] == [
        f"{a}:{b}" for a, b in (spans[i] if i < len(spans) else (1, 1) for i in range(len(real)))
    ]


def test_a_compaction_near_its_point_finds_what_it_writes_made_after_sending() -> None:
    """Once a view is sent near the compaction point, ``Pipeline.settle`` writes what the next compaction
    writes of the base and of each message it may fold: the compacting request finds the base's JSON and
    every folded message's made, and drops what it took; before its first view near the point, a session has
    none made."""
    from myrm_tui.context import state as state_module
    from myrm_tui.context.steps.summarize import PREPARE_FROM

    def made() -> set[str]:
        return {m.id for m, _, _ in state_module._JSON_MADE.values()}

    pipeline, vault, state = build_pipeline(), ArtifactVault("near"), ContextState()
    raw = conversation(40, output_chars=1500, prefix="near")
    config = config_for(16_000)
    been_near = False
    for end in range(4, len(raw) + 1, 2):
        base, ready = list(state.base), made()
        base_ready = state.base_made is not None and state.base_made[0] == tuple(base) and bool(base)
        request = request_for(raw[:end], state, vault=vault, now=float(end), reads_later=True)
        run = asyncio.run(pipeline.run(request, config, "near"))
        if run.metrics.compacted and base:
            break
        pipeline.settle()
        been_near = been_near or state.last_sent_tokens >= config.input_budget * PREPARE_FROM
        if not been_near:  # a session far from its point pays nothing
            assert not made() & {m.id for m in raw}
    else:
        raise AssertionError("the session never compacted a second time")
    compaction = run.metrics.compaction
    assert compaction is not None
    folded = [item.message_id for item in compaction.left if item.how == "folded"]
    assert folded and set(folded) <= ready
    assert not set(folded) & made()  # taken by the compaction, not kept: they left the view
    assert base_ready


def test_a_request_that_reads_what_was_left_writes_nothing_ahead() -> None:
    """A request that reads what the requests before it left unread (``Pipeline.settle`` was not called:
    a stream that failed before its first event, a bench request refused) does it on its own path, so it
    writes nothing ahead for a compaction that may not come (one that comes writes what it folds);
    ``settle`` after sending writes it."""
    from myrm_tui.context import state as state_module
    from myrm_tui.context.steps.summarize import PREPARE_FROM

    pipeline, vault, state = build_pipeline(), ArtifactVault("unsettled"), ContextState()
    raw = conversation(40, output_chars=1500, prefix="unsettled")
    ids = {m.id for m in raw}
    config = config_for(16_000)

    def made() -> set[str]:
        return {m.id for m, _, _ in state_module._JSON_MADE.values()} & ids

    end = 4
    while state.last_sent_tokens < config.input_budget * PREPARE_FROM:  # never settled, up to the point
        end += 2
        assert end <= len(raw), "the session never came near its compaction point"
        request = request_for(raw[:end], state, vault=vault, now=float(end), reads_later=True)
        asyncio.run(pipeline.run(request, config, "unsettled"))
    assert not made()
    # The next request reads the near view left unread first, and writes none of it ahead.
    request = request_for(raw[: end + 2], state, vault=vault, now=float(end + 2), reads_later=True)
    asyncio.run(pipeline.run(request, config, "unsettled"))
    assert not made()
    assert state.last_sent_tokens >= config.input_budget * PREPARE_FROM
    assert pipeline.settle() == 0
    assert made()  # after sending, near the point: written ahead


def _fold_view(prefix: str, lengths: list[int]) -> list[Message]:
    return [Message(role="user", content="x" * n, id=f"{prefix}{i}") for i, n in enumerate(lengths)]


def _made_of(view: list[Message]) -> dict[int, Any]:
    from myrm_tui.context import state as state_module

    return {k: v for k, v in state_module._JSON_MADE.items() if any(v[0] is m for m in view)}


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(0, 400), max_size=40), st.integers(2, 24), st.integers(2_000, 8_000))
def test_a_view_over_the_bounds_of_what_is_made_ahead_makes_its_first_messages_once(
    sizes: list[int], entries: int, chars: int
) -> None:
    """``prepare_fold`` makes a view's messages oldest first (a compaction folds those first) as far as half
    the bounds of what is kept ahead, whatever the view's size, and asked again finds them made and makes
    none anew (a view over the bounds pushed out its own first messages and made every one again on each
    request before)."""
    from unittest import mock

    from myrm_tui.context import state as state_module
    from myrm_tui.context.steps.summarize import prepare_fold

    mine = _fold_view("bounds-", sizes)
    with (
        mock.patch.object(state_module, "JSON_MADE_ENTRIES", entries),
        mock.patch.object(state_module, "JSON_MADE_CHARS", chars),
        mock.patch.object(state_module, "_JSON_MADE", {}),
        mock.patch.object(state_module, "_json_chars", 0),
    ):
        prepare_fold(mine, 0)
        first = _made_of(mine)
        made = [m for m in mine if id(m) in first]
        assert made == mine[: len(made)]  # the oldest
        held = sum(len(text) + len(body) for _, text, (_, _, body) in first.values())
        # as far as the bounds
        assert len(made) == len(mine) or len(made) == entries // 2 or held >= chars // 2
        prepare_fold(mine, 0)
        again = _made_of(mine)
        assert again.keys() == first.keys() and all(again[k] is v for k, v in first.items())  # none anew


def test_what_is_made_ahead_goes_least_recently_asked_first() -> None:
    """Past the bounds, what goes first is what no pass asked for the longest (a session that ended near its
    point), not what a session still asking for made first."""
    from unittest import mock

    from myrm_tui.context import state as state_module
    from myrm_tui.context.steps.summarize import prepare_fold

    mine, ended, other = (_fold_view(f"asked-{p}-", [10] * 5) for p in ("mine", "ended", "other"))
    with (
        mock.patch.object(state_module, "JSON_MADE_ENTRIES", 10),
        mock.patch.object(state_module, "_JSON_MADE", {}),
        mock.patch.object(state_module, "_json_chars", 0),
    ):
        prepare_fold(mine, 0)
        prepare_fold(ended, 0)  # the bounds full; this session asks no more
        prepare_fold(mine, 0)
        first = _made_of(mine)
        prepare_fold(other, 0)  # five must go
        assert len(_made_of(other)) == 5 and not _made_of(ended)
        again = _made_of(mine)
        assert again.keys() == first.keys() and all(again[k] is v for k, v in first.items())
