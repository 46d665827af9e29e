"""``LiveContext``: the context numbers of the session as of the latest event. The ring, the lines under
it, the health panel's live rows, ``/context`` and the compaction rows all use its one figure for
"context now": our count of the latest request (its view plus the tool schemas). The provider's own
count of the same request is shown beside it, never in its place, so the ring does not jump between two
tokenizers (nor count a streaming reply up and then drop)."""

from __future__ import annotations

from dataclasses import dataclass, field

from myrm_tui.agent.events import ContextReport


@dataclass
class LiveContext:
    tokens: int = 0  # the latest request's input: our count of its view + the tool schemas
    window: int = 0  # 0 until the agent is built (the ring then says so instead of "0 / 0")
    level: str = "-"  # threshold level of the latest pipeline run
    pipeline_ms: float | None = None  # duration of the latest pipeline run
    cached_tokens: int | None = None  # of the latest provider call
    prompt_tokens: int | None = None
    removed: dict[str, int] = field(default_factory=dict)  # latest run: layer -> tokens removed

    @property
    def known(self) -> bool:
        return self.window > 0

    @property
    def ratio(self) -> float:
        return min(self.tokens / self.window, 1.0) if self.window else 0.0

    @property
    def cache_hit(self) -> float | None:
        if self.cached_tokens is None or not self.prompt_tokens:
            return None
        return self.cached_tokens / self.prompt_tokens

    def baseline(self, tokens: int, window: int) -> None:
        """Before the first request: what the system prompt, environment and tool schemas already take."""
        self.tokens, self.window = tokens, window

    def report(self, report: ContextReport, schema_tokens: int) -> None:
        """A pipeline run (``usage`` is None: before the call) or a provider's answer (``usage`` set)."""
        m = report.metrics
        usage = report.usage
        self.window = report.window or self.window
        self.tokens = report.tokens + schema_tokens
        self.level = m.level.lower()
        self.pipeline_ms = m.total_ms
        self.removed = {k: v for k, v in m.removed.items() if v}
        if usage is not None and usage.prompt_tokens:
            self.prompt_tokens, self.cached_tokens = usage.prompt_tokens, usage.cached_tokens

    def lines(self) -> list[str]:
        """The lines under the ring."""
        if not self.known:
            return []
        out = [
            f"threshold level: {self.level}" if self.level != "-" else "threshold level: - (no request yet)"
        ]
        if self.pipeline_ms is not None:
            out.append(f"pipeline: {self.pipeline_ms:.1f} ms (last run)")
        hit = self.cache_hit
        if self.prompt_tokens:
            out.append(f"provider counted: {self.prompt_tokens:,}")
        if hit is not None:
            out.append(f"cache hit: {hit:.0%} ({self.cached_tokens or 0:,} cached)")
        if self.removed:
            out.append("removed: " + ", ".join(f"{k} {v:,}" for k, v in self.removed.items()))
        return out
