"""Unit tests, one group per processor of the pipeline."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from myrm_tui.context.cache_optimize import MAX_BREAKPOINTS, plan_breakpoints, render
from myrm_tui.context.compress import PriorityCompressor, Tier, classify, tail_start
from myrm_tui.context.config import ContextConfig
from myrm_tui.context.intent import CompressionIntent
from myrm_tui.context.invariants import check_view
from myrm_tui.context.media import MediaFilter, MediaResolve
from myrm_tui.context.normalize import INTERRUPTED, normalize
from myrm_tui.context.notes import SessionNotes
from myrm_tui.context.precompact import PreCompact
from myrm_tui.context.reread import FileIntegrityGuard, PostCompactionReread
from myrm_tui.context.state import ContextState
from myrm_tui.context.step import CompactionPlan, Level
from myrm_tui.context.summarize import Summarize, SummaryAuditor
from myrm_tui.context.thinking import ThinkingBlockCleaner
from myrm_tui.context.ttl_prune import CacheTTLPrune
from myrm_tui.context.types import SYNTHETIC_TAG, Message, ToolCall
from myrm_tui.context.vault import ArtifactVault, slice_lines
from tests.helpers import COUNTER, call, conversation, run_pipeline, run_step, view_for

# -- Layer 0: CompressionIntent ---------------------------------------------------------------------


def test_intent_finds_focus_files_modules_and_failed_calls() -> None:
    raw = [
        Message(role="system", content="s", id="s"),
        Message(role="user", content="Why does `astropy.wcs.utils` break in src/wcs/sliced.py?", id="u"),
        Message(role="assistant", content=None, id="a", tool_calls=(call("c1", "pytest"),)),
        Message(role="tool", content="<returncode>1</returncode>\nboom", id="t", tool_call_id="c1"),
    ]
    intent = CompressionIntent.build(raw)
    assert "src/wcs/sliced.py" in intent.focus_files
    assert "astropy.wcs.utils" in intent.focus_modules
    assert intent.failed_call_ids == {"c1"}
    assert intent.protects(raw[3])


# -- Thinking cleanup -----------------------------------------------------------------------------


async def test_thinking_anthropic_drops_reasoning_keeps_blocks() -> None:
    raw = [
        Message(role="user", content="q", id="u"),
        Message(
            role="assistant",
            content="a",
            id="a",
            reasoning="r",
            thinking_blocks=({"type": "thinking", "thinking": "r"},),
        ),
    ]
    out = (
        await run_step(ThinkingBlockCleaner(), view_for(raw, model="anthropic/claude-sonnet-4-5"))
    ).messages
    assert out[1].reasoning is None and out[1].thinking_blocks


async def test_thinking_deepseek_keeps_current_turn_and_tool_call_reasoning() -> None:
    raw = [
        Message(role="user", content="q1", id="u1"),
        Message(role="assistant", content="old", id="a1", reasoning="old thoughts"),
        Message(role="assistant", content=None, id="a2", reasoning="needed", tool_calls=(call("c", "ls"),)),
        Message(role="tool", content="x", id="t", tool_call_id="c"),
        Message(role="user", content="q2", id="u2"),
        Message(role="assistant", content="now", id="a3", reasoning="current"),
    ]
    out = (await run_step(ThinkingBlockCleaner(), view_for(raw, model="deepseek/deepseek-reasoner"))).messages
    assert out[1].reasoning is None
    assert out[2].reasoning == "needed"
    assert out[5].reasoning == "current"


async def test_thinking_backfills_empty_reasoning_after_model_switch() -> None:
    raw = [
        Message(role="user", content="q", id="u"),
        Message(role="assistant", content=None, id="a", tool_calls=(call("c", "ls"),)),
        Message(role="tool", content="x", id="t", tool_call_id="c"),
    ]
    out = (await run_step(ThinkingBlockCleaner(), view_for(raw, model="deepseek/deepseek-reasoner"))).messages
    assert out[1].reasoning == ""


async def test_thinking_other_models_strip_reasoning() -> None:
    raw = [
        Message(role="user", content="q", id="u"),
        Message(role="assistant", content="a", id="a", reasoning="r"),
    ]
    out = (await run_step(ThinkingBlockCleaner(), view_for(raw, model="gpt-4o"))).messages
    assert out[1].reasoning is None


# -- Media ---------------------------------------------------------------------------------------


def _img(i: int) -> Message:
    return Message(
        role="user",
        content=[
            {"type": "text", "text": f"shot {i}"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64," + "A" * 5000}},
        ],
        id=f"img{i}",
    )


async def test_media_window_keeps_last_two_and_vaults_older() -> None:
    raw = [Message(role="user", content="go", id="u"), *[_img(i) for i in range(4)]]
    view = view_for(raw)
    result = await run_step(MediaFilter(), view)
    out = result.messages
    assert [m.has_media for m in out[1:]] == [False, False, True, True]
    assert "vault://" in out[1].text and view.request.vault.pending
    assert result.trace.removed["media_filter"] > 0


async def test_media_resolve_turns_refs_into_images() -> None:
    vault = ArtifactVault("t")
    uri = vault.put("data:image/png;base64,AAAA", "media")
    raw = [
        Message(
            role="user",
            content=[{"type": "image_ref", "uri": uri}, {"type": "image_ref", "uri": "vault://t/missing"}],
            id="u",
        )
    ]
    out = (await run_step(MediaResolve(), view_for(raw, vault=vault))).messages
    parts = out[0].content
    assert isinstance(parts, list)
    assert parts[0]["type"] == "image_url" and parts[0]["image_url"]["url"].startswith("data:")
    assert parts[1]["type"] == "text" and "unavailable" in parts[1]["text"]


# -- Cache TTL prune -------------------------------------------------------------------------------


async def test_ttl_prune_archives_old_outputs_only_when_cache_cold() -> None:
    raw = conversation(10, prefix="p")
    raw = [m if m.role != "tool" else replace(m, created_at=1000.0) for m in raw]
    warm = await run_step(CacheTTLPrune(), view_for(raw, now=1000.0 + 7200, cache_warm=True))
    assert warm.messages == raw
    cold = view_for(raw, now=1000.0 + 7200)
    result = await run_step(CacheTTLPrune(), cold)
    out = result.messages
    archived = [m for m in out if m.meta.get("archived")]
    assert archived and all("vault://" in m.text for m in archived)
    assert all(cold.request.vault.get_cached(m.meta["vault_uri"]) is not None for m in archived)
    assert list(result.decisions.values()) == archived  # kept sticky by the Transaction
    assert out[-1] == raw[-1]  # the tail is left alone


# -- Pre-compact: levels, hot-cache bypass, anti-thrashing -----------------------------------------


@pytest.mark.parametrize(
    ("ratio", "level"),
    [
        (0.2, Level.NONE),
        (0.45, Level.MONITOR),
        (0.55, Level.LIGHT),
        (0.75, Level.FULL),
        (0.95, Level.EMERGENCY),
    ],
)
async def test_levels_follow_the_thresholds(ratio: float, level: Level) -> None:
    """The levels are shares of the input budget (the window less the reply reserve), not of the window."""
    budget = ContextConfig(max_context_tokens=10_000).input_budget
    raw = [Message(role="user", content="w " * int(budget * ratio), id="u")]
    result = await run_step(PreCompact(), view_for(raw), window=10_000)
    assert result.plan.level == level


async def test_hot_cache_bypass_skips_light_compaction_but_not_emergency() -> None:
    light = [Message(role="user", content="w " * 5_500, id="u")]
    result = await run_step(PreCompact(), view_for(light, cache_warm=True), window=10_000)
    assert result.plan.level == Level.LIGHT and not result.plan.compacting
    assert any("hot-cache bypass" in e for e in result.trace.events)
    heavy = [Message(role="user", content="w " * 9_500, id="u2")]
    result = await run_step(PreCompact(), view_for(heavy, cache_warm=True), window=10_000)
    assert result.plan.compacting and result.plan.backup is not None


def test_a_landing_within_a_round_of_the_point_plans_against_the_usual_round() -> None:
    """When the room a compaction left holds fewer than two of the largest recent rounds, the warm-cache
    point is one usual round (the third quartile, times its margin) under the budget, not 87.5 % of it:
    a usual round from below that point cannot reach the net."""
    from myrm_tui.context.precompact import PreCompactSettings, band_for, usual_round
    from myrm_tui.context.step import settings_for

    s = settings_for(PreCompactSettings, ContextConfig(max_context_tokens=4_000))
    growth = [300, 320, 340, 360, 380, 400, 420, 1_000]  # one large round among usual ones
    usual = usual_round(growth, s.growth_rounds, s.usual_round_quantile, s.usual_round_margin)
    assert usual == int(420 * s.usual_round_margin)
    roomy = band_for(s, growth, landed=0)
    assert roomy.planned and roomy.warm == s.fit_budget - roomy.predicted
    tight = band_for(s, growth, landed=s.fit_budget // 2)
    assert not tight.planned and tight.warm == s.fit_budget - usual < s.warm_compact_threshold
    assert tight.warm >= tight.full  # never under the full level
    assert usual_round([], 16, 0.75, 1.1) == 0 and usual_round([5], 0, 0.75, 1.1) == 0


async def test_a_compaction_is_fitted_under_the_landing_level_not_just_under_the_budget() -> None:
    """A compacting view that fits the budget but is over the landing level (older outputs the earlier
    steps left whole) is cut to the landing level: one that stayed just under the budget would need
    another compaction at the next round. The same view when not compacting is sent as it is."""
    from myrm_tui.context.fit import FitToBudget

    config = ContextConfig(max_context_tokens=16_000)
    raw = conversation(turns=6, output_chars=5_000)
    tokens = COUNTER.messages(raw)
    assert config.landing_tokens < tokens <= config.fit_budget, (config.landing_tokens, tokens)
    compacting = CompactionPlan(Level.FULL, True, "threshold FULL")
    fitted = await run_step(FitToBudget(), view_for(raw, plan=compacting), config=config)
    assert COUNTER.messages(fitted.messages) <= config.landing_tokens
    assert check_view(fitted.messages, raw) == []
    untouched = await run_step(FitToBudget(), view_for(raw), config=config)
    assert untouched.messages == raw and untouched.plan is None


async def test_a_planned_compaction_past_90_percent_goes_to_the_full_depth_and_the_net_to_emergency() -> None:
    """Past 90 % of the budget a view that still fits is compacted as planned (record: threshold), at the
    full level's depth; the same view with auto-compaction off is the emergency net's, at its depth; a
    view over the budget is the net's too."""
    from myrm_tui.context.compaction import trigger_for

    config = ContextConfig(max_context_tokens=10_000)
    raw = [Message(role="system", content="s", id="s"), Message(role="user", content="task", id="u0")]
    for k in range(8):  # earlier rounds a compaction can fold, the newest one small
        raw.append(Message(role="assistant", content="x " * int(config.input_budget * 0.118), id=f"a{k}"))
        raw.append(Message(role="user", content=f"go on {k}", id=f"u{k + 1}"))
    assert 0.9 < COUNTER.messages(raw) / config.input_budget < 1
    planned = (await run_step(PreCompact(), view_for(raw, cache_warm=True), config=config)).plan
    assert planned.compacting and planned.planned and planned.level == Level.EMERGENCY
    assert planned.depth == Level.FULL and trigger_for(planned.reason, planned.level.name, "") == "threshold"
    off = replace(config, auto_compact=False)
    net = (await run_step(PreCompact(), view_for(raw, cache_warm=True), config=off)).plan
    assert net.compacting and not net.planned and net.depth == Level.EMERGENCY
    assert net.reason.startswith("emergency") and trigger_for(net.reason, net.level.name, "") == "emergency"
    over = [*raw, Message(role="user", content="w " * int(config.input_budget * 0.1), id="u9")]
    plan = (await run_step(PreCompact(), view_for(over, cache_warm=True), config=config)).plan
    assert plan.reason.startswith("over budget") and not plan.planned and plan.depth == Level.EMERGENCY


