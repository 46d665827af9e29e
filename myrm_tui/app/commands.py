"""The one command table: key bindings, slash commands, the command palette and the help screen are
all generated from ``COMMANDS``, so a command added here shows up in all four."""

from __future__ import annotations

from dataclasses import dataclass

from textual.binding import Binding, BindingType


@dataclass(frozen=True, slots=True)
class Command:
    action: str  # a Textual action of the app, e.g. "compact" or "show_tab('vault-tab')"
    title: str  # palette title and help text
    help: str  # palette description
    key: str = ""  # key binding ("" for none)
    footer: str = ""  # footer label; "" hides the binding from the footer
    slash: tuple[str, ...] = ()  # slash command names (the first is the one shown in help)
    usage: str = ""  # slash arguments, e.g. "[focus]"
    priority: bool = False  # the key works even when the prompt box has focus
    main_only: bool = True  # off while a modal screen is open (its own keys win)
    palette: bool = True


COMMANDS: tuple[Command, ...] = (
    Command(
        "compact",
        "Compact context now",
        "Preview what would leave the view, then compact (Enter); /compact FOCUS keeps what matters",
        "ctrl+k",
        "Compact",
        ("compact",),
        "[focus]",
        priority=True,
    ),
    Command("quit", "Quit", "Leave myrm", "ctrl+q", "Quit", priority=True, main_only=False, palette=False),
    Command("help", "Help", "Keys and slash commands", "f1", "Help", ("help",), main_only=False),
    Command("cancel_turn", "Cancel turn", "Stop the running turn", "escape", "Cancel turn", main_only=False),
    Command(
        "fork",
        "Fork session",
        "Fork into a new session that starts compacted; /fork N forks after your N-th message",
        "ctrl+f",
        "Fork",
        ("fork",),
        "[N]",
        priority=True,
    ),
    Command(
        "new_session", "New session", "Start a new session", "ctrl+n", "New", ("new", "clear"), priority=True
    ),
    Command(
        "sessions",
        "Open session…",
        "Pick a session to open or delete",
        "ctrl+s",
        "Sessions",
        ("sessions",),
        priority=True,
    ),
    Command("toggle_panel", "Toggle side panel", "Show or hide the side panel", "ctrl+b", priority=True),
    Command("settings", "Settings", "Model, thresholds, approvals", "f2", "Settings"),
    Command(
        "show_tab('health-tab')",
        "Context health",
        "Compaction, pruning and cache metrics",
        "f3",
        "Health",
        ("health",),
    ),
    Command("toggle_replay", "Pause or resume replay", "Replay mode only", "ctrl+r", priority=True),
    Command("show_tab('vault-tab')", "Vault", "Vaulted outputs of this session", "f4", "Vault", ("vault",)),
    Command(
        "set_model",
        "Switch model",
        "Any litellm model string; takes effect with the next message",
        slash=("model",),
        usage="NAME",
        palette=False,
    ),
    Command(
        "set_mode",
        "Prompt mode",
        "full, lean, naked or search",
        slash=("mode",),
        usage="full|lean|naked|search",
        palette=False,
    ),
    Command(
        "context_window",
        "Context window",
        "What fills the window now, by category (also in the Health tab, F3)",
        slash=("context",),
    ),
    Command("notes", "Session notes", "The notes the agent keeps across compactions", slash=("notes",)),
)

# Keys of the prompt box itself (PromptInput), listed in the help screen only.
EDITING_KEYS = (
    ("Enter", "send the message"),
    ("Ctrl+J / Alt+Enter", "new line in the message"),
    ("Up / Down", "previous / next sent message"),
    ("Ctrl+P", "command palette"),
)


def bindings() -> list[BindingType]:
    return [
        Binding(c.key, c.action, c.footer or c.title, show=bool(c.footer), priority=c.priority)
        for c in COMMANDS
        if c.key
    ]


def main_only_actions() -> frozenset[str]:
    """Action names (without arguments) that only make sense on the chat screen."""
    return frozenset(c.action.split("(", 1)[0] for c in COMMANDS if c.main_only)


def by_slash(name: str) -> Command | None:
    return next((c for c in COMMANDS if name in c.slash), None)


def _key_label(key: str) -> str:
    return "+".join(
        part.capitalize() if len(part) > 1 and not part.startswith("f") else part.upper()
        for part in key.split("+")
    ).replace("Escape", "Esc")


def help_markdown() -> str:
    """The help screen (F1): keys, then slash commands, from the table."""
    rows = [*EDITING_KEYS, *((_key_label(c.key), c.title) for c in COMMANDS if c.key)]
    lines = [
        "# myrm — keys",
        "",
        "| key | action |",
        "|---|---|",
        *(f"| {k} | {a} |" for k, a in rows),
        "",
        "# Slash commands",
        "",
        "| command | what it does |",
        "|---|---|",
    ]
    for c in COMMANDS:
        if c.slash:
            names = " · ".join(
                f"`/{s}{' ' + c.usage if c.usage and s == c.slash[0] else ''}`" for s in c.slash
            )
            lines.append(f"| {names} | {c.help} |")
    return "\n".join(lines) + "\n"
