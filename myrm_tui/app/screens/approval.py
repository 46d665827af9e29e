"""Asks before a shell command runs: y = run once, a = always allow this command, n / Esc = decline."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Static


class ApprovalScreen(ModalScreen[str]):
    DEFAULT_CSS = """
    ApprovalScreen { align: center middle; }
    ApprovalScreen > Vertical { width: 80%; max-width: 100; height: auto; border: thick $warning; background: $surface; padding: 1 2; }
    ApprovalScreen #command { background: $boost; padding: 0 1; margin: 1 0; max-height: 12; overflow-y: auto; }
    ApprovalScreen Horizontal { height: auto; align-horizontal: right; }
    ApprovalScreen Button { margin-left: 1; }
    """
    BINDINGS = [
        Binding("y", "answer('yes')", "Run"),
        Binding("a", "answer('always')", "Always"),
        Binding("n", "answer('no')", "Decline"),
        Binding("escape", "answer('no')", "Decline"),
    ]

    def __init__(self, tool: str, command: str) -> None:
        super().__init__()
        self.tool = tool
        self.command = command

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(f"The agent wants to run ({self.tool}):")
            yield Static(self.command, id="command", markup=False)
            with Horizontal():
                yield Button("Run [y]", id="yes", variant="warning")
                yield Button("Always [a]", id="always")
                yield Button("Decline [n]", id="no", variant="primary")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(str(event.button.id))

    def action_answer(self, answer: str) -> None:
        self.dismiss(answer)
