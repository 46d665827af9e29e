"""The /model picker: the current model, the models whose provider key is set, the embedded one, or any
litellm model string typed below. Returns the chosen string (the app checks and saves it) or None."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, OptionList
from textual.widgets.option_list import Option


class ModelPicker(ModalScreen[str | None]):
    DEFAULT_CSS = """
    ModelPicker { align: center middle; }
    ModelPicker > Vertical {
        width: 80%; max-width: 90; height: auto; max-height: 80%;
        border: thick $accent; background: $surface; padding: 0 1;
    }
    ModelPicker OptionList { height: auto; max-height: 14; }
    ModelPicker Input { margin-top: 1; }
    """
    BINDINGS = [Binding("escape", "dismiss_none", "Close")]

    def __init__(self, models: list[str], current: str) -> None:
        super().__init__()
        self.models = models
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(f"Model — now {self.current}. Enter picks, Esc closes")
            yield OptionList(
                *[Option(("▶ " if m == self.current else "  ") + m, id=m) for m in self.models], id="models"
            )
            yield Input(placeholder="or type any litellm model string, then Enter", id="model-name")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if event.value.strip():
            self.dismiss(event.value.strip())

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
