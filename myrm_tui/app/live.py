"""``LiveContext``: the context numbers of the session as of the latest event. The ring, the lines under
it and the health panel's live rows all render this one object, so they cannot disagree."""

from __future__ import annotations

from dataclasses import dataclass, field

from myrm_tui.agent.events import ContextReport


@dataclass
class LiveContext:
    tokens: int = 0  # the next request's input: provider-reported when known, else our count + tool schemas
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
        self.tokens = usage.prompt_tokens if usage and usage.prompt_tokens else report.tokens + schema_tokens
        self.level = str(m.get("level", self.level)).lower()
        if "total_ms" in m:
            self.pipeline_ms = float(m["total_ms"])
        self.removed = {k: int(v) for k, v in (m.get("removed") or {}).items() if v}
        if usage is not None and usage.prompt_tokens:
            self.prompt_tokens, self.cached_tokens = usage.prompt_tokens, usage.cached_tokens

    def streamed(self, text: str) -> None:
        """A reply streams: it will be part of the next request's input (about 4 characters a token)."""
        if self.window:
            self.tokens += max(1, len(text) // 4)

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
        if hit is not None:
            out.append(f"cache hit: {hit:.0%} ({self.cached_tokens or 0:,} cached)")
        if self.removed:
            out.append("removed: " + ", ".join(f"{k} {v:,}" for k, v in self.removed.items()))
        return out
