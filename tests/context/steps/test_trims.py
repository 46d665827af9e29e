"""ReasoningTrim and AnsweredOutputTrim: what they keep, when they act, and that a trim stays put."""

from __future__ import annotations

import json
from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st

from myrm_tui.context.config import ContextConfig
from myrm_tui.context.filters.room import requests_so_far
from myrm_tui.context.state import ContextState
from myrm_tui.context.steps.answered import AnsweredOutputTrim
from myrm_tui.context.steps.reasoning import ReasoningTrim, shorten, spans
from myrm_tui.context.types import Message
from myrm_tui.context.vault import ArtifactVault
from tests.helpers import call, conversation, crowded_state, run_pipeline, run_step, view_for

THOUGHT = (
    "THOUGHT: The traceback points at `QuerySet.union` in django/db/models/query.py. "
    "I looked at the code around it and it is quite long. "
    "The ordering is applied after the union, which is interesting. "
    "The root cause: `_combinator_query` clears `order_by` but keeps the `ORDER BY position 4` reference. "
    "That seems to be what happens here and it explains the error. "
    "It is also mentioned in query.py again, as said. "
    "I'll patch `_combinator_query` to drop the positional ordering. "
    "Let me look more closely at how things fit together in general.\n"
    "After that I will run tests/queries/test_qs_combinators.py to confirm."
)


def system_task() -> list[Message]:
    return [
        Message(role="system", content="You are a test agent.", id="s"),
        Message(role="user", content="Fix the union ordering crash.", id="u"),
    ]


def thinking(id: str, text: str, command: str = "grep -n order_by django/db/models/query.py") -> Message:
    return Message(role="assistant", content=text, id=id, tool_calls=(call(f"call_{id}", command),))


def output(id: str, call_id: str, body: str, code: int = 0) -> Message:
    content = f"<returncode>{code}</returncode>\n<output>\n{body}\n</output>"
    return Message(role="tool", content=content, id=id, tool_call_id=call_id, name="bash")


# -- ReasoningTrim ------------------------------------------------------------------------------------


def test_shorten_keeps_opening_new_facts_and_decisions_and_drops_the_rest() -> None:
    short = shorten(THOUGHT)
    assert short is not None and short.startswith("THOUGHT: The traceback points at `QuerySet.union`")
    for fact in spans(THOUGHT):  # every fact-like span survives, once
        assert fact in short, fact
    assert "The root cause:" in short and "I'll patch `_combinator_query`" in short
    assert "to confirm" in short  # names a path, and says what comes next
    for filler in ("quite long", "which is interesting", "fit together in general", "again, as said"):
        assert filler not in short
    assert " … " in short  # where sentences were left out
    assert len(short) < 0.8 * len(THOUGHT)


def test_shorten_counts_what_the_call_already_says() -> None:
    text = "THOUGHT: Next step. Running `python reproduce.py` now shows the failure on this setup."
    assert shorten(text) is None  # every sentence opens, names something new, or decides
    short = shorten(text, json.dumps({"command": "python reproduce.py"}))
    assert short is not None and "reproduce.py" not in short  # the call is sent whole


def test_names_with_digits_and_dotted_names_are_facts_the_trim_keeps() -> None:
    # The ledger counts both as facts (an id like ``book1``, a class like ``Resolver404``, an attribute
    # path); the trim must too, or a line of code quoted in a THOUGHT is dropped as saying nothing new
    # while the answered-output trim drops it from the output for not being a result line.
    text = (
        "THOUGHT: The function is at the end of the file. It reads the value and returns it. "
        "It catches Resolver404 around resolve. The object is then handed on as it is. "
        "The fixture creates book1 and book2 first. Nothing else happens there. "
        "The backend asks self.connection.features for support."
    )
    assert {"Resolver404", "book1", "book2", "self.connection.features"} <= spans(text)
    short = shorten(text)
    assert short is not None
    for fact in ("Resolver404", "book1", "book2", "self.connection.features"):
        assert fact in short
    assert "handed on" not in short and "Nothing else" not in short
    assert not {"e.g", "i.e"} & spans("Use a flag, e.g. the quiet one, i.e. -q.")


def test_shorten_returns_none_when_nothing_can_go() -> None:
    assert shorten("THOUGHT: Run `pytest -x` on tests/test_app.py.") is None
    assert shorten("") is None


async def test_the_newest_tool_calling_message_is_trimmed_once_and_vaulted() -> None:
    vault = ArtifactVault("t")
    raw = [*system_task(), thinking("a1", THOUGHT * 3), output("t1", "call_a1", "12: order_by()")]
    view = view_for(raw, vault=vault)
    out = await run_step(ReasoningTrim(), view)
    new = out.messages[2]
    assert new.id == "a1#reason" and new.tool_calls == raw[2].tool_calls  # the call is untouched
    assert new.text.endswith("[trimmed]") and len(new.text) < 0.5 * len(raw[2].text)
    entry = vault.get_cached(new.meta["vault_uri"])
    assert entry is not None and entry.content == raw[2].text and entry.kind == "archive"
    assert out.decisions == {"a1": new}
    assert out.trace.removed["reasoning_trim"] > 0


