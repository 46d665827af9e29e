"""``ContextConfig``: every threshold of the pipeline, derived from one number, the window.

Switching from a 128K model to a 200K one rescales everything; nothing else needs configuring. The few
settings a user sets (``UserContextSettings``) are declared once, here, and shared with ``Settings``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

# Room the last steps keep under the input budget: Normalize may add a placeholder or two after the fit step.
FIT_SLACK_TOKENS = 32

# A reply's max_tokens unless the settings say otherwise (``Settings.max_output_tokens``; the bench's too).
DEFAULT_REPLY_TOKENS = 4096

# litellm model names whose registry entry we cannot rely on offline fall back to this.
DEFAULT_WINDOW = 128_000


@dataclass(frozen=True, slots=True)
class UserContextSettings:
    """The pipeline's settings a user sets (config file, F2, ``MYRM_*``), declared once, here: ``Settings``
    (``myrm_tui/config.py``) inherits them as configuration keys and ``ContextConfig`` as its inputs
    (``context/`` imports nothing outside itself, so the one declaration lives on this side)."""

    # Pre-Compact (``steps/precompact.py``): the utilisation levels, as shares of the input budget (the window
    # less the reply reserve and the tool schemas): shares of the window put full (70 %) within one tool
    # step of the budget at 8K-32K windows, and every compaction there was the emergency net.
    light_ratio: float = 0.50  # dedup + truncate
    full_ratio: float = 0.70  # priority-aware removal, then summary
    emergency_ratio: float = 0.90  # safety net: compact whatever it takes
    # Off: the levels only watch; ctrl+k, /compact, the emergency net, over budget and an overflow still
    # compact.
    auto_compact: bool = True

    # Cache TTL prune (``steps/ttl_prune.py``): tool outputs older than this are archived when the cache is
    # cold.
    cache_ttl_seconds: float = 3600.0


def user_values(settings: UserContextSettings) -> dict[str, Any]:
    """The user's pipeline settings in ``settings`` (a ``Settings`` is one), as ``ContextConfig`` keywords."""
    return {f.name: getattr(settings, f.name) for f in fields(UserContextSettings)}


