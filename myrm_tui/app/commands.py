"""The one command table: key bindings, slash commands, the command palette and the help screen are
all generated from ``COMMANDS``, so a command added here shows up in all four."""

from __future__ import annotations

import re
from collections.abc import Iterable
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
    Command(
        "quit",
        "Quit",
        "Leave myrm",
        "ctrl+q",
        "Quit",
        ("quit", "exit"),  # as Claude Code and Codex name it
        priority=True,
        main_only=False,
        palette=False,
    ),
    Command("help", "Help", "Keys and slash commands", "f1", "Help", ("help",), main_only=False),
    Command("cancel_turn", "Cancel turn", "Stop the running turn", "escape", "Cancel", main_only=False),
    Command(
        "interrupt",
        "Stop the turn; twice quits",
        "Stop the running turn (as Esc); a second ctrl+c within 2 s, or two when idle, quits; "
        "with text selected, copies it",
        "ctrl+c",
        priority=True,
        main_only=False,
        palette=False,
    ),
    Command(
        "end_of_input",
        "Twice in an empty box quits",
        "ctrl+d in the empty box, as a shell's end of input (and Claude Code's, Codex's, aider's): "
        "a second within 2 s quits",
        "ctrl+d",
        main_only=False,
        palette=False,
    ),
    Command(
        "suspend_process",
        "Suspend to the shell",
        "Put myrm in the background, as ctrl+z does in any terminal program; fg in the shell brings it "
        "back as it was",
        "ctrl+z",
        priority=True,  # over the prompt box's undo (ctrl+_ there)
        main_only=False,
        palette=False,
    ),
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
        ("sessions", "resume"),  # /resume: Claude Code's and Codex's name for it
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
        "Switch model…",
        "Pick a model (or /model NAME: any litellm model string); takes effect with the next message",
        slash=("model",),
        usage="[NAME]",
    ),
    Command(
        "set_mode",
        "Prompt mode",
        "full, lean, naked, search or chat (the smallest, for a model without tools); /mode alone: a picker",
        slash=("mode",),
        usage="[full|lean|naked|search|chat]",
    ),
    Command(
        "context_window",
        "Context window",
        "What fills the window now, by category (also in the Health tab, F3)",
        slash=("context",),
    ),
    Command(
        "search",
        "Search the conversation",
        "Find text in the transcript: Enter/Up older match, Down newer, Esc closes",
        "ctrl+g",
        "",  # not in the footer: it is full at 130 columns (F1 and the palette list it)
        ("search",),
        "[TEXT]",
        priority=True,
    ),
    Command(
        "jump_to_bottom",
        "Jump to the bottom",
        "Scroll the conversation to the newest output and follow it again",
        "ctrl+end",
        priority=True,
    ),
    Command("notes", "Session notes", "The notes the agent keeps across compactions", slash=("notes",)),
    Command(
        "undo",
        "Undo the agent's file edits",
        "Take back the agent's file edits of its last turn that made any, after a y/n; again: a turn "
        "further back. Shell commands' changes are not tracked",
        slash=("undo",),
    ),
    Command(
        "copy_answer",
        "Copy the last answer",
        "The newest answer's text to the clipboard, code blocks as written (as Claude Code's /copy); "
        "/copy code: its last code block alone",
        slash=("copy",),
        usage="[code]",
    ),
)

# Keys the prompt box reads itself (not bindings), listed in the help screen before the bindings.
EDITING_KEYS = (
    ("Enter", "Send the message"),
    ("Up / Down", "Previous / next sent message"),
    ("Tab", "Complete a slash command (the focus stays in the box)"),
    ("/", "Slash-command menu: Up/Down move, Tab completes, Enter runs"),
    ("@", "Complete a workspace file: it is attached to the message"),
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


_COMMAND_WORD = re.compile(r"[A-Za-z][\w-]*")


def looks_like_command(name: str) -> bool:
    """``/word …`` is meant as a command; ``/usr/bin/env …`` or ``/ …`` is text for the model."""
    return _COMMAND_WORD.fullmatch(name) is not None


def _edits(a: str, b: str) -> int:
    """Edit distance counting a swap of two neighbours as one edit (``modle`` is one from ``model``)."""
    d = [[i + j if not i * j else 0 for j in range(len(b) + 1)] for i in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            cost = a[i - 1] != b[j - 1]
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[-1][-1]


def unknown_command(name: str) -> str:
    """The line shown for a mistyped slash command (it is not sent to the model)."""
    names = [s for c in COMMANDS for s in c.slash]
    # Fewest edits, then the same length (a swap rather than a dropped letter), then prefix
    best = min(names, key=lambda s: (_edits(name, s), abs(len(s) - len(name)), not s.startswith(name[:1])))
    close = best if _edits(name, best) <= max(2 if len(name) > 2 else 1, len(name) // 2) else None
    hint = f" — did you mean /{close}?" if close else " — F1 lists the commands"
    return f"unknown command /{name}{hint} (start with a space to send it as a message)"


def completions(prefix: str) -> list[tuple[str, Command]]:
    """Slash names starting with ``prefix`` (without the slash), then those containing it."""
    names = [(s, c) for c in COMMANDS for s in c.slash]
    starts = [(s, c) for s, c in names if s.startswith(prefix)]
    return starts + [(s, c) for s, c in names if prefix in s and not s.startswith(prefix)]


def key_label(key: str) -> str:
    return (
        "+".join(
            part.capitalize() if len(part) > 1 and not part.startswith("f") else part.upper()
            for part in key.split("+")
        )
        .replace("Escape", "Esc")
        .replace("Pageup", "PageUp")
        .replace("Pagedown", "PageDown")
        .replace("Underscore", "_")
    )


def binding_rows(found: Iterable[BindingType]) -> list[tuple[str, str]]:
    """One row an action: its keys (``Ctrl+J / Alt+Enter``) and its description, in binding order."""
    rows: dict[tuple[str, str], list[str]] = {}
    for b in found:
        if isinstance(b, Binding):
            rows.setdefault((b.action, b.description), []).extend(
                key_label(k.strip()) for k in b.key.split(",")
            )
    return [(" / ".join(dict.fromkeys(keys)), text) for (_, text), keys in rows.items()]


def command_key_rows() -> list[tuple[str, str]]:
    """The command table's keys, titled as the palette titles them."""
    return [(key_label(c.key), c.title) for c in COMMANDS if c.key]


def slash_rows() -> list[tuple[str, str]]:
    """Each slash command (its other names after ·) and what it does."""
    return [
        (
            " · ".join(f"/{s}{' ' + c.usage if c.usage and s == c.slash[0] else ''}" for s in c.slash),
            c.help,
        )
        for c in COMMANDS
        if c.slash
    ]
