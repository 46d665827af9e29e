"""The writer lock (``<db>-writer.lock``) gives writers of two processes turns, by construction: no test
here depends on where SQLite's busy handler happens to poll."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from myrm_tui.store.db import DatabaseLocked, Store

# Another myrm's writer, in a process of its own, at the limit of writing back to back: its next
# transaction begins before its last one ends, so the database's write lock is never free when the other
# process's busy handler polls (without the writer lock that writer never gets a turn, whatever the
# machine's speed). It does take turns at the writer lock: at the end of its turn it lets go of the
# writer lock and, once another writer holds it, commits and queues for its next turn.
OTHER_WRITER = r"""
import fcntl, os, select, sqlite3, sys

db = sys.argv[1]
conn = sqlite3.connect(db, isolation_level=None, timeout=60)
fd = os.open(db + "-writer.lock", os.O_RDWR | os.O_CREAT, 0o600)


def write(value):
    conn.execute(
        "INSERT INTO settings (key, value) VALUES ('other', ?) "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (value,),
    )


fcntl.flock(fd, fcntl.LOCK_EX)
conn.execute("BEGIN IMMEDIATE")
write("1")
print("holding", flush=True)
fcntl.flock(fd, fcntl.LOCK_UN)  # the end of its turn; the database's write lock stays taken
while True:
    if select.select([sys.stdin], [], [], 0.01)[0]:  # the test gave up: end without writing
        conn.execute("ROLLBACK")
        print("stopped", flush=True)
        sys.exit(0)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        break  # another writer holds the writer lock: its turn
    fcntl.flock(fd, fcntl.LOCK_UN)
conn.execute("COMMIT")
print("handed over", flush=True)
fcntl.flock(fd, fcntl.LOCK_EX)  # queued behind that writer
conn.execute("BEGIN IMMEDIATE")
before = conn.execute("SELECT value FROM settings WHERE key = 'mine'").fetchone()
write("2")
conn.execute("COMMIT")
fcntl.flock(fd, fcntl.LOCK_UN)
print("next turn saw", before[0] if before else None, flush=True)
"""


async def test_a_writer_queued_on_the_writer_lock_gets_the_next_turn(tmp_path: Path) -> None:
    """Another process that would win every poll of SQLite's busy handler holds the database's write
    lock; this store's write waits on the writer lock, gets the turn the other hands over, and lands
    before the other's next write. Without the writer lock it waits the whole busy timeout and fails."""
    db = tmp_path / "turns.db"
    store = await Store.open(db, busy_timeout=10.0)
    other = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        OTHER_WRITER,
        str(db),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    assert other.stdin is not None and other.stdout is not None
    try:
        assert await other.stdout.readline() == b"holding\n"
        try:
            await store.set_setting("mine", 1)
        except DatabaseLocked as exc:
            pytest.fail(f"starved: the other writer never let this one take a turn ({exc})")
        assert await other.stdout.readline() == b"handed over\n"
        # The other's next transaction came after this one: it read what this store wrote.
        assert await other.stdout.readline() == b"next turn saw 1\n"
        assert await other.wait() == 0
        assert await store.get_setting("mine") == 1
        assert await store.get_setting("other") == 2
    finally:
        if other.returncode is None:
            other.stdin.write(b"stop\n")
            await other.stdin.drain()
            try:
                await asyncio.wait_for(other.wait(), 10)
            except TimeoutError:
                other.kill()
                await other.wait()
        await store.close()
