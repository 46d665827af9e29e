"""A shortened output keeps the lines the reply to it refers to: a fact-like token the reply uses (an
identifier, a path, a number) or a whole line it quotes (an edit's ``old_string``) — taken back from the
whole output in the vault when the filter had cut them, within the trim's share."""

from __future__ import annotations

import json
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from myrm_tui.context.config import ContextConfig
from myrm_tui.context.steps.answered import AnsweredOutputTrim
from myrm_tui.context.summary import ledger
from myrm_tui.context.text.referred import FILE_VIEW_ENDS, file_view_cut, is_file_view, referred_lines
from myrm_tui.context.types import Message, ToolCall
from myrm_tui.context.vault import ArtifactVault
from tests.helpers import conversation, crowded_state, run_pipeline, run_step, view_for

HEAD = [
    Message(role="system", content="You are a test agent.", id="s"),
    Message(role="user", content="Why does the sync stop early?", id="u"),
]
# A session that has run a while: a trim pays only over the requests expected to re-read the output.
EARLIER = conversation(10, output_chars=40)[2:]


def read_call(id: str, path: str) -> Message:
    return Message(
        role="assistant",
        content="Let me read it.",
        id=f"a_{id}",
        tool_calls=(ToolCall(f"call_{id}", "Read", json.dumps({"file_path": path})),),
    )


def file_view(rows: list[str]) -> str:
    """A file as Claude Code's Read returns it: each line after its number and an arrow."""
    return "\n".join(f"{k + 1:6d}→{r}" for k, r in enumerate(rows))


def source_rows(n: int) -> list[str]:
    return [f"    total_{k:04d} = weight_{k:04d} * {k} + offset" for k in range(n)]


async def test_a_line_the_filter_cut_comes_back_when_the_reply_refers_to_it() -> None:
    rows = source_rows(700)
    rows[301] = "    budget = retry_budget_limit(session, 317)"
    rows[402] = "    if remaining < threshold_for(batch): return halt(batch)"
    raw = [
        *HEAD,
        *EARLIER,
        read_call("r1", "lib/sync.ex"),
        Message(role="tool", content=file_view(rows), id="t1", tool_call_id="call_r1", name="Read"),
    ]
    state, vault = crowded_state(), ArtifactVault("t")  # a session the Read crowds: filtered on arrival
    first, _ = await run_pipeline(raw, 128_000, state, now=1.0, vault=vault)
    filtered = first[-1]
    assert filtered.meta.get("filter") and "retry_budget_limit" not in filtered.text  # the filter cut both
    assert "threshold_for(batch)" not in filtered.text
    edit = json.dumps(
        {
            "file_path": "lib/sync.ex",
            "old_string": "    if remaining < threshold_for(batch): return halt(batch)",
            "new_string": "    if remaining <= threshold_for(batch): return halt(batch)",
        }
    )
    reply = Message(
        role="assistant",
        content="The cap is `retry_budget_limit`; the comparison is off by one.",
        id="a2",
        tool_calls=(ToolCall("call_e2", "Edit", edit),),
    )
    grown = [*raw, reply, Message(role="tool", content="ok", id="t2", tool_call_id="call_e2", name="Edit")]
    second, _ = await run_pipeline(grown, 128_000, state, now=2.0, vault=vault)
    trimmed = next(m for m in second if m.tool_call_id == "call_r1")
    assert trimmed.meta.get("trimmed"), trimmed.id
    assert "budget = retry_budget_limit(session, 317)" in trimmed.text  # the reply names it
    assert "if remaining < threshold_for(batch): return halt(batch)" in trimmed.text  # the edit quotes it
    assert len(trimmed.text) < len(filtered.text)  # still a trim of the filtered copy
    entry = vault.get_cached(trimmed.meta["vault_uri"])
    assert entry is not None and entry.content == raw[-1].text


def test_one_line_for_a_token_used_on_many() -> None:
    rows = ["def run(a):", "    helper_call(a)", "    helper_call(b)", "    helper_call(c)", "    x = 1"]
    reply = Message(role="assistant", content="It goes through `helper_call`.", id="r")
    assert [ln.text for ln in referred_lines("\n".join(rows), [reply])] == ["    helper_call(a)"]
    assert referred_lines("\n".join(rows), []) == []


