"""A ``vault://`` pointer is text: any tool output can hold one, and the TUI makes a card of it. Opening a
card shows an entry of this session's line only — its own, a session it was forked from, a subagent started
from it — never another session's blob (the model's ``read`` is held to the same line: test_fork.py)."""

from __future__ import annotations

from pathlib import Path

from myrm_tui.agent.api import Sessions
from myrm_tui.context.vault import VaultEntry
from myrm_tui.store.db import Store
from myrm_tui.testing.emulator import ProviderEmulator
from tests.helpers import make_app, started, wait_until


async def _blob(store: Store, sid: str, text: str) -> str:
    uri = f"vault://{sid}/out-1"
    await store.vault_put(sid, [VaultEntry(uri, text, "tool_output", "bash", 1.0)])
    return uri


async def test_an_entry_is_shown_to_its_sessions_line_and_to_no_other(store: Store, workspace: Path) -> None:
    root = await store.create_session()
    fork = await store.fork_session(root.id, copy_state=True)
    child = await store.create_session(parent_id=fork.id)  # a subagent of the fork
    stranger = await store.create_session()
    door = Sessions(store, workspace)
    blobs = {s: await _blob(store, s, f"output of {s}") for s in (root.id, fork.id, child.id, stranger.id)}
    for uri in (blobs[root.id], blobs[fork.id], blobs[child.id]):  # ancestor, itself, its subagent
        entry = await door.vault_entry(fork.id, uri)
        assert entry is not None and entry.content.startswith("output of")
    assert await door.vault_entry(fork.id, blobs[stranger.id]) is None
    assert await door.vault_entry(stranger.id, blobs[root.id]) is None
    assert await door.vault_entry(root.id, blobs[child.id]) is not None  # started from root, two steps down


async def test_a_card_pointing_into_another_sessions_vault_opens_nothing(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    from myrm_tui.app.widgets.vault_pane import VaultPane

    app = make_app(emulator, tmp_path, workspace, preheat=False)
    async with started(app, size=(140, 42)) as pilot:
        store, sid = app.controller.store, app.controller.session.id  # type: ignore[union-attr]
        assert store is not None
        stranger = await store.create_session()
        secret = await _blob(store, stranger.id, "another session's secret")
        own = await _blob(store, sid, "this session's output")
        pane = app.query_one(VaultPane)
        app.load_vault_entry(secret)  # what a card made from a tool output's text asks for
        await wait_until(
            pilot, lambda: any("is not in this session's vault" in n.message for n in app._notifications)
        )
        assert pane.current_uri != secret
        app.load_vault_entry(own)
        await wait_until(pilot, lambda: pane.current_uri == own)
