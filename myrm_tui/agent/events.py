"""Events the agent loop yields; the TUI and ``myrm ask`` render them, nothing else acts on them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from myrm_tui.context.compaction.record import Compaction
from myrm_tui.context.types import Message, ToolCall
from myrm_tui.llm.events import Usage

if TYPE_CHECKING:  # the pipeline loads after the first frame (the app imports these events before it)
    from myrm_tui.context.pipeline import PipelineMetrics
    from myrm_tui.context.report.window_use import WindowUse


def _no_metrics() -> PipelineMetrics:
    from myrm_tui.context.pipeline import PipelineMetrics

    return PipelineMetrics()


@dataclass(frozen=True)
class UserSaved:
    message: Message


@dataclass(frozen=True)
class TextChunk:
    text: str


@dataclass(frozen=True)
class ReasoningChunk:
    text: str


@dataclass(frozen=True)
class AssistantSaved:
    message: Message
    usage: Usage | None


@dataclass(frozen=True)
class ToolStarted:
    call: ToolCall


@dataclass(frozen=True)
class ToolOutput:
    """A running tool's latest output: the tail of what it printed so far (for a live view only)."""

    call: ToolCall
    text: str


@dataclass(frozen=True)
class ToolFinished:
    call: ToolCall
    message: Message


@dataclass(frozen=True)
class ContextReport:
    """Context health after the pipeline ran (and, with ``usage``, after the provider answered)."""

    tokens: int
    window: int
    metrics: PipelineMetrics = field(default_factory=_no_metrics)
    usage: Usage | None = None
    use: WindowUse | None = None  # this request by category, with the levels: "context now" everywhere

    @property
    def ratio(self) -> float:
        return min(self.tokens / self.window, 1.0) if self.window else 0.0


@dataclass(frozen=True)
class CompactionMade:
    """A compaction made the context smaller: the transcript shows its row."""

    record: Compaction


@dataclass(frozen=True)
class CompactionStarted:
    """The stored view is over the input budget before a request: a compaction runs first (a history far
    over the window takes seconds)."""

    tokens: int  # the view as stored: what is compacted
    budget: int


@dataclass(frozen=True)
class StreamCut:
    """The reply's stream was cut and the request is retried: ``partial`` (the text streamed so far, kept
    in the history and marked) is not part of the retry's answer."""

    partial: str


NoticeLevel = Literal["info", "warning", "error"]


@dataclass(frozen=True)
class Notice:
    text: str
    level: NoticeLevel = "info"


@dataclass(frozen=True)
class TurnFailed:
    error: str
    # "too_large", "hook_blocked" (both unsent), "preflight", "context_overflow", an LLM error's class name,
    # "error".
    kind: str = "error"

    @property
    def unsent(self) -> bool:
        """Refused before the message was saved (too large, blocked by a hook): the text goes back to the
        box."""
        return self.kind in ("too_large", "hook_blocked")


@dataclass(frozen=True)
class SummaryProgress:
    """The LLM summary of older messages is being written in the background (the turn goes on)."""

    state: str  # "preparing" | "ready" | "upgraded" | "failed: …"
    reuses_cache: bool = False


@dataclass(frozen=True)
class TurnDone:
    steps: int
    interrupted: bool = False
    looped: bool = False  # stopped as a loop (the same call again and again): its work is not done


AgentEvent = (
    UserSaved
    | TextChunk
    | ReasoningChunk
    | AssistantSaved
    | ToolStarted
    | ToolOutput
    | ToolFinished
    | ContextReport
    | CompactionMade
    | CompactionStarted
    | Notice
    | StreamCut
    | SummaryProgress
    | TurnFailed
    | TurnDone
)

EventListener = Callable[[AgentEvent], None]


class Outbox:
    """Events raised off a turn's own path (a summarizer's notice): while a turn runs they wait for its
    stream to yield them (``take``); between turns they go to ``listener`` at once, or, with none, to the
    next turn. The one way such news reaches a front-end."""

    def __init__(self) -> None:
        self.listener: EventListener | None = None
        self._held: list[AgentEvent] = []
        self._in_turn = False

    def post(self, ev: AgentEvent) -> None:
        if self.listener is not None and not self._in_turn:
            self.listener(ev)
        else:
            self._held.append(ev)

    def take(self) -> list[AgentEvent]:
        """What waits for the running turn's stream, oldest first."""
        out, self._held = self._held, []
        return out

    def turn(self, running: bool) -> None:
        """A turn starts (its stream yields what is posted) or ends (the listener gets what it left)."""
        self._in_turn = running
        if not running and self.listener is not None:
            for ev in self.take():
                self.listener(ev)
