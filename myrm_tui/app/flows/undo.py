"""``/undo``: the agent's file edits of the newest turn that made any, taken back once the user agrees."""

from __future__ import annotations

import logging

from textual import work

from myrm_tui.app.flows.base import AppBase
from myrm_tui.app.messages import Failure, ShowNotice

log = logging.getLogger(__name__)


class UndoFlow(AppBase):
    def action_undo(self) -> None:
        if self.busy:
            self.notify("Wait for the turn to finish (or Esc) before /undo.", severity="warning")
            return
        self.undo(self.key_router.hold())

    @work(exclusive=True, group="undo", exit_on_error=False, description="undo file edits")
    async def undo(self, hold: int) -> None:
        from myrm_tui.app.screens.undo import UndoScreen

        try:
            try:
                await self.ready.wait()
                plan = await self.controller.undo_plan()
            except Exception as exc:
                log.exception("/undo: reading the file edits failed")
                self.post_message(Failure(f"/undo failed: {exc}"))
                return
            if plan is None:
                self._show(ShowNotice("/undo: no file edits of the agent left to undo in this session."))
                return
            if not plan.files:  # the files are already as they were before that turn
                answer = "yes"
            else:
                answer = await self._open(UndoScreen(plan), hold)
        finally:
            self.key_router.release(hold)
        if answer not in ("yes", "all"):
            self._show(ShowNotice("/undo: nothing changed."))
            return
        try:
            out = await self.controller.undo(plan, overwrite_changed=answer == "all")
        except Exception as exc:
            log.exception("/undo failed")
            self.post_message(Failure(f"/undo failed: {exc}"))
            return
        lines = [f"/undo: the turn '{plan.prompt}'"]
        # the dialog's words: a file the agent had created is removed, not restored
        lines += [
            f"  removed {p} (the agent created it)" if p in out.removed else f"  restored {p}"
            for p in out.restored
        ]
        lines += [f"  not restored: {p}" for p in out.left]
        if not plan.files:
            lines.append("  its files were already as they were before it")
        self._show(ShowNotice("\n".join(lines)))
