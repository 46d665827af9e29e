"""The step contract: ``await step.run(view, settings) -> result``.

A step (one pipeline layer) is a function of the ``View`` built so far and its own typed, frozen
settings (derived from ``ContextConfig`` by ``settings_for``). It returns a typed result — new
messages (``Rewritten``), Pre-Compact's ``CompactionPlan``, Compress's ``Condensation``, Summarize's
``SummaryBlock``… — and the ``Pipeline`` folds that result into the next ``View``. Nothing is shared
and mutable between steps: a later step sees an earlier one's work only through the view it is given.
Steps never write ``ContextState``; what they want remembered travels in their result and is applied
by the pipeline's ``Transaction`` (the only writer), so a failed compaction has nothing to undo.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from enum import IntEnum
from typing import Any, Generic, Protocol, TypeVar

from myrm_tui.context.compaction.intent import CompressionIntent
from myrm_tui.context.config import ContextConfig
from myrm_tui.context.state import ContextState
from myrm_tui.context.summary.fields import PreparedSummary, Summary
from myrm_tui.context.tokens import TokenCounter
from myrm_tui.context.types import Message
from myrm_tui.context.vault import ArtifactVault


class Level(IntEnum):
    """Dynamic-threshold level of a request (share of the window the view would use)."""

    NONE = 0
    MONITOR = 1  # >= 40%: watch
    LIGHT = 2  # >= 50%: dedup, truncate
    FULL = 3  # >= 70%: priority-aware removal, summary
    EMERGENCY = 4  # >= 90%: safety net


# An async text completion used for summaries and semantic filtering: prompt in, text out.
Completer = Callable[[str, str], Awaitable[str]]
FileReader = Callable[[str], str | None]


class IntegrityRecorder(Protocol):
    """What Post-Compaction Reread tells the ``FileIntegrityGuard`` about a file it re-read."""

    def record(self, path: str, content: str) -> None: ...


@dataclass(frozen=True, slots=True)
class Request:
    """The facts of one request, fixed before the first step runs.

    The caller fills the first block; the pipeline derives the second (``intent`` … ``cache_warm``)
    before the first step. ``state`` is the session's pipeline memory as of this request: steps read it,
    only the ``Transaction`` writes it.
    """

    state: ContextState
    counter: TokenCounter
    vault: ArtifactVault
    raw: Sequence[Message]  # the stored history, append-only
    model: str = ""
    now: float = 0.0
    summarizer: Completer | None = None  # None: extractive summaries only
    read_file: FileReader | None = None  # for post-compaction reread
    force_compaction: bool = False
    # Stream recovery: the provider refused the last request as too long. The compaction this
    # forces must end under this many tokens (our count), dropping the oldest rounds if it has to.
    hard_limit: int | None = None
    focus_hint: str = ""  # "/compact <focus>"
    resume: bool = False  # session resumed: leave already-sent messages as they were
    integrity: IntegrityRecorder | None = None  # the agent's FileIntegrityGuard, when it has a workspace
    tools_fingerprint: str = ""  # hash of the bound tool schemas, for the cache-break detector
    system_override: str | None = None  # the agent's current system prompt (mode or prompt files changed)
    # An LLM summary prepared in the background (``context/summary/prepared.py``): a compaction that folds
    # what it covers uses it instead of calling the summarizer while the turn waits.
    prepared_summary: PreparedSummary | None = None
    # The summarizer is never called inline (a turn never waits on it): summaries are prepared or extractive,
    # and the semantic filter leaves outputs to the rule-based filters.
    summary_in_background: bool = False
    # The caller sends the view, then calls ``Pipeline.settle`` while the model answers: the reads a later
    # compaction makes of this request's new messages (the Record's lines, ``Summarize._observe``) wait
    # until then, or until the next request, which makes them first. The view is the same either way.
    reads_later: bool = False
    # Derived by the pipeline:
    intent: CompressionIntent = field(default_factory=CompressionIntent)
    protected_head: tuple[Message, ...] = ()
    new_start: int = 0  # index in the view where messages newer than the compacted base begin
    cache_warm: bool = False

    def tokens(self, messages: Sequence[Message]) -> int:
        return self.counter.messages(messages)


@dataclass
class Trace:
    """What one step did, for the per-turn metrics: tokens removed and bytes vaulted per layer, events.

    Each step makes its own and returns it with its result; the pipeline adds it to the metrics."""

    removed: dict[str, int] = field(default_factory=dict)
    vaulted: dict[str, int] = field(default_factory=dict)
    events: list[str] = field(default_factory=list)

    def add_removed(self, layer: str, tokens: int) -> None:
        if tokens:
            self.removed[layer] = self.removed.get(layer, 0) + tokens

    def add_vaulted(self, layer: str, size: int) -> None:
        self.vaulted[layer] = self.vaulted.get(layer, 0) + size

    def event(self, text: str) -> None:
        self.events.append(text)


@dataclass(frozen=True, slots=True)
class CompactionPlan:
    """Pre-Compact's decision: this request's level, and whether (and why) it compacts."""

    level: Level = Level.NONE
    compacting: bool = False
    reason: str = ""
    backup: str | None = None  # state JSON before this compaction (the store's checkpoint)
    archive_uri: str | None = None  # the pre-compaction base view, archived in the vault
    seen_tokens: int = 0  # the view as Pre-Compact weighed it: what round growth is measured on
    # A compaction at the planned point (the view still fits, the round was within the band): it goes as
    # deep as the full level even when the view is past 90 %; the emergency depth is the net's.
    planned: bool = False

    @property
    def depth(self) -> Level:
        """How deep the compaction goes (Compress): the level, at most full for a planned compaction."""
        # guard: a-planned-compaction-past-90-goes
        return min(self.level, Level.FULL) if self.planned else self.level


NO_COMPACTION = CompactionPlan()


@dataclass(frozen=True, slots=True)
class SummaryRecord:
    """The merged 14-field summary a compaction leaves behind, for the Transaction to keep."""

    summary: Summary
    covered: int  # real messages folded into summaries so far
    source: str  # "llm" | "extractive"


@dataclass(frozen=True, slots=True)
class CacheRecord:
    """Prompt Cache Optimize's bookkeeping: marker positions and the prefix fingerprints of this request."""

    breakpoints: tuple[int, ...]
    fingerprints: list[str]
    sizes: list[int]
    cache_break: dict[str, Any] | None = None  # where and why the prefix differs from the last request's


