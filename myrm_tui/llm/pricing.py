"""What a request cost, from litellm's price table (cache reads and writes priced as the provider does)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from myrm_tui.llm.events import Usage


def _prices(model: str) -> tuple[float, float, float, float]:
    """litellm's per-token prices of ``model``: input, cache read, cache write, output (0 where unknown;
    a cache price missing is the input price)."""
    from myrm_tui.llm.registry import model_info

    info = model_info(model) or {}
    inp = float(info.get("input_cost_per_token") or 0.0)
    read = float(info.get("cache_read_input_token_cost") or inp)
    write = float(info.get("cache_creation_input_token_cost") or inp)
    return inp, read, write, float(info.get("output_cost_per_token") or 0.0)


def estimate_cost(model: str, usage: Usage) -> float:
    inp, read, write, out = _prices(model)
    uncached = max(usage.prompt_tokens - usage.cached_tokens - usage.cache_creation_tokens, 0)
    return (
        uncached * inp
        + usage.cached_tokens * read
        + usage.cache_creation_tokens * write
        + usage.completion_tokens * out
    )


@dataclass(frozen=True, slots=True)
class RouteQuote:
    """What one way of writing a summary would cost, from litellm's prices."""

    route: Literal["prefix", "span"]  # the main model reading its cached request | a model sent the span
    model: str
    usd: float


SUMMARY_TOKENS_EXPECTED = 800  # a bounded summary's usual length: what a route's reply is priced at


def summary_routes(
    main: str,
    lite: str,
    prefix_tokens: int,
    cached_tokens: int,
    span_tokens: int,
    out_tokens: int = SUMMARY_TOKENS_EXPECTED,
) -> list[RouteQuote]:
    """Both routes of a background summary, priced: ``prefix`` sends the main model its last request
    (``prefix_tokens``, of which ``cached_tokens`` are in its prompt cache) plus the instruction; ``span``
    sends ``lite`` the folded span once (``span_tokens``, instruction included). Routes whose model has no
    known price are left out."""
    quotes: list[RouteQuote] = []
    inp, read, _, out = _prices(main)
    if inp:  # an unknown model (a local endpoint) has no price to compare
        cached = min(cached_tokens, prefix_tokens)
        quotes.append(
            RouteQuote("prefix", main, (prefix_tokens - cached) * inp + cached * read + out_tokens * out)
        )
    inp, _, _, out = _prices(lite)
    if inp:
        quotes.append(RouteQuote("span", lite, span_tokens * inp + out_tokens * out))
    return quotes


def cheapest(quotes: list[RouteQuote]) -> RouteQuote | None:
    return min(quotes, key=lambda q: q.usd) if quotes else None
