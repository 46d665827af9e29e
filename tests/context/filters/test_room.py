"""The room model (``filters/room.py``): a lossy cut of prose on arrival only where it would crowd the view;
other outputs (code, logs, listings) are cut on arrival as before."""

from __future__ import annotations

import asyncio
import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from myrm_tui.context.config import ContextConfig
from myrm_tui.context.filters.processor import FilterProcessor
from myrm_tui.context.filters.room import DEFAULT_ROUND_TOKENS, SHAPE_CHARS, crowds, is_prose, mean_round
from myrm_tui.context.state import ContextState
from myrm_tui.context.types import Message, ToolCall
from myrm_tui.context.vault import ArtifactVault
from tests.helpers import COUNTER, PIPELINE, crowded_state, request_for, run_step, view_for


def requests(n: int) -> list[Message]:
    """A history of ``n`` requests (one assistant message each)."""
    out = [Message(role="user", content="go", id="u")]
    for k in range(n):
        out.append(Message(role="assistant", content=f"step {k}", id=f"a{k}"))
        out.append(Message(role="user", content="next", id=f"u{k}"))
    return out


def test_a_view_at_the_point_crowds_whatever_the_session() -> None:
    assert crowds(10_000, 10_000, [], [])
    assert crowds(12_000, 10_000, [500, 500], requests(1))


def test_a_session_expected_to_end_first_is_not_crowded() -> None:
    """Room for 10 mean rounds before the point: a session of 3 requests is taken to make 3 more and end
    first; one of 10 requests is taken to make 10 more and reach it."""
    growth = [1_000, 1_000]
    assert not crowds(10_000, 20_000, growth, requests(3))
    assert crowds(10_000, 20_000, growth, requests(10))


def test_the_mean_round_is_the_sessions_own_once_it_has_two() -> None:
    assert mean_round([]) == mean_round([7_000]) == DEFAULT_ROUND_TOKENS
    assert mean_round([1_000, 3_000]) == 2_000
    assert mean_round([0, 0]) == 1.0  # a session that only trimmed still divides by something


def code_file(lines: int) -> str:
    """A Claude Code ``Read`` of a source file: arrow-numbered code, no result lines."""
    return "\n".join(
        f"{k + 1:>6}→    def handler_{k}(request): return dispatch(request, {k})" for k in range(lines)
    )


def report(sections: int) -> str:
    """A subagent's final report (a ``Task`` result): markdown headings, bullets of sentences, a little
    fenced code."""
    out = ["Now I have what I need. Here is the report.", ""]
    for k in range(sections):
        out += [
            f"## {k + 1}. How the handler for route {k} reaches the session store",
            "",
            f"The handler `handle_{k}/2` reads the session from the registry before it checks the token,",
            f"so a stale token is only seen after the lookup. It inserts {k * 10 + 500} rows a batch.",
            f"- **Entry point**: `lib/app/route_{k}.ex` calls the store through the public facade.",
            "- The tests cover the happy path only; nothing checks an expired token on this route.",
            "",
            "```elixir",
            f"def handle_{k}(conn, params), do: Store.fetch(conn, params)",
            "```",
            "",
        ]
    return "\n".join(out)


def tool_turn(name: str, output: str, earlier: int = 0) -> list[Message]:
    args = {"description": "explore the handlers"} if name == "Task" else {"file_path": "lib/app.ex"}
    call = ToolCall("call_r", name, json.dumps(args))
    return [
        *requests(earlier),
        Message(role="assistant", content=None, id="ar", tool_calls=(call,)),
        Message(role="tool", content=output, id="tr", tool_call_id="call_r", name=name),
    ]


def read_turn(output: str, earlier: int = 0) -> list[Message]:
    return tool_turn("Read", output, earlier)


async def test_a_large_report_in_a_session_that_will_end_first_stays_whole() -> None:
    """A subagent's report (~9K tokens) arriving in a young session at 32K: the view would stay far under
    the compaction point for the rest of a session this young, so nothing is cut on arrival (the answered
    trim and a compaction may shorten it later); deep into a session whose view it crowds, it is cut, its
    original in the vault."""
    text = report(90)
    assert COUNTER.text(text) > ContextConfig(max_context_tokens=32_000).filter_single_tokens
    young = tool_turn("Task", text)
    out = (await run_step(FilterProcessor(), view_for(young), window=32_000)).messages
    assert out[-1] is young[-1]
    old = tool_turn("Task", text, earlier=40)
    state = ContextState(round_growth=[2_000] * 16)  # 40 requests of 2K: the point is a few rounds away
    view = view_for(old, state)
    cut = (await run_step(FilterProcessor(), view, window=32_000)).messages[-1]
    assert cut.meta.get("filter") == "head+tail" and len(cut.text) < len(text) // 2
    entry = view.request.vault.original(cut.meta["vault_uri"], "tool_output")
    assert entry is not None and entry.content == text


