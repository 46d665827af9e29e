"""A session lived in the full screen end to end (``tests/app/lived.py``: big reads, failing commands,
edits, greps through the real tools; the emulator as the model): automatic compactions each shown as one
row, the transcript's mounted widgets bounded, a burst of keys typed while a reply streams lands whole and
in order, ``history_search`` finds a fact told at turn 10 (in the raw request the model gets), ctrl+f forks
and the fork opens its parent's vaulted output from the transcript (``v``). The bounded run is in
``make test``; the 250-turn one is ``long``. Memory and key latency at turn 250: ``bench/longlive.py``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from myrm_tui.app.widgets.chat_log import ChatLog
from myrm_tui.app.widgets.chat_window import SLACK, WINDOW
from myrm_tui.app.widgets.prompt_input import PromptInput
from myrm_tui.app.widgets.tool_call import ToolCallView
from myrm_tui.app.widgets.vault_card import VaultArtifactCard
from myrm_tui.app.widgets.vault_pane import VaultPane
from myrm_tui.testing.emulator import ProviderEmulator
from tests.app.lived import FACT, FACT_TURN, LOOKUP, SLOW, Lived, key_burst, message, prepare
from tests.helpers import make_app, send_turn, started, type_and_send, wait_until

BURST = "typed while it streams 0123456789"


async def _live(emulator: ProviderEmulator, tmp_path: Path, turns: int, window: int) -> None:
    ws = tmp_path / "ws"
    prepare(ws)
    lived = Lived()
    emulator.default = lived.route
    quiet = {"preheat": False, "keepalive": False, "summarizer_model": "extractive"}
    app = make_app(emulator, tmp_path, ws, context_window=window, **quiet)
    async with started(app, size=(120, 40)) as pilot:
        chat = app.query_one(ChatLog)
        prompt = app.screen.query_one(PromptInput)
        store, ctl = app.controller.store, app.controller
        assert store is not None and ctl.session is not None
        parent = ctl.session.id
        for i in range(turns):
            await send_turn(pilot, app, message(i), timeout=60)
            assert len(chat.children) <= WINDOW + SLACK + 1  # the items and the "earlier" line
        assert turns <= FACT_TURN or any(FACT in it.text for it in chat.items)

        # Automatic compactions, each one row in the transcript: one a compaction, none twice.
        made = [m for m in await store.metrics(parent) if m.get("compacted")]
        assert len(made) >= 2
        assert sum(1 for it in chat.items if it.kind == "compaction") == len(made)

        # A burst of keys while the reply streams (held mid-stream): every key, in order, in the box.
        await type_and_send(pilot, SLOW)
        await wait_until(pilot, lambda: chat._current_item is not None and bool(chat._current_item.text), 30)
        await key_burst(pilot, BURST)
        assert app.busy and prompt.text == BURST
        lived.resume.set()
        await wait_until(pilot, lambda: not app.busy, 30)
        assert prompt.text == BURST  # kept for the user to send, not sent by the turn's end
        prompt.clear()

        # history_search finds what was told at turn 10, compacted out of view long ago.
        await send_turn(pilot, app, LOOKUP, timeout=60)
        assert lived.lookups, "no request after the history_search call"
        assert FACT.split()[-1] in json.dumps(lived.lookups[-1]["messages"][-1])

        # ctrl+f: a fork that starts compacted, whose transcript opens the parent's vaulted output.
        parents_items = chat.items  # a load lists the fork's items anew (appends keep the list)
        await pilot.press("ctrl+f")
        await wait_until(
            pilot, lambda: ctl.session is not None and ctl.session.id != parent and not app.busy, 60
        )
        assert ctl.session is not None and ctl.session.parent_id == parent
        # the fork's transcript loaded (a long one takes a while; a cursor placed before is reset)
        await wait_until(pilot, lambda: chat.items is not parents_items and chat.window.hi == len(chat.items))
        await pilot.press("shift+tab")
        await wait_until(pilot, lambda: chat.cursor is not None)

        def vaulted() -> str:
            w = chat.cursor.widget if chat.cursor else None
            if isinstance(w, VaultArtifactCard):
                return w.uri
            return w.vault_uris[0] if isinstance(w, ToolCallView) and w.vault_uris else ""

        for _ in range(60):  # up the transcript to the newest item with a vault entry
            if vaulted():
                break
            before = chat.cursor
            await pilot.press("up")
            await wait_until(pilot, lambda before=before: chat.cursor is not before)  # type: ignore[misc]
        uri = vaulted()
        assert uri.startswith(f"vault://{parent}/"), uri
        await pilot.press("v")
        pane = app.query_one(VaultPane)
        await wait_until(pilot, lambda: pane.current_uri == uri, 30)
        shown = pane.query_one("#vault-text").text  # type: ignore[attr-defined]
        assert shown.strip() and "could not" not in shown.lower()


async def test_a_lived_session_compacts_stays_responsive_finds_turn_10_and_forks(
    emulator: ProviderEmulator, tmp_path: Path
) -> None:
    await _live(emulator, tmp_path, turns=14, window=8000)


@pytest.mark.long
@pytest.mark.timeout(1800)  # 250 turns: 4-5 minutes on two loaded cores, past the default 300 s
async def test_a_250_turn_session_lived_in_the_full_screen(
    emulator: ProviderEmulator, tmp_path: Path
) -> None:
    await _live(emulator, tmp_path, turns=250, window=16_000)