async def test_replies_short_messages_and_the_off_switch_are_left_alone() -> None:
    reply = Message(role="assistant", content=THOUGHT * 3, id="r")  # to the user: no tool call
    raw = [*system_task(), reply, Message(role="user", content="go on", id="u2")]
    assert (await run_step(ReasoningTrim(), view_for(raw))).messages == raw
    short = [*system_task(), thinking("a1", "THOUGHT: Let me look. " * 5), output("t1", "call_a1", "x")]
    assert (await run_step(ReasoningTrim(), view_for(short))).messages == short
    long = [*system_task(), thinking("a1", THOUGHT * 3), output("t1", "call_a1", "x")]
    off = ContextConfig(max_context_tokens=16_000, trim_reasoning_tokens=0)
    assert (await run_step(ReasoningTrim(), view_for(long), config=off)).messages == long


async def test_a_message_sent_before_a_resume_is_not_rewritten() -> None:
    raw = [*system_task(), thinking("a1", THOUGHT * 3), output("t1", "call_a1", "x")]
    raw[2] = replace(raw[2], created_at=10.0)
    state = ContextState()
    state.last_request_at = 20.0
    out = await run_step(ReasoningTrim(), view_for(raw, state, resume=True))
    assert out.messages[2] is raw[2] and not out.decisions


async def test_a_trimmed_message_stays_trimmed_and_older_ones_are_not_rewritten() -> None:
    state = ContextState()
    raw = [*system_task(), thinking("a1", THOUGHT * 3), output("t1", "call_a1", "12: order_by()")]
    first, _ = await run_pipeline(raw, 128_000, state, now=1.0)
    later = [*raw, thinking("a2", THOUGHT * 3), output("t2", "call_a2", "ok")]
    second, _ = await run_pipeline(later, 128_000, state, now=2.0)
    trimmed = [m for m in first if m.id.startswith("a1")]
    assert trimmed and trimmed[0].id == "a1#reason"
    # The request after repeats the first one's messages exactly (the provider's cached prefix) ...
    assert second[: len(first)] == first
    # ... and trims only its own newest message.
    assert [m.id for m in second if m.role == "assistant"] == ["a1#reason", "a2#reason"]


# -- AnsweredOutputTrim -------------------------------------------------------------------------------


def pytest_run(n: int = 120) -> str:
    lines = [f"tests/test_frame.py::test_case_{k:03d} PASSED" for k in range(n)]
    lines[17] = "tests/test_frame.py::test_case_017 FAILED"
    lines[30] = "debug: self._data.array dtype: object (expected float64)"
    lines.append("FAILED tests/test_frame.py::test_case_017 - AssertionError: 3 != 4")
    lines.append(f"======== 1 failed, {n - 1} passed in 2.31s ========")
    return "\n".join(lines)


# Requests a session has made before the output: a trim pays only over the requests that re-read it, and
# a session is expected to run about as many more as it has run (``AnsweredOutputTrim._later_requests``).
RUN = 10


def answered(
    reply: str = "THOUGHT: The debug output says `self._data.array dtype: object`, so I'll cast it.",
    earlier: int = 0,
) -> list[Message]:
    """A pytest run answered by a reply that quotes a line of it, after ``earlier`` small rounds."""
    return [
        *system_task(),
        *conversation(earlier, output_chars=40)[2:],
        thinking("a1", "THOUGHT: Run the tests.", "pytest tests/test_frame.py -v"),
        output("t1", "call_a1", pytest_run()),
        thinking("a2", reply, "sed -n 1,20p src/frame.py"),
        output("t2", "call_a2", "1\timport numpy as np"),
    ]


async def test_an_answered_output_keeps_its_result_error_and_quoted_lines() -> None:
    vault = ArtifactVault("t")
    raw = answered(earlier=RUN)
    at = len(raw) - 3
    out = await run_step(AnsweredOutputTrim(), view_for(raw, vault=vault), window=128_000)
    new = out.messages[at]
    assert new.id == "t1#trim" and new.meta["trimmed"] and new.tool_call_id == "call_a1"
    for kept in (
        "1 failed, 119 passed in 2.31s",
        "FAILED tests/test_frame.py::test_case_017 - AssertionError: 3 != 4",
        "self._data.array dtype: object",  # the reply quoted it
        "<returncode>0</returncode>",
    ):
        assert kept in new.text, kept
    assert new.text.count(" PASSED") < 60  # of 118: the bulk goes
    assert f"full text: {new.meta['vault_uri']}]" in new.text and "of 122 lines" in new.text
    entry = vault.get_cached(new.meta["vault_uri"])
    assert entry is not None and entry.content == raw[at].text
    assert out.decisions == {"t1": new} and len(new.text) < 0.5 * len(raw[at].text)


