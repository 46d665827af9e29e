"""The benchmark's metrics on a small constructed corpus whose answers are computed by hand here:
reachable retention and its breakdowns, alternatives in probe facts, billing of rejected requests,
feasibility, rewrite overhead, the ``window`` baseline and the plug-in conversation-start signal."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from myrm_tui.bench.corpus import Probe, load_conversations, load_probes
from myrm_tui.bench.run import run_bench
from myrm_tui.bench.runner import Prices, score_probes, search_lost
from myrm_tui.bench.strategies import REPLY_TOKENS, WindowStrategy
from myrm_tui.context.config import budget_config
from myrm_tui.context.invariants import check_tool_pairing
from myrm_tui.context.tokens import REQUEST_OVERHEAD
from myrm_tui.context.types import Message, ToolCall
from tests.helpers import COUNTER

ROUNDS = 6


def _conversation() -> dict[str, Any]:
    """system, user, six rounds (assistant call + large tool output), a closing assistant message."""
    msgs: list[dict[str, Any]] = [
        {"role": "system", "content": "Rules of the house. " * 300},
        {"role": "user", "content": "Fix the bug in alpha.py please."},
    ]
    for r in range(1, ROUNDS + 1):
        msgs.append(
            {
                "role": "assistant",
                "content": f"Looking at file {r}.",
                "tool_calls": [
                    {
                        "id": f"t{r}",
                        "type": "function",
                        "function": {"name": "bash", "arguments": json.dumps({"cmd": f"cat file{r}.py"})},
                    }
                ],
            }
        )
        msgs.append({"role": "tool", "tool_call_id": f"t{r}", "content": f"file{r} " * 700})
    msgs.append({"role": "assistant", "content": "Done."})
    return {"id": "w", "messages": msgs}


PROBES = [
    {"conv_id": "w", "probe_id": "p1", "type": "recall", "expected_facts": ["file1 file1", "exit code 1"]},
    {
        "conv_id": "w",
        "probe_id": "p2",
        "type": "artifact",
        "expected_facts": ["cat file6.py", ["no such wording", "file6 file6"]],
    },
    {"conv_id": "w", "probe_id": "p3", "type": "decision", "expected_facts": ["alpha.py"]},
]


@pytest.fixture
def corpus(tmp_path: Path) -> tuple[Path, Path]:
    c, p = tmp_path / "w.jsonl", tmp_path / "w-probes.jsonl"
    c.write_text(json.dumps(_conversation()) + "\n")
    p.write_text("".join(json.dumps(x) + "\n" for x in PROBES))
    return c, p


def _sizes(path: Path) -> tuple[list[Message], int, list[int]]:
    """The messages, the head's tokens and each round's tokens."""
    (conv,) = load_conversations(path)
    m = conv.messages

    def tok(
        ms: list[Message],
    ) -> int:  # as the cache simulation counts them: messages only, no request overhead
        return sum(COUNTER.message(x) for x in ms)

    return m, tok(m[:2]), [tok(m[2 + 2 * k : 4 + 2 * k]) for k in range(ROUNDS)]


def _window_for(head: int, rounds: list[int]) -> int:
    """A window whose input budget (the bench's, as the live agent computes it) holds the head and three
    rounds but not four."""
    target = REQUEST_OVERHEAD + head + sum(rounds[:3]) + rounds[3] // 2
    w = target
    while budget_config(w, REPLY_TOKENS).input_budget < target:
        w += 1
    return w


def test_probe_facts_may_be_lists_of_alternatives(corpus: tuple[Path, Path]) -> None:
    probes = load_probes(corpus[1])
    assert probes[1].facts == (("cat file6.py",), ("no such wording", "file6 file6"))
    assert probes[1].expected_facts == ("cat file6.py", "no such wording")
    assert [p.type for p in probes] == ["recall", "artifact", "decision"]


async def test_window_keeps_head_and_the_newer_half(corpus: tuple[Path, Path]) -> None:
    msgs, head, rounds = _sizes(corpus[0])
    s = WindowStrategy(COUNTER)
    s.start("w", _window_for(head, rounds))
    views = [await s.build(msgs[: 2 + 2 * k], k) for k in range(ROUNDS + 1)]

    def ids(*rs: int) -> list[str]:
        return [msgs[0].id, msgs[1].id, *[msgs[j].id for r in rs for j in (2 * r, 2 * r + 1)]]

    # Requests 0-3 only append; request 4 (four rounds) overflows and keeps rounds 3-4 (the newer half of
    # eight events); request 5 appends round 5; request 6 overflows again and keeps rounds 5-6.
    assert [[m.id for m in v] for v in views] == [
        ids(),
        ids(1),
        ids(1, 2),
        ids(1, 2, 3),
        ids(3, 4),
        ids(3, 4, 5),
        ids(5, 6),
    ]
    assert all(check_tool_pairing(v) == [] for v in views)


async def test_window_never_splits_a_tool_round() -> None:
    call = lambda i: ToolCall(f"c{i}", "bash", "{}")  # noqa: E731
    big = "x " * 900
    msgs = [
        Message("system", "sys", id="s"),
        Message("user", "go", id="u"),
        Message("assistant", "", id="a1", tool_calls=(call(1),)),
        Message("tool", big, id="t1", tool_call_id="c1"),
        # One assistant turn with three calls straddles the middle of the eight events.
        Message("assistant", "", id="a2", tool_calls=(call(2), call(3), call(4))),
        Message("tool", big, id="t2", tool_call_id="c2"),
        Message("tool", big, id="t3", tool_call_id="c3"),
        Message("tool", big, id="t4", tool_call_id="c4"),
        Message("assistant", "", id="a3", tool_calls=(call(5),)),
        Message("tool", big, id="t5", tool_call_id="c5"),
    ]
    s = WindowStrategy(COUNTER)
    s.start("x", 4000)
    view = await s.build(msgs, 0)
    # The naive cut (after four of eight events) falls inside a2's round, so the cut moves to its end.
    assert [m.id for m in view] == ["s", "u", "a3", "t5"]
    assert check_tool_pairing(view) == [] and s.condensed


async def test_reachable_retention_by_type_role_third_and_stage(corpus: tuple[Path, Path]) -> None:
    c, p = corpus
    _, head, rounds = _sizes(c)
    res = await run_bench(c, p, _window_for(head, rounds), ["none", "window"])
    none, win = res["strategies"]["none"], res["strategies"]["window"]
    # Five facts; "exit code 1" is in no raw message, the other four are.
    assert (none["probe_facts_total"], none["probe_facts_reachable"]) == (5, 4)
    assert none["probe_retention"] == 0.8 and none["probe_retention_reachable"] == 1.0
    # window's last request holds the head and rounds 5-6: only "file1 file1" (round 1's output) is lost.
    assert win["probe_retention"] == 0.6 and win["probe_retention_reachable"] == 0.75
    assert win["probe_by_type"] == {
        "recall": {
            "facts": 2,
            "kept": 0,
            "retention": 0.0,
            "reachable_facts": 1,
            "reachable_kept": 0,
            "retention_reachable": 0.0,
        },
        "artifact": {
            "facts": 2,
            "kept": 2,
            "retention": 1.0,
            "reachable_facts": 2,
            "reachable_kept": 2,
            "retention_reachable": 1.0,
        },
        "decision": {
            "facts": 1,
            "kept": 1,
            "retention": 1.0,
            "reachable_facts": 1,
            "reachable_kept": 1,
            "retention_reachable": 1.0,
        },
    }
    assert win["probe_reachable_by_role"] == {
        "tool output": {
            "facts": 2,
            "kept": 1,
            "retention": 0.5,
        },  # file1 (message 3) lost, file6 (message 13) kept
        "assistant": {"facts": 1, "kept": 1, "retention": 1.0},
        "user": {"facts": 1, "kept": 1, "retention": 1.0},
    }
    # Of the 14 messages the last request is built from: messages 1 and 3 are in the first third, 12 and 13 in
    # the last.
    assert win["probe_reachable_by_third"] == {
        "first third": {"facts": 2, "kept": 1, "retention": 0.5},
        "middle third": {"facts": 0, "kept": 0, "retention": None},
        "last third": {"facts": 2, "kept": 2, "retention": 1.0},
    }
    assert win["probe_lost_by_stage"] == {"dropped": 1}
    assert win["probe_lost"] == [
        {
            "conv_id": "w",
            "probe_id": "p1",
            "type": "recall",
            "fact": "file1 file1",
            "role": "tool output",
            "third": "first third",
            "stage": "dropped",
            "in_vault": False,
            "by_search": True,
        }
    ]
    # history_search over the conversation shows the one lost fact in its top five; none lost none.
    assert win["probe_recoverable_by_search"] == 1.0 and none["probe_recoverable_by_search"] is None


async def test_rejected_requests_are_not_billed_and_make_a_strategy_infeasible(
    corpus: tuple[Path, Path],
) -> None:
    c, p = corpus
    _, head, rounds = _sizes(c)
    window = _window_for(head, rounds)
    res = await run_bench(c, p, window, ["none", "window"])
    none, win = res["strategies"]["none"], res["strategies"]["window"]
    sizes = [head + sum(rounds[:k]) for k in range(ROUNDS + 1)]  # none's request k carries k rounds
    accepted = [n for n in sizes if n + REQUEST_OVERHEAD <= window]
    assert len(accepted) < len(sizes)  # the fixture is meant to overflow `none`
    assert none["rejected_requests"] == len(sizes) - len(accepted) and none["feasible"] is False
    prices = Prices.for_model("claude-sonnet-4-5")
    # Each accepted request reads the previous one from the cache (the system prompt alone is over 1,024
    # tokens).
    cached = sum(accepted[:-1])
    assert (none["input_tokens"], none["cached_input_tokens"]) == (sum(accepted), cached)
    assert none["cost_usd"] == pytest.approx(
        cached * prices.cache_read + (sum(accepted) - cached) * prices.cache_write, abs=1e-4
    )
    # As sent, every request counts: that is none's reference cost.
    assert none["sent"]["input_tokens"] == sum(sizes) and none["sent"]["cached_input_tokens"] == sum(
        sizes[:-1]
    )
    assert win["rejected_requests"] == 0 and win["feasible"] is True
    # rewrite overhead: none's uncached tokens are each message once (head + six rounds); window sends
    # rounds 3 and 5 uncached a second time (after each condensation, only the head is a cached prefix).
    floor = head + sum(rounds)
    assert none["sent"]["uncached_input_tokens"] == floor and none["rewrite_overhead"] == 0.0
    assert win["sent"]["uncached_input_tokens"] == floor + rounds[2] + rounds[4]
    assert win["rewrite_overhead"] == pytest.approx((rounds[2] + rounds[4]) / floor, abs=1e-4)
    assert win["compactions"] == 2


def _result(**myrm: Any) -> dict[str, Any]:
    def strat(
        cost: float, rejected: int = 0, uncached: int = 1000, cached: int = 9000, **kw: Any
    ) -> dict[str, Any]:
        d = {
            "requests": 10,
            "rejected_requests": rejected,
            "feasible": rejected == 0,
            "rejections": {"context_length": rejected} if rejected else {},
            "input_tokens": cached + uncached,
            "cached_input_tokens": cached,
            "uncached_input_tokens": uncached,
            "cache_hit_ratio": round(cached / (cached + uncached), 4),
            "cost_usd": cost,
            "cost_cached_usd": cost / 4,
            "cost_uncached_usd": 3 * cost / 4,
            "compactions": 0,
            "pipeline_ms_p50": 0.1,
            "pipeline_ms_p99": 0.5,
            "pipeline_ms_p50_first_quarter": 0.1,
            "pipeline_ms_p50_last_quarter": 0.1,
            "rewrite_overhead": 0.0,
            "probe_retention_reachable": None,
        }
        d["sent"] = {
            k: d[k]
            for k in (
                "input_tokens",
                "cached_input_tokens",
                "uncached_input_tokens",
                "cost_usd",
                "cost_cached_usd",
                "cost_uncached_usd",
            )
        }
        d.update(kw)
        return d

    return {
        "strategies": {
            "myrm": strat(**myrm),
            "none": strat(
                10.0,
                rejected=4,
                sent={
                    "cost_usd": 20.0,
                    "cached_input_tokens": 9000,
                    "input_tokens": 10000,
                    "uncached_input_tokens": 1000,
                    "cost_cached_usd": 5.0,
                    "cost_uncached_usd": 15.0,
                },
            ),
            "mask": strat(3.0, rejected=1),
            "truncate": strat(8.0),
            "window": strat(6.0),
        }
    }


def test_targets_compare_cost_with_feasible_baselines_and_none_as_sent() -> None:
    lines = targets_of(_result(cost=4.0))
    assert "none: infeasible (4 of 10 requests rejected: context_length 4)" in lines[0]
    assert any(x.startswith("mask: infeasible") for x in lines)
    # 4.0 / none's 20.0 as sent; 4.0 / window's 6.0 (mask is cheaper but infeasible).
    assert any(x.startswith("cost = 0.200× none") and x.endswith("met") for x in lines)
    assert any(
        x.startswith("cost = 0.667× window, the cheapest feasible baseline") and x.endswith("met")
        for x in lines
    )
    lines = targets_of(
        _result(cost=5.4, cost_cached_usd=0.4, cost_uncached_usd=5.0, uncached=3000, compactions=5)
    )
    miss = next(i for i, x in enumerate(lines) if x.startswith("cost = 0.900× window"))
    assert lines[miss].endswith("MISSED by 0.150×")
    # The why line is the run's own split: myrm $0.40 cached + $5.00 uncached against window's $1.50 + $4.50.
    why = lines[miss + 1]
    assert "myrm $5.4000 = $0.4000 for 9,000 cached tokens + $5.0000 for 3,000 uncached" in why
    assert "myrm's uncached part is 1.11× window's, its cached part 0.27×" in why
    assert "compactions" not in why  # per compaction only against none, whose uncached tokens are the floor


def test_retention_why_lists_what_was_lost() -> None:
    lost = [
        {
            "conv_id": "set/c1",
            "probe_id": "p1",
            "type": "recall",
            "fact": "ValueError: bad",
            "role": "tool output",
            "third": "first third",
            "stage": "truncated",
            "in_vault": True,
        }
    ]
    r = _result(
        cost=4.0,
        probe_retention_reachable=0.9,
        probe_facts_reachable=10,
        probe_facts_total=11,
        probe_retention=0.8182,
        probe_lost=lost,
        probe_lost_by_stage={"truncated (in vault)": 1},
        probe_reachable_by_role={
            "tool output": {"facts": 6, "kept": 5, "retention": 0.8333},
            "user": {"facts": 4, "kept": 4, "retention": 1.0},
        },
        probe_reachable_by_third={"first third": {"facts": 5, "kept": 4, "retention": 0.8}},
        probe_by_type={"recall": {"reachable_facts": 10, "reachable_kept": 9, "retention_reachable": 0.9}},
    )
    r["strategies"]["truncate"]["probe_retention_reachable"] = 0.95
    lines = targets_of(r)
    i = next(i for i, x in enumerate(lines) if x.startswith("retention of reachable facts = 0.900"))
    assert "truncate 0.950" in lines[i] and lines[i].endswith("MISSED by 0.080")
    whys = lines[i + 1 : i + 7]
    assert (
        whys[0] == "  why: 1 of 10 reachable facts are not in myrm's last requests; best baseline truncate "
        "keeps 0.950"
    )
    assert "tool output 1 lost of 6 (keeps 0.83), user 0 lost of 4 (keeps 1.00)" in whys[1]
    assert "first third 1 lost of 5" in whys[2]
    assert "truncated (in vault) 1" in whys[3]
    assert "recall 0.90 (9/10)" in whys[4]
    assert '"ValueError: bad" (c1 p1: tool output, first third, truncated)' in whys[5]


def targets_of(result: dict[str, Any]) -> list[str]:
    from myrm_tui.bench.report import targets

    return targets(result)


async def test_plugins_get_a_conversation_start_signal(tmp_path: Path) -> None:
    from tests.conftest import FIXTURES
    from tests.fixtures import bench_plugins

    bench_plugins.recorder.events.clear()
    bench_plugins.module_starts.clear()
    await run_bench(
        FIXTURES / "mini.jsonl",
        None,
        100_000,
        [],
        plugins=["rec=tests.fixtures.bench_plugins:recorder", "mod=tests.fixtures.bench_plugins:keep"],
    )
    # mini.jsonl: conversations a and b, two requests each; start comes before each conversation's first
    # request.
    assert [e[0] for e in bench_plugins.recorder.events] == [
        "start",
        "build",
        "build",
        "start",
        "build",
        "build",
    ]
    assert [e[1:] for e in bench_plugins.recorder.events if e[0] == "start"] == [
        ("a", 100_000),
        ("b", 100_000),
    ]
    assert bench_plugins.module_starts == [("a", 100_000), ("b", 100_000)]


async def test_further_probe_sets_are_scored_alongside(corpus: tuple[Path, Path], tmp_path: Path) -> None:
    from myrm_tui.bench.report import markdown

    c, p = corpus
    _, head, rounds = _sizes(c)
    only_p1 = tmp_path / "recall-only.jsonl"
    only_p1.write_text(json.dumps(PROBES[0]) + "\n")
    res = await run_bench(c, p, _window_for(head, rounds), ["window"], extra_probes=[only_p1])
    win = res["strategies"]["window"]
    # p1 alone: "file1 file1" (lost by window) and "exit code 1" (in no raw message).
    assert win["probe_sets"] == {
        "recall-only.jsonl": {
            "probe_facts_total": 2,
            "probe_facts_reachable": 1,
            "probe_retention": 0.0,
            "probe_retention_reachable": 0.0,
            "probe_recoverable_by_search": 1.0,
        }
    }
    assert win["probe_facts_total"] == 5  # the main set is unchanged
    md = markdown(res, "cmd")
    assert "| recall-only reach. |" in md


def test_cost_against_none_counts_the_extra_uncached_tokens_per_compaction() -> None:
    lines = targets_of(
        _result(cost=14.0, cost_cached_usd=4.0, cost_uncached_usd=10.0, uncached=3000, compactions=5)
    )
    i = next(i for i, x in enumerate(lines) if x.startswith("cost = 0.700× none"))
    assert lines[i].endswith("MISSED by 0.050×")
    # none as sent: $5 cached + $15 uncached, 1,000 uncached tokens; myrm 3,000 uncached over 5 compactions.
    assert (
        "myrm's uncached part is 0.67× none's, its cached part 0.80×; 5 compactions, +400 "
        "uncached tokens each against none" in lines[i + 1]
    )


def test_targets_name_the_planned_share_and_the_summary_share() -> None:
    lines = targets_of(
        _result(
            cost=4.0,
            compaction_triggers={"emergency": 3, "threshold": 7},
            planned_compaction_share=0.7,
            summary_share_max=0.31,
        )
    )
    miss = next(i for i, x in enumerate(lines) if x.startswith("planned compactions = 70.0%"))
    assert lines[miss].endswith("MISSED by 20.0%")
    assert lines[miss + 1] == "  why: triggers: emergency 3, threshold 7"
    assert "summary_share_max = 0.310 of the window (target ≤ 0.20): MISSED by 0.110" in lines


async def test_the_bench_counts_each_compaction_by_its_trigger_and_the_largest_summary(
    corpus: tuple[Path, Path],
) -> None:
    """Every compaction myrm made is counted under its record's trigger, and the summary share is the
    summary blocks of the request that carried the most, over the window."""
    from myrm_tui.bench.runner import planned_share

    path, _ = corpus
    _msgs, head, rounds = _sizes(path)
    window = max(4_000, _window_for(head, rounds) // 2)
    result = await run_bench(path, None, window, ["myrm"])
    m = result["strategies"]["myrm"]
    assert m["compactions"] > 0 and sum(m["compaction_triggers"].values()) == m["compactions"]
    assert m["planned_compaction_share"] == planned_share(m["compaction_triggers"])
    assert 0 < m["summary_share_max"] < 1
    assert planned_share({"threshold": 9, "emergency": 1, "manual": 5}) == 0.9
    assert planned_share({"manual": 2}) is None


async def test_the_bench_names_the_emergencies_no_planned_point_could_have_come_before(
    tmp_path: Path,
) -> None:
    """An emergency compaction whose one round was larger than the input budget less where the last
    compaction left the view is counted apart: it says why a small window misses the planned share."""
    msgs: list[dict[str, Any]] = [
        {"role": "system", "content": "Rules of the house."},
        {"role": "user", "content": "Write the module."},
    ]
    for r in range(12):
        # small rounds, then (round 8) a call whose arguments alone are most of a 4K window's budget
        body = "x = 1\n" * (900 if r == 8 else 10)
        msgs += [
            {
                "role": "assistant",
                "content": f"Step {r}.",
                "tool_calls": [
                    {
                        "id": f"t{r}",
                        "type": "function",
                        "function": {
                            "name": "bash",
                            "arguments": json.dumps({"cmd": f"cat > m{r}.py <<EOF\n{body}EOF"}),
                        },
                    }
                ],
            },
            {"role": "tool", "tool_call_id": f"t{r}", "content": f"wrote m{r}.py " + "ok " * 60},
        ]
    msgs.append({"role": "assistant", "content": "Done."})
    path = tmp_path / "big.jsonl"
    path.write_text(json.dumps({"id": "big", "messages": msgs}) + "\n")
    result = await run_bench(path, None, 4_000, ["myrm"])
    m = result["strategies"]["myrm"]
    emergencies = m["compaction_triggers"].get("emergency", 0)
    assert 1 <= m["emergency_rounds_over_room"] <= emergencies, m["compaction_triggers"]
    if m["planned_compaction_share"] < 0.9:  # the report names them among the reasons
        assert any("emergencies came from one round larger than" in line for line in targets_of(result))


async def test_search_recovery_shows_a_lost_fact_verbatim_or_word_for_word() -> None:
    call = ToolCall("c1", "book", '{"amount":39,"id":"X1"}')
    history = [
        Message(role="user", content="book it"),
        Message(role="assistant", content="Booking.", tool_calls=(call,)),
        Message(role="tool", content="ok +++ done", tool_call_id="c1", name="book"),
        *(Message(role="user", content=f"amount {n} and 39 again") for n in range(8)),
    ]
    probes = [
        Probe("x", "p1", "", (('"amount":39',),), 1),
        Probe("x", "p2", "", (("+++",),), 2),  # no word: no query can be made of it
        Probe("x", "p3", "", (("book it",),), 0),
    ]
    scored = score_probes(history, history[:1], "", probes)
    found = {f.probe_id: f.by_search for f in await search_lost(history, scored)}
    # The call's arguments are shown as "amount: 39"; p3 was kept, so it is not asked.
    assert found == {"p1": True, "p2": False, "p3": None}
