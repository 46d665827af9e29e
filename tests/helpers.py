"""Builders used across tests."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import os
import subprocess
import sys
import tempfile
import traceback
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from myrm_tui.agent.agent import Agent
from myrm_tui.agent.factory import build_agent
from myrm_tui.config import resolve
from myrm_tui.context.config import ContextConfig
from myrm_tui.context.pipeline import PipelineRun, build_pipeline
from myrm_tui.context.state import ContextState
from myrm_tui.context.step import NO_COMPACTION, CompactionPlan, Request, Step, StepResult, View
from myrm_tui.context.tokens import TokenCounter
from myrm_tui.context.types import Message, ToolCall
from myrm_tui.context.vault import ArtifactVault
from myrm_tui.store.db import Store
from myrm_tui.testing.emulator import ProviderEmulator

if TYPE_CHECKING:
    from textual.pilot import Pilot

    from myrm_tui.app.app import MyrmApp

COUNTER = TokenCounter()
PIPELINE = build_pipeline()


def cli_env(tmp: Path, db: str = "cli.db", **extra: str) -> dict[str, str]:
    """A ``myrm`` subprocess's environment: its own database, no user config, a key the emulator takes."""
    return {
        **os.environ,
        "MYRM_DB": str(tmp / db),
        "MYRM_CONFIG": str(tmp / "none.toml"),
        "OPENAI_API_KEY": "sk-test",
        **extra,
    }


