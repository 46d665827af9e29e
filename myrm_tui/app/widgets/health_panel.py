"""``SessionContextHealthPanel``: three cards of live context metrics and a usage chart.

Totals come from the metrics rows the agent stores per request and from the context state; the
"now" values (the window's breakdown, the levels, the last pipeline run) come from the app's
``LiveContext`` (``live``, bound from the side panel), the object the ring and the lines under it render,
so the panel and the ring always agree. This widget only adds up.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.reactive import var
from textual.widgets import Static

from myrm_tui.app.live import LiveContext
from myrm_tui.app.widgets.plain import plain
from myrm_tui.context.compaction.record import compactions_of

if TYPE_CHECKING:
    from myrm_tui.app.messages import PanelInfo

_EIGHTHS = " ▁▂▃▄▅▆▇█"
PANEL_BAR = 8  # the "Window now" card's bars (the side panel is 52 columns)


def _k(n: float) -> str:
    return f"{n / 1000:.1f}K" if abs(n) >= 1000 else f"{n:.0f}"


class UsageChart(Static):
    """One bar per request (newest right), its height the share of the window the request used, on a
    fixed 0-100% scale: a few requests draw a few bars, none draws none (a sparkline stretches one value
    over the whole width). Bars are coloured by the pipeline's levels (shares of the input budget, so
    given here as shares of the window: ``light`` and ``full``)."""

    DEFAULT_CSS = """
    UsageChart { height: 3; margin-bottom: 1; }
    """
    ROWS = 3

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.values: list[float] = []
        self.light, self.full = 0.5, 0.7

    def plot(self, values: list[float], light: float, full: float) -> None:
        self.values, self.light, self.full = values, light, full
        self.refresh()

    def render(self) -> Text:
        if not self.values:
            return Text("no requests yet", style="italic grey50")
        width = max(self.size.width, 1)
        shown = self.values[-width:]
        out = Text()
        for row in range(self.ROWS):
            floor = (self.ROWS - 1 - row) * 8
            for v in shown:
                units = max(1, round(min(max(v, 0.0), 1.0) * self.ROWS * 8))  # a request is never invisible
                color = "red" if v >= self.full else ("yellow" if v >= self.light else "green")
                out.append(_EIGHTHS[min(max(units - floor, 0), 8)], style=color)
            if row < self.ROWS - 1:
                out.append("\n")
        return out


class SessionContextHealthPanel(VerticalScroll):
    DEFAULT_CSS = """
    SessionContextHealthPanel { height: 1fr; }
    SessionContextHealthPanel .card {
        border: round $panel-lighten-2; padding: 0 1; height: auto; margin-bottom: 1;
    }
    """

    live: var[LiveContext] = var(LiveContext, init=False)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._rows: list[dict[str, Any]] = []
        self._info: PanelInfo = {}

    def compose(self) -> ComposeResult:
        yield Static("usage per request (share of the window)", id="usage-caption", classes="caption")
        yield UsageChart(id="usage")
        yield Static("", id="window-now", classes="card", markup=False)
        yield Static("", id="compaction", classes="card", markup=False)
        yield Static("", id="pruning", classes="card", markup=False)
        yield Static("", id="cache", classes="card", markup=False)

    def show(self, rows: list[dict[str, Any]], info: PanelInfo) -> None:
        """Stored totals (after a request, a compaction, a session switch)."""
        self._rows, self._info = rows, info
        self._redraw()

    def watch_live(self) -> None:
        """The latest event's numbers (every pipeline run): the same object the ring renders."""
        if self._info:
            self._redraw()

    def _redraw(self) -> None:
        rows, info, live = self._rows, self._info, self.live
        requests = [r for r in rows if "tokens_out" in r]
        window = int(live.window or info.get("window") or 1)
        schemas = int(info.get("schema_tokens") or 0)  # counted as the ring counts: our count + schemas
        usage = [(r["tokens_out"] + schemas) / int(r.get("window") or window) for r in requests]
        levels = live.use.levels if live.use is not None else None
        light, full = (levels.light / window, levels.full / window) if levels else (0.5, 0.7)
        self.query_one(UsageChart).plot(usage, light, full)
        caption = "usage per request (share of the window)"
        if usage:
            caption = f"usage per request ({len(usage)}): last {usage[-1]:.0%} of window"
        # Plain text: a compaction's focus (its trigger) and the stored figures come from the database.
        cards = {
            "#usage-caption": [caption],
            "#window-now": self._card_window(info, live),
            "#compaction": self._card_compaction(rows, info, live, len(requests)),
            "#pruning": self._card_pruning(requests, info, live),
            "#cache": self._card_cache(rows, info),
        }
        for card, lines in cards.items():
            # guard: untrusted-text-the-health-panel
            self.query_one(card, Static).update(plain("\n".join(lines)))

    @staticmethod
    def _card_window(info: PanelInfo, live: LiveContext) -> list[str]:
        lines = live.use.lines(width=PANEL_BAR) if live.use is not None else []
        head = "Window now (/context)"
        if info.get("auto_compact") is False:
            head += "  ⚠ auto-compaction off"
        return [head, *lines] if lines else [head, "-"]

    @staticmethod
    def _card_compaction(
        rows: list[dict[str, Any]], info: PanelInfo, live: LiveContext, requests: int
    ) -> list[str]:
        comps = [c for c in compactions_of(rows) if c.changed]
        last = comps[-1] if comps else None
        saved = sum(c.saved for c in comps)
        window = live.window or info.get("window", 0)
        levels = live.use.levels if live.use is not None else None
        return [
            "Compaction",
            f"compactions        {len(comps)}",
            # How often it compacts: the fit step's progress rule keeps this at or under 25 per 100.
            f"per 100 requests   {100 * len(comps) / requests:.1f}" if requests else "per 100 requests   -",
            f"last               {_k(last.tokens_before)} → {_k(last.tokens_after)} "
            f"({last.tokens_after / max(last.tokens_before, 1):.0%})"
            if last
            else "last               -",
            f"last trigger       {last.trigger_label if last else '-'}",
            f"last duration      {f'{last.duration_ms:.1f} ms' if last else '-'}",
            f"tokens saved       {_k(saved)}",
            f"summary source     {(last.summary_source or '-') if last else '-'}",
            f"window             {_k(window)}",
            # The pipeline's levels in the ring's tokens: shares of the input budget, not of the window.
            f"thresholds         {levels.short() if levels else '-'}",
            f"level now          {live.level}",
        ]

    @staticmethod
    def _card_pruning(requests: list[dict[str, Any]], info: PanelInfo, live: LiveContext) -> list[str]:
        removed: dict[str, int] = {}
        for r in requests:
            for layer, n in (r.get("removed") or {}).items():
                removed[layer] = removed.get(layer, 0) + int(n)
        lines = ["Pruning ROI (tokens removed, all requests)"]
        lines += [
            f"{layer:<18} {_k(n)}" for layer, n in sorted(removed.items(), key=lambda kv: -kv[1]) if n > 0
        ] or ["nothing removed yet"]
        lines += [
            f"vault entries      {info.get('vault_entries', 0)}",
            f"vault size         {_k(info.get('vault_bytes', 0))}B",
            f"session notes      {info.get('notes', 0)}",
            *[f"  · {n[:44]}" for n in (info.get("note_texts") or [])[-3:]],
            f"subagent handovers {len(info.get('handovers') or [])}",
            *[
                f"  · todo: {t[:40]}"
                for h in (info.get("handovers") or [])[-1:]
                for t in h.get("pending_todos", [])[:2]
            ],
            f"pipeline last      {live.pipeline_ms:.1f} ms"  # as the line under the ring prints it
            if live.pipeline_ms is not None
            else "pipeline last      -",
            f"pipeline p50       {info['pipeline_p50']:.2f} ms"
            if info.get("pipeline_p50") is not None
            else "pipeline p50       -",
        ]
        return lines

    @staticmethod
    def _card_cache(rows: list[dict[str, Any]], info: PanelInfo) -> list[str]:
        calls = [r for r in rows if r.get("prompt_tokens")]
        prompt = sum(r["prompt_tokens"] for r in calls)
        cached = sum(r.get("cached_tokens", 0) for r in calls)
        last = calls[-1] if calls else {}
        breaks = info.get("cache_breaks") or {}
        return [
            "Cache & resilience",
            f"hit ratio (last)   {(last.get('cached_tokens', 0) / last['prompt_tokens']) if last else 0:.0%}",
            f"hit ratio (all)    {(cached / prompt) if prompt else 0:.0%}",
            f"cached tokens      {_k(cached)} of {_k(prompt)}",
            f"est. cost          ${sum(r.get('cost_usd', 0.0) for r in calls):.4f}",
            f"cache breaks       {', '.join(f'{k} {v}' for k, v in breaks.items()) or 'none'}",
            f"preheats           {sum(1 for r in rows if r.get('kind') == 'preheat')}",
            f"keep-alive         {info.get('keepalive', 'off')}",
            f"breaker            {info.get('breaker', 'closed')}",
            f"back-off           {info.get('backoff') or 'none'} (low-yield streak "
            f"{info.get('low_yield', 0)})",
            f"summarizer         {info.get('summarizer', '-')}",
            *_summarizer_lines(info.get("summarizer_bill") or {}, rows),
        ]


