"""``file_read_tool`` (workspace files and ``vault://`` URIs, with line ranges) and ``file_edit_tool``.

Disk work runs in a worker thread, never on the event loop (a slow disk must not freeze the UI),
and only regular files are read: a FIFO, a device or a socket is refused before it can block.

Tool calls of one assistant message run concurrently, so an edit holds a lock on its (resolved) path
from its read to its write: two edits of one file run one after the other, the second on the first's
result, and none is lost. The write goes to a temporary file renamed over the original, so a reader
(or a crash) never sees half a file.

An edit's result carries its unified diff (file name, line numbers, 3 lines of context) and its counts of
added and removed lines, for the card. Under ``approval = "ask"`` the user sees that diff and decides
before the file is written, unless an allow rule for edits (``file_edit_tool`` in ``allowed_commands``)
or an earlier "always" covers it; with no one to ask (``myrm ask``, no approver) edits run as before.
"""

from __future__ import annotations

import asyncio
import difflib
import logging
import os
import stat
import tempfile
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

from myrm_tui.agent.images import (
    IMAGE_SUFFIXES,
    MAX_IMAGE_BYTES,
    describe,
    image_mime,
    image_part,
    too_large,
)
from myrm_tui.agent.permissions import Assessment, git_internal
from myrm_tui.agent.tools.base import (
    ToolContext,
    ToolError,
    ToolResult,
    decode_output,
    read_regular,
    resolve_in_workspace,
)
from myrm_tui.context.vault import VAULT_SCHEME, readable, slice_lines
from myrm_tui.safe_text import listed_name

log = logging.getLogger(__name__)

MAX_READ_CHARS = 100_000
DIFF_MAX_LINES = 400  # a diff kept with the result (the card shows fewer)
MAX_FILE_BYTES = 20_000_000

# One table per event loop: an asyncio.Lock may only be awaited on the loop it first waited on.
_LOCKS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[Path, asyncio.Lock]] = (
    weakref.WeakKeyDictionary()
)


def path_lock(full: Path) -> asyncio.Lock:
    """The lock every writer of the resolved path ``full`` holds from its read to its write."""
    table = _LOCKS.setdefault(asyncio.get_running_loop(), {})
    return table.setdefault(full, asyncio.Lock())


class FileReadTool:
    name = "file_read_tool"
    description = (
        "Read files of the workspace, or vaulted outputs by their vault:// URI. Optional line_range "
        "'start:end' (1-based, inclusive). Output lines are numbered."
    )
    parameters = {
        "type": "object",
        "properties": {
            "paths": {
                "type": "array",
                "items": {"type": "string"},
                "description": "workspace paths or vault:// URIs",
            },
            "line_range": {"type": "string", "description": "e.g. '100:200'"},
        },
        "required": ["paths"],
    }

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        paths = args.get("paths") or ([args["path"]] if args.get("path") else [])
        if isinstance(paths, str):
            paths = [paths]
        if not paths:
            raise ToolError("paths is required (a list of workspace paths or vault:// URIs)")
        line_range = args.get("line_range")
        parts: list[str] = []
        images: list[dict[str, Any]] = []
        unread = size = 0
        for n, p in enumerate(paths):
            # A call reads until its answer is full: paths past that are not read at all (the same 20 MB file
            # named 30 times was read 30 times, held whole, numbered on the event loop: 1.3 GB and 14 s).
            # guard: a-read-stops-once-its-answer-is-full
            if size > MAX_READ_CHARS or _image_bytes(images) > MAX_IMAGE_BYTES:
                unread = len(paths) - n
                break
            parts.append(await self._read_one(str(p), line_range, ctx, images))
            size += len(parts[-1]) + 2
        text = "\n\n".join(parts)
        if len(text) > MAX_READ_CHARS:
            text = (
                text[:MAX_READ_CHARS]
                + f"\n[… output cut at {MAX_READ_CHARS:,} chars; read a narrower line_range]"
            )
        if unread:
            text += f"\n[{unread:,} more path(s) not read: this answer is full; read them in another call]"
        return ToolResult(text, images=images)

    async def _read_one(
        self, path: str, line_range: str | None, ctx: ToolContext, images: list[dict[str, Any]]
    ) -> str:
        if path.startswith(VAULT_SCHEME):
            namespace = path[len(VAULT_SCHEME) :].split("/", 1)[0]
            # guard: vault-confinement
            if namespace != ctx.vault.namespace and namespace not in ctx.extra_vault_namespaces:
                raise ToolError(
                    f"{path} belongs to another session's vault; this session can read only its own"
                )
            entry = await ctx.vault.get(path)
            if entry is None:
                raise ToolError(f"no vaulted output at {path}")
            # A parent's output stored after this session was forked from it is another branch's work.
            # guard: a-forks-read-stops-at-its-branch-point
            if entry.created_at > ctx.vault_until.get(namespace, entry.created_at):
                raise ToolError(f"{path} was stored after this session was forked: not its history")
            if entry.kind == "media" and entry.content.startswith(
                "data:image/"
            ):  # an image the window let go
                images.append({"type": "image_url", "image_url": {"url": entry.content}})
                return f"==> {path} (image, {entry.size:,} bytes)"
            return (
                f"==> {path} ({entry.kind}, {entry.size:,} bytes)\n{slice_lines(readable(entry), line_range)}"
            )
        full = resolve_in_workspace(ctx.workspace, path)
        if ctx.files is not None and not full.is_dir() and not full.name.lower().endswith(IMAGE_SUFFIXES):
            shown = await ctx.files.read_text(full)  # the editor's buffer: unsaved changes included
            if shown is not None:
                ctx.integrity.record(path, shown)
                return f"==> {path} (as open in the editor)\n{slice_lines(shown, line_range)}"
        # guard: file-reads-off-the-event-loop
        loaded = await asyncio.to_thread(_load, full, path)
        if isinstance(loaded, str):  # a directory's listing
            return loaded
        mime = image_mime(loaded)
        if mime is not None:  # the image itself, for the model to look at (a stand-in if it cannot)
            if len(loaded) > MAX_IMAGE_BYTES:
                return f"==> {path}\n{too_large(path, len(loaded))}"
            images.append(image_part(loaded, mime))
            return f"==> {path}\n{describe(path, loaded, mime)}"
        # 20 MB of text takes a while to decode and number: not on the event loop (the screen would freeze)
        text, label, body = await asyncio.to_thread(_numbered, loaded, line_range)
        ctx.integrity.record(path, text)
        header = f"==> {path}" + (f" {label}" if label else "")
        return f"{header}\n{body}"