async def test_a_planned_compaction_that_could_fold_almost_nothing_is_skipped_until_the_net() -> None:
    """A view that is nearly all its protected head and newest message (a long paste in a small window):
    compacting could fold a few tokens while its summary block adds more, so it is sent as it is while it
    fits; once it does not, the net compacts it all the same."""
    config = ContextConfig(max_context_tokens=10_000)
    budget = config.input_budget
    raw = [
        Message(role="system", content="s", id="s"),
        Message(role="user", content="hi", id="u0"),
        Message(role="assistant", content="Hello.", id="a0"),
        Message(role="user", content="w " * int(budget * 0.95), id="u1"),
    ]
    result = await run_step(PreCompact(), view_for(raw, cache_warm=True), config=config)
    assert not result.plan.compacting and result.plan.level == Level.EMERGENCY
    assert any("planned compaction skipped" in e for e in result.trace.events)
    raw[-1] = Message(role="user", content="w " * int(budget * 1.05), id="u1")
    result = await run_step(PreCompact(), view_for(raw, cache_warm=True), config=config)
    assert result.plan.compacting and result.plan.reason.startswith("over budget")


async def test_anti_thrashing_backs_off_after_low_yield_compactions() -> None:
    state = ContextState()
    # A history a light compaction cannot shrink: real user messages (never truncated), the first one
    # under the head limit (so not cut), over the light threshold and under the landing level together
    # (so the fit step has nothing to do either).
    raw = [
        Message(role="system", content="s", id="s"),
        Message(role="user", content="w " * 3_200, id="u"),
        Message(role="assistant", content="ok", id="a1"),
        Message(role="user", content="v " * 1_000, id="u2"),
        Message(role="assistant", content="ok", id="a2"),
        Message(role="user", content="x " * 1_000, id="u3"),
    ]
    for k in range(2):  # requests ten minutes apart: the cache is cold, so no hot-cache bypass
        await run_pipeline(raw, window=10_000, state=state, now=1_000.0 + 600 * k)
    assert state.low_yield_streak >= 2 and state.backoff_level == "FULL"
    _view, ctx = await run_pipeline(raw, window=10_000, state=state, now=3_000.0)
    assert not ctx.compacting and any("anti-thrashing" in e for e in ctx.metrics.events)


