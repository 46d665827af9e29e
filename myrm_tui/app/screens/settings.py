"""Settings (F2): model, summarizer, prompt mode, window, thresholds, keep-alive, tool approvals, the
secret-looking variables shell commands keep (``shell_env_keep``) and /undo's cap (``undo_backups_mb``).

Saved to the database; the agent is rebuilt for the next message when its execution fingerprint
changes. Ctrl+S or the Save button saves, Esc closes without saving.
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Select, Switch

from myrm_tui.agent.permissions import check_rules
from myrm_tui.agent.prompts import MODES
from myrm_tui.config import Settings, model_problem, validate_values

TEXT_FIELDS: tuple[tuple[str, str], ...] = (
    ("model", "Model (any litellm model string)"),
    ("api_base", "API base (OpenAI-compatible endpoint; empty for the provider's own)"),
    ("summarizer_model", "Summarizer model (empty = provider's lite model, 'extractive' = no LLM)"),
    ("context_window", "Context window override in tokens (0 = from the model registry)"),
    (
        "light_ratio",
        "Light compression at (share of the input budget: the window less the reply's room and tool schemas)",
    ),
    ("full_ratio", "Full compression (planned) at (share of the input budget)"),
    ("emergency_ratio", "Emergency net at (share of the input budget)"),
    ("allowed_commands", "Shell commands allowed without asking (comma-separated rules: git status, pytest)"),
    (
        "shell_env_keep",
        "Secret-looking environment variables shell commands still get (comma-separated names: GH_TOKEN)",
    ),
    (
        "undo_backups_mb",
        "/undo's backups of a session, in total (MB; the oldest turns' dropped past it; 0 = no cap)",
    ),
)
LISTS = frozenset({"allowed_commands", "shell_env_keep"})  # comma-separated in the field
AUTO_OFF_WARNING = (
    "⚠ Auto-compaction off: the context grows until the emergency net (90% of the input budget) compacts "
    "it (or a request is refused). Compact yourself with ctrl+k or /compact."
)
NUMERIC = {
    "context_window": int,
    "light_ratio": float,
    "full_ratio": float,
    "emergency_ratio": float,
    "undo_backups_mb": int,
}


class SettingsScreen(ModalScreen[dict[str, Any] | None]):
    DEFAULT_CSS = """
    SettingsScreen { align: center middle; }
    SettingsScreen > VerticalScroll {
        width: 90; max-width: 100%; height: 90%; border: thick $accent; background: $surface; padding: 0 2;
    }
    SettingsScreen Label { margin-top: 1; color: $text-muted; }
    SettingsScreen > VerticalScroll > Label { width: 1fr; }
    SettingsScreen Horizontal { height: auto; margin-top: 1; }
    SettingsScreen #error { color: $error; }
    SettingsScreen #auto-warning { color: $warning; }
    """
    BINDINGS = [Binding("escape", "cancel", "Close"), Binding("ctrl+s", "save", "Save", priority=True)]

    def __init__(self, settings: Settings) -> None:
        super().__init__()
        self.settings = settings

    def compose(self) -> ComposeResult:
        s = self.settings
        with VerticalScroll():
            for key, label in TEXT_FIELDS:
                yield Label(label)
                value = getattr(s, key)
                text = ", ".join(value) if key in LISTS else ("" if value is None else str(value))
                yield Input(text, id=f"f-{key}")
            yield Label("Prompt mode")
            yield Select([(m, m) for m in MODES], value=s.prompt_mode, allow_blank=False, id="f-prompt_mode")
            yield Label("Shell commands")
            yield Select(
                [("ask before running", "ask"), ("run without asking", "auto")],
                value=s.approval,
                allow_blank=False,
                id="f-approval",
            )
            with Horizontal():
                yield Label("Cache keep-alive when idle  ")
                yield Switch(value=s.keepalive, id="f-keepalive")
            with Horizontal():
                yield Label("Auto-compaction at the thresholds  ")
                yield Switch(value=s.auto_compact, id="f-auto_compact")
            yield Label(AUTO_OFF_WARNING if not s.auto_compact else "", id="auto-warning")
            yield Label("", id="error")
            with Horizontal():
                yield Button("Save [ctrl+s]", variant="primary", id="save")
                yield Button("Cancel [esc]", id="cancel")

    def values(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, _ in TEXT_FIELDS:
            raw = self.query_one(f"#f-{key}", Input).value.strip()
            if key in LISTS:
                out[key] = [p.strip() for p in raw.split(",") if p.strip()]
                if key == "allowed_commands" and (problems := check_rules(out[key])):
                    raise ValueError(problems[0])
            elif key in NUMERIC:
                try:
                    out[key] = NUMERIC[key](raw or 0)
                except ValueError as exc:
                    raise ValueError(f"{key}: {raw!r} is not a number") from exc
            else:
                out[key] = raw or (None if key == "api_base" else "")
        if not out["model"]:
            raise ValueError("model must not be empty")
        # each value as the config file's would be (undo_backups_mb -1, shell_env_keep A=B, a window of 5):
        # stored unchecked, it would be skipped with a warning at the next start, after the screen said saved
        if found := validate_values(out, "F2")[1]:
            raise ValueError(found[0].text)
        for key in ("model", "summarizer_model"):  # checked like --model
            if out[key] not in ("", "extractive") and (problem := model_problem(out[key], out["api_base"])):
                raise ValueError(f"{key}: {problem}")
        if not 0 < out["light_ratio"] <= out["full_ratio"] <= out["emergency_ratio"] < 1:
            raise ValueError("thresholds must satisfy 0 < light ≤ full ≤ emergency < 1")
        out["prompt_mode"] = self.query_one("#f-prompt_mode", Select).value
        out["approval"] = self.query_one("#f-approval", Select).value
        out["keepalive"] = self.query_one("#f-keepalive", Switch).value
        out["auto_compact"] = self.query_one("#f-auto_compact", Switch).value
        return out

    def on_switch_changed(self, event: Switch.Changed) -> None:
        if event.switch.id == "f-auto_compact":
            self.query_one("#auto-warning", Label).update("" if event.value else AUTO_OFF_WARNING)

    def action_save(self) -> None:
        try:
            values = self.values()
        except ValueError as exc:
            # Shown next to the buttons and as a toast: the error line may be below the fold.
            error = self.query_one("#error", Label)
            error.update(str(exc))
            # after the layout that gives the label its new height: before it, the region scrolled to is
            # the empty label's
            self.call_after_refresh(error.scroll_visible, animate=False)
            self.notify(str(exc), title="Not saved", severity="error", timeout=8)
            return
        self.dismiss(values)

    def action_cancel(self) -> None:
        self.dismiss(None)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "save":
            self.action_save()
        else:
            self.action_cancel()