class FileEditTool:
    name = "file_edit_tool"
    asks_approval = True  # its question takes its turn among the reply's (tool runner)
    description = (
        "Edit a workspace file by exact string replacement (old_string must occur exactly once unless "
        "replace_all), or create a file with create=true and new_string as its content."
    )
    parameters = {
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "old_string": {"type": "string"},
            "new_string": {"type": "string"},
            "replace_all": {"type": "boolean"},
            "create": {"type": "boolean"},
        },
        "required": ["path", "new_string"],
    }

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        path = str(args.get("path", ""))
        full = resolve_in_workspace(ctx.workspace, path)
        new = args.get("new_string")
        if not isinstance(new, str):
            raise ToolError("new_string must be a string")
        # guard: edits-of-one-path-serialised
        async with path_lock(full):
            return await self._edit(args, path, full, new, ctx)

    async def _edit(
        self, args: dict[str, Any], path: str, full: Path, new: str, ctx: ToolContext
    ) -> ToolResult:
        if args.get("create"):
            if full.exists() or full.is_symlink():  # said before the user is asked about it
                raise ToolError(f"{path} already exists; edit it with old_string/new_string instead")
            await _writable_folder(full, path)
            diff = file_diff(path, "", new)
            if not await self._approved(path, full, diff, ctx):
                return _declined(path, diff)
            # guard: a-create-checks-again-after-approval
            if full.exists() or full.is_symlink():  # made by something else while the user decided
                raise ToolError(f"{path} was created by something else while the edit waited; not written")
            await _kept(ctx, full, path, None, new)
            if not await _editor_wrote(ctx, full, new):
                await _written(_create, full, path, new)
            ctx.integrity.record(path, new)
            return ToolResult(
                f"created {path} ({len(new.splitlines())} lines)",
                meta={"path": path, "op": "created", **_diff_meta(diff)},
            )
        old = args.get("old_string")
        if not isinstance(old, str) or not old:
            raise ToolError("old_string is required to edit (or pass create=true to make a new file)")
        text = await _current(ctx, full, path)
        warning = ""
        if ctx.integrity.changed_since_read(path, text):
            warning = (
                f"\nNote: {path} changed since you last read it; the edit was applied to its current content."
            )
        count = text.count(old)
        if count == 0:
            raise ToolError(f"old_string not found in {path}")
        if count > 1 and not args.get("replace_all"):
            raise ToolError(
                f"old_string occurs {count} times in {path}; add context to make it unique or set replace_all"
            )
        # A short old_string in every line and a long new_string: gigabytes built in memory, then written.
        grown = len(text) + (count if args.get("replace_all") else 1) * (len(new) - len(old))
        # guard: an-edit-cannot-grow-a-file-past-the
        if grown > MAX_FILE_BYTES:
            raise ToolError(
                f"this edit would make {path} {grown:,} characters, over the {MAX_FILE_BYTES:,} a file "
                "tool reads; make it in smaller steps"
            )
        updated = text.replace(old, new) if args.get("replace_all") else text.replace(old, new, 1)
        diff = file_diff(path, text, updated)
        await _writable_folder(full, path)
        if not await self._approved(path, full, diff, ctx):
            return _declined(path, diff)
        # The user (an editor, a job) may have changed the file while the dialog waited: writing the diff
        # they approved would silently drop that change.
        # guard: an-edit-checks-the-file-again-after-approval
        if await _current(ctx, full, path) != text:
            raise ToolError(f"{path} changed while the edit waited for approval; not written: read it again")
        # guard: an-edit-keeps-the-content-undo-restores
        await _kept(ctx, full, path, text, updated)
        if not await _editor_wrote(ctx, full, updated):
            await _written(write_atomic, full, updated)
        ctx.integrity.record(path, updated)
        return ToolResult(
            f"edited {path}: {count if args.get('replace_all') else 1} replacement(s){warning}",
            meta={"path": path, "op": "modified", **_diff_meta(diff)},
        )

    async def _approved(self, path: str, full: Path, diff: str, ctx: ToolContext) -> bool:
        """Write unasked under ``approval = "auto"``, an allow rule for edits, or with no one to ask;
        otherwise the user sees the diff and decides ("always" allows edits for the session).

        An edit inside git's own folder (``.git/config``, ``config.worktree``, hooks…) asks whatever
        allows other edits, and "always" does not cover the next one: git config there can make a later
        read-only ``git status`` run a program (``core.fsmonitor``). With no one to ask it is declined."""
        if ctx.auto_approve:
            return True
        # guard: edits-under-git-ask
        if git_internal(ctx.workspace, full):
            if ctx.approver is None:
                return False
            reason = (
                "edits git's own files (.git/): git config there can make later git commands run a program"
            )
            verdict = Assessment(f"edit {path}", (), problems=(reason,))
            async with ctx.asking():
                return await ctx.approver(self.name, diff, verdict) in ("yes", "always")
        if ctx.approver is None or ctx.allowed_commands.edits_allowed():
            return True
        async with ctx.asking():
            # guard: an-always-answers-the-edits-still-waiting
            if ctx.allowed_commands.edits_allowed():
                return True
            answer = await ctx.approver(self.name, diff, Assessment(f"edit {path}", ()))
        if answer == "always":
            ctx.allowed_commands.allow_edits()
            return True
        return answer == "yes"


