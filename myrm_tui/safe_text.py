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

import base64
import json
import unicodedata

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


def osc52(text: str) -> str:
    """The OSC 52 sequence that puts ``text`` on the terminal's clipboard as the screen shows it
    (``sanitize``d): only base64 between its fixed head and BEL. A lone surrogate cannot be encoded (the
    write raised and myrm stopped), and escape codes on the clipboard act in the terminal the text is
    pasted into: ``ESC [201~`` ends a shell's bracketed paste and what follows runs as typed."""
    # guard: clipboard-text-as-the-screen-shows-it
    payload = sanitize(text).encode("utf-8")
    return f"\x1b]52;c;{base64.b64encode(payload).decode('ascii')}\a"


def one_line(text: str, limit: int) -> str:
    """``text`` as one line of at most ``limit`` characters (a title in a list: line breaks and tabs become
    spaces, so it cannot start a row of its own; a longer one ends with …). Not sanitized: the caller
    sanitizes the line it prints."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


# Printable to Python yet drawn as nothing (or as a blank): the combining grapheme joiner, Hangul and
# Khmer fillers, the Mongolian vowel separator, variation selectors.
_BLANK = frozenset(
    {0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x180E, 0x3164, 0xFFA0, *range(0xFE00, 0xFE10)}
    | set(range(0xE0100, 0xE01F0))
)


def invisible(ch: str) -> bool:
    """Whether ``ch`` shows as nothing or as a plain space while being another character: zero-width and
    other format characters (U+200B, U+2060, U+FEFF, bidi marks, tags), every space but U+0020 (a no-break
    space is not a word separator to a shell), line and paragraph separators, private-use, unassigned and
    surrogate code points, and the blank letters of ``_BLANK``. Controls are ``sanitize``'s."""
    if ch.isprintable():
        return ord(ch) in _BLANK
    return unicodedata.category(ch) != "Cc"


def reveal(text: str) -> str:
    """``text`` for a user deciding on it (the approval dialog): each invisible character written as
    ``⟨U+200B⟩``, so that a command reads as what runs; then ``sanitize``d."""
    if text.isascii():
        return sanitize(text)
    # guard: invisible-characters-shown-marked
    return sanitize("".join(f"⟨U+{ord(c):04X}⟩" if invisible(c) else c for c in text))


def count_invisible(text: str) -> int:
    return 0 if text.isascii() else sum(1 for c in text if invisible(c))


def listed_name(name: str) -> str:
    """A file name as a tool lists it, one a line: as it is, or, when it holds a character that is not
    printable (a line break would list a second, made-up name; a tab, an escape, a bidi override, a byte
    that is not UTF-8), as a JSON string with those escaped, which the model can send back as the path."""
    if name.isprintable() and not name.startswith('"'):
        return name
    # guard: listed-names-hold-no-line-break
    return '"' + "".join(c if c.isprintable() and c not in '"\\' else json.dumps(c)[1:-1] for c in name) + '"'
