"""Tools that never lose or leak work: parallel edits of one file, ripgrep-backed search, tool processes
that end with myrm (even on kill -9), terminal escape codes neutralised."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from myrm_tui.agent.events import ToolFinished, TurnDone
from myrm_tui.agent.limits import pid_cgroup_parent
from myrm_tui.agent.proc import OWNER_ENV, kill_group, kill_marked
from myrm_tui.agent.tools import ToolContext, ToolError, search
from myrm_tui.agent.tools.search import GlobTool, GrepTool
from myrm_tui.context.vault import ArtifactVault
from myrm_tui.safe_text import sanitize
from myrm_tui.store.db import Store
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests import warm
from tests.helpers import cli_env, collect, emulator_args, make_agent, openai_settings, run_myrm


async def _parallel_edits(emulator: ProviderEmulator, store: Store, workspace: Path, n: int) -> None:
    """``n`` edits of one file in one assistant message, through the agent's real tool runner."""
    target = workspace / "many.txt"
    target.write_text("".join(f"line {i} = old\n" for i in range(n)))
    target.chmod(0o640)
    agent = await make_agent(store, workspace, openai_settings(emulator))
    edits = [
        (
            "file_edit_tool",
            {"path": "many.txt", "old_string": f"line {i} = old", "new_string": f"line {i} = new"},
        )
        for i in range(n)
    ]
    emulator.enqueue(Reply(tool_calls=edits), Reply(text="done"))
    events = await collect(agent, "edit them all")
    await agent.close()
    assert isinstance(events[-1], TurnDone)
    finished = [e for e in events if isinstance(e, ToolFinished)]
    assert len(finished) == n
    assert all(e.message.text.startswith("edited many.txt") for e in finished)
    # Every edit reported "edited" is in the file: none lost (before the fix one of n survived).
    assert target.read_text() == "".join(f"line {i} = new\n" for i in range(n))
    assert target.stat().st_mode & 0o777 == 0o640  # the atomic rename keeps the file's mode
    assert [p.name for p in workspace.iterdir() if p.name.startswith(".many")] == []  # no temp file left


