"""A tool call and its result, collapsed by default; vaulted outputs offer to open the vault pane.

While a call runs, the card shows the elapsed seconds and the last lines of its output as they stream.
When it ends, the heading says how: ✓ done, ✗ failed (with the exit code), ⊘ declined by the user,
■ cancelled (Esc). A shell result's ``<returncode>``/``<output>`` wrapper is shown as an exit code and
the output; a ``file_edit_tool`` call is titled by what happened (``edit app.py (+1 −1)``) and shows
its change as a coloured diff with the file's line numbers and 3 lines of context (the diff the tool
stored with its result; before the result, a diff of the call's strings without line numbers).
"""

from __future__ import annotations

import difflib
import re
import time
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.timer import Timer
from textual.widgets import Static

from myrm_tui.app.widgets.plain import PlainCollapsible
from myrm_tui.context.text.call_args import call_args
from myrm_tui.context.types import ToolCall
from myrm_tui.safe_text import sanitize

_VAULT = re.compile(r"vault://[\w./-]+")
_SHELL = re.compile(r"\A<returncode>(-?\d+)</returncode>\n<output>\n?(.*?)</output>", re.S)
# Terminal escape sequences (CSI, OSC, other ESC pairs) and control characters other than newline and tab:
# a command's colours or title/clipboard codes are not for this screen.
_CONTROL = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b.?|[\x00-\x08\x0b-\x1f\x7f]"
)
PREVIEW_CHARS = 4_000


def clean(text: str) -> str:
    """``text`` as a terminal would leave it, without its escape codes: a line rewritten with ``\\r``
    (a progress bar) keeps its last state."""
    return "\n".join(_CONTROL.sub("", line.rstrip("\r").rsplit("\r", 1)[-1]) for line in text.split("\n"))


LIVE_LINES = 6
DIFF_LINES = 60


def shell_result(text: str) -> tuple[int, str] | None:
    """(exit code, output) of a ``bash`` result, or None when ``text`` is not one; a hook's note after
    the wrapper stays with the output."""
    m = _SHELL.match(text)
    if m is None:
        return None
    rest = text[m.end() :].strip("\n")
    return int(m.group(1)), m.group(2).rstrip("\n") + (f"\n\n{rest}" if rest else "")


_HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")


def render_diff(diff: str, max_lines: int = DIFF_LINES) -> Text:
    """A unified diff as the file's name, then its lines with their line numbers (the old file's for
    removed and unchanged lines, the new file's for added ones), red and green."""
    out = Text()
    old = new = 0
    shown = 0
    lines = diff.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("+++ "):
            out.append(sanitize(line[4:]), style="bold")
            continue
        if line.startswith("--- "):
            continue
        if m := _HUNK.match(line):
            old, new = int(m.group(1)), int(m.group(2))
            if shown:
                out.append("\n   ⋮", style="dim")
            continue
        if shown == max_lines:
            out.append(f"\n… {len(lines) - i} more lines", style="dim")
            break
        shown += 1
        if line.startswith("+"):
            number, style = new, "green"
            new += 1
        elif line.startswith("-"):
            number, style = old, "red"
            old += 1
        else:
            number, style = old, "dim"
            old, new = old + 1, new + 1
        out.append("\n" if out else "")
        out.append(f"{number:>5} " if number else "      ", style="dim")
        out.append(sanitize(line), style=style)
    return out


def edit_args(call: ToolCall) -> dict[str, Any] | None:
    """A ``file_edit_tool`` call's arguments, or None when it is not one (or they do not parse)."""
    if call.name != "file_edit_tool":
        return None
    args = call_args(call)  # parsed once, wrong types read as absent: never raises
    new = args.fields.get("new_string")
    if not isinstance(new, str):
        return None
    return {
        "path": args.path,
        "old_string": args.text("old_string"),
        "new_string": new,
        "create": args.flag("create"),
    }


def edit_title(call: ToolCall, meta: dict[str, Any] | None = None) -> str | None:
    """``edit app.py (+1 −1)`` / ``create notes.md (+12)``: what an edit did (or will do)."""
    args = edit_args(call)
    if args is None:
        return None
    meta = meta or {}
    if isinstance(meta.get("added"), int) and isinstance(meta.get("removed"), int):
        added, removed = meta["added"], meta["removed"]
    else:
        old = "" if args.get("create") else str(args.get("old_string") or "")
        body = list(difflib.ndiff(old.splitlines(), args["new_string"].splitlines()))
        added = sum(ln.startswith("+ ") for ln in body)
        removed = sum(ln.startswith("- ") for ln in body)
    path = str(args.get("path", "")) or "?"
    if args.get("create"):
        return f"create {path} (+{added})"
    return f"edit {path} (+{added} −{removed})"


def edit_diff(call: ToolCall) -> Text | None:
    """A ``file_edit_tool`` call's change as a coloured unified diff of its old and new strings."""
    args = edit_args(call)
    if args is None:
        return None
    old = "" if args.get("create") else str(args.get("old_string") or "")
    path = str(args.get("path", ""))
    lines = list(
        difflib.unified_diff(
            old.splitlines(), args["new_string"].splitlines(), f"a/{path}", f"b/{path}", n=2, lineterm=""
        )
    )
    out = Text()
    for i, line in enumerate(lines[2:] if len(lines) > 2 else lines):
        if i == DIFF_LINES:
            out.append(f"\n… {len(lines) - 2 - DIFF_LINES} more lines", style="dim")
            break
        if line.startswith("@@"):
            continue  # the hunk's numbers count lines of the snippet, not of the file
        if out:
            out.append("\n")
        style = "green" if line.startswith("+") else "red" if line.startswith("-") else "dim"
        out.append(sanitize(line), style=style)
    return out