async def test_a_view_over_the_budget_compacts_even_while_backing_off() -> None:
    # A net set at the budget's very edge leaves a band over the budget and under the net.
    config = replace(ContextConfig(max_context_tokens=10_000, emergency_ratio=0.999), overhead_tokens=800)
    state = ContextState(backoff_level="EMERGENCY")  # anti-thrashing: wait for the 90% net
    raw = conversation(2, output_chars=400)
    while COUNTER.messages(raw) <= config.fit_budget:  # grow into the band between the two
        raw.append(Message(role="user", content="more", id=f"x{len(raw)}"))
        raw.append(Message(role="assistant", content="ok", id=f"y{len(raw)}"))
    tokens = COUNTER.messages(raw)
    assert config.fit_budget < tokens < config.summarize_trigger_threshold  # over budget, under the net
    result = await run_step(PreCompact(), view_for(raw, state, cache_warm=True), config=config)
    assert result.plan.compacting and result.plan.reason.startswith("over budget")


# -- Compress ------------------------------------------------------------------------------------


async def test_compress_deep_dedups_then_folds_whole_spans_and_keeps_tail() -> None:
    raw = conversation(30, output_chars=4000)
    raw[5] = Message(
        role="tool", content=raw[7].content, id=raw[5].id, tool_call_id=raw[5].tool_call_id
    )  # a duplicate
    plan = CompactionPlan(Level.FULL, compacting=True)
    view = view_for(raw, plan=plan, force_compaction=True, protected_head=tuple(raw[:2]))
    result = await run_step(PriorityCompressor(), view, window=12_000)
    out = result.messages
    assert COUNTER.messages(out) < COUNTER.messages(raw) // 4
    # Folded spans go whole to the summary; nothing left in view was cut in place (no rewrite to pay for).
    assert {"dedup", "remove"} <= set(result.trace.removed) and "truncate" not in result.trace.removed
    assert out[-1] == raw[-1] and out[:2] == raw[:2]
    assert result.folded and all(m not in out for m in result.folded)
    assert all(m in raw for m in out)


