"""Compaction on request (ctrl+k, ``/compact``, a click on the ring): the preview first, then the
compaction if the user confirms; and what left the view brought back (pinned) or unpinned."""

from __future__ import annotations

import asyncio
import logging

from textual import work

from myrm_tui.agent.events import CompactionMade
from myrm_tui.app.flows.base import AppBase
from myrm_tui.app.messages import AgentEventMessage, CompactionDone, Failure, ShowNotice
from myrm_tui.app.widgets.compaction_row import CompactionRow
from myrm_tui.app.widgets.context_ring import ContextUsageIndicator

log = logging.getLogger(__name__)


class CompactionFlow(AppBase):
    def action_compact(self, focus: str = "") -> None:
        if self.busy and not self._replay_paused():
            self.notify("Wait for the turn to finish (or Esc) before compacting.", severity="warning")
            return
        self.compact(focus, self.key_router.hold())  # the keys typed after ctrl+k go to the preview

    def on_context_usage_indicator_compact_requested(self, _: ContextUsageIndicator.CompactRequested) -> None:
        self.action_compact()

    @work(exclusive=True, group="compact", exit_on_error=False, description="compaction")
    async def compact(self, focus: str, hold: int) -> None:
        """Preview what would leave the view, then compact if the user confirms (Enter)."""
        from myrm_tui.app.screens.compact_preview import CompactPreviewScreen

        try:
            try:
                await self.ready.wait()
                record, reason = await self.controller.preview_compaction(focus)
            except Exception as exc:
                log.exception("compaction preview failed")
                self.post_message(Failure(f"Compaction preview failed: {exc}"))
                return
            if record is None:
                self._show(ShowNotice(f"Nothing to compact: {reason}."))
                self.notify(f"Nothing to compact: {reason}.", timeout=6)
                return
            confirmed = await self._open(CompactPreviewScreen(record, self._summarizer_note()), hold)
        finally:
            self.key_router.release(hold)  # no preview: the keys go to the prompt
        if not confirmed:
            return
        self.compacting = True
        self._status(f"compacting… {self._summarizer_note()} (esc cancels)")
        try:
            report = await self.controller.compact(focus)
        except asyncio.CancelledError:  # Esc: nothing was stored (the state is written last)
            log.info("compaction cancelled by the user")
            self.post_message(CompactionDone(None, cancelled=True))
            raise
        except Exception as exc:
            log.exception("compaction failed")
            self.post_message(Failure(f"Compaction failed: {exc}"))
            self.post_message(CompactionDone(None))
            return
        self.post_message(CompactionDone(report))

    async def on_compaction_done(self, event: CompactionDone) -> None:
        if self._closing_down():  # a worker's message can arrive while the app shuts down
            return
        self.compacting = False
        self._status()
        if event.report is None:
            if event.cancelled:
                self._show(ShowNotice("Compaction cancelled: the view is as it was."))
            self.refresh_panels()
            return
        self._show_report(event.report)
        record = event.report.metrics.compaction
        if record is not None and record.changed:
            self._show(AgentEventMessage(CompactionMade(record)))
            self.notify(f"Compacted: {record.headline()}")
        else:
            self.notify("Nothing was compacted: the view did not get smaller.", severity="warning")
        self.refresh_panels()

    def _summarizer_note(self) -> str:
        """Who writes the summary: a progress line while an LLM summary runs says so."""
        chat = self.controller.chat
        if chat is None or chat.extractive_summaries:
            return "extractive summary (no model call)"
        from myrm_tui.config import summarizer_model

        return f"writing the summary with {summarizer_model(chat.settings)}…"

    # -- bring back, unpin ---------------------------------------------------------------------------
    def on_compaction_row_pin_requested(self, event: CompactionRow.PinRequested) -> None:
        self.pin_item(event)

    @work(group="pin", exit_on_error=False, description="bring back or unpin")
    async def pin_item(self, event: CompactionRow.PinRequested) -> None:
        item = event.item
        try:
            tokens = await self.controller.pin(item.uri, item.line_range, item.gist, event.pin)
        except Exception as exc:
            log.exception("pin %s failed", item.uri)
            self.notify(f"Could not bring it back: {exc}", severity="error")
            return
        if event.pin:
            self.notify(
                f"Brought back ({tokens:,} tokens, pinned into the next requests until b unpins it): "
                f"{item.gist}"
            )
        else:
            self.notify(f"Unpinned: {item.gist}")
