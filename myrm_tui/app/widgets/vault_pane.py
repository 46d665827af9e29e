"""The vault pane: every vaulted output of the session; open one to read it with line numbers (and
Python highlighted), search inside it (Enter finds the next match), copy its ``vault://`` pointer (c).

The text shown is ``context.vault.readable(entry)``, the rendering ``file_read_tool`` numbers: line N
here is line N of a ``vault://…`` line range. The text area is mounted when the first entry opens
(it is the pane's heaviest widget and not part of the first frame)."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option
from textual.widgets.text_area import LanguageDoesNotExist, Selection

from myrm_tui import plain_words
from myrm_tui.context.vault import VaultEntry, readable
from myrm_tui.safe_text import sanitize

if TYPE_CHECKING:
    from myrm_tui.store.db import VaultListing

log = logging.getLogger(__name__)

# Highlighting parses the whole text and runs the grammar's queries over it: about 0.3 s more per
# 250 KB of Python, on the UI thread. A larger entry is shown plain, as editors do with huge files.
HIGHLIGHT_MAX_CHARS = 100_000
# F4 in a new session showed two empty boxes and nothing that said why
EMPTY = (
    "The vault is empty: nothing was shortened or removed from the view yet. Long tool outputs and "
    "compacted messages land here (vault://…), readable in full."
)


def _language(text: str) -> str | None:
    """The grammar to highlight an output with: Python, the one installed (a file read). JSON is not: its
    grammar's wheel crashed the process on a second document."""
    if len(text) > HIGHLIGHT_MAX_CHARS or text.lstrip()[:1] in ("[", "{"):
        return None
    if "def " in text[:2000] or "import " in text[:2000]:
        return "python"
    return None


class VaultPane(Vertical):
    DEFAULT_CSS = """
    VaultPane { height: 1fr; }
    VaultPane OptionList { height: auto; max-height: 10; }
    VaultPane TextArea { height: 1fr; }
    VaultPane #vault-info { color: $text-muted; height: auto; }
    """
    BINDINGS = [
        Binding("c", "copy_pointer", "Copy vault:// pointer"),
        Binding("escape", "leave", "Back to the prompt"),
    ]

    @dataclass
    class OpenRequested(Message):
        """Open this entry (an option picked here, or a vault card in the conversation)."""

        uri: str
        line: int = 0  # 1-based line to show (a compaction's "what left" item); 0: the top

    @dataclass
    class Left(Message):
        """Esc in the pane: the focus goes back to the prompt box (a second Esc cancels a turn)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.current_uri = ""
        self._entries: list[VaultListing] = []

    def compose(self) -> ComposeResult:
        yield OptionList(id="vault-list", markup=False)  # gists and commands come from tools
        yield Static(EMPTY, id="vault-info", markup=False)
        yield Input(placeholder="search inside (Enter: next match)", id="vault-search")

    def show_entries(self, entries: list[VaultListing], gists: dict[str, str] | None = None) -> None:
        """One line per entry: what it came from (the command, the reply), then kind, size, time, why."""
        self._entries = entries
        gists = gists or {}
        ol = self.query_one(OptionList)
        highlighted = ol.highlighted
        ol.clear_options()
        for e in entries:
            when = time.strftime("%H:%M:%S", time.localtime(e.get("created_at", 0)))
            what = gists.get(e["uri"]) or e.get("tool_name") or e.get("kind")
            label = (
                f"{what}\n  {plain_words.kind(str(e.get('kind', '')))} · {e.get('size', 0):,} B · {when} · "
                f"{plain_words.reason(str(e.get('meta', {}).get('reason', '')))}"
            )
            ol.add_option(Option(sanitize(label), id=e["uri"]))
        if entries:  # Enter opens at once (F4 focuses the list)
            ol.highlighted = min(highlighted or 0, len(entries) - 1)
        if not self.current_uri:  # an open entry's line stays
            self.query_one("#vault-info", Static).update("" if entries else EMPTY)

    def focus_list(self) -> None:
        self.query_one(OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id:
            self.post_message(self.OpenRequested(event.option.id))

    def _area(self) -> Any:
        from textual.widgets import TextArea

        return self.query_one("#vault-text", TextArea)

    def _show_text(self, text: str, language: str | None) -> Any:
        """The text area showing ``text`` highlighted as ``language``; plain text if no grammar for it
        is installed (Textual raises rather than falling back)."""
        # guard: a-vault-entry-whose-grammar-is-not
        try:
            return self._put_text(text, language)
        except LanguageDoesNotExist:
            log.warning("vault pane: no %s grammar installed; shown as plain text", language, exc_info=True)
            return self._put_text(text, None)

    def _put_text(self, text: str, language: str | None) -> Any:
        # The text's document is built once: TextArea(text, language=…) builds it three times (as plain
        # text, then highlighted twice), and a language set after the text builds it again — 0.8 s
        # instead of 0.5 s for 250 KB of Python. An empty area takes the text with its language.
        from textual.widgets import TextArea

        found = self.query("#vault-text")
        if not found:
            area = TextArea(language=language, read_only=True, show_line_numbers=True, id="vault-text")
            area.load_text(text)
            self.mount(area)
            return area
        area = found.first(TextArea)
        if area.text != text:
            area.set_reactive(TextArea.language, language)  # load_text builds with it
            area.load_text(text)
        elif area.language != language:
            area.language = language
        return area

    def show_entry(self, entry: VaultEntry, line: int = 0) -> None:
        self.current_uri = entry.uri
        raw = readable(entry)
        text = sanitize(raw)  # a vaulted output may hold escape sequences: shown inert
        # Rendered archives are prose; a raw output is highlighted as what it looks like.
        area = self._show_text(text, _language(text) if raw is entry.content else None)
        self.query_one("#vault-info", Static).update(
            f"{plain_words.kind(entry.kind)} · {len(text.splitlines()):,} lines · {entry.uri}"
            + (f" · line {line}" if line else "")
        )
        if line:
            area.move_cursor((line - 1, 0))
            area.scroll_to(y=line - 1, animate=False)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """The next match after the cursor (wrapping), selected and scrolled into view."""
        event.stop()
        needle = event.value
        if not needle or not self.current_uri:
            return
        area = self._area()
        text = area.text
        doc = area.document
        start = doc.get_index_from_location(area.selection.end)
        at = text.find(needle, start)
        if at < 0:
            at = text.find(needle)
        info = self.query_one("#vault-info", Static)
        if at < 0:
            info.update(f"{self.current_uri} · no match for {needle!r}")
            return
        begin = doc.get_location_from_index(at)
        end = doc.get_location_from_index(at + len(needle))
        area.selection = Selection(begin, end)
        area.scroll_cursor_visible(center=True, animate=False)
        total = text.count(needle)
        nth = text.count(needle, 0, at) + 1
        info.update(f"{self.current_uri} · match {nth} of {total} at line {begin[0] + 1}")

    def action_leave(self) -> None:
        self.post_message(self.Left())

    def action_copy_pointer(self) -> None:
        if self.current_uri:
            self.app.copy_to_clipboard(self.current_uri)
            self.app.notify(f"copied {self.current_uri}")