SUMMARIZER_KEYS = (
    "summarizer_calls",
    "summarizer_input_tokens",
    "summarizer_cached_input_tokens",
    "summarizer_output_tokens",
    "summarizer_cost_usd",
)


def _summarizer_lines(b: dict[str, Any], rows: Sequence[dict[str, Any]] = ()) -> list[str]:
    """The background summarizer's calls and what they cost (billed apart from the turns above): the
    session's stored rows, or this run's figures when none are stored yet."""
    if not b or b.get("summarizer_model") == "extractive":
        return []
    stored = [r for r in rows if r.get("kind") == "summarizer"]
    if stored:
        b = {**b, **{k: sum(r.get(k, 0) for r in stored) for k in SUMMARIZER_KEYS}}
    inp, cached = b.get("summarizer_input_tokens", 0), b.get("summarizer_cached_input_tokens", 0)
    reuse = (
        "reads the main model's cache"
        if b.get("summarizer_reuses_cache")
        else "cannot reuse the main model's cache (other model): sends the span once"
    )
    lines = [
        f"summarizer calls   {b.get('summarizer_calls', 0)} · {_k(cached)} of {_k(inp)} cached · "
        f"${b.get('summarizer_cost_usd', 0.0):.4f}",
        f"summary prefix     {reuse}",
    ]
    quotes = b.get("summary_route_quotes") or {}
    if len(quotes) > 1:  # myrm chose between two ways: say what each would have cost the last summary
        lines.append("summary route      " + " · ".join(f"{m} ${usd:.4f}" for m, usd in quotes.items()))
    return lines
