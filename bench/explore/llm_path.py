"""The benchmark's LLM summary path against the emulator, beside the extractive one.

``python bench/explore/llm_path.py CORPUS WINDOW OUT.json [PROBES ...]`` runs ``myrm`` three times:
extractive, the main model as summarizer (its requests reuse the conversation's cached prefix), and a
lite model (``gpt-4o-mini``: sent the span once). The emulator answers every summarize request with a
fixed summary of about 650 tokens; it cannot read, so this says nothing of quality.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from myrm_tui.bench.report import _summarizer
from myrm_tui.bench.run import run_bench
from myrm_tui.context.summary import fields as summary_model
from myrm_tui.testing.emulator import ProviderEmulator, Reply

PRICE_MODEL = "claude-sonnet-4-5"
KEYS = (
    "requests",
    "compactions",
    "cost_usd",
    "cost_main_usd",
    "cache_hit_ratio",
    "summarizer_calls",
    "summarizer_input_tokens",
    "summarizer_cached_input_tokens",
    "summarizer_cache_hit_ratio",
    "summarizer_output_tokens",
    "summarizer_cost_usd",
    "summarizer_failures",
    "summary_routes",
    "summary_route_quotes_usd",
    "probe_retention",
    "pipeline_ms_p50",
    "pipeline_ms_p99",
)


def fixed_summary() -> str:
    s = summary_model.Summary.from_json(
        dict(
            user_goal="Fix the reported issue in the repository and verify it with the tests.",
            current_state="The cause is located; the fix is being written and the reproduction script "
            "re-run.",
            key_facts=[
                f"fact {i}: a line the work depends on, quoted from an output of the session"
                for i in range(15)
            ],
            completed_actions=[f"`command {i}` → ok" for i in range(20)],
            decisions=["Patch the function where the value is computed rather than its callers."],
            next_steps=["Re-run the reproduction script.", "Run the test module of the changed file."],
        )
    )
    return json.dumps(s.to_json())


async def main() -> None:
    corpus, window, out = Path(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3])
    probes = [Path(p) for p in sys.argv[4:]]
    results: dict[str, Any] = {}
    with ProviderEmulator() as emu:
        emu.default = Reply(text=fixed_summary())
        runs = (
            ("extractive", "extractive"),
            ("llm, main model (prefix reuse)", f"openai/{PRICE_MODEL}"),
            ("llm, lite model (gpt-4o-mini)", "openai/gpt-4o-mini"),
        )
        for label, model in runs[1:] if os.environ.get("LLM_ONLY") else runs:
            summ = _summarizer(model, emu.openai_base, PRICE_MODEL)
            r = await run_bench(
                corpus,
                probes[0] if probes else None,
                window,
                ["myrm"],
                price_model=PRICE_MODEL,
                summarizer=summ,
                extra_probes=probes[1:],
            )
            row = r["strategies"]["myrm"]
            results[label] = {k: row.get(k) for k in KEYS}
            print(label, json.dumps(results[label]), flush=True)
    out.write_text(
        json.dumps({"corpus": str(corpus), "window": window, "price_model": PRICE_MODEL, **results}, indent=2)
    )


if __name__ == "__main__":
    asyncio.run(main())
