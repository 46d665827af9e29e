"""``SessionContextHealthPanel``: three cards of live context metrics and a usage sparkline.

Numbers come from the metrics rows the agent stores per request and from the context state; this
widget only adds them up for display.
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Sparkline, Static


def _k(n: float) -> str:
    return f"{n / 1000:.1f}K" if abs(n) >= 1000 else f"{n:.0f}"


class SessionContextHealthPanel(VerticalScroll):
    DEFAULT_CSS = """
    SessionContextHealthPanel { height: 1fr; }
    SessionContextHealthPanel .card { border: round $panel-lighten-2; padding: 0 1; height: auto; margin-bottom: 1; }
    SessionContextHealthPanel Sparkline { height: 3; margin-bottom: 1; }
    """

    def compose(self) -> ComposeResult:
        yield Static("usage over requests", classes="caption")
        yield Sparkline([0], id="usage")
        yield Static("", id="compaction", classes="card", markup=False)
        yield Static("", id="pruning", classes="card", markup=False)
        yield Static("", id="cache", classes="card", markup=False)

    def show(self, rows: list[dict[str, Any]], info: dict[str, Any]) -> None:
        requests = [r for r in rows if "tokens_out" in r]
        window = int(info.get("window") or 1)
        self.query_one("#usage", Sparkline).data = [r["tokens_out"] / window for r in requests[-80:]] or [0]
        self.query_one("#compaction", Static).update("\n".join(self._card_compaction(requests, info)))
        self.query_one("#pruning", Static).update("\n".join(self._card_pruning(requests, info)))
        self.query_one("#cache", Static).update("\n".join(self._card_cache(rows, info)))

    @staticmethod
    def _card_compaction(requests: list[dict[str, Any]], info: dict[str, Any]) -> list[str]:
        comps = [r for r in requests if r.get("compacted")]
        last = comps[-1] if comps else {}
        before, after = last.get("tokens_in", 0), last.get("tokens_out", 0)
        saved = sum(r.get("tokens_in", 0) - r.get("tokens_out", 0) for r in comps)
        window = info.get("window", 0)
        return [
            "Compaction",
            f"compactions        {len(comps)}",
            f"last               {_k(before)} → {_k(after)} ({(after / before if before else 0):.0%})",
            f"last reason        {last.get('compaction_reason', '-')}",
            f"last duration      {info.get('last_duration_ms', 0):.1f} ms",
            f"tokens saved       {_k(saved)}",
            f"summary source     {last.get('summary_source') or '-'}",
            f"window             {_k(window)}",
            f"thresholds         {_k(window * info.get('light', 0.5))} / {_k(window * info.get('full', 0.7))} / {_k(window * info.get('emergency', 0.9))}",
            f"level now          {str(requests[-1].get('level', '-')).lower() if requests else '-'}",
        ]

    @staticmethod
    def _card_pruning(requests: list[dict[str, Any]], info: dict[str, Any]) -> list[str]:
        removed: dict[str, int] = {}
        for r in requests:
            for layer, n in (r.get("removed") or {}).items():
                removed[layer] = removed.get(layer, 0) + int(n)
        lines = ["Pruning ROI (tokens removed, all requests)"]
        lines += [f"{layer:<18} {_k(n)}" for layer, n in sorted(removed.items(), key=lambda kv: -kv[1]) if n > 0] or ["nothing removed yet"]
        lines += [
            f"vault entries      {info.get('vault_entries', 0)}",
            f"vault size         {_k(info.get('vault_bytes', 0))}B",
            f"session notes      {info.get('notes', 0)}",
            *[f"  · {n[:44]}" for n in (info.get("note_texts") or [])[-3:]],
            f"subagent handovers {len(info.get('handovers') or [])}",
            *[f"  · todo: {t[:40]}" for h in (info.get("handovers") or [])[-1:] for t in h.get("pending_todos", [])[:2]],
            f"pipeline p50       {info.get('pipeline_p50', 0):.2f} ms",
        ]
        return lines

    @staticmethod
    def _card_cache(rows: list[dict[str, Any]], info: dict[str, Any]) -> list[str]:
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
            f"back-off           {info.get('backoff') or 'none'} (low-yield streak {info.get('low_yield', 0)})",
            f"summarizer         {info.get('summarizer', '-')}",
        ]
