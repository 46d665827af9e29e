"""``MyrmApp``: the wiring. It composes the flows (``flows/``: sessions, the turn, compaction, settings,
panels, the prompt), declares the state the chat screen shows (bound down to it), the keys (the command
table), the CSS, and the start and end of the app.

Start-up is two-phase so the first frame never waits: the screen mounts at once (only Textual and the
widgets are imported before it), then a worker opens the database, loads the session and builds the
agent in a thread. litellm (~150 MB, seconds to import) and the embedded model's child process start
when the user starts typing (at start-up only when a cloud model's window or preheat needs them).
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.app import App
from textual.content import Content
from textual.driver import Driver
from textual.filter import LineFilter, Monochrome, NoColor
from textual.reactive import var
from textual.worker import WorkerFailed

from myrm_tui.app import terminal_guard
from myrm_tui.app.commands import COMMANDS, bindings, main_only_actions
from myrm_tui.app.controller import Controller
from myrm_tui.app.css import ProcessStylesheet
from myrm_tui.app.flows.base import settled
from myrm_tui.app.flows.prompt import PromptFlow
from myrm_tui.app.key_router import RoutedKeys
from myrm_tui.app.live import LiveContext
from myrm_tui.app.screens.main import MainScreen
from myrm_tui.app.widgets.status_line import STARTING
from myrm_tui.logs import failure_logged
from myrm_tui.safe_text import osc52, sanitize

if TYPE_CHECKING:
    from myrm_tui.llm.client import LLMClient

log = logging.getLogger(__name__)
SETTLE_S = 3.0  # at exit, how long cancelled workers get to finish (within the guard's deadline)
_NO_COLOR = NoColor()
QUIT_WINDOW_S = 2.0  # a second ctrl+c within this quits


def ascii_locale_note(environ: Mapping[str, str]) -> str | None:
    """One line when the locale says the terminal draws only ASCII (``LANG=C``, ``LC_ALL=C``): the full
    screen draws boxes, the ring and ellipses in UTF-8 and Textual writes UTF-8 whatever the locale, so
    such a terminal shows them as "?" or worse. No locale set at all says nothing (a container's shell
    often has none and a UTF-8 terminal)."""
    ctype = environ.get("LC_CTYPE", "")
    lang = environ.get("LANG", "")
    # Python itself turns LANG=C into LC_CTYPE=C.UTF-8 at start-up (PEP 538): the user's word is LANG's.
    if ctype == "C.UTF-8" and lang in ("C", "POSIX"):
        ctype = ""
    said = environ.get("LC_ALL") or ctype or lang
    if not said or "utf-8" in said.lower() or "utf8" in said.lower():
        return None
    name = next(n for n in ("LC_ALL", "LC_CTYPE", "LANG") if environ.get(n) == said)
    return (
        f"The locale ({name}={said}) says this terminal draws no UTF-8, and the screen uses it (boxes, the "
        "ring, ...): if they show as ?, set LANG=C.UTF-8 (or your language's .UTF-8) and start myrm again."
    )


class MyrmApp(RoutedKeys, PromptFlow, App[None]):
    TITLE = "myrm"
    # Textual reads a screen's CSS_PATH only for screens it pushes, not for the default screen: the chat
    # screen's rules are loaded here (without them ctrl+b toggled a class nothing styled).
    CSS_PATH = ["app.tcss", "screens/main.tcss"]
    BINDINGS = bindings()
    MAIN_ONLY = main_only_actions()

    # What the chat screen shows of the app's state, bound down to its widgets (get_default_screen).
    status: var[str] = var(STARTING)
    live: var[LiveContext] = var(LiveContext)  # the ring, the lines under it and the health panel's now
    fork_ratio: var[float] = var(1.0)  # the fork hint shows from this share of the window
    compacting: var[bool] = var(False)
    model_line: var[str] = var("")

    def __init__(
        self,
        db_path: Path,
        workspace: Path,
        cli: dict[str, Any] | None = None,
        session_id: str | None = None,
        replay: str | None = None,
        replay_speed: float = 0.6,
        llm: LLMClient | None = None,
    ) -> None:
        super().__init__()
        self.stylesheet = ProcessStylesheet(variables=self.get_css_variables())
        self.controller = Controller(db_path, workspace, cli or {}, llm, self._approve, self._event)
        self.initial_session = session_id
        self.replay = replay
        self.replay_speed = replay_speed
        self.resume_hint = ""  # printed by the command line after the app exits
        self._ctrl_c_at = float("-inf")  # the last ctrl+c that did not copy
        self._ctrl_d_at = float("-inf")  # the last ctrl+d in an empty box

    def get_line_filters(self) -> Sequence[LineFilter]:
        """Under ``NO_COLOR`` no colour at all: Textual's own answer to it is ``Monochrome``, which still
        writes every colour as a shade of grey (256-colour codes on every cell). Highlights then show by
        reverse video (``app.tcss``, ``:nocolor``)."""
        filters = super().get_line_filters()
        # guard: no-color-writes-no-colour
        if self.no_color:
            return [_NO_COLOR if isinstance(f, Monochrome) else f for f in filters]
        return filters

    def get_default_screen(self) -> MainScreen:
        return MainScreen(self.controller.workspace).data_bind(
            MyrmApp.status, MyrmApp.live, MyrmApp.fork_ratio, MyrmApp.compacting, MyrmApp.model_line
        )

    def format_title(self, title: str, sub_title: str) -> Content:
        """ "myrm │ session · model" (Textual's " — " joins them with a dim em dash that reads as "myrm—").
        Both plain text with terminal controls made visible, whoever set them: a title is a model's, an
        imported file's or the first message's."""
        # guard: untrusted-text-the-header
        title, sub_title = sanitize(title), sanitize(sub_title)
        if not sub_title:
            return Content(title)
        return Content.assemble((title, "bold"), ("  │  ", "dim"), sub_title)

    def notify(self, message: str, *, markup: bool = False, **kwargs: Any) -> None:
        """Every toast is plain text (Textual's default is markup, and widgets pass ``markup=True``): one
        may quote a gist, a path, a session id or an error from outside."""
        text = sanitize(message)
        # the same toast still on screen is not stacked again (a key or a click pressed again)
        # guard: a-toast-on-screen-is-not-stacked-again
        if any(n.message == text for n in self._notifications):
            return
        # guard: untrusted-text-every-toast-is-plain-text
        super().notify(text, markup=False, **kwargs)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Chat actions are off while a modal screen is open, so its own keys (ctrl+s: save) work; the
        command palette runs them as it closes. Esc cancels a turn only where a screen has no Esc of its
        own (its footer then shows that one)."""
        from textual.command import CommandPalette

        screen = self.screen
        if action == "cancel_turn" and not isinstance(screen, MainScreen):
            return not any(b.key == "escape" for _, b in screen._bindings)
        return action not in self.MAIN_ONLY or isinstance(screen, (MainScreen, CommandPalette))

    def on_mount(self) -> None:
        self.set_interval(1.0, self._tick)
        # guard: an-ascii-locale-is-said-in-one-line
        if note := ascii_locale_note(os.environ):
            self.notify(note, severity="warning", timeout=30)
        self.call_after_refresh(
            self.start_up
        )  # settings validation and the database wait for the first frame
        # SIGTERM, SIGHUP or a closed terminal exit like ctrl+q (on_unmount saves and releases the lease),
        # within a deadline the guard keeps whatever blocks (``myrm`` installs it; a test app has none).
        self.app_resume_signal.subscribe(self, self._resumed)
        guard = terminal_guard.current()
        if guard is not None:
            # guard: tui-sigterm-sighup-or-a-closed-terminal
            guard.attach(self._stop, self._held_leases)

    def get_driver_class(self) -> type[Driver]:
        """The guarded driver when the guard runs: its writes never block on a terminal that is gone."""
        if terminal_guard.current() is not None:
            return terminal_guard.GuardedDriver
        return super().get_driver_class()

    def _stop(self, code: int, reason: str) -> None:
        # After the frame being built: an exit before the first one crashed Textual's Header watcher.
        self.call_after_refresh(self.exit, return_code=code, message=f"myrm: {reason}")

    def _handle_exception(self, error: Exception) -> None:
        """An error Textual caught (in a handler, a timer, a worker that exits on error) ends the app with
        exit code 1 and its traceback on the terminal, never in the log: it is logged here first. Once an
        exit is under way (ctrl+q, a stop) it does not change the exit: a widget or worker torn down by
        the exit raised, nothing was lost (``on_unmount`` saves the session after it); a quit stays 0."""
        cause = error.error if isinstance(error, WorkerFailed) else error
        # guard: quit-an-error-while-quitting-keeps-exit-code-0
        if self._exit:
            log.error("an error while quitting (the exit goes on)", exc_info=cause)
            return
        log.error("the app stopped on an error", exc_info=cause)
        super()._handle_exception(error)

    def _held_leases(self) -> tuple[str, dict[str, str]]:
        """For an exit that cannot wait for this loop (called from the guard's thread)."""
        store = self.controller.store
        return (store.path, dict(store._leases)) if store is not None else ("", {})

    def deliver_screenshot(
        self, filename: str | None = None, path: str | None = None, time_format: str | None = None
    ) -> str | None:
        """Textual saves to the Downloads folder and fails when there is none: then the current folder,
        or the state folder when that is not writable; the notice says where."""
        if path is None:
            from platformdirs import user_downloads_path, user_state_path

            downloads = user_downloads_path()
            if not downloads.is_dir():
                cwd = Path.cwd()
                folder = cwd if os.access(cwd, os.W_OK) else user_state_path("myrm")
                folder.mkdir(parents=True, exist_ok=True)
                path = str(folder)
        return super().deliver_screenshot(filename, path, time_format)

    def get_system_commands(self, screen: Any) -> Any:
        """Every command of the table in the command palette (ctrl+p), next to Textual's own."""
        from textual.app import SystemCommand

        for command in super().get_system_commands(screen):
            # Textual's "Keys" opened its key panel beside the chat (the prompt box's cursor keys, the
            # chat squeezed to a third, no key to close it): it opens F1's help, myrm's keys
            if command.title == "Keys" and command.help.startswith("Show"):
                command = SystemCommand(
                    "Keys",
                    "Every key and slash command (f1)",
                    lambda: self.call_next(self.run_action, "help"),
                )
            yield command
        for c in COMMANDS:
            if c.palette:
                key = f" ({c.key})" if c.key else ""
                yield SystemCommand(
                    c.title, c.help + key, lambda action=c.action: self.call_next(self.run_action, action)
                )

    # -- keys the app answers itself ---------------------------------------------------------------
    def action_interrupt(self) -> None:
        """Ctrl+C, as Claude Code and Codex have it: stops a running turn (as Esc does); a second press
        within ``QUIT_WINDOW_S`` quits, and so do two presses when idle (the first says so). Idle with
        text selected, it copies the selection instead, as before."""
        now = time.monotonic()
        armed, self._ctrl_c_at = now - self._ctrl_c_at <= QUIT_WINDOW_S, now
        if armed:
            self.exit()
            return
        if self.busy and isinstance(self.screen, MainScreen):
            self.action_cancel_turn()
            self.notify("Turn stopped. Press ctrl+c again to quit.", timeout=3)
            return
        if self._copy_selection():
            self._ctrl_c_at = float("-inf")  # a copy never counts towards quitting
            return
        self.notify("Press ctrl+c again to quit.", timeout=3)

    def action_end_of_input(self) -> None:
        """Ctrl+D in the empty box (the box's own ctrl+d deletes forward): a second press within
        ``QUIT_WINDOW_S`` quits, as the first one says; a running turn is not stopped by it."""
        now = time.monotonic()
        armed, self._ctrl_d_at = now - self._ctrl_d_at <= QUIT_WINDOW_S, now
        if armed:
            self.exit()
            return
        self.notify("Press ctrl+d again to quit.", timeout=3)

    def action_suspend_process(self) -> None:
        """Ctrl+Z, as in a shell (and in Claude Code and Codex): the terminal given back, myrm and what
        it runs in its process group stopped, a running turn with them; ``fg`` brings the screen back
        as it was, the prompt's text kept, and the turn goes on. Refused with a notice where nothing
        could continue it (no job-control shell above myrm) or the terminal cannot be given back."""
        driver = self._driver
        if driver is None or not driver.can_suspend:
            self.notify("ctrl+z: this terminal cannot suspend myrm", severity="warning")
            return
        # guard: ctrl-z-only-where-a-shell-can-fg-it
        if not terminal_guard.shell_can_resume():
            self.notify(
                "ctrl+z: no shell started myrm, so nothing could bring it back (fg); ctrl+q quits",
                severity="warning",
                timeout=6,
            )
            return
        self._suspend_signal()
        # The whole group, as a terminal's ctrl+z does: a launcher that started myrm (uv run, a script)
        # stops too, so the shell sees its job stopped. myrm's own handler (Textual's driver) gives the
        # terminal back first, then stops.
        os.killpg(os.getpgrp(), signal.SIGTSTP)

    def _resumed(self, _app: object) -> None:
        """Back from ctrl+z (``fg``): the terminal's screen was cleared (the shell's, then a fresh
        alternate screen) while Textual's frame still holds the old one, and only what changes after
        would be drawn: every line is drawn again."""
        # guard: ctrl-z-fg-draws-the-whole-screen-again
        self.refresh(layout=True)

    def copy_to_clipboard(self, text: str) -> None:
        """Textual's, with the text as the screen shows it (``safe_text.osc52`` says why); every copy
        (``/copy``, a transcript item's ``c``, a selection, a vault pointer) comes here."""
        # guard: every-copy-goes-through-osc52
        self._clipboard = sanitize(text)
        if self._driver is not None:
            self._driver.write(osc52(text))

    def _copy_selection(self) -> bool:
        """Copy what is selected in the focused field, or on the screen (the mouse); False if nothing."""
        focused = self.focused
        selected = getattr(focused, "selected_text", "") if focused is not None else ""
        text = selected or self.screen.get_selected_text()
        if not text:
            return False
        self.copy_to_clipboard(text)
        return True

    def action_help(self) -> None:
        from myrm_tui.app.screens.help import HelpScreen

        self.push_screen(HelpScreen())

    async def on_unmount(self) -> None:
        # Textual cancelled the workers without waiting: one may still be finishing (a turn saving its
        # partial answer, start-up taking the lease). The store closes after them, or a lease taken
        # after the close would outlive this process.
        pending = [asyncio.ensure_future(settled(w)) for w in self.workers if not w.is_finished]
        if pending:
            await asyncio.wait(pending, timeout=SETTLE_S)
        session = self.controller.session
        with failure_logged(log, "the title at exit"):
            # guard: quit-an-untitled-session-takes-its-local-title
            await self.controller.title_untitled(self._first_message)
        with failure_logged(log, "the resume hint"):  # a broken store must not keep the app from closing
            if session is not None and await self.controller.has_conversation():
                self.resume_hint = f"resume with: myrm --session {session.id}"
        # Textual runs this inside its shutdown, before the step that gives the terminal back: an error
        # raised here left the terminal raw on the alternate screen, a traceback and exit code 1.
        # guard: quit-an-error-closing-the-session-is-logged
        with failure_logged(log, "closing the session at exit", logging.ERROR):
            await self.controller.close()
        guard = terminal_guard.current()
        if guard is not None:
            guard.saved()  # the rest of the exit (the driver, the interpreter) now has a short deadline