@st.composite
def answered_outputs(draw: st.DrawFn) -> tuple[list[str], set[int], set[int]]:
    """An output's rows, the rows whose token the reply names, and the rows its call quotes whole."""
    n = draw(st.integers(150, 400))
    salt = draw(st.integers(0, 999))
    rows = [f"entry_{k:04d}_{salt} = lookup(table, {k})" for k in range(n)]
    named = set(draw(st.lists(st.integers(0, n - 1), max_size=3)))
    quoted = set(draw(st.lists(st.integers(0, n - 1), max_size=3)))
    return rows, named, quoted


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(answered_outputs())
def test_the_trim_keeps_every_line_the_reply_refers_to_within_its_share(
    case: tuple[list[str], set[int], set[int]],
) -> None:
    import asyncio

    rows, named, quoted = case
    body = "\n".join(rows)
    reply = Message(
        role="assistant",
        content="Found: " + ", ".join(rows[k].split(" ")[0] for k in sorted(named)),
        id="a2",
        tool_calls=(
            ToolCall("call_2", "bash", json.dumps({"command": "\n".join(rows[k] for k in sorted(quoted))})),
        ),
    )
    raw = [
        *HEAD,
        Message(
            role="assistant",
            content=None,
            id="a1",
            tool_calls=(ToolCall("call_1", "bash", '{"command": "dump"}'),),
        ),
        Message(role="tool", content=body, id="t1", tool_call_id="call_1", name="bash"),
        reply,
    ]
    config = ContextConfig(max_context_tokens=128_000)
    out = asyncio.run(run_step(AnsweredOutputTrim(), view_for(raw, vault=ArtifactVault("t")), config=config))
    new = out.messages[3]
    assert new.meta.get("trimmed")  # a long answered output, far from the next compaction
    kept = new.text.split("\n[trimmed to ")[0]
    assert len(kept) <= int(len(body) * config.trim_keep_ratio)  # the same share
    for k in named | quoted:
        assert rows[k] in kept.splitlines(), k


code_rows = st.lists(
    st.sampled_from(
        [
            "  def sync(session, dir) do",
            "      {:error, reason} ->",
            '        Logger.warning("Failed to parse #{file}: #{inspect(reason)}")',
            "    |> Enum.map(&load_session_messages/1)",
            "  @batch_size 500",
            "        started_at: parsed.started_at,",
            "  end",
            "",
        ]
    ),
    min_size=120,
    max_size=300,
)


@settings(max_examples=30, deadline=None)
@given(code_rows)
def test_an_arrow_numbered_file_view_is_trimmed_as_a_tab_numbered_one(rows: list[str]) -> None:
    """Claude Code's Read numbers lines with an arrow, ``cat -n`` with a tab: the trim reads both as code
    (an ``{:error, reason} ->`` clause of a file view is no failure line that outranks the rest)."""
    reply = Message(role="assistant", content="Next file.", id="a2")
    config = ContextConfig(max_context_tokens=128_000)
    tabbed = "\n".join(f"{k + 1:6d}\t{r}" for k, r in enumerate(rows))
    arrows = "\n".join(f"{k + 1:6d}→{r}" for k, r in enumerate(rows))
    settings_ = AnsweredOutputTrim().configure(config)

    def trim(body: str) -> str | None:
        m = Message(role="tool", content=body, id="t1", tool_call_id="c1", name="Read")
        return AnsweredOutputTrim._trim(m, reply, settings_)

    by_tab, by_arrow = trim(tabbed), trim(arrows)
    assert (by_arrow is None) == (by_tab is None)
    if by_tab is not None and by_arrow is not None:
        assert by_arrow == by_tab.replace("\t", "→")


@settings(max_examples=15, deadline=None)
@given(code_rows.map(lambda rows: rows * 6))
def test_the_filter_cuts_an_arrow_numbered_view_as_a_tab_numbered_one(rows: list[str]) -> None:
    import asyncio

    from myrm_tui.context.filters.processor import FilterProcessor

    def filtered(sep: str) -> str:
        body = "\n".join(f"{k + 1:6d}{sep}{r}" for k, r in enumerate(rows))
        raw = [
            *HEAD,
            read_call("r1", "lib/sync.ex"),
            Message(role="tool", content=body, id="t1", tool_call_id="call_r1", name="Read"),
        ]
        view = view_for(raw, vault=ArtifactVault("t"))
        out = asyncio.run(run_step(FilterProcessor(), view, window=128_000))
        return re.split(r"\n\[(?:head\+tail|fact lines):", out.messages[-1].text)[0]

    by_tab, by_arrow = filtered("\t"), filtered("→")
    assert by_tab != "\n".join(rows)  # it was cut
    # The same lines kept (a line the last-resort character cut split may keep its tab: no number is left)
    assert by_arrow.replace("→", "\t") == by_tab


# -- A file view cut to its fact lines (the smart filter's lossy cut of a numbered view) -----------------


def tab_view(rows: list[str]) -> str:
    return "\n".join(f"{k + 1:>6}\t{r}" for k, r in enumerate(rows))