class ToolCallView(PlainCollapsible):
    DEFAULT_CSS = """
    ToolCallView { margin: 0 0 0 2; padding: 0; border: none; background: $boost; }
    ToolCallView .output { color: $text-muted; padding: 0 1; }
    ToolCallView .diff { padding: 0 1; }
    ToolCallView .live { color: $text-muted; padding: 0 1 0 4; display: none; max-height: 6; }
    ToolCallView.-running .live { display: block; }
    ToolCallView.-error CollapsibleTitle { color: $error; }
    ToolCallView.-running CollapsibleTitle { color: $warning; }
    ToolCallView.-stopped CollapsibleTitle { color: $text-muted; }
    """

    def __init__(self, call: ToolCall) -> None:
        self.diff: Text | None = edit_diff(call)
        parts = [Static("running…", classes="output", markup=False)]
        if self.diff is not None:
            parts.insert(0, Static(self.diff, classes="diff"))
        super().__init__(*parts, title=self._heading(call, "…"), collapsed=True, classes="-running")
        self.call = call
        self.vault_uris: list[str] = []
        self.started = time.monotonic()
        self.state = "running"  # running, done, failed, declined, cancelled
        self.awaiting = False  # the approval dialog is open for this call
        self._ticker: Timer | None = None

    def compose(self) -> ComposeResult:
        yield from super().compose()
        yield Static("", classes="live", markup=False)

    def on_mount(self) -> None:
        if self.state == "running":
            self._ticker = self.set_interval(1.0, self._tick)

    @staticmethod
    def _heading(call: ToolCall, status: str, note: str = "", meta: dict[str, Any] | None = None) -> str:
        if (edit := edit_title(call, meta)) is not None:
            return sanitize(f"{status} {edit}" + (f"  · {note}" if note else ""))
        args = call.arguments if len(call.arguments) < 90 else call.arguments[:87] + "…"
        if call.name == "bash":
            command = call_args(call).command
            if command:
                first = command.strip().splitlines()[0] if command.strip() else ""
                args = first if len(first) < 90 else first[:87] + "…"
        return sanitize(f"{status} {call.name} {args}" + (f"  · {note}" if note else ""))

    def _tick(self) -> None:
        if self.state == "running" and not self.awaiting:
            self.title = self._heading(self.call, "…", f"{time.monotonic() - self.started:.0f}s")

    def await_approval(self, waiting: bool) -> None:
        """The call waits for the user's answer: the heading says so instead of counting seconds; the
        count starts when the answer comes."""
        self.awaiting = waiting
        if waiting:
            self.title = self._heading(self.call, "…", "waiting for your approval")
        else:
            self.started = time.monotonic()
            self._tick()

    def _stop_ticker(self) -> None:
        if self._ticker is not None:
            self._ticker.stop()
            self._ticker = None

    def set_live(self, text: str) -> None:
        """The newest output of the running call: its last lines under the heading."""
        if self.state != "running" or not self.is_mounted:
            return
        lines = sanitize(clean(text)).rstrip("\n").splitlines()[-LIVE_LINES:]
        self.query_one(".live", Static).update("\n".join(lines))
        self._tick()

    def set_result(self, text: str, is_error: bool, meta: dict[str, Any] | None = None) -> None:
        meta = meta or {}
        self._stop_ticker()
        self.remove_class("-running")
        shell = shell_result(text) if self.call.name == "bash" else None
        if meta.get("interrupted"):
            self.state, status, note = "cancelled", "■", "cancelled"
        elif meta.get("declined"):
            self.state, status, note = "declined", "⊘", "declined"
        elif is_error:
            self.state, status = "failed", "✗"
            note = f"exit {shell[0]}" if shell else "failed"
        else:
            self.state, status, note = "done", "✓", ""
        self.set_class(self.state == "failed", "-error")
        self.set_class(self.state in ("cancelled", "declined"), "-stopped")
        self.awaiting = False
        self.title = self._heading(self.call, status, note, meta)
        self.vault_uris = _VAULT.findall(text)
        body = text
        if shell is not None:
            code, output = shell
            body = output if code == 0 else f"{output}\n[exit code {code}]".lstrip("\n")
        shown = body if len(body) <= PREVIEW_CHARS else body[:PREVIEW_CHARS] + f"\n… ({len(body):,} chars)"
        # escape codes shown, never obeyed; a command's colours and progress redraws are dropped
        shown = sanitize(clean(shown) if shell is not None else shown)
        self.query_one(".output", Static).update(shown or "(no output)")
        if isinstance(meta.get("diff"), str) and self.diff is not None:  # the file's own line numbers
            self.diff = render_diff(meta["diff"])
            self.query_one(".diff", Static).update(self.diff)
        if self.diff is not None and self.state == "done":
            self.collapsed = False  # an edit shows its diff

    def cancel(self) -> None:
        """The turn was cancelled while this call ran (its stored result comes with the history)."""
        if self.state == "running":
            self.set_result("Cancelled by the user (Esc).", True, {"interrupted": True})
