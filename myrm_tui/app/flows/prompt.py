"""What the prompt box sends: a slash command from the command table, or a message (sent now, or queued
while a turn runs); typing gets the model ready before the first message."""

from __future__ import annotations

from textual import work

from myrm_tui.app.commands import Command, by_slash, looks_like_command, unknown_command
from myrm_tui.app.flows.compaction import CompactionFlow
from myrm_tui.app.flows.panels import PanelsFlow
from myrm_tui.app.flows.sessions import SessionFlow
from myrm_tui.app.flows.settings import SettingsFlow
from myrm_tui.app.flows.undo import UndoFlow
from myrm_tui.app.messages import ShowNotice
from myrm_tui.app.widgets.prompt_input import PromptInput


class PromptFlow(SessionFlow, CompactionFlow, SettingsFlow, PanelsFlow, UndoFlow):
    """Where the flows meet: a slash command runs any of them."""

    _warming = False  # the model is being readied (once)

    async def on_prompt_input_submitted(self, event: PromptInput.Submitted) -> None:
        # The transcript shows each paste by the label the box showed.
        # guard: the-transcript-shows-a-sent-paste
        self.main.chat.pastes.update(event.pastes)
        text = event.text
        if text.startswith("/"):
            known = by_slash(text[1:].partition(" ")[0]) is not None
            if await self._slash(text):
                if known:
                    event.prompt.load_text("")
                return
        if self.busy:
            if self.replayer is not None:
                self.notify("A replay is running; ctrl+f forks it into a live session.", severity="warning")
                return
            event.prompt.queue(text)  # sent when the turn ends
            return
        self._send(event.prompt, text)

    def on_prompt_input_typing(self, _: PromptInput.Typing) -> None:
        """The user started typing: get the model ready now, so the first reply does not wait for it."""
        if not self._warming and self.ready.is_set():
            self._warming = True
            self.warm_up()

    @work(exclusive=True, group="warm", exit_on_error=False, description="start the model, import litellm")
    async def warm_up(self) -> None:
        await self.controller.user_typing()

    # -- slash commands (from the command table) ---------------------------------------------------
    async def _slash(self, text: str) -> bool:
        """Run ``/name arg`` if the table has it; a mistyped ``/name`` is one line, never sent to the model;
        False sends the text (``/usr/bin/…``) to the model as a message."""
        name, _, arg = text[1:].partition(" ")
        command = by_slash(name)
        if command is None:
            if not looks_like_command(name):
                return False
            self._show(ShowNotice(unknown_command(name), "warning"))  # the text stays in the box to fix
            return True
        await self._run_slash(command, arg.strip())
        return True

    async def _run_slash(self, command: Command, arg: str) -> None:
        if command.usage and not command.usage.startswith("[") and not arg:
            self.notify(f"usage: /{command.slash[0]} {command.usage}", severity="warning")
        elif command.action == "compact":
            self.action_compact(arg)
        elif command.action == "fork":
            if arg and not arg.isdigit():
                self.notify(
                    "/fork takes the number of one of your messages: /fork 3 forks after your 3rd message",
                    severity="warning",
                )
            else:
                self.action_fork(int(arg) if arg else None)
        elif command.action.startswith("show_tab("):  # /vault: the prompt keeps the focus (F4 moves it)
            self.action_show_tab(command.action.split("'")[1], focus=False)
        elif command.action == "search":
            self.action_search(arg)
        elif command.action == "copy_answer":
            self.action_copy_answer(arg)
        elif command.action in ("set_model", "set_mode") and not arg:
            await self.run_action(command.action)  # a picker
        elif command.action in ("set_model", "set_mode"):
            key = "model" if command.action == "set_model" else "prompt_mode"
            self._set_setting(key, arg, f"/{command.slash[0]}")
        else:
            await self.run_action(command.action)