@dataclass(frozen=True, slots=True)
class View:
    """What a step is given: the messages so far, the request, and what earlier steps decided."""

    messages: list[Message]
    request: Request
    plan: CompactionPlan = NO_COMPACTION
    folded: tuple[Message, ...] = ()  # what Compress removed this request, for Summarize and Reread
    decisions: Mapping[str, Message] = field(default_factory=dict)  # sticky per-message rewrites made now
    summary: SummaryRecord | None = None
    normalized: list[Message] | None = None  # the view the Transaction freezes as the new base
    reread: tuple[tuple[str, str], ...] = ()  # (path, content) re-read after this compaction
    cache: CacheRecord | None = None

    @property
    def compacting(self) -> bool:
        return self.plan.compacting

    def evolve(self, **changes: Any) -> View:
        """``dataclasses.replace`` without its per-call introspection (it runs on every step)."""
        new = object.__new__(View)
        for name in View.__slots__:  # type: ignore[attr-defined]
            object.__setattr__(new, name, changes[name] if name in changes else getattr(self, name))
        return new

    def tokens(self, messages: Sequence[Message] | None = None) -> int:
        return self.request.counter.messages(self.messages if messages is None else messages)


@dataclass(frozen=True, kw_only=True)
class StepResult:
    """Base of every step's result: how it folds into the next view, and its trace."""

    trace: Trace = field(default_factory=Trace)

    def apply(self, view: View) -> View:
        raise NotImplementedError


@dataclass(frozen=True, kw_only=True)
class Rewritten(StepResult):
    """The next messages; ``decisions`` are rewrites to repeat on later requests (cache stability)."""

    messages: list[Message]
    decisions: Mapping[str, Message] = field(default_factory=dict)

    def apply(self, view: View) -> View:
        if not self.decisions:
            return view if self.messages is view.messages else view.evolve(messages=self.messages)
        return view.evolve(messages=self.messages, decisions={**view.decisions, **self.decisions})


@dataclass(frozen=True, kw_only=True)
class Planned(StepResult):
    plan: CompactionPlan

    def apply(self, view: View) -> View:
        return view.evolve(plan=self.plan)


@dataclass(frozen=True, kw_only=True)
class Condensation(StepResult):
    """Compress's result: the shortened view and the messages it folded (to be summarized)."""

    messages: list[Message]
    folded: tuple[Message, ...] = ()

    def apply(self, view: View) -> View:
        if self.messages is view.messages and not self.folded:
            return view
        return view.evolve(messages=self.messages, folded=view.folded + self.folded)


@dataclass(frozen=True, kw_only=True)
class SummaryBlock(StepResult):
    """Summarize's result: the view with the new summary block, and the record to keep."""

    messages: list[Message]
    record: SummaryRecord

    def apply(self, view: View) -> View:
        return view.evolve(messages=self.messages, summary=self.record)


@dataclass(frozen=True, kw_only=True)
class Reread(StepResult):
    messages: list[Message]
    files: tuple[tuple[str, str], ...]

    def apply(self, view: View) -> View:
        return view.evolve(messages=self.messages, reread=self.files)


@dataclass(frozen=True, kw_only=True)
class Normalized(StepResult):
    """Normalize's result; its messages are what a compaction freezes (later steps only decorate)."""

    messages: list[Message]

    def apply(self, view: View) -> View:
        return view.evolve(messages=self.messages, normalized=self.messages)


@dataclass(frozen=True, kw_only=True)
class CachePlanned(StepResult):
    record: CacheRecord

    def apply(self, view: View) -> View:
        return view.evolve(cache=self.record)


@dataclass(frozen=True, slots=True)
class NoSettings:
    """For steps that need no configuration."""


class Unconfigured:
    """Mixin for steps without settings."""

    def configure(self, config: ContextConfig) -> NoSettings:
        return NoSettings()


S = TypeVar("S")


class Step(Protocol):
    """One layer. ``configure`` is called once per config; ``run`` once per request."""

    name: str

    def configure(self, config: ContextConfig) -> Any: ...

    async def run(self, view: View, settings: Any) -> StepResult: ...


def settings_for(cls: type[S], config: ContextConfig) -> S:
    """A step's settings: the ``ContextConfig`` values of the same names (fields or derived properties)."""
    return cls(**{f.name: getattr(config, f.name) for f in fields(cls)})  # type: ignore[arg-type]


class Configured(Generic[S]):
    """Mixin: ``configure`` builds ``Settings`` from the config by name."""

    Settings: type[S]

    def configure(self, config: ContextConfig) -> S:
        return settings_for(self.Settings, config)
