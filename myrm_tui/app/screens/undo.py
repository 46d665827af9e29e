"""``/undo``'s question: the files of the newest turn that changed any and what undoing it does to each.

y restores them (a file changed since the agent wrote it is left as it is), a restores those too, n or Esc
leaves everything. A key typed before the dialog could be read does nothing (``ReadFirst``)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.widgets import Button, Static

from myrm_tui.agent.undo import UndoPlan
from myrm_tui.app.screens.approval import ReadFirst


class UndoScreen(ReadFirst):
    DEFAULT_CSS = """
    UndoScreen { align: center middle; }
    UndoScreen > Vertical {
        width: 80%; max-width: 110; height: auto; max-height: 80%; border: thick $warning;
        background: $surface; padding: 1 2;
    }
    UndoScreen #undo-files { max-height: 20; overflow-y: auto; margin-bottom: 1; }
    UndoScreen Horizontal { height: auto; align-horizontal: right; }
    UndoScreen Button { margin-left: 1; }
    """
    BINDINGS = [
        Binding("y", "answer('yes')", "Undo"),
        Binding("a", "answer('all')", "Undo all"),
        Binding("n", "answer('no')", "Keep"),
        Binding("escape", "answer('no')", "Keep"),
    ]

    def __init__(self, plan: UndoPlan) -> None:
        super().__init__()
        self.plan = plan

    def compose(self) -> ComposeResult:
        changed = any(f.changed and f.kept for f in self.plan.files)
        with Vertical():
            yield Static(self.plan.question(), id="undo-files", markup=False)
            with Horizontal():
                yield Button(Content("Undo [y]"), id="yes", variant="warning")
                if changed:
                    yield Button(Content("Undo, changed files too [a]"), id="all")
                yield Button(Content("Keep [n]"), id="no", variant="primary")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "answer" and parameters == ("all",):
            return any(f.changed and f.kept for f in self.plan.files)
        return True
