"""Pickers of one setting: ``/model`` (the current model, the models whose provider key is set, the
embedded one, or any litellm model string typed) and ``/mode`` (the prompt modes). Typing filters the list,
Up/Down move, Enter picks; the screen returns the chosen string (the app checks and saves it) or None."""

from __future__ import annotations

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, OptionList
from textual.widgets.option_list import Option

from myrm_tui.app.widgets.plain import plain
from myrm_tui.safe_text import sanitize

TYPED = "\x00typed"  # the id of the option that uses the typed text itself


class ChoicePicker(ModalScreen[str | None]):
    """Pick one of ``choices`` (the current one marked and first highlighted); with ``free_text`` the
    typed text is offered too, after the choices it matches."""

    DEFAULT_CSS = """
    ChoicePicker { align: center middle; }
    ChoicePicker > Vertical {
        width: 80%; max-width: 90; height: auto; max-height: 80%;
        border: thick $accent; background: $surface; padding: 0 1;
    }
    ChoicePicker OptionList { height: auto; max-height: 14; }
    ChoicePicker Input { margin-bottom: 1; }
    """
    BINDINGS = [Binding("escape", "dismiss_none", "Close")]

    def __init__(
        self, title: str, choices: list[str], current: str, placeholder: str, free_text: bool = False
    ) -> None:
        super().__init__()
        self.title_text = title
        self.choices = choices
        self.current = current
        self.placeholder = placeholder
        self.free_text = free_text

    def compose(self) -> ComposeResult:
        with Vertical():
            # A model name is typed by the user: plain text, never markup.
            yield Label(
                plain(f"{self.title_text} — now {self.current}. Type to filter, Enter picks, Esc closes")
            )
            yield Input(placeholder=self.placeholder, id="filter")
            yield OptionList(id="choices", markup=False)

    def on_mount(self) -> None:
        self._show("")
        self.query_one(Input).focus()

    def _show(self, typed: str) -> None:
        """The choices containing ``typed`` (case-insensitive; those starting with it first), then the typed
        text itself when free text is allowed and it is not one of them."""
        needle = typed.strip().lower()
        # guard: pickers-typing-filters-the-model
        hits = [c for c in self.choices if needle in c.lower()]
        hits.sort(key=lambda c: not c.lower().startswith(needle))  # stable: the given order otherwise
        options = [Option(sanitize(("▶ " if c == self.current else "  ") + c), id=c) for c in hits]
        if self.free_text and typed.strip() and typed.strip() not in hits:
            options.append(Option(sanitize(f"  {typed.strip()}  (as typed)"), id=TYPED))
        ol = self.query_one(OptionList)
        ol.clear_options()
        ol.add_options(options)
        if options:
            ids = [o.id for o in options]
            ol.highlighted = ids.index(self.current) if not needle and self.current in ids else 0

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self._show(event.value)

    def on_key(self, event: events.Key) -> None:
        # Up/Down move the list while the typing stays in the filter box
        if event.key in ("up", "down"):
            event.stop()
            event.prevent_default()
            ol = self.query_one(OptionList)
            if ol.option_count:
                ol.action_cursor_up() if event.key == "up" else ol.action_cursor_down()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        ol = self.query_one(OptionList)
        if ol.highlighted is not None and ol.option_count:
            self._pick(ol.get_option_at_index(ol.highlighted).id)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self._pick(event.option.id)

    def _pick(self, option_id: str | None) -> None:
        if option_id == TYPED:
            self.dismiss(self.query_one(Input).value.strip())
        elif option_id:
            self.dismiss(option_id)

    def action_dismiss_none(self) -> None:
        self.dismiss(None)


class ModelPicker(ChoicePicker):
    def __init__(self, models: list[str], current: str) -> None:
        super().__init__(
            "Model", models, current, "type to filter, or any litellm model string", free_text=True
        )


class ModePicker(ChoicePicker):
    def __init__(self, modes: list[str], current: str) -> None:
        super().__init__("Prompt mode", modes, current, "type to filter")