async def test_compress_light_truncates_in_place_and_folds_nothing() -> None:
    raw = conversation(30, output_chars=4000)
    plan = CompactionPlan(Level.LIGHT, compacting=True)
    view = view_for(raw, plan=plan, protected_head=tuple(raw[:2]))
    result = await run_step(PriorityCompressor(), view, window=12_000)
    out = result.messages
    assert "truncate" in result.trace.removed and not result.folded
    assert len(out) == len(raw) and COUNTER.messages(out) < COUNTER.messages(raw)
    assert out[-1] == raw[-1] and out[:2] == raw[:2]


def test_classify_marks_superseded_and_resolved_outputs_background() -> None:
    raw = [
        Message(role="system", content="s", id="s"),
        Message(role="user", content="go", id="u"),
        Message(role="assistant", content=None, id="a1", tool_calls=(call("c1", "pytest"),)),
        Message(role="tool", content="<returncode>1</returncode>\nfail", id="t1", tool_call_id="c1"),
        Message(role="assistant", content=None, id="a2", tool_calls=(call("c2", "cat notes.txt"),)),
        Message(role="tool", content="<returncode>0</returncode>\nnotes", id="t2", tool_call_id="c2"),
        Message(role="assistant", content=None, id="a3", tool_calls=(call("c3", "pytest"),)),
        Message(role="tool", content="<returncode>0</returncode>\npass", id="t3", tool_call_id="c3"),
    ]
    tiers = classify(raw, 2, 6, CompressionIntent())  # no focus: tiers from the history alone
    assert tiers[2] == tiers[3] == Tier.BACKGROUND  # failed pytest, later run passed
    assert tiers[4] == Tier.OLDER


def test_tail_start_never_splits_a_group() -> None:
    raw = conversation(10)
    start = tail_start(raw, 2, COUNTER, ContextConfig(max_context_tokens=6_000).tail_budget)
    assert raw[start].role == "assistant"


# -- Session notes -------------------------------------------------------------------------------


async def test_notes_are_reinserted_after_compaction() -> None:
    state = ContextState(notes=["the cache key is session-scoped", "do not touch setup.py"])
    raw = conversation(12)
    view, _ctx = await run_pipeline(raw, window=8_000, state=state, force_compaction=True)
    notes = [m for m in view if m.meta.get("kind") == "session_notes"]
    assert len(notes) == 1 and "do not touch setup.py" in notes[0].text
    assert f"<{SYNTHETIC_TAG}" in notes[0].text


