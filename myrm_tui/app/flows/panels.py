"""The side panel and what the chat screen shows on request: a tab, the vault's entries, the search bar,
the newest output, the ``/context`` and ``/notes`` lines, and ``/copy``."""

from __future__ import annotations

import bisect
import logging
import re

from textual import work

from myrm_tui.app.flows.base import AppBase
from myrm_tui.app.messages import JumpToBottom, ShowNotice, ShowTab, TogglePanel, VaultEntryLoaded
from myrm_tui.app.widgets.vault_pane import VaultPane

log = logging.getLogger(__name__)

# A fenced block's body: from the line after an opening ``` (or ~~~) to the same fence at a line's start.
# The definition; ``code_blocks`` finds the same blocks in one pass (this one scans to the end of the text
# from every opening fence that has no closing one: quadratic in the answer's length).
CODE_BLOCK = re.compile(r"^[ ]{0,3}(`{3,}|~{3,})[^\n]*\n(.*?)^[ ]{0,3}\1[ \t]*$", re.DOTALL | re.MULTILINE)
_FENCE = re.compile(r"[ ]{0,3}(`{3,}|~{3,})")
_CLOSING = re.compile(r"[ ]{0,3}(`{3,}|~{3,})[ \t]*")


def code_blocks(text: str) -> list[str]:
    """The bodies ``CODE_BLOCK.finditer`` finds, in order, in one pass over the lines: an answer of
    40,000 lines opening ~~~ blocks that never close took ``/copy code`` (on the screen's loop) ~50 s."""
    lines = text.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    closes: dict[str, list[int]] = {}  # a fence -> the lines that close it, in order
    for n, line in enumerate(lines):
        if m := _CLOSING.fullmatch(line):
            closes.setdefault(m.group(1), []).append(n)
    # The closing fences of each character, longest first: the pattern tries an opening run whole, then
    # shorter down to three (its info string takes the rest).
    fences = {c: sorted((f for f in closes if f[0] == c), key=len, reverse=True) for c in "`~"}
    out: list[str] = []
    i = 0
    while i < len(lines) - 1:  # an opening fence needs a line after it
        m = _FENCE.match(lines[i])
        end = None
        if m is not None:
            run = m.group(1)
            for fence in fences[run[0]]:
                ends = closes[fence]
                if len(fence) <= len(run) and (k := bisect.bisect_right(ends, i)) < len(ends):
                    end = ends[k]
                    break
        if end is None:
            i += 1
            continue
        # guard: copy-code-the-next-block-starts-after-this-ones-end
        out.append(text[starts[i + 1] : starts[end]])
        i = end + 1
    return out


class PanelsFlow(AppBase):
    def action_show_tab(self, tab: str, focus: bool = True) -> None:
        self.main.post_message(ShowTab(tab, focus))

    def action_toggle_panel(self) -> None:
        self.main.post_message(TogglePanel())

    def action_search(self, text: str = "") -> None:
        if self._closing_down():
            return
        self.main.open_search(text)  # at once: the next keys must find the search field focused

    def action_jump_to_bottom(self) -> None:
        self.main.post_message(JumpToBottom())

    def on_vault_pane_open_requested(self, event: VaultPane.OpenRequested) -> None:
        self.load_vault_entry(event.uri, event.line)

    @work(exclusive=True, group="vault", exit_on_error=False, description="open vault entry")
    async def load_vault_entry(self, uri: str, line: int = 0) -> None:
        # The worker does not exit on error: a failed read said nothing at all, and left no trace.
        try:
            entry = await self.controller.vault_entry(uri)
        except Exception as exc:
            # guard: a-card-that-cannot-be-read-says-so
            log.exception("opening %s failed", uri[:200])
            self.notify(f"could not open {uri[:200]}: {type(exc).__name__}: {exc}", severity="error")
            return
        self._show(VaultEntryLoaded(uri, entry, line))

    async def action_context_window(self) -> None:
        """``/context``: what fills the window now, by category, adding up to the ring's figure."""
        await self.ready.wait()
        use = self.live.use or await self.controller.baseline()  # the ring's own figure, by category
        lines = use.lines() if use is not None else ["no model yet"]
        self._show(ShowNotice("Context window now (tokens, share of the window):\n" + "\n".join(lines)))

    async def action_notes(self) -> None:
        await self.controller.ensure_agent()
        notes = self.controller.chat.notes if self.controller.chat else ()
        body = "\n".join(f"{i + 1}. {n}" for i, n in enumerate(notes)) or "(none)"
        self._show(ShowNotice("Session notes:\n" + body))

    def action_copy_answer(self, what: str = "") -> None:
        """``/copy``: the newest answer's Markdown to the clipboard (a mouse selection of a long answer
        scrolled past the screen could not take it whole); ``/copy code``: its last code block's body."""
        # guard: copy-takes-the-newest-answer
        answer = next((it.text for it in reversed(self.main.chat.items) if it.kind == "assistant"), "")
        if not answer.strip():
            self.notify("no answer to copy yet", severity="warning")
            return
        if what == "code":
            blocks = code_blocks(answer)
            if not blocks:
                self.notify("the last answer has no code block; /copy takes all of it", severity="warning")
                return
            self.copy_to_clipboard(blocks[-1])
            self.notify(f"copied the last code block ({blocks[-1].count(chr(10)):,} lines)")
            return
        self.copy_to_clipboard(answer)
        self.notify(f"copied the last answer ({len(answer):,} characters)")
