"""What the session's collaborators may use of it: one Protocol each, so that ``AgentSession`` (which
builds them) is not imported back by them, and what each one reads is written down.

``AgentSession`` satisfies each of them structurally (mypy checks it where it hands itself over). The turn
runner's own view, ``TurnSession``, is in ``turn.py``: it names the summary preparer's type, which imports
this module.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from myrm_tui.agent.prompts import PromptLibrary
from myrm_tui.agent.summarizer import AuxSummarizer, CircuitBreaker
from myrm_tui.config import Settings
from myrm_tui.context.config import ContextConfig
from myrm_tui.context.edits import StateEdit
from myrm_tui.context.pipeline import Pipeline
from myrm_tui.context.state import ContextState
from myrm_tui.context.tokens import TokenCounter
from myrm_tui.context.types import Message
from myrm_tui.llm.client import LLMClient, ModelSpec


class StoresMessages(Protocol):
    """Writing the conversation: a message (with its vault entries), the vault alone, a state edit."""

    async def append(self, msg: Message) -> Message: ...

    async def flush_vault(self) -> None: ...

    async def edit(self, edits: Sequence[StateEdit]) -> None: ...


class SummarySession(StoresMessages, Protocol):
    """What the background summary (``SummaryPreparer``) reads: the models and their breaker, the history,
    state and limits it summarizes against, and where its bill goes."""

    @property
    def session_id(self) -> str: ...

    @property
    def settings(self) -> Settings: ...

    @property
    def spec(self) -> ModelSpec: ...

    @property
    def llm(self) -> LLMClient: ...

    @property
    def prompts(self) -> PromptLibrary: ...

    @property
    def pipeline(self) -> Pipeline: ...

    @property
    def state(self) -> ContextState: ...

    @property
    def config(self) -> ContextConfig: ...

    @property
    def counter(self) -> TokenCounter: ...

    @property
    def history(self) -> list[Message]: ...

    @property
    def breaker(self) -> CircuitBreaker: ...

    @property
    def extractive_summaries(self) -> bool: ...

    def summarizer(self) -> AuxSummarizer | None: ...

    async def add_metrics(self, data: dict[str, Any]) -> None: ...
