"""``myrm bench`` with the landing rule on (``ContextConfig.landing_payback``; the context README, "Where a
compaction lands"): the same arguments, myrm's config built with the rule, so its figures sit beside a plain
run's.

    python bench/explore/landing.py bench --corpus bench/foreign --window 32000 --strategies myrm --probes …
"""

from __future__ import annotations

import functools

from myrm_tui import cli
from myrm_tui.bench import strategies
from myrm_tui.context.config import budget_config

if __name__ == "__main__":
    strategies.budget_config = functools.partial(budget_config, landing_payback=True)  # type: ignore[assignment]
    cli.main()
