"""``StateEdit``: what code outside the pipeline may ask of ``ContextState``, as typed values.

The notes tool and a subagent's handover report their edits through their ``ToolResult``; the
user's pin and unpin and a late background summary are edits too. Only ``Transaction.apply``
(``pipeline.py``) turns them into state, so every write to the state is made in one place, in the
order the edits were made.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from myrm_tui.context.summary.fields import Summary

MAX_NOTES = 50
MAX_NOTE_CHARS = 2_000


@dataclass(frozen=True, slots=True)
class AddNote:
    text: str


@dataclass(frozen=True, slots=True)
class ClearNotes:
    pass


@dataclass(frozen=True, slots=True)
class Pin:
    """An item that left the view, brought back into the next requests (``steps/pinned.py``)."""

    uri: str
    line_range: str
    gist: str
    text: str


@dataclass(frozen=True, slots=True)
class Unpin:
    uri: str
    line_range: str


@dataclass(frozen=True, slots=True)
class AddHandover:
    """A subagent's AgentHandoverState (``agent/distill.py``), as a dict."""

    handover: dict[str, Any]


@dataclass(frozen=True, slots=True)
class UpgradeSummary:
    """An LLM summary that came after the compaction it was prepared for: merged into the kept record
    (the next compaction's block carries it)."""

    summary: Summary


StateEdit = AddNote | ClearNotes | Pin | Unpin | AddHandover | UpgradeSummary


def notes_after(notes: Sequence[str], edits: Sequence[StateEdit]) -> list[str]:
    """The notes once ``edits`` are applied: at most ``MAX_NOTES``, each cut to ``MAX_NOTE_CHARS``."""
    out = list(notes)
    for e in edits:
        if isinstance(e, AddNote):
            out.append(e.text[:MAX_NOTE_CHARS])
            del out[:-MAX_NOTES]
        elif isinstance(e, ClearNotes):
            out.clear()
    return out


def pins_after(pins: Sequence[dict[str, str]], edits: Sequence[StateEdit]) -> list[dict[str, str]]:
    """The pinned items once ``edits`` are applied; a pin of an item already pinned replaces it."""
    out = list(pins)
    for e in edits:
        if isinstance(e, Pin | Unpin):
            out = [p for p in out if (p["uri"], p["line_range"]) != (e.uri, e.line_range)]
        if isinstance(e, Pin):
            out.append({"uri": e.uri, "line_range": e.line_range, "gist": e.gist, "text": e.text})
    return out


__all__ = [
    "MAX_NOTES",
    "MAX_NOTE_CHARS",
    "AddHandover",
    "AddNote",
    "ClearNotes",
    "Pin",
    "StateEdit",
    "Unpin",
    "UpgradeSummary",
    "notes_after",
    "pins_after",
]
