"""Messages workers post to the app (workers never touch widgets)."""

from __future__ import annotations

from typing import Any

from textual.message import Message


class AgentEventMessage(Message):
    def __init__(self, event: Any) -> None:
        super().__init__()
        self.event = event


class SessionLoaded(Message):
    def __init__(self, session: Any, messages: list[Any], note: str = "") -> None:
        super().__init__()
        self.session = session
        self.messages = messages
        self.note = note


class CompactionDone(Message):
    def __init__(self, report: Any) -> None:
        super().__init__()
        self.report = report


class Failure(Message):
    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text


class PanelData(Message):
    def __init__(self, data: dict[str, Any]) -> None:
        super().__init__()
        self.data = data


class VaultEntryLoaded(Message):
    def __init__(self, uri: str, entry: Any) -> None:
        super().__init__()
        self.uri = uri
        self.entry = entry
