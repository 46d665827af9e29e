"""``/undo``: the agent's file edits taken back, one turn at a time, newest first.

Before ``file_edit_tool`` writes a file, ``FileHistory.keep`` stores what the file held (or that it did not
exist) with the session, its turn and the call's message; ``plan`` reads the newest turn not yet undone
(the session's or, for a fork, its parent's) and says, per file, whether its content is still what the
agent wrote; ``apply`` restores the files the user agreed to, records the turn as undone (append-only),
and tells the model. Shell commands' changes are not tracked: only the file tools know what they change.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from myrm_tui.agent.tools.base import ToolError, read_regular
from myrm_tui.agent.tools.files import MAX_FILE_BYTES, write_atomic
from myrm_tui.context.types import Message, synthetic_user
from myrm_tui.store.file_backups import FileBackup

log = logging.getLogger(__name__)

# Previous content over this is not kept: /undo names the file and cannot restore it.
MAX_KEPT_BYTES = 5_000_000
NOT_A_FILE = "\x00not a regular file"  # no text file the agent wrote holds a NUL in this place alone
SHELL_NOT_TRACKED = "Changes made by shell commands are not tracked and stay as they are."
DROPPED = "its backup was dropped (the session's backups passed undo_backups_mb; the oldest turns' go first)"


class _Store(Protocol):
    async def add_file_backup(self, b: FileBackup, max_bytes: int = 0) -> None: ...
    async def undo_lineage(self, sid: str) -> list[tuple[str, int | None]]: ...
    async def last_undoable_turn(self, lineage: Iterable[tuple[str, int | None]]) -> list[FileBackup]: ...
    async def mark_undone(self, session_id: str, owner_id: str, turn: int) -> None: ...


class _Session(Protocol):
    session_id: str
    turn: int
    history: list[Message]

    async def append(self, msg: Message) -> Message: ...


def sha(text: str | None) -> str:
    """The fingerprint of a file's text; "" for a file that is not there."""
    return "" if text is None else hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _current(full: Path) -> str | None:
    """The file's text now, None when it is not there (blocking); undecodable bytes are replaced, so they
    never match what the agent (UTF-8 only) wrote. A folder, a FIFO or an unreadable file in its place is
    read as ``NOT_A_FILE``: changed since (and a FIFO never blocks the read)."""
    if not os.path.lexists(full):
        return None
    try:
        return read_regular(full, str(full), MAX_FILE_BYTES).decode("utf-8", errors="replace")
    except ToolError:
        log.info("/undo: %s is no longer a readable file", full, exc_info=True)
        return NOT_A_FILE


@dataclass(frozen=True)
class UndoFile:
    full: Path
    shown: str  # its workspace path
    existed: bool  # before the turn
    kept: bool  # its previous content was kept (not over MAX_KEPT_BYTES)
    content: str | None
    changed: bool  # changed since the agent wrote it (by the user, a shell command, another program)
    made_dirs: tuple[str, ...] = ()  # folders made for it (a new file), deepest first
    dropped: bool = False  # its previous content was dropped: the session's backups were over their cap

    @property
    def restorable(self) -> bool:
        return not self.existed or (self.kept and not self.dropped)


@dataclass(frozen=True)
class UndoPlan:
    owner: str  # the session whose turn it is
    turn: int
    prompt: str
    files: tuple[UndoFile, ...]

    def question(self) -> str:
        """The list the user confirms: each file and what /undo would do to it."""
        lines = [f"Undo the agent's file edits of the turn '{self.prompt}'?"]
        for f in self.files:
            if not f.kept:
                what = f"cannot be restored: its previous content was over {MAX_KEPT_BYTES // 1_000_000} MB"
            elif not f.restorable:
                what = f"cannot be restored: {DROPPED}"
            elif f.changed:
                what = "CHANGED SINCE the agent wrote it: kept as it is unless you press a"
            else:
                what = "will be restored" if f.existed else "will be removed (the agent created it)"
            lines.append(f"  {f.shown}: {what}")
        lines.append(SHELL_NOT_TRACKED)
        return "\n".join(lines)


@dataclass
class UndoOutcome:
    restored: list[str] = field(default_factory=list)  # as before the turn: rewritten, or removed if…
    removed: list[str] = field(default_factory=list)  # …the agent had created it (these are in restored too)
    left: list[str] = field(default_factory=list)  # "path (why)"