def _unwritable_folder(full: Path) -> Path | None:
    """The folder a write of ``full`` would make its file in (its nearest existing one for a new file), if
    this process may not: a read-only project, or one owned by another user."""
    folder = full.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if folder.is_dir() and not os.access(folder, os.W_OK | os.X_OK, effective_ids=True):
        return folder
    return None


async def _current(ctx: ToolContext, full: Path, path: str) -> str:
    """The file's text now: the editor's buffer when an editor drives myrm, else the disk's."""
    shown = await ctx.files.read_text(full) if ctx.files is not None else None
    if shown is not None:
        return shown
    return utf8_text(await asyncio.to_thread(read_regular, full, path, MAX_FILE_BYTES), path)


async def _writable_folder(full: Path, path: str) -> None:
    """Refuse, before the user is asked, an edit the disk would refuse: in a read-only project the user
    approved a diff and then read 'Permission denied'."""
    # guard: an-edit-of-a-read-only-folder-is-refused-before-asking
    if (folder := await asyncio.to_thread(_unwritable_folder, full)) is not None:
        raise ToolError(
            f"{path}: cannot write: the folder {folder} is read-only for this user (uid {os.geteuid()})"
        )


async def _written(write: Callable[..., None], full: Path, *args: str) -> None:
    """``write(full, *args)`` in a thread; a failure of the disk (full, read-only, a file where a folder
    should be: 'a.py/new.py') is one line for the model, logged, never a tool bug."""
    try:
        await asyncio.to_thread(write, full, *args)
    except OSError as exc:
        # guard: a-write-that-fails-is-one-line
        log.warning("writing %s failed", full, exc_info=True)
        raise ToolError(f"{full.name}: cannot write: {exc.strerror or exc}") from None


