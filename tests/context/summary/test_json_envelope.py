"""A tool output inside a JSON envelope (Hermes's ``{"content": "     1|…\\n     2|…", "total_lines": 40}``,
``{"output": "…", "exit_code": 1}``) is read as its text, not as a record (context/summary/ledger.py
``text_envelope``): its facts are the text's, unescaped, and its members are not a search's other items."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from myrm_tui.context.summary import ledger
from myrm_tui.context.types import Message

# Words a line may open with: ids, snake_case names, numbers, paths and plain words.
WORDS = ("author_x", "build_4471", "v2.0.0", "src/app.py", "consolidated_from", "ok", "145", "tags:")
LINE = st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join)
TEXT = st.lists(LINE, min_size=2, max_size=8).map("\n".join)


def test_a_fact_at_a_line_start_is_read_without_the_escape() -> None:
    text = "     8|darwin_evolution: true\n     9|consolidated_from:\nauthor_x: 1\nbuild_4471 finished"
    found = ledger.fact_tokens(json.dumps({"content": text, "total_lines": 4}))
    assert {"consolidated_from", "author_x", "build_4471"} <= set(found)
    assert not {"nauthor_x", "nbuild_4471"} & set(found)


@settings(deadline=None)  # the first example warms the tokenizer's caches: slow on a loaded machine
@given(TEXT, st.integers(0, 10_000))
def test_an_envelope_holds_every_fact_its_text_holds(text: str, lines: int) -> None:
    """Wrapping an output in JSON loses none of the facts the bare output gives."""
    wrapped = json.dumps({"content": text, "total_lines": lines, "truncated": False})
    assert set(ledger.fact_tokens(text)) <= set(ledger.fact_tokens(wrapped))


def test_a_record_is_no_envelope() -> None:
    """Only an object with a text member of several lines is read as text; a record's strings are values."""
    assert ledger.text_envelope(json.dumps({"flight_number": "HAT023", "prices": {"economy": 191}})) is None
    assert ledger.text_envelope(json.dumps([{"output": "a\nb"}])) is None
    assert ledger.text_envelope('{"output": "a\\nb", "exit_code": 0}') == {"output": "a\nb", "exit_code": 0}


def test_an_envelopes_members_are_not_demoted_as_a_records_unused_items() -> None:
    """A JSON record's items that nothing later uses rank low when it folds (a search's other flights); an
    envelope's members are the output's own verdict (its error, its exit code) and keep their rank."""
    body = "\n".join(f"step {k}: compiled module_{k}" for k in range(30))
    text = json.dumps({"output": body, "exit_code": 1, "error": "permission denied: /srv/cache_77"})
    out = Message(role="tool", content=text, tool_call_id="c1")
    lines = ledger.record_one(out)
    later = ledger.LaterUse([out, Message(role="assistant", content="The build failed.")])
    folded = ledger.fold_lines(text, lines, 0, later)
    error = next(ln for ln in folded if "permission denied" in ln.text)
    assert error.priority == ledger.P_RESULT