async def test_an_output_answered_early_in_a_session_is_not_trimmed_yet() -> None:
    """Trimming pays over the requests that re-read the output; a session that has made two requests is as
    likely to end within two more as not (a subagent's reads end in its report), so the same output is
    trimmed after ``RUN`` requests, not after two."""
    short = answered()
    assert (await run_step(AnsweredOutputTrim(), view_for(short), window=128_000)).messages == short
    grown = answered(earlier=RUN)
    out = await run_step(AnsweredOutputTrim(), view_for(grown), window=128_000)
    assert out.messages[len(grown) - 3].meta.get("trimmed")


@given(st.lists(st.sampled_from(["user", "assistant", "tool"]), max_size=60), st.floats(0, 80))
def test_requests_so_far_counts_assistant_messages_up_to_the_cap(roles: list[str], cap: float) -> None:
    raw = [Message(role=r, content="x", id=str(k)) for k, r in enumerate(roles)]  # type: ignore[arg-type]
    n = requests_so_far(raw, cap)
    assert min(n, cap) == min(roles.count("assistant"), cap) and n <= cap + 1


async def test_only_the_last_answered_outputs_are_trimmed() -> None:
    raw = answered()
    raw += [thinking("a3", "THOUGHT: Now the other file.", "cat src/other.py"), output("t3", "call_a3", "x")]
    out = await run_step(AnsweredOutputTrim(), view_for(raw), window=128_000)
    assert out.messages == raw  # t1 was answered two replies ago: cutting it now would break the cache there


async def test_no_trim_when_the_next_compaction_is_too_close_to_pay_for_the_rewrite() -> None:
    raw = answered()
    tokens = view_for(raw).tokens()
    near = ContextConfig(max_context_tokens=int(tokens / 0.875) + 50)  # compaction threshold right above
    assert (await run_step(AnsweredOutputTrim(), view_for(raw), config=near)).messages == raw


async def test_failed_and_exempt_outputs_are_not_trimmed() -> None:
    raw = answered()
    raw[3] = output("t1", "call_a1", pytest_run(), code=1)  # a failed call stays whole: it gets retried
    failed = view_for(raw)
    failed = failed.evolve(request=replace(failed.request, intent=failed.request.intent.build(raw)))
    assert (await run_step(AnsweredOutputTrim(), failed, window=128_000)).messages == raw
    exempt = ContextConfig(max_context_tokens=128_000, exempt_tools=frozenset({"bash"}))
    assert (await run_step(AnsweredOutputTrim(), view_for(answered()), config=exempt)).messages == answered()


async def test_a_trim_of_a_filtered_output_stays_in_later_requests() -> None:
    """FilterProcessor repeats decisions keyed by the stored output's id; this trim is keyed by the filtered
    copy's, so the step itself must repeat it, or the next request would send the output whole again."""
    state = crowded_state()
    raw = answered(earlier=RUN)
    hits = (
        f"src/pkg/mod{k}.py:{k}: def handler_{k}(request): return dispatch(request, {k})" for k in range(400)
    )
    at = len(raw) - 3
    raw[at] = output("t1", "call_a1", "\n".join(hits))  # over filter_single_tokens: filtered first
    vault = ArtifactVault("t")
    first, _ = await run_pipeline(raw, 128_000, state, now=1.0, vault=vault)
    t1 = next(m for m in first if m.tool_call_id == "call_a1")
    assert t1.id == "t1#filtered#trim" and t1.meta["trimmed"]
    original = vault.get_cached(t1.meta["vault_uri"])  # the pointer leads to the output as it came
    assert original is not None and original.content == raw[at].text
    more = [*raw, thinking("a3", "THOUGHT: Next.", "ls"), output("t3", "call_a3", "a.py")]
    second, _ = await run_pipeline(more, 128_000, state, now=2.0, vault=vault)
    assert second[: len(first)] == first


async def test_the_summary_ledger_reads_a_trimmed_message_as_it_came() -> None:
    """Summarize keeps each message's ledger lines once: a trimmed copy shares its original's (so a trim
    costs no second scan of the output) and a compaction reads the whole text, from the vault."""
    from myrm_tui.context.steps.summarize import Summarize

    vault = ArtifactVault("t")
    raw = answered()
    view = view_for(raw, vault=vault)
    trimmed = (await run_step(AnsweredOutputTrim(), view, window=128_000)).messages[3]
    thought = (
        await run_step(ReasoningTrim(), view_for([*system_task(), thinking("a1", THOUGHT * 3)], vault=vault))
    ).messages[2]
    req = view.request
    assert Summarize._key(trimmed, req) == Summarize._key(raw[3], req)
    assert Summarize._original(trimmed, req).text == raw[3].text
    assert Summarize._original(thought, req).text == THOUGHT * 3
