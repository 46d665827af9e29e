"""Quitting while the model's reply streams ends the app cleanly. The screen is torn down while chunks
still arrive: a chunk that reached an answer whose Markdown was already removed raised ``NoMatches`` and
the app ended with code 1 and a traceback on the terminal (found by ``tests/app/test_terminal_guard.py``:
ctrl+q right after Enter in a real terminal, in 2 of 5 runs). The state that race leaves is built here
directly: an answer whose children are gone, then more chunks."""

from __future__ import annotations

from textual.app import App, ComposeResult

from myrm_tui.app.widgets.chat_message import AssistantMessage


class Answers(App[None]):
    def compose(self) -> ComposeResult:
        yield AssistantMessage()
        yield AssistantMessage("streamed before")


async def test_an_answer_torn_down_mid_stream_takes_the_last_chunks_without_raising() -> None:
    app = Answers()
    async with app.run_test() as pilot:
        fresh, streaming = app.query(AssistantMessage)
        await streaming.append(" and more")
        for answer in (fresh, streaming):
            await answer.remove_children()  # what tearing the screen down does while chunks still arrive
            await answer.append("a late chunk")
            answer.append_reasoning("late reasoning")
            await answer.finish()
        await pilot.pause()
        assert app.is_running
