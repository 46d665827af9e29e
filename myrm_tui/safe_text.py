"""``sanitize``: text from tools and models made safe to show on a terminal.

A file or a model reply may hold escape sequences that a terminal obeys: OSC 52 writes the clipboard,
OSC 0 retitles the window, CSI clears the screen or moves the cursor over earlier output, and the 8-bit
C1 forms (``\\x9b`` = CSI) do the same on terminals that honour them. Neither ``print`` nor Textual's
``Static`` removes them (Rich drops only BEL, BS, VT, FF and CR). Every C0 control except tab and
newline, DEL and every C1 control is replaced by a visible stand-in (ESC shows as ``␛``), so the
sequence is shown, inert, instead of obeyed; a CRLF line end becomes a plain newline.

Two more kinds cannot be shown as given: the bidirectional embeddings, overrides and isolates
(U+202A-U+202E, U+2066-U+2069) reorder what follows them on the line, so a command or a file name reads
as another one ("Trojan Source"); a lone surrogate (JSON's ``"\\ud800"``, a name decoded with
``surrogateescape``) cannot be written to a UTF-8 terminal at all (``print`` raises). Both become U+FFFD.
"""

from __future__ import annotations

# C0 -> the Unicode "control pictures" (U+2400 + code), DEL -> ␡, C1 -> the replacement character.
_TABLE: dict[int, str] = {c: chr(0x2400 + c) for c in range(0x20) if c not in (0x09, 0x0A)}
_TABLE[0x7F] = "\u2421"
_TABLE.update({c: "\ufffd" for c in range(0x80, 0xA0)})
# guard: bidi-overrides-and-lone-surrogates-shown-inert
_TABLE.update({c: "\ufffd" for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A), *range(0xD800, 0xE000))})


def sanitize(text: str) -> str:
    """``text`` with every terminal control character, bidi override and lone surrogate neutralised (tabs
    and newlines kept)."""
    # The common case: nothing to replace (tab, newline, the bidi controls and surrogates are not printable).
    if text.isprintable():
        return text
    # guard: escape-codes-shown-inert
    return text.replace("\r\n", "\n").translate(_TABLE)