async def test_notes_processor_is_idle_without_compaction() -> None:
    raw = conversation(2)
    result = await run_step(SessionNotes(), view_for(raw, state=ContextState(notes=["x"])))
    assert result.messages == raw


# -- Summarize -----------------------------------------------------------------------------------


async def test_extractive_summary_keeps_errors_artifacts_and_goal() -> None:
    raw = conversation(20)
    raw.insert(
        4,
        Message(
            role="assistant",
            content=None,
            id="mk",
            tool_calls=(
                call("mk1", "cat <<'EOF' > reproduce_issue.py\nprint(1)\nEOF\npython reproduce_issue.py"),
            ),
        ),
    )
    raw.insert(
        5,
        Message(
            role="tool",
            content="<returncode>1</returncode>\n<output>\nTraceback (most recent call last):\n  File "
            '"x", line 1\nValueError: bad frame\n</output>',
            id="mkt",
            tool_call_id="mk1",
        ),
    )
    view, ctx = await run_pipeline(raw, window=8_000, force_compaction=True)
    summary = next(m for m in view if m.meta.get("kind") == "summary")
    assert summary.role == "assistant" and summary.synthetic
    text = summary.text
    # The goal is the user's first message, which the protected head keeps in the view: not said twice.
    assert [m.id for m in view if m.role == "user" and "Fix the bug in src/app.py" in m.text] == [raw[1].id]
    assert "## User goal" not in text
    assert "reproduce_issue.py" in text and "ValueError: bad frame" in text
    # The result is kept in its own terms, not reworded into a phrase no raw message contains.
    assert "returncode 1" in text and "exit code" not in text
    assert text.rfind("## Next steps") > text.find("## Errors")  # the tail carries what to do next
    assert ctx.metrics.summary_source == "extractive"


async def test_llm_summary_is_audited_and_falls_back() -> None:
    raw = conversation(20)
    calls: list[str] = []

    async def bad(system: str, user: str) -> str:
        calls.append(user)
        return '{"user_goal": "x"}'  # missing 13 fields: rejected twice

    view, ctx = await run_pipeline(raw, window=8_000, force_compaction=True, summarizer=bad)
    assert len(calls) == 2 and ctx.metrics.summary_source == "extractive"
    assert any("rejected" in e for e in ctx.metrics.events)

    async def good(system: str, user: str) -> str:
        fields: dict[str, list[str]] = {
            f: []
            for f in (
                "user_instructions",
                "active_tasks",
                "completed_actions",
                "errors",
                "decisions",
                "artifacts",
                "files_examined",
                "key_facts",
                "tool_usage",
                "open_questions",
                "blocked_items",
                "next_steps",
            )
        }
        return json.dumps(
            {
                **fields,
                "user_goal": "fix app.py",
                "current_state": "reading files",
                "next_steps": ["run tests"],
                "key_facts": ["token sk-abcdefghijklmnopqrstuvwxyz123456 seen"],
            }
        )

    view, ctx = await run_pipeline(raw, window=8_000, force_compaction=True, summarizer=good)
    summary = next(m for m in view if m.meta.get("kind") == "summary")
    assert ctx.metrics.summary_source == "llm" and "fix app.py" in summary.text
    assert "sk-abcdefghij" not in summary.text and "[REDACTED:OPENAI_KEY]" in summary.text


def test_auditor_requires_protected_facts() -> None:
    raw = [
        Message(
            role="assistant",
            content=None,
            id="a",
            tool_calls=(
                ToolCall(
                    "c",
                    "file_edit_tool",
                    json.dumps({"path": "pkg/core.py", "old_string": "a", "new_string": "b"}),
                ),
            ),
        )
    ]
    from myrm_tui.context import summary_model

    intent, limits = CompressionIntent.build(raw), ContextConfig()
    s = summary_model.Summary()
    verdict = SummaryAuditor().audit(s, raw, intent, limits)
    assert not verdict.ok and any("pkg/core.py" in p for p in verdict.problems)
    s = summary_model.Summary(artifacts=("modified: pkg/core.py",))
    assert SummaryAuditor().audit(s, raw, intent, limits).ok


async def test_incremental_merge_drops_resolved_blockers() -> None:
    from myrm_tui.context import summary_model

    old = summary_model.Summary(blocked_items=("`pytest` still failing",), next_steps=("fix pytest",))
    new = summary_model.Summary(completed_actions=("`pytest` → ok",))
    merged = summary_model.merge(old, new)
    assert merged.blocked_items == ()


