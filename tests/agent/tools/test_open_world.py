"""The open world around the tools (an attacker's pass): a workspace that is deleted or renamed while
myrm runs, files of every kind where a tool expects a source file (a FIFO, a socket, a loop of links, a
sparse file of gigabytes), file names holding line breaks and escapes, a command whose output grew a
written file to gigabytes, a command that eats memory. Each case found by driving ``myrm ask`` with a
scripted model; each test fails without its fix."""

from __future__ import annotations

import json
import os
import select
import shutil
import socket
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from myrm_tui.agent.events import ToolFinished
from myrm_tui.agent.limits import Limits
from myrm_tui.agent.permissions import READ_ONLY, CommandRules
from myrm_tui.agent.proc import MAX_ARGUMENT_BYTES
from myrm_tui.agent.session import REREAD_MAX_BYTES
from myrm_tui.agent.tools import ToolContext, ToolError
from myrm_tui.agent.tools.files import FileEditTool, FileReadTool
from myrm_tui.agent.tools.search import MAX_GREP_BYTES, GlobTool, GrepTool
from myrm_tui.agent.tools.shell import BashTool, unrunnable
from myrm_tui.context.vault import ArtifactVault
from myrm_tui.store.db import Store
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.helpers import collect, make_agent, openai_settings


def _ctx(workspace: Path, **kw: Any) -> ToolContext:
    return ToolContext(
        workspace=workspace, vault=ArtifactVault("s"), auto_approve=True, bash_timeout=20, **kw
    )


# -- a workspace that is gone ---------------------------------------------------------------------------
CALLS = [
    ("file_read_tool", {"paths": ["hello.py"]}),
    ("glob", {"pattern": "*"}),
    ("grep", {"pattern": "x"}),
    ("bash", {"command": "ls"}),
    ("file_edit_tool", {"path": "new.py", "create": True, "new_string": "x = 1\n"}),
    ("bash", {"command": "touch made.py"}),
]