def test_a_cut_file_view_keeps_its_ends_and_fact_lines_before_plain_code() -> None:
    """At the filter's share (4,000 characters of a 28,000-character file): the module's head (its
    constants) and a name from its middle are kept, the plain code around that name is not; a line whose
    only number is its line number is plain code."""
    rows = ["        total = total + compute(item, offset) + other(value)"] * 400
    rows[17] = "  @batch_size 500"
    rows[200] = "    rows = load_session_messages(s)"
    view = tab_view(rows)
    cut = file_view_cut(view, 4_000).splitlines()
    assert "    18\t  @batch_size 500" in cut and "   201\t    rows = load_session_messages(s)" in cut
    assert not any(c.startswith(("   200\t", "   202\t")) for c in cut)
    assert len("\n".join(cut)) <= 4_000
    assert is_file_view(view) and not is_file_view("a log\nof two lines\n   1\tand one numbered")


FACT_CODE = ["rows = load_session_messages(s)", "@batch_size 500", "def handle_call(msg, from, state) do"]
PLAIN_CODE = ["total = total + compute(item)", "end", "x = other(value) + more(things, here, and, there)"]
CODE = st.sampled_from([*FACT_CODE, *PLAIN_CODE, "path = 'lib/app/sync.ex'"])


@settings(max_examples=80, deadline=None)
@given(st.lists(CODE, min_size=1, max_size=300), st.integers(200, 8_000))
def test_a_cut_file_view_is_its_own_lines_in_order_within_its_share_facts_first(
    rows: list[str], max_chars: int
) -> None:
    """Whatever the file and the share: the cut is lines of the view, verbatim and in order, within the
    share (the whole view when it fits); past the file's ends, no line of plain code the ledger does not find
    salient is kept while a line with a fact is cut."""
    view = tab_view(rows)
    cut = file_view_cut(view, max_chars).splitlines()
    lines = view.splitlines()
    assert len("\n".join(cut)) <= max_chars
    if len(view) <= max_chars:
        assert cut == lines
    it = iter(lines)
    assert all(any(c == r for r in it) for c in cut)  # a subsequence
    salient = {ln.text.strip() for ln in ledger.salient_lines(view)}
    middle = lines[FILE_VIEW_ENDS:-FILE_VIEW_ENDS]
    kept = set(cut)
    plain = [r for r in middle if r.split("\t", 1)[1] in PLAIN_CODE and r.strip() not in salient]
    if any(r in kept for r in plain):
        assert all(r in kept for r in middle if r.split("\t", 1)[1] in FACT_CODE)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(
    st.lists(
        st.sampled_from(
            ["def", "x", "a_b", "self.x", "42", "3.14", "/tmp/f.py:12", "k=v", "é", " ", "(", "0xff", "ID-7"]
        ),
        max_size=8,
    ).map(" ".join)
)
def test_a_line_holds_a_fact_token_exactly_when_fact_tokens_finds_one(line: str) -> None:
    """``holds_fact_token`` (the file-view cut's test, a line at a time) is ``fact_tokens``'s own test."""
    assert ledger.holds_fact_token(line) == bool(ledger.fact_tokens(line))


def _fact_parts_one_by_one(token: str) -> list[str]:
    """The rule as first written: the token and each of its parts, each tested on its own."""
    parts = [token, *re.split(r"[:/=,]+", token)] if re.search(r"[:/=,]", token) else [token]
    fact = re.compile(r"\d|_|/|\w\.\w|[a-z][A-Z]")
    return [x for x in parts if 3 <= len(x) <= 80 and fact.search(x)]


# Compound tokens longer than 80 characters whose parts may or may not be facts (a URL, a long path:key).
LONG_PARTS = ["abc", "ab", "x_y", "Path", "v2", "a.b", "fooBar", "plainword", "é", "42"]
long_tokens = st.lists(st.sampled_from(LONG_PARTS), min_size=1, max_size=40).map(
    lambda ps: "".join(p + ":/=,"[i % 4] for i, p in enumerate(ps))[:-1] or "x"
)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    st.lists(
        st.one_of(
            long_tokens,
            st.sampled_from(["def", "x", "a_b", "self.x", "42", "/tmp/f.py:12", "k=v", "é", "(", "ID-7"]),
        ),
        max_size=8,
    ).map(" ".join)
)
def test_fact_tokens_and_holds_fact_token_follow_the_rule_token_by_token(line: str) -> None:
    """``_fact_parts`` skips a token no pattern marks (a part lies inside its token) and ``holds_fact_token``
    stops at the first fact: both give what testing the token and each of its parts one by one gives, on
    compound tokens of any length (over 80 characters only the parts can be facts)."""
    tokens = dict.fromkeys(re.findall(r"[\w$#][\w.#/$:-]*\w", line))
    expected = [x for t in tokens for x in _fact_parts_one_by_one(t)]
    assert list(ledger.fact_tokens.__wrapped__(line)) == list(dict.fromkeys(expected))
    assert ledger.holds_fact_token(line) == bool(expected)
