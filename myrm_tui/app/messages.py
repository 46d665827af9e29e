"""Messages of the TUI, typed dataclasses, one per fact (workers never touch widgets); each has one
handler (``tests/app/flows/test_one_handler.py``).

The app's workers update the app's state themselves, then post what the chat screen draws (a session, a
turn's events, panel data, a vault entry) to the screen, in the order it happened: those messages do not
bubble back. Facts only the app acts on (a failure, a finished compaction) are posted to the app. State the
screen shows (status line, live numbers) comes down by data binding, not by message."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypedDict

from textual.message import Message

from myrm_tui.agent.events import AgentEvent, ContextReport
from myrm_tui.context.compaction.record import Compaction
from myrm_tui.context.types import Message as ChatMessage
from myrm_tui.context.vault import VaultEntry
from myrm_tui.store.db import SessionRow, VaultListing


@dataclass
class AgentEventMessage(Message, bubble=False):
    """One event of a turn or a replay, in the order the agent yielded it."""

    event: AgentEvent


@dataclass
class SessionLoaded(Message, bubble=False):
    """A session to draw: its conversation, its compactions' rows, the welcome of an empty one."""

    session: SessionRow
    messages: list[ChatMessage]
    compactions: list[Compaction] = field(default_factory=list)  # shown as rows among the messages
    welcome: str = ""  # shown above an empty conversation (model, workspace, keys)


@dataclass
class FormatTranscript(Message, bubble=False):
    """The session is ready: the answers its transcript showed as plain text get their markdown."""


@dataclass
class CompactionDone(Message):
    """A requested compaction ended; ``report`` is None when it failed or was cancelled (Esc)."""

    report: ContextReport | None
    cancelled: bool = False


@dataclass
class Failure(Message):
    """Something the user must know about: shown as an error toast and on the status line."""

    text: str


@dataclass
class StatusChanged(Message):
    """Readiness changed (start-up finished, files reloaded): redraw the status line."""


class PanelInfo(TypedDict, total=False):
    """The health panel's figures besides the per-request metrics rows (only the vault ones without an
    agent)."""

    vault_entries: int
    vault_bytes: int
    window: int
    notes: int
    note_texts: list[str]
    cache_breaks: dict[str, int]
    handovers: list[dict[str, Any]]
    keepalive: str
    breaker: str
    backoff: str
    low_yield: int
    summarizer: str
    summarizer_bill: dict[str, Any]  # SummaryPreparer.status(): calls, tokens, cost, cache reuse
    last_duration_ms: float
    pipeline_p50: float | None
    schema_tokens: int
    auto_compact: bool


@dataclass
class PanelData(Message, bubble=False):
    """What the health panel and the vault pane show, read from the store and the agent."""

    # the metrics table's rows (one per request, compaction, preheat…), as stored but for the compaction
    # records' lists of what left the view (the transcript's rows show those)
    rows: list[dict[str, Any]]
    info: PanelInfo
    vault: list[VaultListing] = field(default_factory=list)
    vaulted: dict[str, str] = field(default_factory=dict)  # tool call id -> vault:// of its full output
    gists: dict[str, str] = field(default_factory=dict)  # vault:// -> what it came from ("bash: make test")


@dataclass
class VaultEntryLoaded(Message, bubble=False):
    uri: str
    entry: VaultEntry | None
    line: int = 0  # 1-based line to show (0: the top)


# -- what the app asks the chat screen to do -------------------------------------------------------------
@dataclass
class ShowTab(Message, bubble=False):
    """Show the side panel with this tab open."""

    tab: str  # "health-tab" or "vault-tab"
    focus: bool = False  # the vault's list takes the focus (F4)


@dataclass
class TogglePanel(Message, bubble=False):
    """Show or hide the side panel."""


@dataclass
class ShowNotice(Message, bubble=False):
    """A line in the conversation that is not part of a turn (the session notes, a refused command)."""

    text: str
    level: str = "info"


@dataclass
class SearchTranscript(Message, bubble=False):
    """Open the search bar over the conversation (with this text, if any)."""

    text: str = ""


@dataclass
class JumpToBottom(Message, bubble=False):
    """Scroll the conversation to its newest output and follow it again."""


@dataclass
class ApprovalWaiting(Message, bubble=False):
    """The approval dialog for a call of ``tool`` opened (or closed): its running card says it waits."""

    tool: str
    waiting: bool
