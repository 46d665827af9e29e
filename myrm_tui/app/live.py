"""``LiveContext``: the context numbers of the session as of the latest event. The ring, the lines under
it, the health panel's live rows and ``/context`` all read its one ``WindowUse``: the latest request's
view by category plus the tool schemas, made by the agent from the very messages it sent, with the
pipeline's levels in the same tokens. The provider's own count of the same request is shown beside it,
never in its place, so the ring does not jump between two tokenizers (nor count a streaming reply up and
then drop)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the pipeline loads after the first frame
    from myrm_tui.agent.events import ContextReport
    from myrm_tui.context.report.window_use import WindowUse


@dataclass
class LiveContext:
    use: WindowUse | None = None  # None until the agent is built (the ring then says so, not "0 / 0")
    level: str = "-"  # threshold level of the latest pipeline run
    pipeline_ms: float | None = None  # duration of the latest pipeline run
    cached_tokens: int | None = None  # of the latest provider call
    prompt_tokens: int | None = None
    removed: dict[str, int] = field(default_factory=dict)  # latest run: layer -> tokens removed

    @property
    def tokens(self) -> int:
        """The latest request's input: our count of its view + the tool schemas."""
        return self.use.used if self.use is not None else 0

    @property
    def window(self) -> int:
        return self.use.window if self.use is not None else 0

    @property
    def known(self) -> bool:
        return self.window > 0

    @property
    def ratio(self) -> float:
        return min(self.tokens / self.window, 1.0) if self.window else 0.0

    @property
    def colour(self) -> str:
        """The ring's colour: where the figure stands against the pipeline's own levels."""
        levels = self.use.levels if self.use is not None else None
        return levels.colour(self.tokens) if levels is not None else "green"

    @property
    def cache_hit(self) -> float | None:
        if self.cached_tokens is None or not self.prompt_tokens:
            return None
        return self.cached_tokens / self.prompt_tokens

    def baseline(self, use: WindowUse) -> None:
        """Before the first request: what the stored view and the tool schemas already take."""
        self.use = use

    def report(self, report: ContextReport) -> None:
        """A pipeline run (``usage`` is None: before the call) or a provider's answer (``usage`` set)."""
        m = report.metrics
        usage = report.usage
        if report.use is not None:
            self.use = report.use
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