async def test_a_large_code_read_is_cut_on_arrival_even_where_nothing_crowds() -> None:
    """Code is not prose: a 600-line file read in the same young session is cut on arrival, as it was before
    the room model (a file view to its fact lines, the original in the vault), where a report of its size
    stays whole."""
    text = code_file(600)
    turn = read_turn(text)
    view = view_for(turn)
    cut = (await run_step(FilterProcessor(), view, window=32_000)).messages[-1]
    assert cut.meta.get("filter") == "fact lines" and len(cut.text) < len(text) // 2
    entry = view.request.vault.original(cut.meta["vault_uri"], "tool_output")
    assert entry is not None and entry.content == text


def middle_fact_read(lines: int) -> str:
    """A ``Read`` of a source file whose one name a report would use sits in its middle, among lines of
    plain code longer than it."""
    rows = [f"{k + 1:>6}→        total = total + compute(item, offset) + other(value)" for k in range(lines)]
    rows[lines // 2] = f"{lines // 2 + 1:>6}→    rows = load_session_messages(s)"
    return "\n".join(rows)


async def test_a_code_read_cut_on_arrival_keeps_the_names_from_its_middle() -> None:
    """A file view's cut keeps its fact-bearing lines first (a name, a number, a path), wherever they are in
    the file: a head and a tail keep none of its middle. The lines keep their numbers and arrows; the whole
    read is in the vault."""
    text = middle_fact_read(600)
    view = view_for(read_turn(text))
    cut = (await run_step(FilterProcessor(), view, window=32_000)).messages[-1]
    assert len(cut.text) < len(text) // 4
    assert "   301→    rows = load_session_messages(s)" in cut.text.splitlines()
    entry = view.request.vault.original(cut.meta["vault_uri"], "tool_output")
    assert entry is not None and entry.content == text


async def test_a_json_output_gets_its_skeleton_even_where_nothing_crowds() -> None:
    """Data is shortened, not cut: its skeleton keeps every key, so it is made wherever the output is big,
    also where its values are sentences enough for its one line to read as prose."""
    note = "the handler for route {} reads the session before it checks the token and then stores it"
    rows = [{"id": k, "note": note.format(k), "tags": ["a", "b"]} for k in range(300)]
    assert is_prose(json.dumps(rows))
    turn = read_turn(json.dumps(rows))
    out = (await run_step(FilterProcessor(), view_for(turn), window=32_000)).messages[-1]
    assert out.meta.get("filter", "").startswith("structural (json)")


async def test_a_crowded_turn_is_cut_where_a_young_one_is_not() -> None:
    """The same report, the same view size: only the session's own rounds and length differ."""
    text = report(30)
    turn = tool_turn("Task", text, earlier=2)
    whole = (await run_step(FilterProcessor(), view_for(turn), window=16_000)).messages[-1]
    cut = (await run_step(FilterProcessor(), view_for(turn, crowded_state()), window=16_000)).messages[-1]
    assert whole is turn[-1] and cut.meta.get("filter")


@st.composite
def sessions(draw: st.DrawFn) -> list[Message]:
    """Sessions of reads and commands whose outputs are often over the filter's single-output size."""
    msgs = [Message(role="system", content="sys", id="s"), Message(role="user", content="task", id="u")]
    for n in range(draw(st.integers(1, 14))):
        name = draw(st.sampled_from(["Read", "bash", "Task"]))
        args = json.dumps({"command": "make test"} if name == "bash" else {"file_path": f"f{n}.py"})
        msgs.append(
            Message(role="assistant", content=None, id=f"a{n}", tool_calls=(ToolCall(f"c{n}", name, args),))
        )
        lines = draw(st.sampled_from([5, 120, 400, 1_200]))
        body = "\n".join(
            f"line {k} of output {n}: value_{k * 7 % 97} at path/to/mod_{k}.py" for k in range(lines)
        )
        if name == "Read" and draw(st.booleans()):  # a file view: cut to its fact lines
            code = ("    rows = load_{}(s)", "    total = total + step(item)", "    end")
            body = "\n".join(f"{k + 1:>6}→{code[k % 3].format(k)}" for k in range(lines))
        msgs.append(Message(role="tool", content=body, id=f"t{n}", tool_call_id=f"c{n}", name=name))
    return msgs


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sessions(), st.sampled_from([8_000, 16_000, 32_000]))
def test_a_deferred_cut_never_lets_a_request_over_the_budget_and_every_cut_is_in_the_vault(
    raw: list[Message], window: int
) -> None:
    """Grown request by request with one state: outputs the filter left whole never carry a request over
    the input budget, and every shortened output points to its whole original in the vault."""
    config = ContextConfig(max_context_tokens=window)
    state, vault = ContextState(), ArtifactVault("p")
    stored = {m.id: m.text for m in raw}

    async def go() -> None:
        for end in range(3, len(raw) + 1, 2):
            run = await PIPELINE.run(request_for(raw[:end], state, vault=vault, now=float(end)), config, "p")
            view = run.messages
            assert COUNTER.messages(view) <= config.input_budget
            for m in view:
                base = m.id.split("#", 1)[0]
                if m.role == "tool" and base in stored and m.text != stored[base]:
                    entry = vault.original(m.meta.get("vault_uri"), "tool_output")
                    assert entry is not None and entry.content == stored[base], m.id

    asyncio.run(go())


