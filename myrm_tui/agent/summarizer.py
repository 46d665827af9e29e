"""The auxiliary LLM behind summaries and semantic filters, with its three protections.

- ``CircuitBreaker``: after ``threshold`` failures in a row the breaker opens and calls fail fast
  (the pipeline then writes the extractive summary); after ``cooldown`` seconds one half-open probe
  call is let through; success closes the breaker, failure re-opens it.
- Aux ratio shield: when the input does not fit the aux model's window, the main model is used
  instead (with a warning), if it is larger.
- Aux model guard: whatever model is chosen, the input is cut (head and tail kept) to fit its window.
- Lite-model fallback: a lite model that fails is retried once on the main model; when the provider
  says the lite model is not there (unknown model, refused key, rejected request) the main model
  replaces it for the rest of the session.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from myrm_tui.context.text.trimming import head_tail
from myrm_tui.context.tokens import TokenCounter
from myrm_tui.llm.client import LLMClient, ModelSpec
from myrm_tui.llm.errors import AuthError, BadRequestError, LLMError, ModelNotAvailableError
from myrm_tui.llm.progress import ProgressClock

INPUT_SHARE = 0.75  # of the aux window, leaving room for the summary itself


class CircuitOpenError(LLMError):
    """The summarizer's breaker is open: fail fast, use the extractive summary."""


@dataclass
class CircuitBreaker:
    threshold: int = 3
    cooldown: float = 60.0
    clock: Callable[[], float] = time.monotonic
    failures: int = 0
    opened_at: float | None = None
    state: str = "closed"  # "closed" | "open" | "half_open"
    transitions: list[str] = field(default_factory=list)

    def allow(self) -> bool:
        if (
            self.state == "open"
            and self.opened_at is not None
            and self.clock() - self.opened_at >= self.cooldown
        ):
            # guard: circuit-breaker-half-open-probe
            self._to("half_open")
        return self.state != "open"

    def record_success(self) -> None:
        self.failures = 0
        if self.state != "closed":
            self._to("closed")

    def record_failure(self) -> None:
        self.failures += 1
        if self.state == "half_open" or self.failures >= self.threshold:
            self.opened_at = self.clock()
            self._to("open")

    def _to(self, state: str) -> None:
        self.state = state
        self.transitions.append(state)

    def as_dict(self) -> dict[str, Any]:
        return {"state": self.state, "failures": self.failures}


class AuxSummarizer:
    """A ``Completer`` for the pipeline: ``await summarizer(system, user) -> text``."""

    def __init__(
        self,
        llm: LLMClient,
        aux: ModelSpec,
        main: ModelSpec,
        aux_window: int,
        main_window: int,
        breaker: CircuitBreaker | None = None,
        inactivity: float = 90.0,
        total: float = 600.0,
        counter: TokenCounter | None = None,
        on_notice: Callable[[str], None] | None = None,
    ) -> None:
        self.llm = llm
        self.aux, self.main = aux, main
        self.aux_window, self.main_window = aux_window, main_window
        self.breaker = breaker or CircuitBreaker()
        self.inactivity, self.total = inactivity, total
        self.counter = counter or TokenCounter()
        self.warnings: list[str] = []
        self.on_notice = on_notice  # told the user once a session: the ratio shield took the main model
        self._shield_told = False
        self.last_model = ""

    def choose(self, tokens: int) -> tuple[ModelSpec, int]:
        # guard: aux-ratio-shield
        if (
            tokens > self.aux_window * INPUT_SHARE
            and self.main_window > self.aux_window
            and self.main.model != self.aux.model
        ):
            self.warnings.append(
                f"summarizer {self.aux.model} ({self.aux_window:,} tokens) is too small for "
                f"{tokens:,} tokens; used {self.main.model}"
            )
            if not self._shield_told:
                self._shield_told = True
                self._notice(
                    f"The summarizer {self.aux.model} ({self.aux_window:,}-token window) is too small for "
                    f"this session's compactions; {self.main.model} writes the summaries instead "
                    "(at its price). Set summarizer_model to a larger model to change this."
                )
            return self.main, self.main_window
        return self.aux, self.aux_window

    def _notice(self, text: str) -> None:
        if self.on_notice is not None:
            self.on_notice(text)

    def fit(self, user: str, system: str, window: int) -> str:
        budget = int(window * INPUT_SHARE) - self.counter.text(system)
        # guard: aux-model-guard
        if self.counter.text(user) <= budget:
            return user
        chars = max(budget, 256) * 3  # ~3 chars a token keeps us safely under
        return head_tail(user, 10**6, 10**6, max_chars=chars)

    async def __call__(self, system: str, user: str) -> str:
        # guard: circuit-breaker-fail-fast-while-open
        if not self.breaker.allow():
            raise CircuitOpenError("summarizer circuit breaker is open; using the extractive summary")
        spec, window = self.choose(self.counter.text(system) + self.counter.text(user))
        llm = LLMClient(self.inactivity, self.total, self.llm.check_interval)
        try:
            try:
                text = await self._complete(llm, spec, window, system, user)
            except LLMError as exc:
                # guard: lite-model-falls-back-to-the-main-model
                if spec.model == self.main.model:
                    raise
                self.warnings.append(
                    f"summarizer {spec.model} failed ({type(exc).__name__}); used {self.main.model}"
                )
                if isinstance(exc, ModelNotAvailableError | AuthError | BadRequestError):
                    self.aux, self.aux_window = (
                        self.main,
                        self.main_window,
                    )  # it will not work on a retry either
                text = await self._complete(llm, self.main, self.main_window, system, user)
        except Exception:
            self.breaker.record_failure()
            raise
        self.breaker.record_success()
        return text

    async def _complete(self, llm: LLMClient, spec: ModelSpec, window: int, system: str, user: str) -> str:
        self.last_model = spec.model
        return await llm.complete(spec, system, self.fit(user, system, window), clock=ProgressClock())
