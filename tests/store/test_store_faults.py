"""Write faults of the store: a full disk (SQLite's own SQLITE_FULL, through ``PRAGMA max_page_count``)
is one line and exit code 2 in ``ask``, loses nothing stored, and leaves no ``vault://`` pointer behind
without its entry."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from myrm_tui.context.types import Message
from myrm_tui.context.vault import VaultEntry
from myrm_tui.store.db import Store, WriteFailed
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests import warm
from tests.helpers import cli_env, emulator_args, run_myrm

ROOT = Path(__file__).resolve().parents[2]
VAULT_URI = re.compile(r"vault://[\w./-]+")


async def _limit(store: Store, spare_pages: int) -> None:
    """The database may grow by ``spare_pages`` pages more: past that SQLite answers SQLITE_FULL,
    "database or disk is full", as on a full disk."""
    async with store.conn.execute("PRAGMA page_count") as cur:
        row = await cur.fetchone()
    assert row is not None
    await store.conn.execute(f"PRAGMA max_page_count = {int(row[0]) + spare_pages}")


async def test_a_full_disk_rolls_the_message_and_its_vault_entry_back_together(tmp_path: Path) -> None:
    store = await Store.open(tmp_path / "full.db")
    try:
        sid = (await store.create_session()).id
        first = await store.append_message(sid, Message(role="user", content="kept"))
        await _limit(store, 8)
        big = VaultEntry("vault://s/abc", "x" * 400_000, "tool_output", "bash", 1.0)
        pointer = Message(role="tool", content="preview … full output at vault://s/abc", tool_call_id="c1")
        with pytest.raises(WriteFailed) as info:
            await store.append_message(sid, pointer, vault=[big])
        assert "disk is full" in str(info.value) and "\n" not in str(info.value)
        assert [m.id for m in await store.load_messages(sid)] == [first.id]  # nothing stored lost
        assert await store.vault_get("vault://s/abc") is None  # and no half of the pair
        await store.conn.execute("PRAGMA max_page_count = 1073741823")  # space freed
        stored = await store.append_message(sid, pointer, vault=[big])
        entry = await store.vault_get("vault://s/abc")
        assert stored.id == "m1" and entry is not None and len(entry.content) == 400_000
    finally:
        await store.close()


# ``myrm ask`` with the database limited to a few pages more than it has: the store opened by the CLI
# gets the limit (a full disk, without root or a tmpfs).
_WRAPPER = """
import sys
from myrm_tui.store import db

_open = db.Store.open.__func__


async def limited(cls, path, busy_timeout=db.BUSY_TIMEOUT_S):
    store = await _open(cls, path, busy_timeout)
    async with store.conn.execute("PRAGMA page_count") as cur:
        (n,) = await cur.fetchone()
    await store.conn.execute(f"PRAGMA max_page_count = {n + 40}")
    return store


db.Store.open = classmethod(limited)
from myrm_tui.cli import main

main()
"""


def _ask(
    args: list[str], tmp: Path, emulator: ProviderEmulator, workspace: Path, full: bool
) -> subprocess.CompletedProcess[str]:
    argv = ["ask", *args, *emulator_args(emulator, workspace), "--yes"]
    if not full:
        return run_myrm(argv, env=cli_env(tmp), cwd=ROOT)
    # The full disk is a patched Store.open in a process of its own: this one's store stays unpatched.
    cmd = [sys.executable, "-c", textwrap.dedent(_WRAPPER)]
    return warm.run([*cmd, *argv], capture_output=True, text=True, env=cli_env(tmp), cwd=ROOT, timeout=120)


def test_ask_on_a_full_disk_is_one_line_exit_2_and_the_store_stays_consistent(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    emulator.enqueue(Reply(text="first answer"))
    proc = _ask(["hello"], tmp_path, emulator, workspace, full=False)
    assert proc.returncode == 0, proc.stderr
    sid = re.search(r"\[session (\w+)\]", proc.stderr)
    assert sid is not None

    # A 3.4 MB output: spilled to the vault, which the disk cannot hold.
    emulator.enqueue(Reply(tool_calls=[("bash", {"command": "seq 1 500000"})]), Reply(text="counted"))
    proc = _ask(["count", "--session", sid.group(1)], tmp_path, emulator, workspace, full=True)
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-3000:])
    assert "Traceback" not in proc.stderr + proc.stdout
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("myrm:")]
    assert len(errors) == 1 and "disk is full" in errors[0], proc.stderr[-3000:]

    async def check() -> list[Message]:
        store = await Store.open(tmp_path / "cli.db")  # space freed: no limit
        try:
            async with store.conn.execute("PRAGMA integrity_check") as cur:
                assert (await cur.fetchone())[0] == "ok"  # type: ignore[index]
            messages = await store.load_messages(sid.group(1))
            for m in messages:
                for uri in VAULT_URI.findall(m.text):
                    assert await store.vault_get(uri.rstrip(".,")) is not None, uri
            return messages
        finally:
            await store.close()

    messages = asyncio.run(check())
    assert next(m.text for m in messages if m.role == "assistant") == "first answer"  # nothing stored lost
    assert "count" in [m.text for m in messages if m.role == "user"]

    # The next turn works, its request well-formed (the unanswered call closed by the pipeline).
    emulator.script.clear()  # the reply the failed turn never asked for
    emulator.enqueue(Reply(tool_calls=[("bash", {"command": "seq 1 500000"})]), Reply(text="counted now"))
    proc = _ask(["count again", "--session", sid.group(1)], tmp_path, emulator, workspace, full=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "counted now" in proc.stdout
    messages = asyncio.run(check())
    assert any("vault://" in m.text for m in messages if m.role == "tool")
