"""The pipeline in the seed's order, built once per agent.

User Message → Thinking Cleanup → Media Filter → Smart Filter → Cache TTL Prune → Pre-Compact →
Compress → Session Notes → Summarize → Post-Compaction Reread → Normalize → Media Resolve →
Prompt Cache Optimize → LLM. (Layer 0, CompressionIntent, is built by the Pipeline before the first
step; ContextBudgetGuard runs inside Smart Filter as its last line.)
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from myrm_tui.context.cache_optimize import PromptCacheOptimize
from myrm_tui.context.compress import PriorityCompressor
from myrm_tui.context.filters.processor import FilterProcessor
from myrm_tui.context.filters.rules import RuleEngine
from myrm_tui.context.media import MediaFilter, MediaResolve
from myrm_tui.context.normalize import Normalize
from myrm_tui.context.notes import SessionNotes
from myrm_tui.context.precompact import PreCompact
from myrm_tui.context.processor import Pipeline
from myrm_tui.context.reread import PostCompactionReread
from myrm_tui.context.summarize import Summarize
from myrm_tui.context.thinking import ThinkingBlockCleaner
from myrm_tui.context.ttl_prune import CacheTTLPrune
from myrm_tui.paths import prompts_dir as default_prompts_dir


def build_pipeline(prompts_dir: Path | None = None, extra_filter_dirs: Iterable[Path] = ()) -> Pipeline:
    prompts = prompts_dir or default_prompts_dir()
    rules = RuleEngine.from_dirs([prompts / "filters", *extra_filter_dirs])
    return Pipeline(
        [
            ThinkingBlockCleaner(),
            MediaFilter(),
            FilterProcessor(rules, prompts),
            CacheTTLPrune(),
            PreCompact(),
            PriorityCompressor(),
            SessionNotes(),
            Summarize(prompts),
            PostCompactionReread(),
            Normalize(),
            MediaResolve(),
            PromptCacheOptimize(),
        ]
    )