@dataclass(frozen=True, slots=True)
class ContextConfig(UserContextSettings):
    """The pipeline's settings: the user's (inherited) and the rest, grouped by the step that reads them.

    Each step declares the names it reads in its own frozen ``Settings`` dataclass (``step.settings_for``
    fills it by name from these fields and the thresholds derived below), so the groups are comments, not
    nested classes: nesting would declare every value a third time and touch every step. A group opens
    with a blank line and a comment naming its modules; ``tests/context/test_config.py`` checks that each
    field is read there."""

    # The window and what it carries besides the view: every budget derived below (``config.py``) --------
    max_context_tokens: int = DEFAULT_WINDOW
    reserve_output_tokens: int = 0  # room kept for the reply; 0 means min(4096, 10% of window)
    # What every request carries outside the view (the tool schemas): the provider counts it, so the budget
    # must. The agent sets it from the schemas it binds.
    overhead_tokens: int = 0

    # Pre-Compact (``steps/precompact.py``; the pipeline keeps ``growth_rounds`` of history)
    # --------------------
    monitor_ratio: float = 0.40  # the MONITOR level, and the earliest a background summary starts
    # Planned compaction fires early enough that the largest round of the last ``growth_rounds`` requests
    # cannot carry the view from below the compaction point over the input budget.
    growth_rounds: int = 16
    growth_margin: float = 1.25  # the prediction is that largest round times this
    # When the room a compaction left is under two predicted rounds (small windows), planning against the
    # largest round would compact at every request: the point is then one usual round (this quantile of the
    # recent rounds, times the margin) under the budget, and the net takes the rare larger round.
    usual_round_quantile: float = 0.75
    usual_round_margin: float = 1.1
    # While the provider cache is warm, compact only this close to the budget (or one predicted round under
    # it, when lower): a compaction re-sends the view after the head at the cache-write price (125%), a
    # request that only appends re-reads it at 10%, a session that ends first never pays for one, and each
    # compaction refits the Record (cold cache: from ``light_ratio``, the rewrite is free). The
    # answered-output trim waits for the same point. 0.875 before issue 46 (swe-dev 16K: 4.93 -> 4.51
    # compactions per 100 requests).
    warm_compact_ratio: float = 0.95

    # The pipeline itself (``pipeline.py``) -------------------------------------------------------------
    provider_cache_ttl_seconds: float = 300.0  # the provider's prefix cache counts as warm this long
    # Anti-thrashing: a compaction saving less than this share of the view counts as low-yield.
    low_yield_ratio: float = 0.10
    max_low_yield_in_row: int = 2

    # Compress (``steps/compress.py``)
    # ------------------------------------------------------------------------ Where a compaction aims to
    # land: low enough that many turns append (and hit the cache) before the next.
    target_ratio: float = 0.15
    tail_ratio: float = 0.08  # newest turns reserved, never folded (small: a compaction re-sends it uncached)
    # After a provider overflow the newest rounds stay as messages (stage 1 shrinks them in place) over a
    # wider tail: the turn is mid-way and its working set must not become a summary on our miscount.
    recovery_tail_ratio: float = 0.15
    truncate_chars: int = 2_000  # what "Truncate" keeps of a long older output
    # Summary blocks are merged (consolidated) sooner when the head and they pass this share together.
    consolidate_floor_ratio: float = 0.35

    # Smart filter (``filters/``) and its budget guard (``filters/budget_guard.py``)
    # -----------------------------
    filter_single_tokens: int = 2_000  # the smart filter's structural/semantic stage: one output
    filter_turn_tokens: int = 15_000  # ... or one turn's outputs together
    budget_guard_chars: int = 100_000  # ContextBudgetGuard hard safety net
    shell_compress_min_chars: int = 1_200  # below this a shell output is left alone
    # Never filtered, trimmed or pruned (also read by the answered-output trim and the TTL prune).
    exempt_tools: frozenset[str] = field(
        default_factory=lambda: frozenset({"file_read_tool", "file_edit_tool", "session_notes"})
    )
    # Structure-aware trimming limits (seed: depth 4, 12 keys, 6 items).
    json_max_depth: int = 4
    json_max_keys: int = 12
    json_max_items: int = 6
    head_lines: int = 40
    tail_lines: int = 30

    # Answered-output trim (``steps/answered.py``): after its reply, an output longer than this keeps its
    # salient lines (at most ``trim_keep_ratio`` of its characters) when the saving beats ``trim_margin`` x
    # the rewrite; 0: off.
    trim_answered_tokens: int = 800
    trim_keep_ratio: float = 0.4
    trim_margin: float = 1.0

    # Reasoning trim (``steps/reasoning.py``): a tool-calling assistant message longer than this is sent back
    # shortened; 0: off.
    trim_reasoning_tokens: int = 200

    # Media filter (``steps/media.py``)
    # -----------------------------------------------------------------------
    media_window: int = 2  # sliding visual evidence window

    # Post-compaction re-read (``steps/reread.py``)
    # -----------------------------------------------------------
    reread_files: int = 5
    reread_max_tokens: int = 50_000

    # Summarize (``steps/summarize.py``; ``summary_ratio`` also Compress)
    # -------------------------------------- Role of the summary message: "assistant" for sessions (can never
    # pass for the user's words); "user" for subagents, marked as synthetic, as the seed specifies for child
    # compaction.
    summary_role: str = "assistant"
    # Summary blocks: each compaction appends one (earlier blocks stay byte-identical, so cached); its
    # verbatim ledger gets ``ledger_ratio`` of the folded tokens (at least ``ledger_min_tokens``). When all
    # blocks pass ``summary_ratio`` of the window they are consolidated into one of ``consolidate_ratio`` of
    # that.
    ledger_ratio: float = 0.35
    ledger_min_tokens: int = 300
    summary_ratio: float = 0.45
    consolidate_ratio: float = 0.6
    max_blocked_items: int = 3
    max_next_steps: int = 5

    # Fit to budget and Head anchor (``steps/fit.py``): a compaction lands at or under ``landing_ratio`` of
    # the input budget, so several turns append before the next one (that is its progress); every injected
    # part has a share of the window and is cut past it, with a pointer to its whole text in the vault. The
    # injected, anchor and re-read shares are also read by Session notes, Summarize and the re-read.
    landing_ratio: float = 0.7
    head_limit_ratio: float = 0.4  # protected head over this share of the input budget: cut the anchor
    anchor_ratio: float = 0.2  # what the first user message keeps of the window when it is cut
    injected_ratio: float = 0.08  # notes, workspace rules and environment, hook context, pinned items
    reread_ratio: float = 0.15  # files re-read after a compaction, together
    fit_summary_ratio: float = 0.2  # the summary blocks, once merged into one by the fit step

    def __post_init__(self) -> None:
        if self.max_context_tokens < 1_000:
            raise ValueError(f"max_context_tokens must be at least 1000, got {self.max_context_tokens}")
        if not (0 < self.light_ratio <= self.full_ratio <= self.emergency_ratio < 1):
            raise ValueError("thresholds must satisfy 0 < light <= full <= emergency < 1")
        if not (0 <= self.usual_round_quantile <= 1 and self.usual_round_margin > 0):
            raise ValueError("usual_round_quantile must be in [0, 1] and usual_round_margin positive")

    # Absolute thresholds: the levels are shares of the input budget, the parts shares of the window ------
    @property
    def output_reserve(self) -> int:
        return self.reserve_output_tokens or min(4096, self.max_context_tokens // 10)

    @property
    def view_window(self) -> int:
        """The window less the tool schemas: what the ratios below are shares of."""
        return max(self.max_context_tokens - self.overhead_tokens, self.max_context_tokens // 4)

    @property
    def input_budget(self) -> int:
        """Tokens the view may take: the window less the room kept for the reply and the tool schemas."""
        return self.max_context_tokens - self.output_reserve - self.overhead_tokens

    @property
    def monitor_threshold(self) -> int:
        return int(self.input_budget * self.monitor_ratio)

    @property
    def compress_threshold(self) -> int:
        return int(self.input_budget * self.light_ratio)

    @property
    def compress_force_threshold(self) -> int:
        return int(self.input_budget * self.full_ratio)

    @property
    def summarize_trigger_threshold(self) -> int:
        return int(self.input_budget * self.emergency_ratio)

    @property
    def warm_compact_threshold(self) -> int:
        return int(self.input_budget * self.warm_compact_ratio)

    @property
    def target_tokens(self) -> int:
        return int(self.view_window * self.target_ratio)

    @property
    def summary_budget_tokens(self) -> int:
        return int(self.view_window * self.summary_ratio)

    @property
    def tail_budget(self) -> int:
        return int(self.view_window * self.tail_ratio)

    @property
    def recovery_tail_budget(self) -> int:
        return int(self.view_window * self.recovery_tail_ratio)

    @property
    def fit_budget(self) -> int:
        """What the fit step fits a view into (and Pre-Compact compacts above, whatever else it weighs)."""
        return self.input_budget - FIT_SLACK_TOKENS

    @property
    def landing_tokens(self) -> int:
        return int(self.input_budget * self.landing_ratio)

    @property
    def head_limit_tokens(self) -> int:
        return int(self.input_budget * self.head_limit_ratio)

    @property
    def anchor_tokens(self) -> int:
        return int(self.view_window * self.anchor_ratio)

    @property
    def injected_tokens(self) -> int:
        return int(self.view_window * self.injected_ratio)

    @property
    def reread_budget_tokens(self) -> int:
        return min(self.reread_max_tokens, int(self.view_window * self.reread_ratio))

    @property
    def fit_summary_tokens(self) -> int:
        return int(self.view_window * self.fit_summary_ratio)

    @property
    def consolidate_floor_tokens(self) -> int:
        return int(self.view_window * self.consolidate_floor_ratio)

    def with_window(self, tokens: int) -> ContextConfig:
        from dataclasses import replace

        return replace(self, max_context_tokens=tokens)


def budget_config(window: int, reply_tokens: int, schema_tokens: int = 0, **fields: Any) -> ContextConfig:
    """The one derivation of a request's input budget, for the live agent (``agent/model_target``) and the
    bench alike: the window less the reply's reserve (its ``max_tokens``, thinking included, at most a
    quarter of the window) less the tool schemas every request carries."""
    return ContextConfig(
        max_context_tokens=window,
        reserve_output_tokens=min(reply_tokens, window // 4),
        overhead_tokens=schema_tokens,
        **fields,
    )