def run_myrm(
    args: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    stdin: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """``myrm ARGS`` run in this process through ``myrm_tui.cli.main``, as a script sees it: exit code,
    stdout and stderr (a traceback and code 1 if it raised, as the interpreter would print). A subprocess
    pays ``import litellm`` (3-6 s) each time; here it is paid once per test process. ``env`` replaces the
    environment as ``subprocess.run(env=...)`` does; argv, environment, working folder, standard streams
    and the package logger (``setup_logging`` adds a file handler and stops propagation) are put back
    afterwards. What only a real process shows (signals, kill -9, a second pid, output at interpreter
    exit, packaging) is still tested with ``sys.executable -m myrm_tui.cli``."""
    # Files, not StringIO: a child given ``sys.stderr`` (an MCP server's log) needs a file descriptor, and
    # what it writes there lands in ``stderr`` as it would in a subprocess's captured stream.
    with (
        tempfile.TemporaryFile("a+", encoding="utf-8") as out,
        tempfile.TemporaryFile("a+", encoding="utf-8") as err,
        package_log_kept(),
    ):
        code = _run_main(args, env, cwd, stdin, out, err)
        out.seek(0)
        err.seek(0)
        return subprocess.CompletedProcess(["myrm", *args], code, out.read(), err.read())


def bench_strategies(corpus: Path, tmp: Path, window: int = 4000, strategies: str = "myrm,none") -> Any:
    """``myrm bench`` over ``corpus`` (a file or a folder of other agents' sessions), as a user runs it; each
    strategy's figures from its ``--json`` file."""
    out = tmp / "bench.json"
    args = ["bench", "--corpus", str(corpus), "--window", str(window), "--strategies", strategies]
    done = run_myrm([*args, "--json", str(out)], env=cli_env(tmp))
    assert done.returncode == 0, done.stderr
    return json.loads(out.read_text())["strategies"]


async def pipe_streams(
    read_fd: int, write_fd: int, limit: int = 50 * 1024 * 1024
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """asyncio streams over two pipe ends (an ACP connection's: the reader takes lines up to 50 MB)."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=limit)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(read_fd, "rb", 0))
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, os.fdopen(write_fd, "wb", 0)
    )
    return reader, asyncio.StreamWriter(transport, protocol, None, loop)


@contextmanager
def package_log_kept() -> Iterator[None]:
    """The package logger as it was before the block, after it: ``logs.setup_logging`` (run by an
    in-process command) adds a file handler, closed here, and stops propagation to the root, where
    ``caplog`` listens."""
    log = logging.getLogger("myrm_tui")
    handlers, level, propagate = list(log.handlers), log.level, log.propagate
    try:
        yield
    finally:
        for handler in log.handlers:
            if handler not in handlers:
                handler.close()
        log.handlers[:] = handlers
        log.setLevel(level)
        log.propagate = propagate


def _run_main(
    args: Sequence[str],
    env: Mapping[str, str] | None,
    cwd: Path | None,
    stdin: str | None,
    out: IO[str],
    err: IO[str],
) -> int:
    from myrm_tui import cli

    saved_env, saved_cwd, saved_argv = dict(os.environ), os.getcwd(), sys.argv
    saved_streams = (sys.stdin, sys.stdout, sys.stderr)
    try:
        if env is not None:
            os.environ.clear()
            os.environ.update(env)
        if cwd is not None:
            os.chdir(cwd)
        sys.argv = ["myrm", *args]
        sys.stdin, sys.stdout, sys.stderr = io.StringIO(stdin or ""), out, err
        try:
            cli.main()
        except SystemExit as exc:
            if exc.code is None or isinstance(exc.code, int):
                return exc.code or 0
            print(exc.code, file=err)
            return 1
        except Exception:
            traceback.print_exc(file=err)
            return 1
        return 0
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved_streams
        sys.argv = saved_argv
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)


def emulator_args(emulator: ProviderEmulator, workspace: Path) -> list[str]:
    """``ask``'s arguments that send it to the emulator, working in ``workspace``."""
    return [
        "--model",
        "openai/gpt-4o-mini",
        "--api-base",
        emulator.openai_base,
        "--workspace",
        str(workspace),
    ]


# -- the TUI: one way to build it, start it and drive it ------------------------------------------------

# A terminal's default size, for Pilot tests that look at no layout, no side panel and no ring: below the
# panel's width (``screens.main.NARROW``) the panel is collapsed to the ring's line, and there are 2.5x
# fewer cells than at 120x40 to lay out and draw (~20 % of such a test's CPU).
SMALL_SCREEN = (80, 24)


def last_user_text(body: dict[str, Any]) -> str:
    """The text of the last user message of a request body as the provider received it (a string or parts)."""
    content = [m for m in body["messages"] if m["role"] == "user"][-1]["content"]
    if isinstance(content, str):
        return content
    return "".join(p.get("text", "") for p in content if isinstance(p, dict))


def make_app(emu: ProviderEmulator, tmp: Path, workspace: Path, **cli: Any) -> MyrmApp:
    """The app on ``tmp/tui.db``, talking to the emulator with auto-approval (``cli`` overrides)."""
    from myrm_tui.app.app import MyrmApp

    settings = {
        "model": "openai/gpt-4o-mini",
        "api_base": emu.openai_base,
        "api_key": "sk-test",
        "approval": "auto",
        **cli,
    }
    return MyrmApp(db_path=tmp / "tui.db", workspace=workspace, cli=settings)


@asynccontextmanager
async def started(app: MyrmApp, timeout: float = 60.0, **run_test: Any) -> AsyncIterator[Pilot[Any]]:
    """``app.run_test(**run_test)``, once the app is ready (its agent built: the first start in a process
    imports it, so a loaded machine gets a minute; the wait ends as soon as it is ready)."""
    async with app.run_test(**run_test) as pilot:
        await wait_until(pilot, app.ready.is_set, timeout)
        yield pilot


async def wait_until(pilot: Pilot[Any], cond: Callable[[], bool], timeout: float = 15.0) -> None:
    """Poll ``cond`` every 10 ms while the app runs on its own; once it holds, it is asked again on a
    screen brought up to date (layout, and a frame if anything changed: what ``Pilot.pause`` does last,
    without yielding to the app in between), so a condition on sizes or positions is read as drawn.
    Polling with ``pause`` cost ~6 % of the TUI tests' CPU: each one first posts a message to every
    widget of the screen and waits for each (hundreds in a long session), then draws a frame."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while True:
        if cond():
            if not pilot.app.screen_stack:  # the app has ended: nothing is drawn any more
                return
            pilot.app.screen._on_timer_update()
            if cond():
                return
        if loop.time() > end:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(0.01)


async def type_text(pilot: Pilot[Any], text: str) -> None:
    """Type ``text``: each character a real key event, in order, made as ``Pilot.press`` makes them; the
    test waits for the app once, after the last. (``press`` waits for an idle app twice a key, at least
    10 ms each time: half the time of the TUI tests went to those waits.) Tests of what a single key
    does (search as you type, menus) press their keys with ``pilot.press``."""
    import unicodedata

    from textual import events
    from textual._wait import wait_for_idle
    from textual.app import REPLACED_KEYS, _character_to_key, _get_unicode_name_from_key

    app = pilot.app
    driver = app._driver
    assert driver is not None
    for key in text:
        if not key.isalnum():
            key = _character_to_key(key)
        original = REPLACED_KEYS.get(key, key)
        try:
            char: str | None = unicodedata.lookup(_get_unicode_name_from_key(original))
        except KeyError:
            char = key if len(key) == 1 else None
        event = events.Key(key, char)
        event.set_sender(app)
        driver.send_message(event)
    await wait_for_idle(0)
    await app.animator.wait_until_complete()
    await wait_for_idle(0)
    await pilot.pause()


async def type_and_send(pilot: Pilot[Any], text: str) -> None:
    await type_text(pilot, text)
    await pilot.press("enter")


async def send_turn(pilot: Pilot[Any], app: MyrmApp, text: str, timeout: float = 15.0) -> None:
    """Send ``text`` as a message and wait for its whole turn. ``press`` returning does not mean the app
    handled the Enter (a loaded machine handles it later), so "not busy" alone can be true before the
    turn even began: the box emptying is the sign it was taken (the app sets ``busy`` in the same step)."""
    from myrm_tui.app.widgets.prompt_input import PromptInput

    prompt = app.screen.query_one(PromptInput)
    await type_and_send(pilot, text)
    await wait_until(pilot, lambda: not prompt.text and not prompt.queued and not app.busy, timeout)


async def run_from_palette(pilot: Pilot[Any], words: str) -> None:
    """Run a command from the command palette (ctrl+p) by its words, once the palette's search has
    found and highlighted it (the search runs in the background)."""
    from textual.command import CommandList

    await pilot.press("ctrl+p")
    await pilot.press(*words)

    def found() -> bool:
        lists = pilot.app.screen.query(CommandList)
        at = lists.first().highlighted if lists else None
        if at is None:
            return False
        return words.lower() in str(lists.first().get_option_at_index(at).prompt).lower()

    await wait_until(pilot, found)
    await pilot.press("enter")


def help_sections_drawn(app: MyrmApp) -> dict[str, list[str]]:
    """The open help screen's sections as drawn (title -> lines): each table rendered at its width."""
    from rich.console import Console
    from textual.widgets import Static

    out: dict[str, list[str]] = {}
    for static in app.screen.query(Static).filter(".help-section"):
        console = Console(file=io.StringIO(), width=static.content_region.width, color_system=None)
        console.print(static.content)
        title, *lines = console.file.getvalue().strip("\n").splitlines()  # type: ignore[attr-defined]
        out[title.strip()] = lines
    return out


# -- the agent, the pipeline and their inputs -------------------------------------------------------------


def openai_settings(emu: ProviderEmulator, **extra: Any) -> Any:
    # Extractive summaries unless a test asks for the LLM: a summarizer call would take a scripted reply.
    extra.setdefault("summarizer_model", "extractive")
    return resolve(
        {},
        {},
        {
            "model": "openai/gpt-4o-mini",
            "api_base": emu.openai_base,
            "api_key": "sk-test",
            "approval": "auto",
            **extra,
        },
        env={},
    )


def anthropic_settings(emu: ProviderEmulator, **extra: Any) -> Any:
    extra.setdefault("summarizer_model", "extractive")
    return resolve(
        {},
        {},
        {
            "model": "anthropic/claude-sonnet-4-5",
            "api_base": emu.url,
            "api_key": "sk-ant-test",
            "approval": "auto",
            **extra,
        },
        env={},
    )


async def make_agent(
    store: Store, workspace: Path, settings: Any, window: int | None = None, approver: Any = None
) -> Agent:
    row = await store.create_session(model=settings.model, workspace=str(workspace))
    return await build_agent(store, row.id, settings, workspace, approver=approver, window=window)


async def collect(agent: Agent, text: str) -> list[Any]:
    return [ev async for ev in agent.turns.run(text)]


def config_for(window: int = 16_000) -> ContextConfig:
    return ContextConfig(max_context_tokens=window)


def request_for(raw: list[Message], state: ContextState | None = None, **kw: Any) -> Request:
    """A request over ``raw``; derived fields (``protected_head``, ``cache_warm``…) may be given."""
    return Request(
        state=state or ContextState(),
        counter=COUNTER,
        vault=kw.pop("vault", None) or ArtifactVault("t"),
        raw=raw,
        **kw,
    )


def crowded_state() -> ContextState:
    """A session whose recent rounds were huge: its compaction point is low and every large output crowds
    its view, so the smart filter cuts it on arrival (``context/filters/room.py``)."""
    return ContextState(round_growth=[1_000_000, 1_000_000])


def view_for(
    raw: list[Message],
    state: ContextState | None = None,
    plan: CompactionPlan = NO_COMPACTION,
    folded: tuple[Message, ...] = (),
    **kw: Any,
) -> View:
    """``raw`` as one step sees it, with an earlier step's plan and folded messages when given."""
    return View(messages=list(raw), request=request_for(raw, state, **kw), plan=plan, folded=folded)


async def run_step(step: Step, view: View, window: int = 16_000, config: ContextConfig | None = None) -> Any:
    """One step on ``view`` with its settings for ``config``; its typed result (``Any``: tests read the
    fields of the result type that step returns)."""
    result: StepResult = await step.run(view, step.configure(config or config_for(window)))
    return result


async def run_pipeline(
    raw: list[Message], window: int = 16_000, state: ContextState | None = None, **kw: Any
) -> tuple[list[Message], PipelineRun]:
    config = kw.pop("config", None) or config_for(window)
    run = await PIPELINE.run(request_for(raw, state, **kw), config, "test")
    return run.messages, run


def call(id: str, command: str, name: str = "bash") -> ToolCall:
    return ToolCall(id, name, json.dumps({"command": command}) if name == "bash" else command)


def conversation(turns: int, output_chars: int = 3000, prefix: str = "c") -> list[Message]:
    """A system prompt, a task, then ``turns`` bash round-trips with sizeable outputs."""
    msgs = [
        Message(role="system", content="You are a test agent.", id=f"{prefix}s"),
        Message(role="user", content="Fix the bug in src/app.py please.", id=f"{prefix}u"),
    ]
    for i in range(turns):
        cid = f"call_{prefix}{i}"
        msgs.append(
            Message(
                role="assistant",
                content=f"Step {i}: I will look at file{i}.py next.",
                id=f"{prefix}a{i}",
                tool_calls=(call(cid, f"cat src/file{i}.py"),),
            )
        )
        body = "\n".join(
            f"line {k} of file{i}.py: value_{i}_{k} = {k * i}" for k in range(output_chars // 40)
        )
        code = 1 if i % 7 == 3 else 0
        msgs.append(
            Message(
                role="tool",
                content=f"<returncode>{code}</returncode>\n<output>\n{body}\n</output>",
                id=f"{prefix}t{i}",
                tool_call_id=cid,
                name="bash",
            )
        )
    return msgs


class FakeTime:
    """A clock and a sleep that advance together, for watchdog and keep-alive tests."""

    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t

    async def sleep(self, s: float) -> None:
        self.t += s
        await asyncio.sleep(0)


def approval_open(app: Any) -> bool:
    """The approval dialog is on screen with its buttons mounted (the screen is current a moment before
    its last widgets are: reading it then finds no buttons)."""
    from textual.widgets import Button

    from myrm_tui.app.screens.approval import ApprovalScreen

    screen = app.screen
    return isinstance(screen, ApprovalScreen) and len(screen.query(Button)) >= 3


def wait_exit(pid: int, timeout: float) -> None:
    """Wait for a process that is not this one's child to end (its pidfd turns readable when it does)."""
    import select

    try:
        pidfd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    try:
        ready, _, _ = select.select([pidfd], [], [], timeout)
        assert ready, f"process {pid} still runs {timeout:.0f} s later"
    finally:
        os.close(pidfd)


def long_session_once(
    tmp_path_factory: Any, name: str, rounds: int, words: Mapping[int, str] | None = None
) -> tuple[Path, str]:
    """``write_long_session``'s database (and its session id), written once a run: the workers of a
    parallel run share it (the first to ask writes it, the others wait for it; each wrote its own before,
    a few seconds of CPU each). Tests copy it before they open it."""
    import fcntl

    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # this run's folder, which its workers' folders are in
    path, ids = base / f"{name}.db", base / f"{name}.id"
    with open(base / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not ids.exists():
            partial = base / f"{name}.partial.db"
            partial.unlink(missing_ok=True)  # a worker that failed half-way left it
            session = asyncio.run(write_long_session(partial, rounds, words))
            partial.replace(path)
            ids.write_text(session)
        return path, ids.read_text()


async def write_long_session(path: Path, rounds: int, words: Mapping[int, str] | None = None) -> str:
    """A stored session of ``rounds`` rounds (a user message, a ``bash`` call and its result, an answer:
    4 messages, 3 items) in one transaction; ``words`` puts a word before round N's question. Its id."""
    store = await Store.open(path)
    row = await store.create_session(title="long one")
    async with store.transaction():
        await store.append_message(row.id, Message(role="system", content="sys"))
        for i in range(rounds):
            word = f"{words[i]} " if words and i in words else ""
            await store.append_message(row.id, Message(role="user", content=f"{word}question {i}"))
            call = ToolCall(f"call{i}", "bash", f'{{"command": "ls dir{i}"}}')
            await store.append_message(row.id, Message(role="assistant", content="", tool_calls=(call,)))
            out = "<returncode>0</returncode>\n<output>\nfile.py\n</output>"
            await store.append_message(
                row.id, Message(role="tool", content=out, tool_call_id=call.id, name="bash")
            )
            await store.append_message(row.id, Message(role="assistant", content=f"answer {i}"))
    await store.close()
    return row.id