class FileHistory:
    """The file tools' backups of one session, and /undo over them."""

    def __init__(self, store: _Store, session: _Session, workspace: Path, max_bytes: int = 0) -> None:
        self.store = store
        self.session = session
        self.workspace = workspace
        self.max_bytes = max_bytes  # the session's backups' total (``undo_backups_mb``); 0: no cap

    async def keep(self, full: Path, before: str | None, after: str, call_id: str) -> None:
        """Store ``full``'s content ``before`` the agent writes ``after`` (None: it did not exist)."""
        s = self.session
        kept = before is None or (len(before) <= MAX_KEPT_BYTES and len(before.encode()) <= MAX_KEPT_BYTES)
        # A subagent's call is in its own session: its edits belong to the parent's turn, message -1.
        message = next((m.id for m in reversed(s.history) if any(c.id == call_id for c in m.tool_calls)), "")
        prompt = next((m.text for m in reversed(s.history) if m.role == "user" and not m.synthetic), "")
        first = prompt.strip().splitlines()[0] if prompt.strip() else ""
        made = await asyncio.to_thread(_missing_folders, full) if before is None else ()
        await self.store.add_file_backup(
            FileBackup(
                s.session_id,
                s.turn,
                first[:80],
                int(message[1:]) if message[1:].isdigit() else -1,
                call_id,
                str(full),
                before is not None,
                kept,
                before if kept else None,
                sha(after),
                made,
            ),
            self.max_bytes,
        )

    async def plan(self) -> UndoPlan | None:
        """The newest turn that changed files and is not undone, or None."""
        lineage = await self.store.undo_lineage(self.session.session_id)
        rows = await self.store.last_undoable_turn(lineage)
        if not rows:
            return None
        first: dict[str, FileBackup] = {}
        last: dict[str, FileBackup] = {}
        for r in rows:
            first.setdefault(r.path, r)
            last[r.path] = r
        files = []
        for path, b in first.items():
            full = Path(path)
            now = await asyncio.to_thread(_current, full)
            if b.restorable and now == b.content:  # None == None: a new file since removed
                continue  # already as it was before the turn
            try:
                shown = str(full.relative_to(self.workspace))
            except ValueError:
                shown = path
            # guard: undo-changed-since-the-agent-wrote
            changed = sha(now) != last[path].after_sha
            files.append(UndoFile(full, shown, b.existed, b.kept, b.content, changed, b.made_dirs, b.dropped))
        return UndoPlan(rows[0].session_id, rows[0].turn, rows[0].prompt, tuple(files))

    async def apply(self, plan: UndoPlan, overwrite_changed: bool) -> UndoOutcome:
        """Restore ``plan``'s files (a changed one only if ``overwrite_changed``), record the turn as
        undone, and leave the model a note of what is no longer there."""
        out = UndoOutcome()
        for f in plan.files:
            if not f.kept:
                out.left.append(f"{f.shown} (too big to have been kept)")
            elif not f.restorable:
                out.left.append(f"{f.shown} (its backup was dropped: over undo_backups_mb)")
            elif f.changed and not overwrite_changed:
                out.left.append(f"{f.shown} (changed since; left as it is)")
            else:
                try:
                    await asyncio.to_thread(_restore, f)
                except OSError as exc:
                    log.warning("/undo: restoring %s failed", f.full, exc_info=True)
                    out.left.append(f"{f.shown} (cannot write: {exc.strerror or exc})")
                else:
                    out.restored.append(f.shown)
                    if not f.existed:
                        out.removed.append(f.shown)
        await self.store.mark_undone(self.session.session_id, plan.owner, plan.turn)
        note = f"The user undid your file edits from the turn '{plan.prompt}'"
        note += f": {', '.join(out.restored)} are as they were before it." if out.restored else "."
        if out.left:
            note += f" Not restored: {', '.join(out.left)}."
        note += " Read a file again before relying on its content."
        await self.session.append(synthetic_user(note, "undo", "undo"))
        return out


def _missing_folders(full: Path) -> tuple[str, ...]:
    """The folders a new file at ``full`` needs made, deepest first (blocking)."""
    out = []
    folder = full.parent
    while not folder.exists() and folder != folder.parent:
        out.append(str(folder))
        folder = folder.parent
    return tuple(out)


def _restore(f: UndoFile) -> None:
    """Put ``f`` back as it was before the turn (blocking)."""
    if not f.existed:
        f.full.unlink(missing_ok=True)
        for folder in f.made_dirs:  # the folders made for it, unless something else is in them now
            try:
                os.rmdir(folder)
            except OSError:
                break
        return
    assert f.content is not None
    if f.full.exists():
        write_atomic(f.full, f.content)
        return
    f.full.parent.mkdir(parents=True, exist_ok=True)  # deleted since, maybe with its folder
    with f.full.open("w", encoding="utf-8", newline="") as out:
        out.write(f.content)
