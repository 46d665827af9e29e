"""A file's text attached to a message, as ``@file`` in the TUI and an editor's embedded resource in
``myrm acp`` attach it: a ``<file>`` block, within a budget per file and per message (a larger file is
cut, with a note that says how to read the rest)."""

from __future__ import annotations

FILE_BUDGET = 20_000  # characters of one attached file
TOTAL_BUDGET = 60_000  # characters of all the attachments of one message


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
