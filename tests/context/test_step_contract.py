"""The step contract: each step is a function of (view, its own frozen settings) returning a typed result;
only the pipeline's Transaction writes the session state."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from myrm_tui.context.pipeline import Pipeline
from myrm_tui.context.state import ContextState
from myrm_tui.context.step import StepResult, View
from myrm_tui.context.types import Message
from tests.helpers import PIPELINE, config_for, conversation, request_for


class Watched:
    """Wraps a step: fails the run if the step writes the state or the view it was given."""

    def __init__(self, step: Any, seen: list[tuple[str, type]]) -> None:
        self.step, self.name, self.seen = step, step.name, seen

    def configure(self, config: Any) -> Any:
        settings = self.step.configure(config)
        params = getattr(type(settings), "__dataclass_params__", None)
        assert params is not None and params.frozen, f"{self.name}: settings must be a frozen dataclass"
        return settings

    async def run(self, view: View, settings: Any) -> StepResult:
        state_before = view.request.state.to_json()
        messages_before = list(view.messages)
        result = await self.step.run(view, settings)
        assert view.request.state.to_json() == state_before, f"{self.name} wrote the state"
        assert view.messages == messages_before, f"{self.name} changed the view it was given"
        assert isinstance(result, StepResult), f"{self.name} returned {type(result).__name__}"
        self.seen.append((self.name, type(result)))
        return result


@pytest.mark.parametrize("force", [False, True])
async def test_no_step_writes_the_state_or_its_input(force: bool) -> None:
    seen: list[tuple[str, type]] = []
    pipe = Pipeline([Watched(s, seen) for s in PIPELINE.steps])
    state = ContextState(notes=["keep the API stable"])
    raw: list[Message] = conversation(24, output_chars=3_000)
    for end in (10, 30, len(raw)):  # several requests of one session, the last one compacting
        history = raw[:end]
        if history[-1].role == "assistant":
            history = history[:-1]
        run = await pipe.run(
            request_for(history, state, now=1_000.0 + end, force_compaction=force), config_for(8_000)
        )
        assert run.messages and run.metrics.tokens_out == run.tokens
    names = [n for n, _ in seen]
    assert names[: len(PIPELINE.steps)] == [s.name for s in PIPELINE.steps]
    kinds = {n: t.__name__ for n, t in seen}
    assert kinds["pre_compact"] == "Planned" and kinds["prompt_cache_optimize"] == "CachePlanned"
    if force:
        assert kinds["compress"] == "Condensation" and kinds["summarize"] == "SummaryBlock"
        assert state.compactions >= 1 and state.summary is not None  # written, by the Transaction
        assert any(m.meta.get("kind") == "summary" for m in state.base)


def test_the_view_is_immutable() -> None:
    view = View(messages=[], request=request_for([]))
    with pytest.raises(dataclasses.FrozenInstanceError):
        view.messages = []  # type: ignore[misc]
    assert view.evolve(folded=(Message(role="user", content="x", id="u"),)).folded and not view.folded


def test_settings_follow_the_config() -> None:
    """A step's settings are rebuilt when the window changes (a model switch), not on every request."""
    small, large = PIPELINE.settings(config_for(8_000)), PIPELINE.settings(config_for(8_000))
    assert small is large
    resized = PIPELINE.settings(config_for(64_000))
    compress = next(s for s, step in zip(resized, PIPELINE.steps, strict=True) if step.name == "compress")
    assert compress.target_tokens == config_for(64_000).target_tokens
