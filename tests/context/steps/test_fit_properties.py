"""A session never dies: the guarantees of the fit step, as properties over generated sessions.

Sessions of every shape — a first message of 0-70 % of the window, tool outputs up to 30K tokens,
parallel calls, reasoning, notes written mid-session, hundreds of turns, windows of 4K to 200K, with
and without tool schemas — are replayed request by request through the whole pipeline, one state
and vault shared as in a live session. On every request:

- **the request fits**: the view plus the tool schemas is within the input budget, and the body is
  valid for the provider emulator's rules (``validate_openai``, with the window);
- **pairs are intact** and the protected head is kept or cut with a pointer (``check_view``);
- **compaction makes progress**: a compaction lands at or under the landing level whenever the parts
  it may not remove (system prompt, the first message's share, the newest round) leave room for it;
- **amortized**: after the first compaction, at most one request in four compacts (plus one).

CI runs a bounded, derandomized set; ``pytest -m slow tests/context/steps/test_fit_properties.py`` runs long
sessions.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field, replace
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from myrm_tui.context.config import ContextConfig
from myrm_tui.context.invariants import check_view, group_spans
from myrm_tui.context.state import ContextState
from myrm_tui.context.step import settings_for
from myrm_tui.context.steps.fit import pinned_tokens
from myrm_tui.context.steps.precompact import Band, PreCompactSettings, band_for, landed_tokens
from myrm_tui.context.types import Message, ToolCall
from myrm_tui.context.vault import ArtifactVault
from myrm_tui.testing.validation import validate_openai
from tests.helpers import COUNTER, PIPELINE, request_for

WORDS = ["alpha", "beta", "gamma", "delta", "error", "path", "src/app.py", "line", "value_1", "=", "42"]
WORDS += ["PASSED", "FAILED", "test_x", "ok"]


def text_of(tokens: int, seed: int) -> str:
    """About ``tokens`` tokens of line-structured text (outputs look like outputs: many short lines)."""
    lines = []
    n = 0
    k = seed
    while n < tokens:
        k = (k * 1103515245 + 12345) % 2**31
        words = [WORDS[(k >> s) % len(WORDS)] for s in range(0, 24, 3)]
        lines.append(f"{k % 997:4d}: " + " ".join(words))
        n += 14
    return "\n".join(lines)


@dataclass(repr=False)
class Session:
    window: int
    overhead: int
    messages: list[Message]
    requests: list[int]  # indices into messages: the model is called with messages[:i]
    notes_at: dict[int, list[str]] = field(default_factory=dict)  # request index -> notes written before
    pins: list[dict[str, str]] = field(default_factory=list)  # items the user brought back (/context pins)

    def __repr__(self) -> str:  # hypothesis prints the failing example: its shape, not its megabytes
        first = COUNTER.message(self.messages[1])
        return (
            f"Session(window={self.window}, overhead={self.overhead}, first={first} tokens, "
            f"messages={len(self.messages)}, requests={len(self.requests)}, notes={len(self.notes_at)})"
        )

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(repr(self))


@st.composite
def sessions(draw: st.DrawFn, max_turns: int = 60) -> Session:
    window = draw(st.sampled_from([4_000, 8_000, 16_000, 32_000, 200_000]))
    overhead = draw(st.sampled_from([0, 0, 813]))
    first_share = draw(st.sampled_from([0.0, 0.05, 0.3, 0.5, 0.7]))
    seed = draw(st.integers(0, 10_000))
    msgs = [
        Message(role="system", content="You are a coding agent. " + text_of(200, seed), id="sys"),
        Message(
            role="user",
            content="Task: fix the bug.\n" + text_of(int(window * first_share), seed + 1),
            id="u0",
        ),
    ]
    requests = [len(msgs)]
    notes_at: dict[int, list[str]] = {}
    notes: list[str] = []
    for t in range(draw(st.integers(1, max_turns))):
        kind = draw(st.sampled_from(["tools", "tools", "tools", "parallel", "reply", "user", "note"]))
        if kind == "reply":
            msgs.append(Message(role="assistant", content="Done: " + text_of(60, t), id=f"r{t}"))
            msgs.append(Message(role="user", content=f"next step {t}", id=f"u{t + 1}"))
        elif kind == "user":
            size = draw(st.sampled_from([10, 200, 2_000]))
            msgs.append(Message(role="assistant", content="ok", id=f"r{t}"))
            msgs.append(Message(role="user", content=f"more {t}: " + text_of(size, t), id=f"u{t + 1}"))
        elif kind == "note":
            notes = [*notes, f"note {t}: " + "x" * draw(st.sampled_from([100, 2_000]))]
            notes_at[len(requests)] = list(notes)
            call = ToolCall(f"n{t}", "session_notes", json.dumps({"note": notes[-1]}))
            msgs.append(Message(role="assistant", content=None, id=f"a{t}", tool_calls=(call,)))
            msgs.append(Message(role="tool", content="noted", id=f"t{t}", tool_call_id=f"n{t}"))
        else:
            k = draw(st.integers(2, 4)) if kind == "parallel" else 1
            calls = tuple(
                ToolCall(f"c{t}_{j}", "bash", json.dumps({"command": f"cat f{t}_{j}.py"})) for j in range(k)
            )
            reasoning = text_of(300, t) if draw(st.booleans()) else None
            msgs.append(
                Message(
                    role="assistant",
                    content=f"Looking at f{t}. " + text_of(draw(st.sampled_from([20, 400])), t),
                    id=f"a{t}",
                    tool_calls=calls,
                    reasoning=reasoning,
                )
            )
            for j in range(k):
                size = draw(st.sampled_from([50, 300, 300, 2_000, 8_000, 30_000]))
                msgs.append(
                    Message(
                        role="tool",
                        content=f"<returncode>{j % 2}</returncode>\n<output>\n"
                        f"{text_of(size, t * 7 + j)}\n</output>",
                        id=f"t{t}_{j}",
                        tool_call_id=f"c{t}_{j}",
                        name="bash",
                    )
                )
        requests.append(len(msgs))
    pin_tokens = draw(st.sampled_from([0, 0, 200, 5_000]))
    pins = (
        [
            {
                "uri": "vault://gen/0123456789abcdef",
                "line_range": "1:80",
                "gist": "a brought-back output",
                "text": text_of(pin_tokens, seed + 2),
            }
        ]
        if pin_tokens
        else []
    )
    return Session(window, overhead, msgs, requests, notes_at, pins)


@dataclass
class Outcome:
    compactions: list[int] = field(default_factory=list)  # request numbers that compacted
    requests: int = 0
    growth: list[int] = field(default_factory=list)  # tokens each request added to the view it was sent
    triggers: list[str] = field(default_factory=list)  # each compaction's record trigger
    # Emergency compactions of requests whose round the band had predicted (it must never happen).
    net_within_band: list[tuple[int, int, int]] = field(default_factory=list)  # (request, growth, predicted)

    @property
    def planned_share(self) -> float:
        auto = [t for t in self.triggers if t in ("threshold", "emergency", "fit")]
        return auto.count("threshold") / len(auto) if auto else 1.0


def replay(s: Session) -> Outcome:
    config = replace(ContextConfig(max_context_tokens=s.window), overhead_tokens=s.overhead)
    state = ContextState()
    state.pinned = [dict(p) for p in s.pins]
    vault = ArtifactVault("gen")
    out = Outcome()
    # Pinned items take their room first (they join every request after the fit step).
    pinned = pinned_tokens(state.pinned, config.input_budget, COUNTER)
    band_settings = settings_for(PreCompactSettings, config)

    async def go() -> None:
        now = 1_000.0
        previous = 0
        before: Band | None = None  # the band the previous request was weighed against, if it did not compact
        for n, end in enumerate(s.requests):
            if n in s.notes_at:
                state.notes = list(s.notes_at[n])  # what the session_notes tool does
            now += 20.0  # a warm provider cache, as in a live session
            raw = s.messages[:end]
            landed = landed_tokens(state)
            band = band_for(band_settings, state.round_growth, landed)
            # Pinned items take their room first (they join every request after the fit step).
            trigger = band.warm - pinned
            sent_before, backing_off = state.last_sent_tokens, bool(state.backoff_level)
            run = await PIPELINE.run(request_for(raw, state, vault=vault, now=now), config, "gen")
            seen = run.plan.seen_tokens
            grew = seen - sent_before if seen and sent_before else None
            # The band that speaks for this request: the previous one's when it only appended, this one's
            # right after a compaction (it knows where that landed).
            judge = before if before is not None else band
            if (
                run.metrics.compaction is not None
                and run.metrics.compaction.trigger == "emergency"
                and n > 0
                and grew is not None
                and judge.planned
                and grew <= judge.predicted
                and not backing_off
            ):
                out.net_within_band.append((n, grew, judge.predicted))
            before = band if not run.compacting and not backing_off else None
            view = run.messages
            tokens = COUNTER.messages(view)
            out.requests += 1
            out.growth.append(run.metrics.tokens_in - previous)
            previous = tokens
            # The request fits, and a provider would take it.
            assert tokens <= config.input_budget, (n, tokens, config.input_budget, run.metrics.events)
            body = {"model": "m", "messages": [m.to_api() for m in view]}
            assert validate_openai(body, s.window, tokens + s.overhead) is None
            assert check_view(view, raw) == []
            if run.compacting:
                out.compactions.append(n)
                # The next requests' band starts from where this one landed: the view as sent, pins and all
                # (Pre-Compact weighs them; without them a landing looked a pin's size lower than it was).
                assert landed_tokens(state) == tokens, (n, landed_tokens(state), tokens)
                if run.metrics.compaction is not None:
                    out.triggers.append(run.metrics.compaction.trigger)
                # Never early: with the cache warm (every request but the first) a compaction starts only
                # when the view reached the trigger (the warm-cache point, a predicted round under the net).
                assert n == 0 or run.metrics.tokens_in >= trigger, (n, run.metrics.tokens_in, trigger)
                # Progress: it lands under the landing level, unless what it may not remove (the system
                # prompt, the first message's share, the newest round, the pinned items) is most of it.
                spans = group_spans(view)
                newest = COUNTER.messages(view[spans[-1][0] :]) if spans else 0
                pins = pinned_tokens(state.pinned, config.input_budget, COUNTER)
                floor = COUNTER.messages(view[:1]) + config.anchor_tokens + newest + pins
                assert tokens <= config.landing_tokens or floor > config.landing_tokens // 2, (
                    n,
                    tokens,
                    config.landing_tokens,
                    run.metrics.events,
                )

    asyncio.run(go())
    return out


def amortized_ok(o: Outcome, config: ContextConfig) -> bool:
    """After the first compaction, at most one request in four compacts (plus one) — for sessions whose
    requests add, on average, at most a quarter of the room a compaction leaves (landing → trigger).
    Larger steps are cut at intake (the budget guard) or make every request a compaction by necessity."""
    if not o.compactions:
        return True
    first = o.compactions[0]
    after = o.requests - first
    room = min(config.warm_compact_threshold, config.fit_budget) - config.landing_tokens
    grew = o.growth[first + 1 :]
    if grew and sum(grew) / len(grew) > room / 4:
        return True  # the precondition does not hold: not a case the bound speaks of
    return len(o.compactions) - 1 <= after // 4 + 1


def config_of(s: Session) -> ContextConfig:
    return replace(ContextConfig(max_context_tokens=s.window), overhead_tokens=s.overhead)


def pinned_4k_session() -> Session:
    """The session a random run of the long property found (seed 252): 4K window, tool schemas, a
    5,000-token pin (cut to its 10 % share), a note. Its first compaction landed within a usual round of
    the tight band's point (the full level, the landing level); each next request compacted, its round
    under 300 tokens."""
    seed, note = 252, "note 2: " + "x" * 2_000
    calls = [ToolCall(f"c{t}_0", "bash", json.dumps({"command": f"cat f{t}_0.py"})) for t in (0, 1)]
    msgs = [
        Message(role="system", content="You are a coding agent. " + text_of(200, seed), id="sys"),
        Message(role="user", content="Task: fix the bug.\n" + text_of(200, seed + 1), id="u0"),
    ]
    for t, said, size, reasoning in ((0, 400, 300, text_of(300, 0)), (1, 20, 2_000, None)):
        msgs.append(
            Message(
                role="assistant",
                content=f"Looking at f{t}. " + text_of(said, t),
                id=f"a{t}",
                tool_calls=(calls[t],),
                reasoning=reasoning,
            )
        )
        output = f"<returncode>0</returncode>\n<output>\n{text_of(size, t * 7)}\n</output>"
        msgs.append(Message(role="tool", content=output, id=f"t{t}_0", tool_call_id=f"c{t}_0", name="bash"))
    call = ToolCall("n2", "session_notes", json.dumps({"note": note}))
    msgs.append(Message(role="assistant", content=None, id="a2", tool_calls=(call,)))
    msgs.append(Message(role="tool", content="noted", id="t2", tool_call_id="n2"))
    msgs.append(Message(role="assistant", content="Done: " + text_of(60, 3), id="r3"))
    msgs.append(Message(role="user", content="next step 3", id="u4"))
    pin = {"uri": "vault://gen/0123456789abcdef", "line_range": "1:80", "gist": "a brought-back output"}
    pins = [{**pin, "text": text_of(5_000, seed + 2)}]
    return Session(4_000, 813, msgs, [2, 4, 6, 8, 10], {3: [note]}, pins)


# make test's fixed sample: each session replays up to 60 turns through the whole pipeline (~0.6 s of CPU
# an example, the suite's heaviest property without a TUI); the long twin below runs 200 new ones a run.
@settings(
    max_examples=5,
    deadline=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
    database=None,
    phases=[Phase.explicit, Phase.generate],  # shrinking a 300-message session takes minutes
)
@given(sessions())
@example(pinned_4k_session())
def test_every_request_fits_and_compactions_make_progress(s: Session) -> None:
    fits_and_makes_progress(s)


@pytest.mark.long
@settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    database=None,
    phases=[Phase.explicit, Phase.generate],
)
@given(sessions())
def test_long_every_request_fits_and_compactions_make_progress(s: Session) -> None:
    """The same property over 200 random (not derandomized) sessions a run (``make test-long``): the 5 of
    ``make test`` are always the same ones, and another seed once found a session they missed."""
    fits_and_makes_progress(s)


def fits_and_makes_progress(s: Session) -> None:
    o = replay(s)
    assert amortized_ok(o, config_of(s)), (o.compactions, o.requests, s.window)
    assert not o.net_within_band, o.net_within_band


def steady_session(window: int, seed: int, turns: int, first_tokens: int = 0) -> Session:
    """A coding session whose rounds (a call and its output, up to ~4 % of the window) are each much smaller
    than the room a compaction frees: the case a planned compaction must always catch before the net.
    ``first_tokens``: a first message that long (a pasted log, a spec) after the task line."""
    k = seed
    task = "Task: fix the bug in src/app.py."
    msgs = [
        Message(role="system", content="You are a coding agent. " + text_of(200, seed), id="sys"),
        Message(
            role="user",
            content=f"{task}\n{text_of(first_tokens, seed + 1)}" if first_tokens else task,
            id="u0",
        ),
    ]
    requests = [len(msgs)]
    for t in range(turns):
        k = (k * 1103515245 + 12345) % 2**31
        size = window * (1 + k % 4) // 100
        call = ToolCall(f"c{t}", "bash", json.dumps({"command": f"cat f{t}.py"}))
        msgs.append(Message(role="assistant", content=f"Looking at f{t}.", id=f"a{t}", tool_calls=(call,)))
        msgs.append(
            Message(
                role="tool",
                content=f"<returncode>0</returncode>\n<output>\n{text_of(size, t + seed)}\n</output>",
                id=f"t{t}",
                tool_call_id=f"c{t}",
                name="bash",
            )
        )
        requests.append(len(msgs))
    return Session(window, 0, msgs, requests)


STEADY = (st.sampled_from([8_000, 16_000, 32_000]), st.integers(0, 10_000), st.integers(40, 120))


# make test replays a fixed 5 steady sessions (~0.2 s of CPU each; a hot-cache bypass up to the budget, a
# seeded bug, fails at 5 as at 12); the long twin 12 new ones.
@settings(
    max_examples=5,
    deadline=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
    database=None,
    phases=[Phase.explicit, Phase.generate],
)
@given(*STEADY)
def test_a_steady_session_never_meets_the_net(window: int, seed: int, turns: int) -> None:
    """Rounds within the predicted band: every automatic compaction is planned (a threshold), none is the
    emergency net, whatever the window."""
    never_meets_the_net(window, seed, turns)


@pytest.mark.long
@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    database=None,
    phases=[Phase.explicit, Phase.generate],
)
@given(*STEADY)
def test_long_a_steady_session_never_meets_the_net(window: int, seed: int, turns: int) -> None:
    """The same property over 12 random steady sessions (``make test-long``)."""
    never_meets_the_net(window, seed, turns)


def never_meets_the_net(window: int, seed: int, turns: int) -> None:
    o = replay(steady_session(window, seed, turns))
    assert not o.net_within_band, o.net_within_band
    assert o.planned_share >= 0.9, o.triggers


@pytest.mark.parametrize("window", [8_000, 16_000, 32_000])
def test_a_first_message_filling_the_budget_is_cut_by_a_planned_compaction_not_the_net(window: int) -> None:
    """A first message of ~80 % of the budget leaves next to nothing to fold, but a compaction would cut it
    to its share (HeadAnchor): the planned point must count that room, not wait for the net (a generated
    session at 32K with a 25K-token first message met the net on request 3, its round within the band)."""
    budget = ContextConfig(max_context_tokens=window).input_budget
    o = replay(steady_session(window, 3, 30, first_tokens=budget * 8 // 10))
    assert o.triggers and o.triggers[0] == "threshold", o.triggers
    assert not o.net_within_band, o.net_within_band


def test_planned_compactions_are_at_least_nine_in_ten_across_windows() -> None:
    """The issue's goal over a spread of steady sessions, 8K to 32K: ≥ 90 % of automatic compactions fire
    at a threshold (on main, with the levels on the window, 0 % did at 16K)."""
    triggers = [
        t
        for w in (8_000, 16_000, 32_000)
        for seed in (1, 2)
        for t in replay(steady_session(w, seed, 90)).triggers
    ]
    auto = [t for t in triggers if t in ("threshold", "emergency", "fit")]
    assert len(auto) >= 6 and auto.count("threshold") / len(auto) >= 0.9, triggers


@pytest.mark.slow
@pytest.mark.long
@pytest.mark.timeout(3600)
@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    database=None,
    phases=[Phase.explicit, Phase.generate],
)
@given(sessions(max_turns=320))
def test_long_sessions_fit_and_compact_rarely(s: Session) -> None:
    o = replay(s)
    assert amortized_ok(o, config_of(s)), (o.compactions, o.requests, s.window)
