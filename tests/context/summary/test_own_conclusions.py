"""A Record line keeps whose it was when the blocks are merged (``ledger.reparse``), so a decision a later
block superseded still goes (issue 46.2: the Record merges by meaning)."""

from __future__ import annotations

from myrm_tui.context.config import ContextConfig
from myrm_tui.context.state import ContextState
from myrm_tui.context.summary import ledger
from myrm_tui.context.types import Message
from tests.helpers import call, run_pipeline


def test_reparse_keeps_whose_line_it_was() -> None:
    text = "  Now `CLIENT_TIMEOUT = 90` instead."
    known = {text: ledger.Line(text, ledger.P_DECISION, decided=True, referred=True)}
    assert ledger.reparse(text, known) == ledger.Line(text, ledger.P_DECISION, decided=True)


def _decided_twice(rounds: int = 24) -> list[Message]:
    """The agent chooses a setting early, reads bulky outputs, chooses it again much later."""
    raw = [
        Message(role="system", content="You are a coding agent.", id="ds"),
        Message(role="user", content="Make the client stop timing out.", id="du"),
    ]
    said = {
        1: "I will use `CLIENT_TIMEOUT = 30` in settings.py.",
        16: "Too short: now `CLIENT_TIMEOUT = 90`.",
    }
    for i in range(rounds):
        if i in said:  # told the user: its Record line ranks with the user's words, so it is kept
            raw.append(Message(role="assistant", content=said[i], id=f"dr{i}"))
            raw.append(Message(role="user", content="Go on.", id=f"dg{i}"))
        raw.append(
            Message(
                role="assistant",
                content=f"Reading part {i}.",
                id=f"da{i}",
                tool_calls=(call(f"dc{i}", f"nl -ba src/m{i}.py"),),
            )
        )
        body = "\n".join(f"  {100 + k}\t    total_{i}_{k} = compute_value({k}, scale={i})" for k in range(40))
        raw.append(Message(role="tool", content=body, id=f"dt{i}", tool_call_id=f"dc{i}", name="bash"))
    return raw


async def test_a_decision_superseded_in_a_later_block_goes_when_the_blocks_merge() -> None:
    """The two decisions fold in different compactions, so each sits in its own block; merging the blocks
    re-fits their Record lines, which must still know they are the agent's decisions."""
    raw = _decided_twice()
    state = ContextState()
    cfg = ContextConfig(max_context_tokens=16_000, summary_ratio=0.05)
    for end in range(14, len(raw) + 1, 8):
        view, _ = await run_pipeline(raw[:end], window=16_000, state=state, force_compaction=True, config=cfg)
    text = "\n".join(m.text for m in view if m.meta.get("kind") == "summary")
    assert state.compactions >= 4 and sum(m.meta.get("kind") == "summary" for m in view) <= 2  # merged
    assert "CLIENT_TIMEOUT = 90" in text
    assert "CLIENT_TIMEOUT = 30" not in text
