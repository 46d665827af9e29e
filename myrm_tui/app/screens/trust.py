"""Asks once per folder whether its own configuration (``.myrm/filters``) is honoured: y trusts the folder,
n / Esc does not; the answer is remembered (``myrm_tui/trust.py``). Shown at start-up only in a folder that
has such files and was never asked about. Keys typed before it could be read do nothing (``ReadFirst``)."""

from __future__ import annotations

from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.widgets import Button, Label, Static

from myrm_tui.app.screens.approval import ReadFirst
from myrm_tui.app.widgets.plain import plain


class TrustScreen(ReadFirst):
    DEFAULT_CSS = """
    TrustScreen { align: center middle; }
    TrustScreen > Vertical {
        width: 80%; max-width: 100; height: auto; border: thick $warning; background: $surface; padding: 1 2;
    }
    TrustScreen #files { background: $boost; padding: 0 1; margin: 1 0; max-height: 8; overflow-y: auto; }
    TrustScreen #why { color: $text-muted; margin-bottom: 1; }
    TrustScreen Horizontal { height: auto; align-horizontal: right; }
    TrustScreen Button { margin-left: 1; }
    """
    BINDINGS = [
        Binding("y", "answer('yes')", "Trust"),
        Binding("n", "answer('no')", "Don't trust"),
        Binding("escape", "answer('no')", "Don't trust"),
    ]

    def __init__(self, workspace: Path, files: list[Path]) -> None:
        super().__init__()
        self.workspace = workspace
        self.files = files

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(plain(f"Trust this folder? {self.workspace}"))
            yield Static(plain("\n".join(str(p.relative_to(self.workspace)) for p in self.files)), id="files")
            yield Static(
                plain(
                    "It has its own myrm filter rules: they decide which lines of command output the model "
                    "sees, and a cloned repository's may hide what matters. Trusted, they are used; not, "
                    "they are skipped. myrm remembers the answer for this folder."
                ),
                id="why",
            )
            with Horizontal():
                yield Button(Content("Trust [y]"), id="yes", variant="warning")
                yield Button(Content("Don't trust [n]"), id="no", variant="primary")