WORDS = st.sampled_from(["the", "handler", "reads", "session", "token", "before", "store", "Checks", "a"])
SENTENCES = st.lists(WORDS, min_size=3, max_size=14).map(lambda ws: " ".join(ws) + ".")
MARKS = st.sampled_from(["", "- ", "* ", "1. ", "## ", "**Note**: "])  # markdown around a sentence
# Shapes of lines that are not prose, whatever words they carry: a numbered file view (cat -n, Claude
# Code's arrows, Hermes's pipes), indented code, a table row, grep hits, a log, a traceback, a diff, a tree.
NOT_PROSE = [
    "{n:>6}→{s}",
    "{n:>6}\t{s}",
    "{n:>6}|{s}",
    "        {s}",
    "| {s} | {n} |",
    "src/app/mod_{n}.py:{n}: {s}",
    "2026-12-07 10:{n:02}:00 INFO {s}",
    '  File "/srv/app/mod_{n}.py", line {n}, in {s}',
    "+{s}",
    "├── {s}",
]
SHAPED = st.tuples(st.sampled_from(NOT_PROSE), SENTENCES, st.integers(0, 99))


@settings(max_examples=60, deadline=None)
@given(st.lists(SHAPED, min_size=1, max_size=40))
def test_lines_shaped_as_code_logs_listings_tables_or_views_are_never_prose(
    lines: list[tuple[str, str, int]],
) -> None:
    """Whatever words they hold, a text of such lines is cut on arrival as before the room model."""
    text = "\n".join(shape.format(s=s, n=n) for shape, s, n in lines)
    assert not is_prose(text)
    assert not is_prose(text.replace("\n", "\\n"))  # the same text escaped in a JSON string


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(MARKS, SENTENCES), min_size=1, max_size=40),
    st.integers(0, 3),
)
def test_sentences_with_some_fenced_code_are_prose(lines: list[tuple[str, str]], code_per_line: int) -> None:
    """A report: headings and bullets of sentences, with fenced code up to three times the written text."""
    written = [mark + s for mark, s in lines]
    size = sum(len(w) for w in written)
    body: list[str] = []
    while sum(len(c) for c in body) + 24 <= size * code_per_line:  # a line below is at most 24 characters
        body.append(f"value_{len(body)} = compute({len(body)})")
    code = ["```python", *body, "```"]
    assert is_prose("\n".join(written + code))
    assert is_prose("\n".join(code + written))


def test_shapes_seen_in_recorded_sessions() -> None:
    """Examples of what the foreign corpus holds: a subagent's report is prose; a code read, a file listing
    and a test run's failure are not."""
    assert is_prose(report(3))
    assert not is_prose(code_file(40))
    assert not is_prose("\n".join(f"/home/user/project/lib/app/mod_{k}.ex" for k in range(50)))
    failure = [
        "ERROR: test_column (dbshell.test_postgresql.PostgreSqlDbshellCommandTestCase)",
        "Traceback (most recent call last):",
        '  File "/testbed/django/db/backends/postgresql/client.py", line 36, in runshell_db',
        "    subprocess.run(args, check=True, env=env)",
        "FileNotFoundError: [Errno 2] No such file or directory: 'psql': 'psql'",
    ]
    assert not is_prose("\n".join(failure * 10))
    assert not is_prose("")


def test_a_long_text_is_judged_by_its_first_pages() -> None:
    """A report is prose whatever log follows it past the first ``SHAPE_CHARS``; a log stays a log whatever
    report follows it there (the shape is not read to the end of a 100K-character output)."""
    head = report(90)[:SHAPE_CHARS]
    log = "\n".join(f"2026-12-07 10:{k % 60:02}:00 INFO request {k} served" for k in range(2_000))
    assert is_prose(head + "\n" + log) and not is_prose(log + "\n" + head)
