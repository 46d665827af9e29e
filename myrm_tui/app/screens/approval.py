"""Asks before a shell command runs: y = run once, a = always allow these commands, n / Esc = decline.
An edit (``file_edit_tool`` under ``approval = "ask"``) asks the same way, showing its diff: y applies it,
a allows every edit for the session, n declines. A call the model keeps repeating (``repeat_limit``) asks
too: y lets it go on until the model asks for another call, a stops such questions for the session, n
stops the turn.

Destructive or remote-code patterns (``rm -rf``, ``curl … | sh``, ``sudo``, ``git push --force``) get a
red "⚠" line above the command.

Below the command as the model wrote it, each parsed simple command has a line of its own: a check
mark when a rule covers it, a cross and the reason when not ("no rule allows it", "command
substitution $(…)", "redirect outside the workspace (/tmp/x)"). The "Always" line says exactly which
rules the answer adds, so what is stored is what the user saw.

No answer by accident: a key typed before the dialog was on screen (a follow-up message typed into the
prompt as the dialog opened), or within ``GRACE`` seconds of it, does nothing — y, a, n, Enter and Esc
answer only a dialog the user has had time to read. A key's time is when the terminal sent it (Textual
stamps each event), so a key that waited in the queue while the dialog opened is still too early.
Everything shown comes from the model: plain text, never markup.
"""

from __future__ import annotations

import logging
import shlex
from collections.abc import Callable

from rich.text import Text
from textual import _time, events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Static

from myrm_tui.agent.permissions import Assessment
from myrm_tui.agent.repeat_guard import REPEAT_TOOL
from myrm_tui.app.widgets.plain import plain
from myrm_tui.app.widgets.tool_call import render_diff
from myrm_tui.safe_text import count_invisible, reveal

log = logging.getLogger(__name__)

GRACE = 0.5  # seconds from the dialog's opening before a key may answer it


def describe(assessment: Assessment) -> Text:
    """One line per parsed command (covered or why not), then the script-wide problems."""
    out = Text()
    width = min(48, max((len(c.text) for c in assessment.commands), default=0))
    for c in assessment.commands:
        if out:
            out.append("\n")
        mark, style = ("✓", "green") if c.covered else ("✗", "bold red")
        out.append(f"{mark} ", style=style)
        out.append(reveal(c.text.ljust(width)))
        if c.covered and c.rule is not None:
            out.append(reveal(f"  allowed by rule: {shlex.join(c.rule)}"), style="dim")
        elif c.covered:
            out.append("  read-only", style="dim")
        else:
            out.append(reveal(f"  {c.reason}"), style=style)
    for p in assessment.problems:
        if out:
            out.append("\n")
        out.append("✗ ", style="bold red")
        out.append(reveal(p), style="bold red")
    return out


def warnings(assessment: Assessment, command: str = "") -> Text:
    """Destructive and remote-code patterns, and invisible characters in ``command``, one "⚠" line each
    (empty when there are none)."""
    lines = [f"⚠ {w}" for w in assessment.warnings]
    hidden = count_invisible(command)
    if hidden:
        lines.append(
            f"⚠ holds {hidden} invisible character{'s' if hidden > 1 else ''} (shown as ⟨U+…⟩): "
            "it does not run as it would read without them"
        )
    return Text(reveal("\n".join(lines)), style="bold")


def always_note(assessment: Assessment) -> str:
    rules = assessment.to_remember
    if not rules:
        return "Nothing here can be remembered: “Always” is not offered."
    note = "“Always” allows for this session: " + ", ".join(shlex.join(r) for r in rules)
    still = list(assessment.problems) + [p for c in assessment.commands for p in c.problems]
    if still:
        note += f" (this command would still ask: {'; '.join(dict.fromkeys(still))})"
    return note


class ReadFirst(ModalScreen[str]):
    """A dialog answered only once the user could read it: a key or a click made before it was on screen,
    or within ``GRACE`` of that, does nothing. Buttons answer with their id; ``answer(x)`` with ``x``."""

    # The clock keys are compared against: Textual's, which stamps every event (tests give their own).
    clock: Callable[[], float] = staticmethod(_time.get_time)
    shown_at: float | None = None  # when it became the active screen; None: not yet

    def on_screen_resume(self) -> None:
        # The screen is active from here (its first frame follows within a refresh): keys go to it.
        if self.shown_at is None:
            self.shown_at = self.clock()

    def readable(self, at: float) -> bool:
        """Whether an input made at time ``at`` may answer: the dialog was on screen ``GRACE`` before."""
        return self.shown_at is not None and at >= self.shown_at + GRACE

    def on_key(self, event: events.Key) -> None:
        # Keys bubble up to here from the focused button before any binding (the screen's y/a/n, a
        # button's Enter) is looked up: one too early stops here.
        # guard: approval-a-key-before-the-dialog-could
        if not self.readable(event.time):
            ago = self._since(event.time)
            log.info("%s: key %r %.2f s after it opened ignored", type(self).__name__, event.key, ago)
            event.stop()
            event.prevent_default()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if not self.readable(event.time):  # a click that landed as the dialog appeared
            ago = self._since(event.time)
            log.info("%s: a press %.2f s after it opened ignored", type(self).__name__, ago)
            return
        self.dismiss(str(event.button.id))

    def _since(self, at: float) -> float:
        return at - self.shown_at if self.shown_at is not None else 0.0

    def action_answer(self, answer: str) -> None:
        self.dismiss(answer)