@pytest.mark.parametrize("how", ["deleted", "renamed"])
async def test_a_workspace_gone_mid_session_is_made_again_by_no_tool(
    how: str, emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    """Found: the folder removed (or renamed) while myrm ran, the model's file_edit_tool create made the
    workspace's path again and wrote there, and 'touch' ran in it; grep, glob and bash failed as tool
    bugs ('FileNotFoundError'). Every tool now answers one line and touches nothing."""
    moved = workspace.with_name("ws-renamed")

    def gone(body: dict[str, Any]) -> Reply:
        if how == "deleted":
            shutil.rmtree(workspace)
        else:
            workspace.rename(moved)
        return Reply(tool_calls=list(CALLS))

    emulator.enqueue(gone, Reply(text="done"), Reply(text="still here"))
    agent = await make_agent(store, workspace, openai_settings(emulator))
    try:
        events = await collect(agent, "go")
        results = [e.message.text for e in events if isinstance(e, ToolFinished)]
        assert len(results) == len(CALLS)
        for text in results:
            assert text.startswith(f"Error: the workspace {workspace} is no longer there"), text
            assert "\n" not in text
        assert not workspace.exists()  # never made again
        if how == "renamed":
            assert sorted(p.name for p in moved.iterdir()) == ["hello.py"]
        await collect(agent, "and now?")
        assert emulator.requests and not emulator.rejected
    finally:
        await agent.close()


# -- what is not a source file --------------------------------------------------------------------------
BIG = MAX_GREP_BYTES + 1


def _make(kind: str, full: Path, outside: Path) -> None:
    if kind == "fifo":
        os.mkfifo(full)
    elif kind == "socket":
        s = socket.socket(socket.AF_UNIX)
        s.bind(str(full))
        s.close()
    elif kind == "loop":
        os.symlink(full.name + ".2", full)
        os.symlink(full.name, full.with_name(full.name + ".2"))
    elif kind == "dangling":
        os.symlink("nowhere.py", full)
    elif kind == "out":
        os.symlink(outside, full)
    elif kind == "sparse":  # gigabytes on disk for nothing: its one line lies past grep's limit
        with open(full, "wb") as f:
            f.truncate(BIG)
            f.write(b"needle\n")
    elif kind == "folder":
        full.mkdir()
        (full / "inner.py").write_text("needle = 1\n")
    else:
        full.write_text("needle = 1\n")


KINDS = ["fifo", "socket", "loop", "dangling", "out", "sparse", "folder", "plain"]
TOOL_CALLS = [
    (FileReadTool(), lambda p: {"paths": [p]}),
    (FileEditTool(), lambda p: {"path": p, "old_string": "needle", "new_string": "pin"}),
    (FileEditTool(), lambda p: {"path": p, "create": True, "new_string": "x"}),
    (GrepTool(), lambda p: {"pattern": "needle", "path": p}),
]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("tool,args", TOOL_CALLS, ids=["read", "edit", "create", "grep"])
async def test_any_kind_of_file_is_a_result_or_one_line_never_a_tool_bug(
    kind: str, tool: Any, args: Any, tmp_path: Path, workspace: Path
) -> None:
    """Found: grep given a FIFO's path failed with NotADirectoryError, a loop of links failed every file
    tool with 'RuntimeError: Symlink loop' (both reported as tool bugs), and grep read a sparse file of
    gigabytes whole (rg applies --max-filesize only to what it finds itself) until its time limit."""
    outside = tmp_path / "secret.txt"
    outside.write_text("needle: the secret\n")
    _make(kind, workspace / "main.py", outside)
    try:
        res = await tool.run(args("main.py"), _ctx(workspace))
    except ToolError as exc:
        assert "\n" not in str(exc) and str(exc)
        return
    if isinstance(tool, GrepTool):
        assert "secret" not in res.content
        assert kind in ("plain", "folder"), res.content  # a sparse file over the limit is refused
    assert outside.read_text() == "needle: the secret\n"


async def test_grep_over_a_folder_skips_files_over_its_limit_and_says_so(
    workspace: Path, tmp_path: Path
) -> None:
    _make("sparse", workspace / "huge.log", tmp_path)
    (workspace / "small.py").write_text("needle = 1\n")
    res = await GrepTool().run({"pattern": "needle"}, _ctx(workspace))
    assert res.content.splitlines() == ["small.py:1:needle = 1", "[1 file over 20 MB not searched]"]


# -- names -------------------------------------------------------------------------------------------------
def _decoded(line: str) -> str:
    return json.loads(line) if line.startswith('"') else line


def _fs_name(name: str) -> bool:
    try:
        raw = os.fsencode(name)
    except UnicodeEncodeError:  # a surrogate no byte decodes to: no file can have it as its name
        return False
    return bool(raw) and b"/" not in raw and b"\0" not in raw and name not in (".", "..") and len(raw) < 200


names = (
    st.lists(
        st.one_of(
            st.sampled_from(
                ["\n", "\r", "\t", "\x1b[31m", '"', "\\", "\u2028", "\u202e", "\x85", "\udcff", ":", "a.py"]
            ),
            st.characters(codec=None, exclude_characters="/\x00"),
        ),
        min_size=1,
        max_size=12,
    )
    .map("".join)
    .filter(_fs_name)
)


@contextmanager
def _named(name: str) -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as base:
        ws = Path(base) / "ws"
        ws.mkdir()
        (ws / name).write_text("needle = 1\n")
        (ws / "zz.py").write_text("needle = 2\n")
        yield ws


@settings(deadline=None, max_examples=40, suppress_health_check=[HealthCheck.too_slow])
@given(name=names)
@example(name="evil\nname\x1b[31m.py")
@example(name='"quoted".py')
async def test_a_listed_name_is_one_line_and_names_the_file(name: str) -> None:
    """Found: a file named 'evil\\nname.py' was listed by glob, grep and a folder's read as two made-up
    names, neither of which the model could open. A name that is not all printable is listed as a JSON
    string, one a line; sent back as the path, it opens the file."""
    with _named(name) as ws:
        ctx = _ctx(ws)
        listed = (await GlobTool().run({"pattern": "*"}, ctx)).content.splitlines()
        assert sorted(map(_decoded, listed)) == sorted([name, "zz.py"])
        folder = (await FileReadTool().run({"paths": ["."]}, ctx)).content.splitlines()[1:]
        assert sorted(map(_decoded, folder)) == sorted([name, "zz.py"])
        hits = (await GrepTool().run({"pattern": "needle"}, ctx)).content.splitlines()
        assert len(hits) == 2
        shown = next(h for h in hits if not h.startswith("zz.py:"))
        sent_back = _decoded(shown[: -len(":1:needle = 1")])
        assert sent_back == name
        read = await FileReadTool().run({"paths": [sent_back]}, ctx)
        assert read.content.endswith("1\tneedle = 1")


# -- read-only commands that would wait --------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["fifo", "socket"])
@pytest.mark.parametrize("name", sorted(READ_ONLY - {"ls", "pwd", "echo", "find"}))
def test_a_read_only_command_naming_a_fifo_or_socket_asks(name: str, kind: str, workspace: Path) -> None:
    """Found: 'cat main.py', main.py a FIFO a cloned repository holds, ran unasked and waited for a
    writer until the command's time limit (120 s), every time the model looked at the file."""
    _make(kind, workspace / "main.py", workspace)
    rules = CommandRules()
    assert rules.assess(f"{name} hello.py", workspace).read_only
    assert not rules.assess(f"{name} main.py", workspace).allowed
    assert not rules.assess(f"{name} hello.py ./sub/../main.py", workspace).allowed
    assert rules.assess("ls main.py", workspace).read_only  # a listing opens nothing


async def test_cat_of_a_fifo_is_declined_not_waited_on_with_no_one_to_ask(workspace: Path) -> None:
    os.mkfifo(workspace / "main.py")
    ctx = ToolContext(workspace=workspace, vault=ArtifactVault("s"), bash_timeout=600)
    res = await BashTool().run({"command": "cat main.py"}, ctx)
    assert res.is_error and res.meta.get("declined")


# -- a written file that grew -----------------------------------------------------------------------------
async def test_a_file_read_again_after_a_compaction_is_bounded(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    """Found: after a compaction the files the agent wrote are read again whole, on the event loop; one a
    command's output went to ('python gen.py > data.csv') may be gigabytes. It is now read through the
    tools' bounded reader: a regular file inside the workspace, at most REREAD_MAX_BYTES."""
    emulator.enqueue(Reply(tool_calls=[("bash", {"command": "echo small > small.txt; echo x > big.txt"})]))
    emulator.enqueue(Reply(text="done"))
    agent = await make_agent(store, workspace, openai_settings(emulator))
    try:
        await collect(agent, "write them")
        with open(workspace / "big.txt", "ab") as f:
            f.truncate(REREAD_MAX_BYTES + 1)
        read = agent.session._read_for_reread
        assert read("small.txt") == "small\n"
        assert read("big.txt") is None
        report = await agent.compact_now()
        assert report is not None
        emulator.enqueue(Reply(text="after"))
        await collect(agent, "next")
        sent = json.dumps(emulator.requests[-1].body)
        assert "small.txt" in sent and not emulator.rejected
    finally:
        await agent.close()


# -- a command that eats memory ---------------------------------------------------------------------------
async def test_a_tool_command_and_its_children_go_first_when_memory_runs_out(workspace: Path) -> None:
    """There is no memory limit per command; a command that allocates without end is the one the kernel
    kills (oom_score_adj 1000, inherited), not myrm. Not run for real here: it would take the machine's
    memory from every other process on it."""
    res = await BashTool().run(
        {"command": "cat /proc/self/oom_score_adj; bash -c 'cat /proc/self/oom_score_adj'"}, _ctx(workspace)
    )
    assert res.content.split("<output>\n")[1].split() == ["1000", "1000", "</output>"]
    with open("/proc/self/oom_score_adj") as f:
        assert f.read().strip() != "1000"  # myrm's own is left as it was


# -- a command that left something running -----------------------------------------------------------------
@pytest.mark.parametrize(
    "command",
    [
        "(sleep 371 &); echo hi",
        "setsid sleep 371 & echo hi",
        "setsid bash -c 'sleep 371 & wait' & echo hi",
        "nohup sleep 371 & echo hi",
    ],
)
# A pid cgroup (the process limit, where myrm can make one) stops what a command left when it ends, so
# with limits on the holders' own stop was never the one tested: with none, it is the only one.
@pytest.mark.parametrize("limits", [Limits(), None], ids=["limits", "no-limits"])
async def test_a_command_that_ended_is_not_held_by_what_it_left_running(
    command: str, limits: Limits | None, workspace: Path
) -> None:
    """Found: 'python -m http.server &' (or 'setsid x &') kept the command's output open, so the call
    waited the whole time limit and answered 'exit 124, killed after the timeout' for a command that had
    ended at once. Once the command's own process ends, its output gets OUTPUT_GRACE seconds; then what
    holds it is stopped (its group, and the session of one that left it) and the real exit status is
    told, with a note."""
    res = await BashTool().run({"command": command, "timeout": 60}, _ctx(workspace, limits=limits))
    assert res.meta["exit_code"] == 0, res.content
    assert "hi" in res.content and "kept its output open; it was stopped" in res.content
    assert _ended(_left_running("sleep", "371"))


async def test_an_output_read_to_its_end_when_the_grace_runs_out_is_not_held() -> None:
    """Lived (a 250-turn session on a loaded machine): a command's output was read to its end and its pipe
    closed, but the reader woke after ``OUTPUT_GRACE``; looking for what held the closed pipe raised
    "I/O operation on closed file" and the call failed with a traceback. Nothing holds a closed output."""
    import asyncio

    from myrm_tui.agent.proc import _kill_holders

    proc = await asyncio.create_subprocess_exec("echo", "done", stdout=asyncio.subprocess.PIPE)
    assert proc.stdout is not None
    assert await proc.stdout.read() == b"done\n"
    await proc.wait()  # the transport closes the pipe at its end
    assert _kill_holders(proc) is False


def _ended(pids: list[int], timeout: float = 10.0) -> bool:
    """Each of ``pids`` has ended, or ends within ``timeout`` (a SIGKILL is delivered when the process is
    next scheduled: on a loaded machine it may still show as running an instant after the kill)."""
    for pid in pids:
        try:
            fd = os.pidfd_open(pid)
        except ProcessLookupError:
            continue
        try:
            if not select.select([fd], [], [], timeout)[0]:
                return False
        finally:
            os.close(fd)
    return True


def _left_running(*argv: str) -> list[int]:
    """Live processes running ``argv`` that this process's tools started (they carry its owner mark)."""
    from myrm_tui.agent.proc import OWNER_ENV, REAPER

    mark, want = f"{OWNER_ENV}={REAPER.tag}".encode(), [a.encode() for a in argv]
    out = []
    for pid in (p for p in os.listdir("/proc") if p.isdigit()):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().split(b"\0")[: len(want)]
            with open(f"/proc/{pid}/stat", "rb") as f:
                state = f.read().rsplit(b")", 1)[1].split()[0]
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = f.read().split(b"\0")
        except OSError:
            continue
        if cmd == want and state != b"Z" and mark in env:
            out.append(int(pid))
    return out


# -- command text bash cannot receive ----------------------------------------------------------------------
@settings(deadline=None, max_examples=25, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=st.text(st.characters(codec=None, exclude_characters="'"), max_size=20),
    pad=st.sampled_from([0, 1_000, MAX_ARGUMENT_BYTES - 40, MAX_ARGUMENT_BYTES + 1, 140_000]),
)
@example(text="a\x00b", pad=0)
@example(text="\ud800", pad=0)
@example(text="\udcff", pad=0)
@example(text="", pad=140_000)
async def test_any_command_text_runs_or_is_one_line_never_a_tool_bug(text: str, pad: int) -> None:
    """Found: a command holding a NUL byte failed with ValueError, a lone surrogate (JSON's "\\ud800") with
    UnicodeEncodeError in the permission check, and one over 128 KiB with 'OSError: Argument list too
    long' (a heredoc of a big file): each a tool bug. Now it runs, or is one line saying why it cannot,
    before anyone is asked. The text sits in single quotes after ':' (bash runs nothing of it)."""
    command = f": '{text}{'y' * pad}'"
    with tempfile.TemporaryDirectory() as ws:
        for auto in (True, False):
            ctx = ToolContext(
                workspace=Path(ws), vault=ArtifactVault("s"), auto_approve=auto, bash_timeout=30
            )
            try:
                res = await BashTool().run({"command": command}, ctx)
            except ToolError as exc:
                assert "\n" not in str(exc) and unrunnable(command) == str(exc)
                continue
            assert unrunnable(command) is None
            assert res.meta.get("exit_code") == 0 if auto else res.meta.get("declined")


# -- an edit of a file that is not UTF-8 -------------------------------------------------------------------
@settings(deadline=None, max_examples=40, suppress_health_check=[HealthCheck.too_slow])
@given(before=st.binary(max_size=40), after=st.binary(max_size=40))
@example(before=b"# caf\xe9 cr\xe8me\n", after=b"\r\n")
@example(before=b"\x89PNG\r\n\x1a\n\x00", after=b"\xff\xfe\x00")
async def test_an_edit_changes_only_what_it_replaces_or_nothing(before: bytes, after: bytes) -> None:
    """Found: editing a file that is not UTF-8 (a Latin-1 comment 'caf\\xe9', an image) rewrote every byte
    that is not UTF-8 as U+FFFD and said 'edited: 1 replacement'. The file now changes by exactly the
    replacement, byte for byte, or not at all (one line saying why)."""
    data = before + b"needle" + after
    with tempfile.TemporaryDirectory() as ws:
        target = Path(ws) / "f.py"
        target.write_bytes(data)
        try:
            await FileEditTool().run(
                {"path": "f.py", "old_string": "needle", "new_string": "pin", "replace_all": True},
                _ctx(Path(ws)),
            )
        except ToolError as exc:
            assert "\n" not in str(exc)
            assert target.read_bytes() == data
            return
        assert target.read_bytes() == data.replace(b"needle", b"pin")


# -- one read of many paths --------------------------------------------------------------------------------
@settings(deadline=None, max_examples=20, suppress_health_check=[HealthCheck.too_slow])
@given(
    names=st.lists(st.sampled_from(["big.txt", "small.py", "pic.png", "none.py"]), min_size=1, max_size=300),
)
@example(names=["big.txt"] * 300)
@example(names=["pic.png"] * 300)
async def test_a_read_of_many_paths_stops_once_its_answer_is_full(names: list[str]) -> None:
    """Found: file_read_tool given the same 19 MB file 30 times read it 30 times, kept every copy and
    numbered each on the event loop: 1.3 GB and 14 s (300 times would end myrm for lack of memory). A call
    now reads paths until its answer holds MAX_READ_CHARS of text or MAX_IMAGE_BYTES of images, and says
    how many it left unread."""
    from myrm_tui.agent.images import MAX_IMAGE_BYTES
    from myrm_tui.agent.tools.files import MAX_READ_CHARS

    with tempfile.TemporaryDirectory() as base:
        ws = Path(base)
        (ws / "big.txt").write_text(("x" * 79 + "\n") * 5_000)  # 400 KB: one fills an answer
        (ws / "small.py").write_text("y = 1\n")
        (ws / "pic.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 3_000_000)
        read: list[str] = []
        tool = FileReadTool()
        real = tool._read_one

        async def counted(path: str, *rest: Any) -> str:
            read.append(path)
            return await real(path, *rest)

        tool._read_one = counted  # type: ignore[method-assign,assignment]
        try:
            res = await tool.run({"paths": names}, _ctx(ws))
        except ToolError:
            assert names[0] == "none.py" or "none.py" in names
            return
        text_read = sum(5_000 * 86 if n == "big.txt" else 20 for n in read[:-1])
        images_read = sum(3_000_008 for n in read[:-1] if n == "pic.png")
        assert text_read <= MAX_READ_CHARS + 100 and images_read <= MAX_IMAGE_BYTES  # all but the last fit
        if len(read) < len(names):
            unread = len(names) - len(read)
            assert res.content.endswith(
                f"[{unread:,} more path(s) not read: this answer is full; read them in another call]"
            )


@settings(deadline=None, max_examples=20, suppress_health_check=[HealthCheck.too_slow])
@given(count=st.integers(1, 3_000), new_size=st.sampled_from([1, 100, 7_000, 25_000]))
@example(count=3_000, new_size=25_000)
async def test_an_edit_never_grows_a_file_past_what_a_file_tool_reads(count: int, new_size: int) -> None:
    """Found: replace_all of a one-letter old_string with a long new_string built the whole result in
    memory (3,000 x 25 KB: 75 MB; every line of a 20 MB file: gigabytes) and wrote it. An edit whose
    result would pass MAX_FILE_BYTES is one line; the file is unchanged."""
    from myrm_tui.agent.tools.files import MAX_FILE_BYTES

    with tempfile.TemporaryDirectory() as base:
        f = Path(base) / "f.txt"
        f.write_text("e\n" * count)
        args = {"path": "f.txt", "old_string": "e", "new_string": "n" * new_size, "replace_all": True}
        grown = 2 * count + count * (new_size - 1)
        if grown > MAX_FILE_BYTES:
            with pytest.raises(ToolError, match="over the 20,000,000 a file tool reads"):
                await FileEditTool().run(args, _ctx(Path(base)))
            assert f.read_text() == "e\n" * count
        else:
            await FileEditTool().run(args, _ctx(Path(base)))
            assert f.stat().st_size == grown


@settings(deadline=None, max_examples=25, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=st.text(st.characters(codec=None), min_size=1, max_size=20),
    pad=st.sampled_from([0, MAX_ARGUMENT_BYTES + 1]),
)
@example(text="a\x00b", pad=0)
@example(text="\ud800", pad=0)
async def test_any_grep_pattern_is_searched_or_one_line_never_a_tool_bug(text: str, pad: int) -> None:
    """Found: a grep pattern holding a NUL byte failed with 'ValueError: embedded null byte', a lone
    surrogate with UnicodeEncodeError, one over 128 KiB with 'Argument list too long' (rg is given it as
    an argument)."""
    with tempfile.TemporaryDirectory() as ws:
        (Path(ws) / "a.py").write_text("needle\n")
        try:
            await GrepTool().run({"pattern": text + "y" * pad}, _ctx(Path(ws)))
        except ToolError as exc:
            assert "\n" not in str(exc).split(":\n")[0]


# -- paths whose meaning depends on the process ------------------------------------------------------------
async def test_a_path_through_proc_is_not_read_unasked(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found: the read-only check resolves a command's paths in myrm, where /proc/self/cwd is myrm's own
    folder; the command resolves it in its own, the workspace. With myrm started in a subfolder of the
    workspace, 'cat /proc/self/cwd/../secret.txt' was checked as the workspace's file and read the one
    beside the workspace, unasked. A path through /proc, /dev/fd or /dev/std*, by its words or by a link
    in the workspace, asks."""
    (tmp_path / "secret.txt").write_text("SECRET beside the workspace\n")
    (workspace / "secret.txt").write_text("inside\n")
    (workspace / "sub").mkdir()
    monkeypatch.chdir(workspace / "sub")
    ctx = ToolContext(workspace=workspace, vault=ArtifactVault("s"))  # no one to ask: what asks is declined
    res = await BashTool().run({"command": "cat /proc/self/cwd/../secret.txt"}, ctx)
    assert "SECRET" not in res.content and res.meta.get("declined")
    assert (await BashTool().run({"command": "cat secret.txt"}, ctx)).content.endswith("inside\n</output>")


@pytest.mark.parametrize(
    "word", ["/proc/self/cwd/hello.py", "here/hello.py", "chain/hello.py", "/dev/fd/0", "/dev/stdin"]
)
def test_a_read_only_word_through_proc_asks(
    word: str, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    os.symlink("/proc/self/cwd", workspace / "here")
    os.symlink("here", workspace / "chain")
    monkeypatch.chdir(workspace)  # the check would resolve each inside the workspace
    rules = CommandRules()
    assert rules.assess("cat hello.py ./sub/../hello.py", workspace).read_only
    assert not rules.assess(f"cat {word}", workspace).allowed


@pytest.mark.parametrize("path", ["hello.py/new.py", "hello.py/deeper/new.py"])
async def test_a_write_the_disk_refuses_is_one_line_and_logged(
    path: str, workspace: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Found: creating 'hello.py/new.py' (a file where a folder must be) failed as a tool bug
    (NotADirectoryError); a full disk or a read-only filesystem took the same way. One line for the model,
    the failure logged with its traceback."""
    with pytest.raises(ToolError, match=r"^(new\.py|deeper): cannot write: (Not a directory|File exists)$"):
        await FileEditTool().run({"path": path, "create": True, "new_string": "x"}, _ctx(workspace))
    assert any(r.exc_info and "writing" in r.getMessage() for r in caplog.records)
    assert (workspace / "hello.py").read_text().startswith("def greet")


@contextmanager
def as_nobody() -> Iterator[None]:
    """This process's effective user is ``nobody`` (65534) inside: the kernel's permission checks of a
    user who does not own the project (the root running the tests passes every one)."""
    os.seteuid(65534)
    try:
        yield
    finally:
        os.seteuid(0)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to become another user")
async def test_an_edit_in_a_read_only_project_is_refused_before_the_user_is_asked() -> None:
    """Found (firsthour5) running myrm as a non-root user in a project it may not write: the user was shown
    the diff, approved it, and then read 'a.txt: cannot write: Permission denied'. Refused first, one line;
    a folder it may write still asks, and the edit is made."""
    root = Path(tempfile.mkdtemp(prefix="myrm-ro-"))
    try:
        root.chmod(0o755)  # readable by nobody, writable by its owner only
        (root / "a.txt").write_text("one\n")
        (root / "open").mkdir(mode=0o777)
        (root / "open").chmod(0o777)
        asked: list[str] = []

        async def approver(tool: str, diff: str, assessment: Any) -> Any:
            asked.append(diff)
            return "yes"

        ctx = ToolContext(workspace=root, vault=ArtifactVault("s"), approver=approver)
        edits: list[dict[str, Any]] = [
            {"path": "a.txt", "old_string": "one", "new_string": "two"},
            {"path": "new.txt", "new_string": "x", "create": True},
            {"path": "deeper/new.txt", "new_string": "x", "create": True},
        ]
        with as_nobody():
            for args in edits:
                with pytest.raises(
                    ToolError, match=r": cannot write: the folder .* is read-only for this user"
                ):
                    await FileEditTool().run(args, ctx)
            assert asked == []
            made = await FileEditTool().run({"path": "open/new.txt", "new_string": "x", "create": True}, ctx)
        assert not made.is_error and len(asked) == 1 and (root / "open" / "new.txt").read_text() == "x"
        assert (root / "a.txt").read_text() == "one\n" and sorted(p.name for p in root.iterdir()) == [
            "a.txt",
            "open",
        ]
    finally:
        shutil.rmtree(root)