async def test_two_parallel_edits_of_one_file_both_land(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    await _parallel_edits(emulator, store, workspace, 2)


async def test_twenty_parallel_edits_of_one_file_all_land(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    await _parallel_edits(emulator, store, workspace, 20)


# --- grep / glob on ripgrep -------------------------------------------------------------------------


@pytest.fixture
def sctx(workspace: Path) -> ToolContext:
    return ToolContext(workspace=workspace, vault=ArtifactVault("s"), auto_approve=True)


def _gone(pid: int) -> bool:
    """Whether ``pid`` has ended (a zombie waiting to be reaped counts as ended)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except (FileNotFoundError, ProcessLookupError):  # reaped before or while its stat was read
        return True


async def _wait_until(cond: Any, limit: float = 10.0, every: float = 0.05) -> bool:
    """Poll ``cond`` every ``every`` seconds until it holds or ``limit`` seconds pass (a bounded wait on a
    condition)."""
    deadline = time.monotonic() + limit
    while not cond():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(every)
    return True


async def test_grep_with_a_catastrophic_pattern_ends_quickly(sctx: ToolContext, workspace: Path) -> None:
    """Python's re spent minutes on this (exponential backtracking); ripgrep's engine is linear."""
    (workspace / "aaa.txt").write_text("a" * 50_000 + "!\n" + "a" * 40 + "\n")
    t0 = time.monotonic()
    res = await GrepTool().run({"pattern": "(a+)+$"}, sctx)
    assert time.monotonic() - t0 < 10
    assert res.content == "aaa.txt:2:" + "a" * 40


async def test_grep_and_glob_skip_gitignored_files(sctx: ToolContext, workspace: Path) -> None:
    (workspace / ".gitignore").write_text("secret.env\nbuild/\n")
    (workspace / "secret.env").write_text("def greet_token = 1\n")
    (workspace / "build").mkdir()
    (workspace / "build" / "gen.py").write_text("def greet(): pass\n")
    res = await GrepTool().run({"pattern": "greet"}, sctx)
    assert res.content == "hello.py:1:def greet():"
    listing = (await GlobTool().run({"pattern": "**/*"}, sctx)).content.splitlines()
    assert listing == [".gitignore", "hello.py"]
    assert (await GlobTool().run({"pattern": "*.py"}, sctx)).content == "hello.py"


async def test_grep_reports_a_bad_pattern_in_one_error(sctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="invalid regular expression"):
        await GrepTool().run({"pattern": "(unclosed"}, sctx)


@pytest.fixture
def hanging_rg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An ``rg`` that hangs, writing its pid first: stands for a search that never ends."""
    fake = tmp_path / "rg"
    pidfile = tmp_path / "rg.pid"
    fake.write_text(f"#!/bin/sh\necho $$ > {pidfile}\nexec sleep 60\n")
    fake.chmod(0o755)
    monkeypatch.setattr(search, "rg_binary", lambda: str(fake))
    return pidfile


async def test_a_search_over_its_time_limit_is_a_tool_error_and_its_child_ends(
    sctx: ToolContext, hanging_rg: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search, "SEARCH_TIMEOUT", 0.5)
    with pytest.raises(ToolError, match=r"took longer than 0.5 s and was stopped"):
        await GrepTool().run({"pattern": "x"}, sctx)
    pid = int(hanging_rg.read_text())
    assert await _wait_until(lambda: _gone(pid))


async def test_cancelling_a_search_kills_its_child(sctx: ToolContext, hanging_rg: Path) -> None:
    task = asyncio.ensure_future(GlobTool().run({"pattern": "*"}, sctx))
    assert await _wait_until(lambda: hanging_rg.exists() and hanging_rg.read_text().strip() != "")
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    pid = int(hanging_rg.read_text())
    assert await _wait_until(lambda: _gone(pid), 5)


async def test_a_missing_rg_is_a_one_line_tool_error(
    sctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search, "rg_binary", lambda: None)
    with pytest.raises(ToolError, match="ripgrep") as err:
        await GrepTool().run({"pattern": "x"}, sctx)
    assert "\n" not in str(err.value)


# --- tool processes end with myrm, even on kill -9 ----------------------------------------------------

CHILD = """
import asyncio, json, sys
from pathlib import Path
from myrm_tui.config import resolve
from myrm_tui.store.db import Store
from tests.helpers import collect, make_agent

async def main(db, ws, base, extra="{}"):
    store = await Store.open(Path(db))
    settings = resolve({}, {}, {"model": "openai/gpt-4o-mini", "api_base": base, "api_key": "sk-test",
                                "approval": "auto", "summarizer_model": "extractive", **json.loads(extra)},
                       env={})
    agent = await make_agent(store, Path(ws), settings)
    await collect(agent, "start the server and wait")

asyncio.run(main(*sys.argv[1:]))
"""


def start_child(script: str, *args: str) -> warm.Process:
    """A real Python process running ``script`` with the package (and ``tests``) importable."""
    root = Path(__file__).resolve().parents[3]
    return warm.Popen(
        [sys.executable, "-c", script, *args], cwd=root, env={**os.environ, "PYTHONPATH": str(root)}
    )


def start_agent_child(
    db: Path, workspace: Path, emulator: ProviderEmulator, **settings: object
) -> warm.Process:
    """A real process running the agent (``CHILD``) on a fresh database in ``db``'s folder, for tests that
    kill it with -9; ``settings`` over the usual ones."""
    db.parent.mkdir()
    return start_child(CHILD, str(db), str(workspace), emulator.openai_base, json.dumps(settings))


def _group_alive(pgid: int) -> bool:
    """Whether any live (non-zombie) process is in the process group ``pgid``."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z" and int(fields[2]) == pgid:
            return True
    return False


def _cgroups_of(pid: int) -> list[Path]:
    """The pid cgroups (limits.py) the myrm of ``pid`` made for its commands."""
    parent = pid_cgroup_parent()
    return list(parent.glob(f"myrm-{pid}-*")) if parent is not None else []


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")
async def test_kill_9_of_myrm_ends_its_tool_processes_and_job_logs(
    emulator: ProviderEmulator, workspace: Path, tmp_path: Path
) -> None:
    emulator.enqueue(
        Reply(
            tool_calls=[
                ("bash", {"command": "echo $$ > bg.pid; sleep 300; echo never", "run_in_background": True}),
                # a leader that clears its environment (no owner mark) as soon as it starts: the group
                # registered before the command ran is what ends it when myrm is killed at once
                ("bash", {"command": "echo $$ > fg.pid; exec env -i sh -c 'sleep 300'", "timeout": 600}),
            ]
        ),
        Reply(text="done"),
    )
    db = tmp_path / "kill9" / "myrm.db"
    child = start_agent_child(db, workspace, emulator)
    try:
        pids = [workspace / "bg.pid", workspace / "fg.pid"]
        ready = await _wait_until(
            lambda: all(p.exists() and p.read_text().strip() for p in pids), 60, every=0.002
        )
        assert ready, "the tool commands never started"
        jobs = db.parent / "jobs"
        assert [p for p in jobs.rglob("*.log")]  # the background job's log is there
        made = _cgroups_of(child.pid)
        assert len(made) == (2 if pid_cgroup_parent() is not None else 0), made
        # kill -9 (no finally block, no atexit handler runs) at once: before the watcher's half-second
        # look at myrm's children on almost every run, so the registered groups are what end them
        child.kill()
        groups = [int(p.read_text()) for p in pids]
        child.wait(10)
        assert await _wait_until(lambda: not any(_group_alive(g) for g in groups)), "tool processes survived"
        assert await _wait_until(lambda: not any(jobs.rglob("*.log"))), "the job log folder stayed"
        # and the pid cgroups of both commands (limits.py), where this machine gave them one
        if made:
            assert await _wait_until(lambda: not _cgroups_of(child.pid)), f"stayed: {_cgroups_of(child.pid)}"
    finally:
        if child.poll() is None:
            child.kill()
        for p in (workspace / "bg.pid", workspace / "fg.pid"):
            if p.exists() and p.read_text().strip():
                kill_group(int(p.read_text()))


async def test_a_tool_command_starts_only_once_its_group_is_registered(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The command waits at a gate until the watcher has been told its group: a kill -9 of myrm can come
    at any instant, and a command that ran first could clear its owner mark (``exec env -i …``)."""
    from myrm_tui.agent import proc

    ran = tmp_path / "ran"
    seen: list[bool] = []
    register = proc.REAPER.guard

    def slow_guard(pgid: int) -> None:
        time.sleep(0.3)  # an ungated command has long run by now
        seen.append(ran.exists())
        register(pgid)

    monkeypatch.setattr(proc.REAPER, "guard", slow_guard)
    out = await proc.run_captured(f"touch {ran}; echo $0 ok", tmp_path, 10, 10_000)
    assert seen == [False] and ran.exists()
    assert out.text == "bash ok\n" and out.code == 0  # the command as it was given, $0 included


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")
async def test_the_marked_kill_ends_the_session_a_marked_command_leads_members_without_the_mark_too(
    tmp_path: Path,
) -> None:
    """A tool's command leads its own session and carries the owner mark; a member it started with a
    cleared environment (``env -i``) does not. The watcher's last resort (myrm killed before the group
    was registered or its children looked at) kills by the mark: the unmarked member goes with the
    session its marked leader leads."""
    tag = f"test-{os.getpid()}-{time.monotonic_ns()}"
    ready = tmp_path / "member.pid"
    leader = subprocess.Popen(
        ["bash", "-c", f"env -i sh -c 'echo $$ > {ready}; exec sleep 300' & wait; echo never"],
        env={**os.environ, OWNER_ENV: tag},
        start_new_session=True,
    )
    try:
        assert await _wait_until(lambda: ready.exists() and ready.read_text().strip())
        assert kill_marked(tag) == 1  # the leader alone carries the mark
        leader.wait(10)
        assert await _wait_until(lambda: not _group_alive(leader.pid)), "the unmarked member survived"
    finally:
        kill_group(leader.pid)
        leader.wait(10)


# --- terminal escape codes are shown, never obeyed ----------------------------------------------------

OSC52 = "\x1b]52;c;cm0gLXJmIH4K\x07"  # write the clipboard
TITLE = "\x1b]0;pwned\x1b\\"  # window title, ST-terminated
CLEAR = "\x1b[2J\x1b[H"  # clear the screen, cursor home
CURSOR = "\x1b[5A\x1b[2K"  # up five lines, erase the line: rewrites output above
C1 = "\x9b31m\x9d0;t\x9c"  # 8-bit CSI, OSC, ST
EVIL = f"a{OSC52}b{TITLE}c{CLEAR}d{CURSOR}e{C1}f\x08\x7f\r\n\tg\rh\x00"
CONTROLS = {chr(c) for c in [*range(0x20), *range(0x7F, 0xA0)]} - {"\t", "\n"}


def test_sanitize_neutralises_every_control_and_keeps_tabs_and_newlines() -> None:
    out = sanitize(EVIL)
    assert not CONTROLS & set(out)
    assert out == ("a␛]52;c;cm0gLXJmIH4K␇b␛]0;pwned␛\\c␛[2J␛[Hd␛[5A␛[2Ke\ufffd31m\ufffd0;t\ufffdf␈␡\n\tg␍h␀")
    assert sanitize("plain text\n\tindented — ünïcode ✓") == "plain text\n\tindented — ünïcode ✓"


def test_ask_shows_escape_codes_from_files_and_the_model_inert(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    (workspace / "evil.txt").write_text(f"before{OSC52}{TITLE}{CLEAR}after\n")
    emulator.enqueue(
        Reply(tool_calls=[("file_read_tool", {"paths": ["evil.txt"]})]),
        Reply(text=f"Read it.{CLEAR}{OSC52}{C1} Done."),
    )
    root = Path(__file__).resolve().parents[3]
    proc = run_myrm(
        ["ask", "read evil.txt", "--yes", *emulator_args(emulator, workspace)],
        env=cli_env(tmp_path),
        cwd=root,
    )
    assert proc.returncode == 0, proc.stderr
    assert not CONTROLS & set(proc.stdout + proc.stderr.replace("\n", ""))
    assert "[tool done] ==> evil.txt\n1\tbefore␛]52;c;cm0gLXJmIH4K␇␛]0;pwned␛\\␛[2J␛[Hafter" in proc.stderr
    assert proc.stdout == "Read it.␛[2J␛[H␛]52;c;cm0gLXJmIH4K␇\ufffd31m\ufffd0;t\ufffd Done.\n"


async def test_tui_chat_and_tool_cards_render_escape_codes_inert() -> None:
    from textual.app import App, ComposeResult
    from textual.widget import Widget

    from myrm_tui.app.widgets.chat_message import AssistantMessage, Notice, UserMessage
    from myrm_tui.app.widgets.tool_call import ToolCallView
    from myrm_tui.context.types import ToolCall

    class Probe(App[None]):
        def compose(self) -> ComposeResult:
            yield UserMessage(f"user{OSC52}")
            yield AssistantMessage()
            yield ToolCallView(ToolCall("c1", "file_read_tool", '{"paths": ["evil\\u001b]0;x\\u0007"]}'))
            yield Notice(f"note{CLEAR}")

    app = Probe()
    async with app.run_test(size=(160, 60)) as pilot:
        answer = app.query_one(AssistantMessage)
        await answer.append(f"model says {OSC52} and {CURSOR}{C1}")
        await answer.finish()
        card = app.query_one(ToolCallView)
        card.set_result(f"file text {EVIL}", is_error=False)
        card.collapsed = False
        await pilot.pause()
        shown = ""
        for widget in app.screen.walk_children(Widget):
            if widget.size.area:
                strips = widget.render_lines(widget.size.region)
                shown += "".join(seg.text for strip in strips for seg in strip)
        assert "model says ␛]52;c;" in shown and "file text a␛]52;c;" in shown and "note␛[2J" in shown
        assert not CONTROLS & set(shown)


# --- a retried cut stream: only the retry's answer on stdout ------------------------------------------


def test_ask_prints_only_the_retrys_answer_after_a_cut_stream(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    emulator.enqueue(Reply(text="x" * 40, chunk_size=4, drop_connection_after=2), Reply(text="recovered"))
    proc = run_myrm(
        ["ask", "hi", *emulator_args(emulator, workspace)],
        env=cli_env(tmp_path, "cut.db"),
        cwd=Path(__file__).resolve().parents[3],
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "recovered\n"  # before: "xxxxxxxxrecovered"
    assert "cut off" in proc.stderr and "Retrying once." in proc.stderr
    assert len(emulator.requests) == 2
    retried = emulator.accepted[-1].body["messages"]
    assert retried[-2]["content"].startswith("xxxx") and "[reply cut off" in retried[-2]["content"]


async def test_tui_shows_the_cut_reply_marked_and_the_retry_apart() -> None:
    from textual.app import App, ComposeResult
    from textual.widgets import Markdown

    from myrm_tui.agent import events
    from myrm_tui.app.widgets.chat_log import CUT_MARK, ChatLog
    from myrm_tui.app.widgets.chat_message import AssistantMessage
    from myrm_tui.context.types import Message

    class Probe(App[None]):
        def compose(self) -> ComposeResult:
            yield ChatLog()

    app = Probe()
    async with app.run_test() as pilot:
        log = app.query_one(ChatLog)
        for ev in (
            events.TextChunk("xxxxxxxx"),
            events.StreamCut("xxxxxxxx"),
            events.Notice("The reply was cut off. Retrying once.", "warning"),
            events.TextChunk("recovered"),
            events.AssistantSaved(Message("assistant", "recovered"), None),
        ):
            await log.show(ev)
        await pilot.pause()
        bubbles = [m.query_one(Markdown).source for m in app.query(AssistantMessage)]
        assert bubbles == ["xxxxxxxx" + CUT_MARK, "recovered"]


# --- MCP servers that fail at start-up -----------------------------------------------------------------


def test_ask_reports_mcp_servers_that_fail_to_start_on_one_line_each(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        "mcp_servers = [\n"
        '  { name = "dies", command = "sh", args = ["-c", "exit 3"] },\n'
        '  { name = "missing", command = "no-such-mcp-server-xyz" },\n'
        "]\n"
    )
    emulator.enqueue(Reply(text="fine"))
    env = {**os.environ, "MYRM_DB": str(tmp_path / "m.db"), "MYRM_CONFIG": str(config), "OPENAI_API_KEY": "x"}
    args = [
        "--model",
        "openai/gpt-4o-mini",
        "--api-base",
        emulator.openai_base,
        "--workspace",
        str(workspace),
    ]
    proc = run_myrm(["ask", "hi", *args], env=env, cwd=Path(__file__).resolve().parents[3])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "fine\n"
    lines = [line for line in proc.stderr.splitlines() if "MCP server" in line]
    assert len(lines) == 2, proc.stderr
    assert "'dies' did not start" in lines[0] and "ExceptionGroup" not in lines[0]
    assert "'missing' did not start: FileNotFoundError" in lines[1]


async def test_mcp_servers_that_never_answer_cost_one_time_limit_together(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import mcp.client.stdio  # noqa: F401  (imported before the clock starts: it is slow on a busy machine)

    from myrm_tui.agent import mcp_client

    monkeypatch.setattr(mcp_client, "STARTUP_TIMEOUT", 1.0)
    silent = [
        mcp_client.McpServerConfig.from_dict({"name": f"s{i}", "command": "sleep", "args": ["30"]})
        for i in range(3)
    ]
    t0 = time.monotonic()
    conns, tools, errors = await mcp_client.connect_all(silent)
    assert time.monotonic() - t0 < 2.9  # together, not 3 x 1 s
    assert conns == [] and tools == []
    assert errors == [f"MCP server 's{i}' did not start: no answer within 1 s" for i in range(3)]


def test_ask_ends_soon_after_an_mcp_server_that_never_answers_however_long_it_would_live(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The server ignores its closed stdin and would live 120 s (its child too): `ask` used to wait at
    # exit for as long as it lived. Now it is killed when it fails to start.
    from myrm_tui.agent import mcp_client

    monkeypatch.setattr(mcp_client, "STARTUP_TIMEOUT", 1.0)
    config = tmp_path / "config.toml"
    config.write_text(
        'mcp_servers = [{ name = "hang", command = "sh", args = ["-c", "sleep 120 & sleep 120"] }]\n'
    )
    emulator.enqueue(Reply(text="answered"))
    t0 = time.monotonic()
    done = run_myrm(
        ["ask", "hi", *emulator_args(emulator, workspace)], env=cli_env(tmp_path, MYRM_CONFIG=str(config))
    )
    assert time.monotonic() - t0 < 60  # the server would still be sleeping
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "answered"
    assert "MCP server 'hang' did not start: no answer within 1 s" in done.stderr
    assert [p for p in os.listdir("/proc") if p.isdigit() and _has_mark(int(p))] == []


def _has_mark(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            mine = f"MYRM_MCP_SERVER={os.getpid()}-".encode()  # this process's servers, not another worker's
            return any(v.startswith(mine) for v in f.read().split(b"\0"))
    except OSError:
        return False


async def test_an_mcp_servers_stderr_goes_to_its_log_not_the_terminal(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # The SDK's default is the sys.stderr of the moment mcp.client.stdio was imported: the terminal the
    # TUI draws on, or (imported under a capture since closed) a dead file that fails every later start.
    import io
    import sys

    import mcp.client.stdio

    from myrm_tui.agent import mcp_client

    dead = io.StringIO()
    dead.close()
    monkeypatch.setattr(sys, "stderr", dead)
    # the SDK's own default (bound when it was imported), on the function under its context manager
    monkeypatch.setattr(mcp.client.stdio.stdio_client.__wrapped__, "__defaults__", (dead,))  # type: ignore[attr-defined]
    monkeypatch.setenv("MYRM_LOG", str(tmp_path / "logs" / "myrm.log"))
    monkeypatch.setattr(mcp_client, "STARTUP_TIMEOUT", 1.0)
    noisy = mcp_client.McpServerConfig.from_dict(
        {"name": "noisy", "command": "sh", "args": ["-c", "echo 'warming up' >&2; sleep 30"]}
    )
    conns, _, errors = await mcp_client.connect_all([noisy])
    assert conns == [] and errors == ["MCP server 'noisy' did not start: no answer within 1 s"]
    logged = (tmp_path / "logs" / "mcp-servers.log").read_text()
    assert "--- noisy started" in logged and "warming up" in logged


def test_a_hook_whose_child_keeps_its_stdout_leaves_no_traceback_at_exit(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(  # setsid: the child leaves the hook's process group, so killing the group misses it
        '[[hooks]]\nevent = "session_start"\ncommand = "setsid sleep 4 & echo started"\ntimeout = 1\n'
    )
    emulator.enqueue(Reply(text="fine"))
    env = {**os.environ, "MYRM_DB": str(tmp_path / "h.db"), "MYRM_CONFIG": str(config), "OPENAI_API_KEY": "x"}
    args = ["--model", "openai/gpt-4o-mini", "--api-base", emulator.openai_base]
    # Executed, not forked (tests/warm.py): what is printed at exit depends on the interpreter's own shutdown.
    proc = subprocess.run(
        [sys.executable, "-m", "myrm_tui.cli", "ask", "hi", *args, "--workspace", str(workspace)],
        capture_output=True,
        text=True,
        env=env,
        cwd=Path(__file__).resolve().parents[3],
        timeout=120,
    )
    assert proc.returncode == 0 and proc.stdout == "fine\n", proc.stderr
    assert "Traceback" not in proc.stderr and "Event loop is closed" not in proc.stderr, proc.stderr
