"""The workspace boundary: grep and glob never reach outside it through symlinks, and file reads
refuse what is not a regular file (a FIFO, a device, a socket) without ever blocking the event loop."""

from __future__ import annotations

import asyncio
import os
import socket
import threading
from pathlib import Path

import pytest

from myrm_tui.agent.tools import ToolContext, ToolError
from myrm_tui.agent.tools import files as files_mod
from myrm_tui.agent.tools.files import FileEditTool, FileReadTool
from myrm_tui.agent.tools.search import GlobTool, GrepTool
from myrm_tui.context.vault import ArtifactVault


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder beside the workspace, standing for /etc: a secret a link inside the workspace points at."""
    out = tmp_path / "outside"
    out.mkdir()
    (out / "shadow").write_text("root:SECRET-HASH:19000:0:99999:7:::\n")
    (out / "passwd").write_text("root:x:0:0:root:/root:/bin/bash\n")
    return out


@pytest.fixture
def linked(workspace: Path, outside: Path) -> ToolContext:
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text("root = 'inside'\n")
    os.symlink(outside, workspace / "etcdir")  # etcdir -> /etc
    os.symlink(outside / "passwd", workspace / "link_passwd")  # link_passwd -> /etc/passwd
    os.symlink(workspace / "src", workspace / "srclink")  # a link that stays inside: still fine
    return ToolContext(workspace=workspace, vault=ArtifactVault("s"), auto_approve=True)


async def test_grep_through_a_symlinked_folder_reads_nothing_outside(linked: ToolContext) -> None:
    res = await GrepTool().run({"pattern": "^root", "glob": "etcdir/shadow"}, linked)
    assert "SECRET-HASH" not in res.content and res.content.startswith("no matches")
    assert "1 path leading outside the workspace (symlinks) left out" in res.content
    every = await GrepTool().run({"pattern": "root", "glob": "*/*"}, linked)
    assert "SECRET-HASH" not in every.content and "etcdir" not in every.content.split("\n[")[0]
    assert "src/app.py:1:root = 'inside'" in every.content and "srclink/app.py:1:" in every.content


async def test_grep_skips_a_symlinked_file_that_leads_outside(linked: ToolContext) -> None:
    res = await GrepTool().run({"pattern": "root"}, linked)
    assert "/bin/bash" not in res.content and "link_passwd" not in res.content.split("\n[")[0]
    assert "src/app.py:1:" in res.content
    named = await GrepTool().run({"pattern": "root", "glob": "link_passwd"}, linked)
    assert "/bin/bash" not in named.content
    with pytest.raises(ToolError, match="outside the workspace"):
        await GrepTool().run({"pattern": "root", "path": "link_passwd"}, linked)
    with pytest.raises(ToolError, match=r"must not contain '\.\.'"):
        await GrepTool().run({"pattern": "root", "glob": "../outside/*"}, linked)


async def test_glob_never_lists_what_a_symlink_leads_to_outside(linked: ToolContext) -> None:
    res = await GlobTool().run({"pattern": "etcdir/*"}, linked)
    assert (
        "shadow" not in res.content
        and "passwd" not in res.content
        and res.content.startswith("no files match")
    )
    listing = (await GlobTool().run({"pattern": "*"}, linked)).content
    names = listing.split("\n[")[0].splitlines()
    assert sorted(names) == [
        "hello.py",
        "src",
        "srclink",
    ]  # the two links out are dropped, the one inside kept
    assert "2 paths leading outside the workspace (symlinks) left out" in listing


@pytest.fixture
def fifo(workspace: Path) -> Path:
    path = workspace / "pipe"
    os.mkfifo(path)
    return path


async def test_reading_a_fifo_is_refused_at_once_and_never_blocks(fifo: Path, workspace: Path) -> None:
    """Before the fix the read blocked the event loop until a writer came; here a writer comes after
    a few seconds, so a regression fails (an empty read instead of the error) rather than hangs."""
    stop = threading.Event()

    def writer_after_a_while() -> None:
        if stop.wait(3):
            return
        while not stop.is_set():  # open the writing end only once a reader waits (ENXIO until then)
            try:
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
                return
            except OSError:
                stop.wait(0.05)

    rescue = threading.Thread(target=writer_after_a_while, daemon=True)
    rescue.start()
    ctx = ToolContext(workspace=workspace, vault=ArtifactVault("s"))
    try:
        with pytest.raises(ToolError, match=r"pipe is a named pipe \(FIFO\), not a regular file"):
            await FileReadTool().run({"paths": ["pipe"]}, ctx)
        with pytest.raises(ToolError, match="not a regular file"):
            await FileEditTool().run({"path": "pipe", "old_string": "a", "new_string": "b"}, ctx)
        assert not stop.is_set()
    finally:
        stop.set()
        rescue.join(5)
    res = await GrepTool().run(
        {"pattern": "greet"}, ToolContext(workspace=workspace, vault=ArtifactVault("s"))
    )
    assert res.content.startswith("hello.py:1:")  # grep walks past the FIFO


async def test_devices_and_sockets_are_refused(workspace: Path) -> None:
    ctx = ToolContext(workspace=workspace, vault=ArtifactVault("s"))
    os.symlink("/dev/zero", workspace / "zero")  # resolves outside: refused by confinement already
    with pytest.raises(ToolError, match="outside the workspace"):
        await FileReadTool().run({"paths": ["zero"]}, ctx)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(str(workspace / "ctl.sock"))
        with pytest.raises(ToolError, match=r"ctl.sock is a socket, not a regular file"):
            await FileReadTool().run({"paths": ["ctl.sock"]}, ctx)
    finally:
        sock.close()
    from myrm_tui.agent.tools.base import read_regular

    with pytest.raises(ToolError, match="is a character device"):
        read_regular(Path("/dev/null"), "/dev/null", 100)


async def test_file_reads_run_off_the_event_loop(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A read that blocks (a slow disk, a network mount) must leave the loop free: the read below
    waits for a task on the loop to release it, which can only happen if the read runs elsewhere."""
    released = threading.Event()
    real = files_mod.read_regular

    def slow_read(*args: object) -> bytes:
        assert released.wait(5), "the event loop was blocked while the file was read"
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(files_mod, "read_regular", slow_read)

    async def release() -> None:
        await asyncio.sleep(0)
        released.set()

    ctx = ToolContext(workspace=workspace, vault=ArtifactVault("s"))
    helper = asyncio.ensure_future(release())
    res = await FileReadTool().run({"paths": ["hello.py"]}, ctx)
    await helper
    assert "return 'hello'" in res.content
    released.clear()
    helper = asyncio.ensure_future(release())
    edited = await FileEditTool().run(
        {"path": "hello.py", "old_string": "'hello'", "new_string": "'hi'"}, ctx
    )
    await helper
    assert "1 replacement" in edited.content and "'hi'" in (workspace / "hello.py").read_text()
