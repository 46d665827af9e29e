"""Messages workers post to the app (workers never touch widgets). Typed dataclasses, one per fact."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from textual.message import Message

from myrm_tui.agent.events import AgentEvent, ContextReport
from myrm_tui.context.types import Message as ChatMessage
from myrm_tui.context.vault import VaultEntry
from myrm_tui.store.db import SessionRow


@dataclass
class AgentEventMessage(Message):
    """One event of a turn or a replay, in the order the agent yielded it."""

    event: AgentEvent


@dataclass
class SessionLoaded(Message):
    session: SessionRow
    messages: list[ChatMessage]


@dataclass
class AgentReady(Message):
    """The session's agent is built: the next request's size before anything is sent."""

    tokens: int  # stored history (system prompt, environment) + tool schemas
    window: int


@dataclass
class Compacted(Message):
    """The context was compacted (by the pipeline during a turn, or on request with ctrl+k)."""

    report: ContextReport
    manual: bool = False


@dataclass
class CompactionDone(Message):
    """A requested compaction ended; ``report`` is None when it failed."""

    report: ContextReport | None


@dataclass
class Failure(Message):
    """Something the user must know about: shown as an error toast and on the status line."""

    text: str


@dataclass
class StatusChanged(Message):
    """Readiness changed (start-up finished, files reloaded): redraw the status line."""


@dataclass
class PanelData(Message):
    """What the health panel and the vault pane show, read from the store and the agent."""

    rows: list[dict[str, Any]]
    info: dict[str, Any]
    vault: list[dict[str, Any]] = field(default_factory=list)
    vaulted: dict[str, str] = field(default_factory=dict)  # tool call id -> vault:// of its full output


@dataclass
class VaultEntryLoaded(Message):
    uri: str
    entry: VaultEntry | None
