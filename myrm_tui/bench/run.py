"""Running a whole benchmark: every conversation through every strategy, in one process."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from myrm_tui.bench.corpus import Probe, load_conversations, load_probes
from myrm_tui.bench.runner import Prices, StrategyResult, replay
from myrm_tui.bench.strategies import (
    REPLY_TOKENS,
    MaskStrategy,
    MyrmStrategy,
    NoneStrategy,
    Strategy,
    TruncateStrategy,
    WindowStrategy,
    load_plugin,
)
from myrm_tui.context.config import budget_config
from myrm_tui.context.step import Completer
from myrm_tui.context.tokens import TokenCounter

BUILTIN = ("myrm", "none", "truncate", "mask", "window")
DEFAULT_PRICE_MODEL = "claude-sonnet-4-5"


def make_strategies(
    names: Sequence[str],
    plugins: Sequence[str],
    counter: TokenCounter,
    summarizer: Completer | None,
    mask_turns: int,
) -> list[Strategy]:
    out: list[Strategy] = []
    for n in names:
        if n == "myrm":
            out.append(MyrmStrategy(counter, summarizer))
        elif n == "none":
            out.append(NoneStrategy())
        elif n == "truncate":
            out.append(TruncateStrategy(counter))
        elif n == "mask":
            out.append(MaskStrategy(mask_turns))
        elif n == "window":
            out.append(WindowStrategy(counter, summarizer))
        else:
            raise ValueError(f"unknown strategy {n!r}; built-in ones are {', '.join(BUILTIN)}")
    out.extend(load_plugin(p) for p in plugins)
    return out


def _by_conv(probes: Sequence[Probe]) -> dict[str, list[Probe]]:
    out: dict[str, list[Probe]] = {}
    for p in probes:
        out.setdefault(p.conv_id, []).append(p)
    return out


async def run_bench(
    corpus: Path,
    probes_path: Path | None,
    window: int,
    strategy_names: Sequence[str],
    plugins: Sequence[str] = (),
    limit: int | None = None,
    price_model: str = DEFAULT_PRICE_MODEL,
    summarizer: Completer | None = None,
    mask_turns: int = 10,
    progress: Callable[[str, int, int], None] | None = None,
    extra_probes: Sequence[Path] = (),
    schemas: Sequence[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Replay ``corpus`` through each strategy; probes are scored on each conversation's last request.
    ``extra_probes`` are further probe sets, reported by file name under each strategy's ``probe_sets``.
    ``schemas``: the tool schemas every request carries and the budget counts (myrm's own, as a live
    session binds them); None: each conversation's recorded ones."""
    counter = TokenCounter()
    convs = load_conversations(corpus, limit)
    probes: list[Probe] = load_probes(probes_path) if probes_path else []
    by_conv = _by_conv(probes)
    extras = {Path(x).name: _by_conv(load_probes(x)) for x in extra_probes}
    prices = Prices.for_model(price_model)
    strategies = make_strategies(strategy_names, plugins, counter, summarizer, mask_turns)
    results: dict[str, StrategyResult] = {}
    total = sum(sum(1 for i, m in enumerate(c.messages) if m.role == "assistant" and i > 0) for c in convs)
    for s in strategies:
        res = results[s.name] = StrategyResult(s.name)
        done = 0

        def tick(name: str = s.name) -> None:
            nonlocal done
            done += 1
            if progress:
                progress(name, done, total)

        for conv in convs:
            await replay(
                conv,
                s,
                res,
                window,
                counter,
                prices,
                by_conv.get(conv.id, ()),
                on_request=tick,
                extra_probes={name: ps.get(conv.id, []) for name, ps in extras.items()},
                schemas=schemas,
            )
    out = {name: r.as_json() for name, r in results.items()}
    floor = out["none"]["sent"]["uncached_input_tokens"] if "none" in out else 0
    for r in out.values():
        # Uncached tokens of every request built, against none's: new content each session sends once.
        r["rewrite_overhead"] = round(r["sent"]["uncached_input_tokens"] / floor - 1, 4) if floor else None
    return {
        "corpus": str(corpus),
        "probes": str(probes_path) if probes_path else None,
        "extra_probes": [str(x) for x in extra_probes],
        "window": window,
        "budget": {
            "schemas": "recorded" if schemas is None else "myrm",
            "schema_tokens": "per conversation" if schemas is None else counter.schemas(schemas),
            "reply_reserve": budget_config(window, REPLY_TOKENS).output_reserve,
        },
        "price_model": price_model,
        "billing": "accepted requests only: cache reads at the cache-read price, other input at the "
        "cache-write price (a strategy that names its cache marks, myrm: as Anthropic bills them, reads only "
        "at earlier marks, writes up to its last mark, the input price after it); "
        "a rejected request costs nothing, writes no cache and makes the strategy infeasible. "
        "`sent` accounts every request as if accepted (none's is the reference).",
        "strategies": out,
    }