async def test_summarize_is_idle_when_nothing_was_removed() -> None:
    raw = conversation(2)
    view = view_for(raw, plan=CompactionPlan(Level.FULL, compacting=True))
    result = await run_step(Summarize(), view)
    assert result.messages == raw and not hasattr(result, "record")


# -- Post-compaction reread ----------------------------------------------------------------------


async def test_reread_injects_recent_files_and_registers_them() -> None:
    raw = conversation(16)
    raw.insert(
        3,
        Message(
            role="assistant",
            content=None,
            id="w",
            tool_calls=(
                ToolCall(
                    "w1",
                    "file_edit_tool",
                    json.dumps({"path": "src/app.py", "create": True, "new_string": "x"}),
                ),
            ),
        ),
    )
    raw.insert(4, Message(role="tool", content="created src/app.py", id="wt", tool_call_id="w1"))
    guard = FileIntegrityGuard()
    files = {"src/app.py": "print('fresh contents')\n"}
    view, _ctx = await run_pipeline(
        raw, window=8_000, force_compaction=True, read_file=files.get, integrity=guard
    )
    reread = [m for m in view if m.meta.get("kind") == "reread"]
    assert reread and "fresh contents" in reread[0].text and reread[0].role == "user"
    assert guard.known("src/app.py")


async def test_reread_respects_token_budget() -> None:
    raw = conversation(6)
    state = ContextState()
    state.touch_artifact("big.txt", "created")
    view = view_for(
        raw,
        state=state,
        plan=CompactionPlan(Level.FULL, compacting=True),
        folded=(raw[2],),
        protected_head=tuple(raw[:2]),
        read_file=lambda p: "word " * 5000,
    )
    config = ContextConfig(max_context_tokens=8_000, reread_max_tokens=100)
    result = await run_step(PostCompactionReread(), view, config=config)
    assert result.messages == raw


# -- Normalize -----------------------------------------------------------------------------------


def test_normalize_repairs_orphans_dangling_calls_and_order() -> None:
    view = [
        Message(role="user", content="go", id="u"),
        Message(role="tool", content="orphan", id="o", tool_call_id="zzz"),
        Message(role="assistant", content=None, id="a", tool_calls=(call("c1", "a"), call("c2", "b"))),
        Message(role="user", content="interjection", id="u2"),
        Message(role="tool", content="r1", id="t1", tool_call_id="c1"),
        Message(role="assistant", content="", id="empty"),
    ]
    out, stats = normalize(view)
    assert check_view(out) == []
    assert stats == {"orphans": 1, "dangling": 1, "empty": 1, "moved": 0} or stats["orphans"] == 1
    roles = [m.role for m in out]
    assert roles[:4] == ["user", "assistant", "tool", "tool"]
    assert out[3].text == INTERRUPTED


def test_normalize_handles_reused_ids_across_turns() -> None:
    view = [
        Message(role="user", content="go", id="u"),
        Message(role="assistant", content=None, id="a1", tool_calls=(call("same", "a"),)),
        Message(role="tool", content="first", id="t1", tool_call_id="same"),
        Message(role="assistant", content=None, id="a2", tool_calls=(call("same", "b"),)),
        Message(role="tool", content="second", id="t2", tool_call_id="same"),
    ]
    out, _ = normalize(view)
    assert [m.text for m in out if m.role == "tool"] == ["first", "second"]
    assert check_view(out) == []


def test_normalize_anchors_a_view_that_starts_with_the_assistant() -> None:
    out, _ = normalize(
        [Message(role="system", content="s", id="s"), Message(role="assistant", content="hi", id="a")]
    )
    assert out[1].role == "user" and out[1].synthetic


# -- Prompt cache optimize -----------------------------------------------------------------------


def test_anthropic_gets_at_most_four_breakpoints_and_openai_a_cache_key() -> None:
    view = [
        Message(role="system", content="s", id="s"),
        *[Message(role="user" if i % 2 == 0 else "assistant", content=f"m{i}", id=f"m{i}") for i in range(9)],
    ]
    tools = [{"type": "function", "function": {"name": "bash", "parameters": {}}}]
    marks = plan_breakpoints(view, 5)
    req = render(view, "anthropic/claude-sonnet-4-5", marks, tools)
    n = sum(
        1
        for m in req["messages"]
        if isinstance(m["content"], list) and any("cache_control" in p for p in m["content"])
    )
    n += sum(1 for t in req["tools"] if "cache_control" in t)
    assert n <= MAX_BREAKPOINTS and n == 4
    assert "prompt_cache_key" not in req
    req = render(view, "gpt-4o", marks, tools, session_key="sess-1")
    assert req["prompt_cache_key"] == "sess-1"
    assert not any(isinstance(m["content"], list) for m in req["messages"])
    req = render(view, "gpt-4o", marks, tools, api_base="http://localhost:11434/v1", session_key="sess-1")
    assert "prompt_cache_key" not in req  # only on native OpenAI endpoints
    req = render(view, "ollama/llama3", marks, tools, session_key="sess-1")
    assert "prompt_cache_key" not in req


