"""A file's text attached to a message, as ``@file`` in the TUI and an editor's embedded resource in
``myrm acp`` attach it: a ``<file>`` block, within a budget per file and per message (a larger file is
cut, with a note that says how to read the rest)."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from myrm_tui.paths import private_in, private_paths
from myrm_tui.safe_files import read_head

FILE_BUDGET = 20_000  # characters of one attached file
TOTAL_BUDGET = 60_000  # characters of all the attachments of one message
MENTION = re.compile(r"(?<!\S)@([\w.+/-]+)")  # ``@src/x.py``: a workspace file named in a message


def file_block(shown: str, content: str, room: int, whole: str, more: bool = False) -> tuple[str, bool]:
    """The ``<file>`` block of ``content`` cut to ``room`` characters, and whether it was cut; ``whole``
    names the file's size in the note (``"130,000 bytes"``), ``more``: the file goes on past ``content``."""
    cut = more or len(content) > room
    note = (
        f"\n[attachment cut: the first {room:,} characters of {whole}; read the rest with file_read_tool]"
        if cut
        else ""
    )
    return f'\n\n<file path="{shown}">\n{content[:room].rstrip(chr(10))}{note}\n</file>', cut


def attach(text: str, root: Path, typed: str | None = None) -> tuple[str, dict[str, str]]:
    """``text`` with each file mentioned in ``typed`` (default: ``text``; the box's text, so an ``@``
    inside a paste attaches nothing) appended in a ``<file>`` block, and label -> block for the transcript
    (``[attached src/x.py · 120 lines]``). Paths outside the workspace, missing files and anything that is
    not a regular text file are left as written."""
    base = root.resolve()
    private = private_paths(base)  # myrm's database or config in the workspace is never sent
    blocks: list[str] = []
    labels: dict[str, str] = {}
    seen: set[Path] = set()
    used = 0
    for m in MENTION.finditer(text if typed is None else typed):
        shown = m.group(1).rstrip(".,;:!?)")
        try:
            full = (base / shown).resolve()
            st = os.stat(full)
        except (OSError, RuntimeError, ValueError):
            continue
        if full in seen or (base not in full.parents) or not stat.S_ISREG(st.st_mode):
            continue
        if private_in(full, private) is not None:
            continue
        room = min(FILE_BUDGET, TOTAL_BUDGET - used)
        if room <= 0:
            break
        read = read_head(full, room * 4 + 1)
        if read is None:
            continue
        data, st = read
        if b"\x00" in data[:8192]:
            continue  # binary
        seen.add(full)
        content = data.decode("utf-8", errors="replace")
        block, cut = file_block(shown, content, room, f"{st.st_size:,} bytes", more=st.st_size > len(data))
        content = content[:room]
        used += len(content)
        lines = content.count("\n") + (0 if content.endswith("\n") else 1)
        label = f"\n[attached {shown} · {lines:,} line{'' if lines == 1 else 's'}{' (cut)' if cut else ''}]"
        blocks.append(block)
        labels[label] = block
    return text + "".join(blocks), labels