async def _kept(ctx: ToolContext, full: Path, path: str, before: str | None, after: str) -> None:
    """Keep ``full``'s content before the write, for /undo; a store that cannot keep it refuses the edit:
    an edit /undo would silently miss is worse than one line for the model."""
    if ctx.keep_file is None:
        return
    try:
        await ctx.keep_file(full, before, after, ctx.call_id)
    except Exception as exc:
        log.exception("keeping %s for /undo failed", full)
        raise ToolError(
            f"{path}: not edited: its previous content could not be kept for /undo ({exc})"
        ) from None


async def _editor_wrote(ctx: ToolContext, full: Path, text: str) -> bool:
    """Written through the editor that drives myrm (its buffer follows), or False: write the disk."""
    return ctx.files is not None and await ctx.files.write_text(full, text)


def _diff_meta(diff: str) -> dict[str, Any]:
    added, removed = diff_counts(diff)
    return {"diff": diff, "added": added, "removed": removed}


def _declined(path: str, diff: str) -> ToolResult:
    return ToolResult(
        f"The user declined this edit of {path}; the file is unchanged.",
        is_error=True,
        meta={"declined": True, "path": path, **_diff_meta(diff)},
    )


def file_diff(path: str, before: str, after: str) -> str:
    """The unified diff of one file's change, 3 lines of context, named by its workspace path."""
    lines = list(
        difflib.unified_diff(
            before.splitlines(), after.splitlines(), path if before else "/dev/null", path, n=3, lineterm=""
        )
    )
    if len(lines) > DIFF_MAX_LINES:
        lines = [*lines[:DIFF_MAX_LINES], f"… {len(lines) - DIFF_MAX_LINES} more diff lines"]
    return "\n".join(lines)


def diff_counts(diff: str) -> tuple[int, int]:
    """(lines added, lines removed) of a unified diff."""
    body = [ln for ln in diff.splitlines() if not ln.startswith(("+++", "---"))]
    return sum(ln.startswith("+") for ln in body), sum(ln.startswith("-") for ln in body)


def _numbered(data: bytes, line_range: str | None) -> tuple[str, str | None, str]:
    """``data`` decoded (with its label when it is not plain UTF-8), and its lines in ``line_range``
    numbered."""
    text, label = decode_output(data)
    return text, label, slice_lines(text, line_range)


def _image_bytes(images: list[dict[str, Any]]) -> int:
    """About how many bytes the image parts hold (their data URLs are base64)."""
    return sum(len(part["image_url"]["url"]) * 3 // 4 for part in images)


def _load(full: Path, shown: str) -> str | bytes:
    """A directory's listing, or a regular file's bytes (blocking: run in a thread)."""
    if full.is_dir():
        names = sorted(listed_name(p.name) + ("/" if p.is_dir() else "") for p in full.iterdir())
        return f"==> {shown} (directory)\n" + "\n".join(names[:500])
    return read_regular(full, shown, MAX_FILE_BYTES)


def utf8_text(data: bytes, shown: str) -> str:
    """``data`` as the text an edit rewrites, or a ``ToolError`` when it is not UTF-8: decoded with
    replacements and written back, every other byte that is not UTF-8 (a Latin-1 comment, an image)
    would become U+FFFD, the file silently changed beyond the edit."""
    try:
        # guard: an-edit-never-rewrites-bytes-that-are
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ToolError(
            f"{shown} is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start:,}): an edit "
            "would change its other bytes too; change it with a shell command (sed, iconv) instead"
        ) from None


def write_atomic(full: Path, text: str) -> None:
    """Replace ``full``'s content with ``text`` through a temporary file in the same folder (blocking).

    The file keeps its permission bits; a failure leaves the original untouched."""
    mode = stat.S_IMODE(os.stat(full).st_mode)
    fd, tmp = tempfile.mkstemp(dir=full.parent, prefix=f".{full.name}.", suffix=".myrm-tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, full)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _create(full: Path, shown: str, text: str) -> None:
    if full.exists() or full.is_symlink():
        raise ToolError(f"{shown} already exists; edit it with old_string/new_string instead")
    full.parent.mkdir(parents=True, exist_ok=True)
    with full.open("x", encoding="utf-8") as f:  # "x": never through a file (or FIFO) made since the check
        f.write(text)