def test_vault_line_ranges() -> None:
    text = "\n".join(f"row {i}" for i in range(1, 101))
    out = slice_lines(text, "10:12")
    assert out.splitlines() == ["10\trow 10", "11\trow 11", "12\trow 12"]
    with pytest.raises(ValueError):
        slice_lines(text, "a:b")


def test_qwen_dashscope_gets_the_same_explicit_markers() -> None:
    view = [
        Message(role="system", content="s", id="s"),
        Message(role="user", content="q", id="u"),
        Message(role="assistant", content="a", id="a"),
    ]
    req = render(view, "dashscope/qwen-max", plan_breakpoints(view, 2), None)
    marked = [
        m
        for m in req["messages"]
        if isinstance(m["content"], list) and m["content"][-1].get("cache_control") == {"type": "ephemeral"}
    ]
    assert len(marked) == 3 and "prompt_cache_key" not in req


# -- Fact ledger (verbatim lines of what a compaction folds) --------------------------------------


def test_salient_lines_keep_results_errors_and_located_lines_verbatim() -> None:
    from myrm_tui.context.ledger import P_RESULT, salient_lines

    noise = "\n".join(f"    x_{i} = compute({i})" for i in range(60))
    out = (
        "<returncode>1</returncode>\n<output>\n"
        + noise
        + "\ndjango/db/backends/sqlite3/base.py:446:def _sqlite_datetime_cast_date(dt, tzname):\n"
        '  File "/testbed/sympy/core/decorators.py", line 77, in '
        "__sympifyit\nsqlite3.OperationalError: no such table: __main___product\n"
        + noise
        + "\nFAILED (failures=3, errors=3, skipped=8)\n===== 5 passed, 1 failed in 0.31s =====\n</output>"
    )
    lines = {ln.text: ln.priority for ln in salient_lines(out)}
    assert (
        "===== 5 passed, 1 failed in 0.31s =====" in lines
        and lines["FAILED (failures=3, errors=3, skipped=8)"] == P_RESULT
    )
    assert "sqlite3.OperationalError: no such table: __main___product" in lines
    assert "django/db/backends/sqlite3/base.py:446:def _sqlite_datetime_cast_date(dt, tzname):" in lines
    assert '  File "/testbed/sympy/core/decorators.py", line 77, in __sympifyit' in lines
    assert not any(t.startswith("    x_") for t in lines)  # bulk is not salient


def test_salient_lines_keep_a_short_output_whole_and_json_items_in_their_own_separators() -> None:
    from myrm_tui.context.ledger import salient_lines

    assert [
        ln.text
        for ln in salient_lines(
            "<returncode>0</returncode>\n<output>\nExists: False\nStored value in DB: 2017-07-06 "
            "23:50:00\n</output>"
        )
    ] == ["Exists: False", "Stored value in DB: 2017-07-06 23:50:00"]
    flights = json.dumps(
        [{"flight_number": f"HAT{i:03d}", "prices": {"basic_economy": 86 + i}} for i in range(30)]
    )
    text = "\n".join(ln.text for ln in salient_lines(flights))
    assert '"flight_number": "HAT029"' in text and '"basic_economy": 86' in text


def test_ledger_fit_drops_repeats_then_lowest_priority_and_keeps_order() -> None:
    from myrm_tui.context.ledger import P_PROSE, P_RESULT, P_USER, Line, fit

    lines = [
        Line("user: use the sqlite backend", P_USER),
        Line("assistant: let me look around the tree a bit", P_PROSE),
        Line("  FAILED (failures=3)", P_RESULT),
        Line("  seen before", P_RESULT),
    ]
    kept = fit(lines, budget_chars=60, seen={"seen before"})
    assert kept == ["user: use the sqlite backend", "  FAILED (failures=3)"]


async def test_compactions_append_blocks_and_keep_earlier_ones_byte_identical() -> None:
    state = ContextState()
    raw = conversation(40)
    # A first block that leaves room in the summaries' share (20 % of the window): the next one appends.
    view1, _ = await run_pipeline(raw[:24], window=32_000, state=state, force_compaction=True)
    first = [m for m in view1 if m.meta.get("kind") == "summary"]
    view2, _ = await run_pipeline(raw, window=32_000, state=state, force_compaction=True)
    blocks = [m for m in view2 if m.meta.get("kind") == "summary"]
    assert len(first) == 1 and len(blocks) == 2
    assert blocks[0] is first[0] or (blocks[0].id, blocks[0].content) == (first[0].id, first[0].content)
    assert view2[:3] == view1[:3]  # head and the first block: a cached prefix across the compaction
    assert 'part="2"' in blocks[1].text and "## Next steps" in blocks[1].text
    # Outputs folded away survive as their verbatim lines.
    assert "line 0 of file20.py: value_20_0 = 0" in blocks[1].text or "cat src/file20.py" in blocks[1].text


