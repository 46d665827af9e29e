"""A fork's history is its parent's up to the fork, not the parent's later work: a ``vault://`` pointer to a
parent's output stored after the fork (the other branch's; pointers are guessable, ``m<N>`` too) is refused
by the model's read and shows no card, as ``history_search`` already leaves it out (attacker5's leftover).
The parent's outputs from before the fork open as they did."""

from __future__ import annotations

import time
from pathlib import Path

from myrm_tui.agent.api import Sessions
from myrm_tui.agent.events import ToolFinished
from myrm_tui.agent.factory import build_agent
from myrm_tui.context.types import Message
from myrm_tui.context.vault import VaultEntry
from myrm_tui.store.db import Store
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.helpers import collect, openai_settings


async def _parent_and_fork(store: Store, workspace: Path) -> tuple[str, str, str, str, str]:
    parent = await store.create_session(workspace=str(workspace))
    now = time.time()
    await store.append_message(parent.id, Message(role="user", content="before the fork"))
    before = f"vault://{parent.id}/t1"
    # Vaulted after the last message the fork copies (a parent vaults an output on the request after it)
    # and before the fork: the fork's history.
    earlier = VaultEntry(before, "EARLIER-OUTPUT 11", "tool_output", "bash", time.time())
    await store.vault_put(parent.id, [earlier])
    fork = await store.fork_session(parent.id)
    later = f"vault://{parent.id}/t2"
    await store.vault_put(parent.id, [VaultEntry(later, "LATER-BRANCH 22", "tool_output", "bash", now + 60)])
    stored = await store.append_message(parent.id, Message(role="user", content="LATER-MESSAGE 33"))
    later_message = f"vault://{parent.id}/{stored.id}"  # what history_search's hits point at
    return parent.id, fork.id, before, later, later_message


async def test_a_forks_read_of_its_parents_later_outputs_is_refused(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    _, fork, before, later, later_message = await _parent_and_fork(store, workspace)
    agent = await build_agent(store, fork, openai_settings(emulator), workspace)
    emulator.enqueue(
        Reply(tool_calls=[("file_read_tool", {"paths": [p]}) for p in (before, later, later_message)]),
        Reply(text="Done."),
    )
    events = await collect(agent, "read them")
    results = [e.message.text for e in events if isinstance(e, ToolFinished)]
    assert "EARLIER-OUTPUT 11" in results[0]
    assert results[1].startswith("Error: ") and "stored after this session was forked" in results[1]
    assert results[2].startswith("Error: ") and "LATER-MESSAGE" not in results[2]
    sent = str([r.body for r in emulator.requests])
    assert "LATER-BRANCH" not in sent and "LATER-MESSAGE" not in sent


async def test_a_forks_card_of_its_parents_later_output_opens_nothing(store: Store, workspace: Path) -> None:
    parent, fork, before, later, later_message = await _parent_and_fork(store, workspace)
    sessions = Sessions(store, workspace)
    opened = await sessions.vault_entry(fork, before)
    assert opened is not None and opened.content == "EARLIER-OUTPUT 11"
    assert await sessions.vault_entry(fork, later) is None
    assert await sessions.vault_entry(fork, later_message) is None
    got = await sessions.vault_entry(parent, later)  # the parent's own, as before
    assert got is not None and got.content == "LATER-BRANCH 22"
    message = await sessions.vault_entry(parent, later_message)  # a real pointer, refused only to the fork
    assert message is not None and "LATER-MESSAGE 33" in message.content
