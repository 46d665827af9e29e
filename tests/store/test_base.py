"""Any Python text can be stored. JSON allows a lone surrogate (``"\\ud800"`` in a model's reply or an MCP
result) and Python decodes an argument, a file name or stdin that is not UTF-8 with ``surrogateescape``;
UTF-8 cannot hold either, and sqlite3 raised ``UnicodeEncodeError`` at the write: ``myrm ask`` ended with
a traceback on such a reply, ``myrm sessions --export $'\\xff'`` too. Now every text is written with
U+FFFD in each surrogate's place, and everything else as it was."""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path

from hypothesis import example, given, settings
from hypothesis import strategies as st

from myrm_tui.context.text.call_args import whole_text
from myrm_tui.context.types import Message, ToolCall
from myrm_tui.context.vault import VaultEntry
from myrm_tui.store.db import Store

# Any code point, surrogates included, with the ones that broke the write drawn often.
texts = st.one_of(
    st.text(st.characters(codec=None, exclude_categories=()), max_size=20),
    st.lists(
        st.sampled_from(["a", "\ud800", "\udcff", "\udfff", "é", "字", '"', "\\", "\x00"]), max_size=8
    ).map("".join),
)


async def _round_trip(folder: Path, t: str) -> None:
    store = await Store.open(folder / "s.db")
    try:
        store.history_indexed = True  # the search index is written in the same transaction
        row = await store.create_session(title=t, model=t, workspace=t)
        call = ToolCall("c1", t or "x", json.dumps({"command": t}, ensure_ascii=False))
        sent = [
            Message(role="user", content=t),
            Message(role="assistant", content=t, tool_calls=(call,), reasoning=t, meta={"note": t}),
            Message(role="tool", content=t, tool_call_id="c1", name=t),
            Message(role="user", content=[{"type": "text", "text": t}]),
        ]
        for m in sent:
            await store.append_message(row.id, m)
        await store.vault_put(
            row.id, [VaultEntry(f"vault://{row.id}/1", t, "tool_output", tool_name=t, meta={"k": t})]
        )
        await store.rename_session(row.id, t + "!")
        assert await store.find_session(t) is None or t == ""  # a lookup by any text answers
        back = await store.load_messages(row.id)
        want = whole_text(t)
        assert [m.content for m in back] == [want, want, want, [{"type": "text", "text": want}]]
        assert back[1].reasoning == want and back[1].meta == {"note": want} and back[2].name == want
        assert json.loads(back[1].tool_calls[0].arguments) == {"command": want}
        entry = await store.vault_get(f"vault://{row.id}/1")
        assert entry is not None and entry.content == want
        (listed,) = await store.list_sessions()
        assert (listed.title, listed.model, listed.workspace) == (whole_text(t + "!"), want, want)
    finally:
        await store.close()


@settings(max_examples=40, deadline=None)
@given(t=texts)
@example(t="lone \ud800 surrogate")
@example(t="name\udcff.txt")
def test_any_text_is_stored_with_lone_surrogates_replaced(t: str) -> None:
    """A session's title, model and workspace, a message's every text field, a vault entry, a rename and
    a lookup: no exception, and what is read back is the text with U+FFFD for each lone surrogate."""
    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(_round_trip(Path(folder), t))