async def test_blocks_over_their_budget_are_consolidated_into_one() -> None:
    state = ContextState()
    raw = conversation(60, output_chars=1200)
    cfg = ContextConfig(max_context_tokens=8_000, summary_ratio=0.05)
    for end in (30, 60, 90, len(raw)):
        view, _ = await run_pipeline(raw[:end], window=8_000, state=state, force_compaction=True, config=cfg)
    blocks = [m for m in view if m.meta.get("kind") == "summary"]
    assert len(blocks) <= 2 and state.compactions == 4
    assert check_view(view, raw) == []


async def test_consolidation_keeps_the_priority_each_line_was_written_with() -> None:
    """A short script print is kept whole at result priority when first folded; when the blocks are
    consolidated it must outrank the bulk of numbered code views, which its text alone does not say."""
    raw = [
        Message(role="system", content="You are a test agent.", id="ps"),
        Message(role="user", content="Fix src/app.py.", id="pu"),
    ]
    for i in range(24):
        raw.append(
            Message(
                role="assistant",
                content=f"Step {i}.",
                id=f"pa{i}",
                tool_calls=(call(f"pc{i}", "python check.py"),),
            )
        )
        raw.append(
            Message(
                role="tool",
                content=f"<returncode>0</returncode>\n<output>\nprobe_{i} dtype: object\nprobe_{i} shape: "
                f"({i}, 3)\n</output>",
                id=f"pt{i}",
                tool_call_id=f"pc{i}",
                name="bash",
            )
        )
        raw.append(
            Message(
                role="assistant",
                content=f"View {i}.",
                id=f"pb{i}",
                tool_calls=(call(f"pd{i}", f"nl -ba src/m{i}.py"),),
            )
        )
        view = "\n".join(f"  {100 + k}\t    total_{i}_{k} = compute_value({k}, scale={i})" for k in range(40))
        raw.append(
            Message(
                role="tool",
                content=f"<returncode>0</returncode>\n<output>\n{view}\n</output>",
                id=f"pe{i}",
                tool_call_id=f"pd{i}",
                name="bash",
            )
        )
    state = ContextState()
    cfg = ContextConfig(max_context_tokens=16_000, summary_ratio=0.12)
    for end in range(26, len(raw) + 1, 16):
        view_out, _ = await run_pipeline(
            raw[:end], window=16_000, state=state, force_compaction=True, config=cfg
        )
    text = "\n".join(m.text for m in view_out)
    assert (
        state.compactions >= 5 and sum(m.meta.get("kind") == "summary" for m in view_out) <= 3
    )  # consolidated
    assert all(f"probe_{i} shape: ({i}, 3)" in text for i in range(22))
    assert text.count("= compute_value(") < 22 * 40 // 4  # the code views are what made room


def test_ledger_lines_of_replies_medium_outputs_and_numbered_views() -> None:
    from myrm_tui.context.ledger import (
        P_CODE,
        P_DECISION,
        P_FILL,
        P_LOCATED,
        P_PROSE,
        P_USER,
        record_one,
        salient_lines,
    )

    reply = Message(
        role="assistant", content="The fastest trip is Option 2, 5 hours in all. Shall I book it?", id="r"
    )
    assert [ln.priority for ln in record_one(reply)] == [
        P_USER,
        P_DECISION,
    ]  # a reply to the user decides; its opening states the conclusion and ranks with the user's words
    thought = replace(reply, tool_calls=(call("x", "ls"),))
    assert record_one(thought)[0].priority == P_PROSE
    prints = "\n".join(
        [*(f"case {k}: value {k * 7}" for k in range(20)), "DEBUG: self._data.array dtype: object"]
    )
    lines = {ln.text: ln.priority for ln in salient_lines(prints)}
    assert lines["case 3: value 21"] == P_FILL and "DEBUG: self._data.array dtype: object" in lines
    numbered = "\n".join(
        [*(f"   {k}\t    x_{k} = f({k})" for k in range(100, 130)), "   130\tclass PandasIndexAdapter(Base):"]
    )
    lines = {ln.text.strip(): ln.priority for ln in salient_lines(numbered)}
    assert (
        lines["105\t    x_105 = f(105)"] == P_CODE
        and lines["130\tclass PandasIndexAdapter(Base):"] >= P_LOCATED
    )