class ApprovalScreen(ReadFirst):
    DEFAULT_CSS = """
    ApprovalScreen { align: center middle; }
    ApprovalScreen > Vertical {
        width: 80%; min-width: 56; max-width: 110; height: auto; border: thick $warning; background: $surface;
        padding: 1 2;
    }
    ApprovalScreen #command {
        background: $boost; padding: 0 1; margin: 1 0; max-height: 8; overflow-y: auto;
    }
    ApprovalScreen #command.-diff { max-height: 20; }
    ApprovalScreen #parsed { padding: 0 1; margin: 0 0 1 0; max-height: 12; overflow-y: auto; }
    ApprovalScreen #always-note { color: $text-muted; margin-bottom: 1; }
    ApprovalScreen #warnings { color: $error; background: $error 15%; padding: 0 1; margin-top: 1; }
    ApprovalScreen Horizontal { height: auto; align-horizontal: right; }
    ApprovalScreen Button { margin-left: 1; min-width: 12; }
    """
    BINDINGS = [
        Binding("y", "answer('yes')", "Run"),
        Binding("a", "answer('always')", "Always"),
        Binding("n", "answer('no')", "Decline"),
        Binding("escape", "answer('no')", "Decline"),
    ]

    def __init__(self, tool: str, command: str, assessment: Assessment) -> None:
        super().__init__()
        self.tool = tool
        self.command = command
        self.assessment = assessment

    @property
    def is_edit(self) -> bool:
        return self.tool == "file_edit_tool"

    def compose(self) -> ComposeResult:
        if self.is_edit:
            yield from self._compose_edit()
            return
        # guard: approval-a-repeated-call-gets-its-own-question
        if self.tool == REPEAT_TOOL:
            yield from self._compose_repeat()
            return
        with Vertical():
            yield Label(plain(reveal(f"The agent wants to run ({self.tool}):")))
            if self.assessment.warnings or count_invisible(self.command):
                yield Static(warnings(self.assessment, self.command), id="warnings")
            yield Static(plain(reveal(self.command)), id="command")
            yield Label("Parsed commands:")
            yield Static(describe(self.assessment), id="parsed")
            yield Static(plain(reveal(always_note(self.assessment))), id="always-note")
            with Horizontal():
                # Content, not a str: a str label is markup, where "[y]" is a tag and vanishes.
                yield Button(Content("Run [y]"), id="yes", variant="warning")
                if self.assessment.to_remember:
                    yield Button(Content("Always [a]"), id="always")
                yield Button(Content("Decline [n]"), id="no", variant="primary")

    def _compose_repeat(self) -> ComposeResult:
        """The call the model keeps repeating (``command``), why it looks like a loop, and Go on / Always
        go on (no more such questions this session) / Stop the turn."""
        with Vertical():
            yield Label("The model keeps asking for the same call:")
            yield Static(plain(reveal(self.command)), id="command")
            yield Static(describe(self.assessment), id="parsed")
            yield Static(
                "“Go on” lets these calls repeat without asking again, until the model asks for another "
                "call; “Always” asks no more such questions this session.",
                id="always-note",
                markup=False,
            )
            with Horizontal():
                yield Button(Content("Go on [y]"), id="yes", variant="warning")
                yield Button(Content("Always go on [a]"), id="always")
                yield Button(Content("Stop [n]"), id="no", variant="primary")

    def _compose_edit(self) -> ComposeResult:
        """The edit's diff (``command`` holds it) and Apply / Always / Decline."""
        path = self.assessment.command.removeprefix("edit ")
        with Vertical():
            yield Label(plain(reveal(f"The agent wants to edit {path}:")))
            if count_invisible(self.command):
                yield Static(warnings(self.assessment, self.command), id="warnings")
            yield Static(render_diff(reveal(self.command), max_lines=200), id="command", classes="-diff")
            yield Static(
                "“Always” applies every edit in this session without asking.", id="always-note", markup=False
            )
            with Horizontal():
                yield Button(Content("Apply [y]"), id="yes", variant="warning")
                yield Button(Content("Always [a]"), id="always")  # the note above says for what
                yield Button(Content("Decline [n]"), id="no", variant="primary")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "answer" and parameters == ("always",):
            # guard: approval-a-repeated-calls-always-key-answers
            return self.is_edit or self.tool == REPEAT_TOOL or bool(self.assessment.to_remember)
        return True
