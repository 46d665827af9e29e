"""Filter rules are a user's regexes, or a cloned repository's: their matching is bounded. For generated
patterns (nested quantifiers included) and outputs, the filter returns within its bound, a rule that ran
over it is skipped with a notice, and the output is never lost (unchanged, or whole in the vault)."""

from __future__ import annotations

import re
import time

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from myrm_tui.context.filters.processor import FilterProcessor
from myrm_tui.context.filters.rules import RuleEngine, match_budget, user_regex
from myrm_tui.context.types import Message
from tests.helpers import call, run_step, view_for

ATOMS = st.sampled_from(["a", "aa", "b", ".", r"\w", "[ab]", "a?", r"\s*", "(?:a|a)"])
QUANTIFIERS = st.sampled_from(["+", "*", "?", "{1,3}", "{2,}", "+?"])


def _nest(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(
        st.tuples(inner, QUANTIFIERS).map(lambda t: f"(?:{t[0]}){t[1]}"),
        st.tuples(inner, QUANTIFIERS).map(lambda t: f"({t[0]}){t[1]}"),
        st.tuples(inner, inner).map("".join),
        st.tuples(inner, inner).map(lambda t: f"({t[0]}|{t[1]})"),
    )


PATTERNS = st.tuples(
    st.sampled_from(["", "^"]), st.recursive(ATOMS, _nest, max_leaves=6), st.sampled_from(["", "$", "!"])
).map("".join)
# Lines a backtracking matcher chokes on: long runs of one letter ending in a character no pattern expects.
LINES = st.one_of(
    st.integers(20, 200).map(lambda n: "a" * n + "!"),
    st.text(alphabet="ab! \t", max_size=60),
)
# The two examples below take exponential time under ``re`` (minutes, then years, as the run grows).
CATASTROPHIC = ("(a|aa)+$", "(a|a)+$")


def _view(command: str, body: str) -> list[Message]:
    return [
        Message(role="user", content="list it", id="u"),
        Message(role="assistant", content=None, id="a", tool_calls=(call("c1", command),)),
        Message(
            role="tool",
            content=f"<returncode>0</returncode>\n<output>\n{body}\n</output>",
            id="t",
            tool_call_id="c1",
        ),
    ]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pattern=PATTERNS, lines=st.lists(LINES, min_size=1, max_size=12), in_command=st.booleans())
@example(pattern=CATASTROPHIC[0], lines=["a" * 60 + "!"] * 3, in_command=False)
@example(pattern=CATASTROPHIC[1], lines=["a" * 60 + "!"], in_command=True)
@pytest.mark.timeout(240, method="thread")  # without the bound the first example alone backtracks for years
async def test_generated_rules_return_within_their_bound_and_lose_nothing(
    pattern: str, lines: list[str], in_command: bool
) -> None:
    engine = RuleEngine()
    quoted = pattern.replace("'", "''")
    command_re = f"'^ls{quoted}'" if in_command else "'^ls'"
    engine.load_text(f"rules:\n  - name: generated\n    command: {command_re}\n    drop: ['{quoted}']\n")
    assert engine.problems == []
    body = "\n".join(
        lines * (1 + 1_300 // (sum(map(len, lines)) + len(lines)))
    )  # past the shell-stage minimum
    command = "ls" + "a" * 60 + "!" if in_command else "ls -la"
    raw = _view(command, body)
    view = view_for(raw)
    started = time.monotonic()
    result = await run_step(FilterProcessor(engine), view)
    elapsed = time.monotonic() - started
    # The bound is the rule's budget; the regex engine checks its clock now and then (4x over on a busy
    # machine was seen): a generous ceiling, far below what an unbounded match takes.
    assert elapsed < 10 * match_budget(len(command) + len(body)) + 5.0, elapsed
    out = result.messages[2]
    if out is not raw[2]:
        kept = view.request.vault.get_cached(out.meta["vault_uri"])
        assert kept is not None and kept.content == raw[2].content
    if "generated" in engine.stalled:
        assert result.trace.events == [
            f"filter rule 'generated' failed: its patterns ran over "
            f"{match_budget(len(command) + len(body)):.2f} s on one output (a catastrophic regex?); the rule "
            "is skipped from now on and the output kept whole"
        ]
        assert "rule:generated" not in str(out.meta.get("filter", ""))


@pytest.mark.parametrize("pattern", CATASTROPHIC)
@pytest.mark.timeout(60, method="thread")
async def test_a_catastrophic_rule_is_skipped_once_and_the_next_output_is_not_held_up(pattern: str) -> None:
    engine = RuleEngine()
    engine.load_text(f"rules:\n  - name: slow\n    command: '^ls'\n    drop: ['{pattern}']\n")
    body = "\n".join(["a" * 80 + "!"] * 40)
    first = await run_step(FilterProcessor(engine), view_for(_view("ls", body)))
    assert engine.stalled == {"slow"} and len(first.trace.events) == 1
    assert first.trace.events[0].startswith("filter rule 'slow' failed: its patterns ran over")
    again = await run_step(FilterProcessor(engine), view_for(_view("ls", body)))
    assert again.trace.events == []  # skipped from now on: no second stall, no second notice


@pytest.mark.parametrize(
    ("pattern", "why"),
    [
        ("(a{1000}){1000}", "counted repeats too large"),
        (r"(?:\\{1000}){1000}", "counted repeats too large"),
        ("x" * 2_001, "over 2,000 characters"),
        ("(", "missing )"),
    ],
)
def test_patterns_that_would_stall_their_compilation_are_refused(pattern: str, why: str) -> None:
    with pytest.raises(ValueError, match=re.escape(why)):
        user_regex(pattern)
    engine = RuleEngine()
    with pytest.raises(ValueError, match=re.escape(why)):
        engine.load_text(f"rules:\n  - name: big\n    command: '{pattern}'\n", "f.yaml")
    assert engine.rules == {} and len(engine.problems) == 1


def test_only_myrms_own_rules_run_unbounded_and_a_user_rule_of_the_same_name_is_bounded(tmp_path) -> None:
    """The packaged rules skip the clock (4x faster on a big output); a user's or a trusted folder's
    rule that replaces one by name is bounded like any other of theirs."""
    from myrm_tui.paths import prompts_dir

    user = tmp_path / "filters"
    user.mkdir()
    (user / "mine.yaml").write_text("rules:\n  - name: apt\n    command: '^apt'\n    drop: ['(a|aa)+$']\n")
    own = RuleEngine.from_dirs([], packaged=[prompts_dir() / "filters"])
    assert own.rules and all(isinstance(r.command, re.Pattern) for r in own.rules.values())
    both = RuleEngine.from_dirs([user], packaged=[prompts_dir() / "filters"])
    assert not isinstance(both.rules["apt"].command, re.Pattern)
    assert all(not isinstance(p, re.Pattern) for p in both.rules["apt"].drop)
    # The bound holds for it: a catastrophic line does not hold the filter up.
    assert both.apply("apt install x", "a" * 80 + "!") is None and both.stalled == {"apt"}
