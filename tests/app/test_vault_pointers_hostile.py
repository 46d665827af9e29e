"""A ``vault://`` pointer is text anyone can write (a file the model reads, a command's output, the model's
own arguments): path tricks, another session's ids, huge or non-ASCII message numbers and percent-encoding
are refused in one line by the model's read and by the pane's card, never raised (attacker5)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from myrm_tui.agent.api import Sessions
from myrm_tui.agent.events import ToolFinished
from myrm_tui.context.types import Message
from myrm_tui.context.vault import VaultEntry
from myrm_tui.store.db import Store
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.helpers import collect, make_agent, make_app, openai_settings, started, wait_until

HUGE = "m" + "9" * 30  # past SQLite's 64-bit integers


def _tricks(own: str, other: str) -> list[str]:
    return [
        f"vault://{own}/{HUGE}",
        f"vault://{own}/m-1",
        f"vault://{own}/m\u0661",  # an Arabic-Indic one: a digit to \d, not a sequence number
        f"vault://{own}/m1\n",
        f"vault://{own}/../{other}/m0",
        f"vault://{own}%2F..%2F{other}/m0",
        f"vault://%{own.encode().hex()}/m0",
        f"vault://{other}/m0",
        "vault://" + "x" * 100_000 + "/m0",
    ]


async def test_the_models_read_refuses_every_trick_in_one_line(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    """Found: ``vault://<own>/m999…`` (30 digits) answered 'file_read_tool failed: OverflowError: Python
    int too large to convert to SQLite INTEGER' with a traceback in the log; now 'no vaulted output'."""
    other = await store.create_session()
    await store.append_message(other.id, Message(role="user", content="launch code 0000-1111"))
    mine = await make_agent(store, workspace, openai_settings(emulator))
    own = mine.session.session_id
    tricks = _tricks(own, other.id)
    emulator.enqueue(
        Reply(tool_calls=[("file_read_tool", {"paths": [t]}) for t in tricks]),
        Reply(text="Done."),
    )
    events = await collect(mine, "read them")
    results = [e.message.text for e in events if isinstance(e, ToolFinished)]
    assert len(results) == len(tricks)
    for trick, result in zip(tricks, results, strict=True):
        assert result.startswith("Error: "), (trick[:80], result[:200])
        assert "failed:" not in result, result[:200]  # a tool bug's answer, not a refusal
        assert ("no vaulted output" in result) or ("another session's vault" in result), result[:200]
    assert all("launch code" not in json.dumps(r.body) for r in emulator.requests)


POINTERS = st.builds(
    lambda who, sep, ref: f"vault://{who}{sep}{ref}",
    st.sampled_from(["OWN", "OTHER", "", "..", "OWN%2F..", "x" * 5_000]),
    st.sampled_from(["/", "//", "/../", "%2F", ""]),
    st.one_of(
        st.from_regex(r"m[0-9]{0,40}", fullmatch=True),
        st.text(st.characters(codec=None), max_size=12),
    ),
)


@settings(deadline=None, max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pointer=POINTERS)
@example(pointer=f"vault://OWN/{HUGE}")
async def test_a_card_of_any_pointer_opens_an_entry_of_the_line_or_nothing(
    store: Store, workspace: Path, pointer: str
) -> None:
    """What the pane's card asks (``Sessions.vault_entry``) and the store's read, over generated pointers:
    an entry of this session's line, or None; never an exception, never another session's text."""
    own = await store.create_session()
    other = await store.create_session()
    await store.append_message(own.id, Message(role="user", content="mine"))
    await store.append_message(other.id, Message(role="user", content="theirs"))
    await store.vault_put(
        other.id, [VaultEntry(f"vault://{other.id}/o1", "theirs", "tool_output", "bash", 1.0)]
    )
    uri = pointer.replace("OWN", own.id).replace("OTHER", other.id)
    entry = await Sessions(store, workspace).vault_entry(own.id, uri)
    assert entry is None or "theirs" not in entry.content
    await store.vault_get(uri)  # the store's own read takes any text


async def test_a_card_with_a_huge_message_number_says_it_is_not_there(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    """Found: the card's worker raised OverflowError and the pane said nothing (the worker does not exit on
    error); now the pane's one line, as for any pointer it cannot open."""
    app = make_app(emulator, tmp_path, workspace, preheat=False)
    async with started(app, size=(140, 42)) as pilot:
        sid = app.controller.session.id  # type: ignore[union-attr]
        app.load_vault_entry(f"vault://{sid}/{HUGE}")
        await wait_until(
            pilot, lambda: any("is not in this session's vault" in n.message for n in app._notifications)
        )


async def test_a_card_the_store_cannot_read_says_so_and_is_logged(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A damaged entry (its meta not JSON) raised inside the card's worker, which does not exit on error:
    the pane said nothing and nothing was logged. Now one line on screen, the traceback in the log."""
    app = make_app(emulator, tmp_path, workspace, preheat=False)
    async with started(app, size=(140, 42)) as pilot:
        store, sid = app.controller.store, app.controller.session.id  # type: ignore[union-attr]
        assert store is not None
        uri = f"vault://{sid}/out-1"
        await store.vault_put(sid, [VaultEntry(uri, "an output", "tool_output", "bash", 1.0)])
        await store.conn.execute("UPDATE vault SET meta = '{not json' WHERE uri = ?", (uri,))
        await store.conn.commit()
        app.load_vault_entry(uri)
        await wait_until(pilot, lambda: any(f"could not open {uri}" in n.message for n in app._notifications))
    assert any(r.exc_info and f"opening {uri} failed" in r.getMessage() for r in caplog.records)
