"""Settings: the settings screen (F2), and ``/model`` and ``/mode`` with a name or as pickers; a value is
checked before it is saved and takes effect with the next message."""

from __future__ import annotations

from textual import work

from myrm_tui.app.flows.base import AppBase
from myrm_tui.app.messages import ShowNotice


class SettingsFlow(AppBase):
    def action_settings(self) -> None:
        if self.controller.settings is not None:
            self.edit_settings(self.key_router.hold())  # the keys typed after F2 go to the screen

    @work(exclusive=True, group="settings", exit_on_error=False, description="settings screen")
    async def edit_settings(self, hold: int) -> None:
        from myrm_tui.app.screens.settings import SettingsScreen

        assert self.controller.settings is not None
        try:
            values = await self._open(SettingsScreen(self.controller.settings), hold)
        finally:
            self.key_router.release(hold)  # not opened (cancelled): the keys go on as they were
        if values is None:
            return
        await self.controller.save_settings(values)
        self._show_model()
        self.notify("Settings saved; they take effect with the next message.")

    @work(exclusive=True, group="setting", exit_on_error=False, description="check and save a setting")
    async def _set_setting(self, key: str, value: str, source: str) -> None:
        """``/model NAME``, ``/mode NAME``, the model picker: checked first (the key check imports litellm
        in a thread: a worker, so the app's messages are not held meanwhile); a bad value is one line in
        the conversation and a toast, and nothing is saved."""
        problem = await self.controller.setting_problem(key, value, source)
        if problem:
            self.notify(problem, severity="error", timeout=8)
            self._show(ShowNotice(problem, "error"))
            return
        await self.controller.set_setting(key, value)
        self.notify(f"{key} = {value}; takes effect with the next message")
        self._show_model()

    def action_set_model(self) -> None:
        """The /model picker: the current model, the models whose provider key is set, the embedded one."""
        if self.controller.settings is not None:
            self.pick_model()

    @work(exclusive=True, group="picker", exit_on_error=False, description="model picker")
    async def pick_model(self) -> None:
        from myrm_tui.app.screens.models import ModelPicker

        s = self.controller.settings
        assert s is not None
        choice = await self.push_screen_wait(ModelPicker(self.controller.model_choices(), s.model))
        if choice and choice != s.model:
            self._set_setting("model", choice, "/model")

    def action_set_mode(self) -> None:
        """The /mode picker: the prompt modes, the current one marked."""
        if self.controller.settings is not None:
            self.pick_mode()

    @work(exclusive=True, group="picker", exit_on_error=False, description="prompt mode picker")
    async def pick_mode(self) -> None:
        from myrm_tui.agent.prompts import MODES
        from myrm_tui.app.screens.models import ModePicker

        s = self.controller.settings
        assert s is not None
        choice = await self.push_screen_wait(ModePicker(list(MODES), s.prompt_mode))
        if choice and choice != s.prompt_mode:
            self._set_setting("prompt_mode", choice, "/mode")
