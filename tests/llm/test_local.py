"""The embedded model (SmolLM2-135M) runs in a child process — llama-cpp-python's OpenAI-compatible
server — reached through litellm's OpenAI path. A dead child ends one turn with one clear line; the
session is intact and the next turn starts a new child. The child never outlives myrm."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from myrm_tui.agent.events import TextChunk, TurnDone, TurnFailed
from myrm_tui.config import resolve
from myrm_tui.llm import local
from myrm_tui.llm.client import LLMClient, ModelSpec
from myrm_tui.llm.events import TextDelta, Usage
from myrm_tui.llm.local import (
    DEFAULT_LOCAL_MODEL,
    EmbeddedAdapter,
    EmbeddedServer,
    runtime_available,
    to_plain_chat,
)
from myrm_tui.store.db import Store
from tests import warm
from tests.helpers import collect, make_agent

pytestmark = pytest.mark.slow
needs_model = pytest.mark.skipif(
    not runtime_available(), reason="embedded model not installed (make install)"
)
STORY = "Write a long story, at least ten paragraphs, about a dragon who learns to cook."
# The crash tests stop the child at the reply's first token, so a reply this long is still streaming on the
# fastest CPU (hundreds of tokens a second: a tenth of this in the few ms the test takes to stop it).
CRASH_REPLY_TOKENS = 160
# The turn after the restart continues the story; it only has to show the new child answers, so it is cut
# short (written at the crash turn's length it took 3 s more a test).
NEXT_REPLY_TOKENS = 16


@pytest.fixture
def embedded(monkeypatch: pytest.MonkeyPatch) -> Iterator[EmbeddedServer]:
    """A child of this test alone (the process-wide one is swapped out and back): for the tests that
    kill it and count its starts."""
    srv = EmbeddedServer()
    monkeypatch.setattr(local, "_server", srv)
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def _module_child() -> Iterator[EmbeddedServer]:
    srv = EmbeddedServer()
    yield srv
    srv.stop()


@pytest.fixture
def running(_module_child: EmbeddedServer, monkeypatch: pytest.MonkeyPatch) -> EmbeddedServer:
    """The process-wide server, for tests that only need one that answers: one child for the module's
    tests (loading the model is a second or more each time), started by whichever asks first."""
    monkeypatch.setattr(local, "_server", _module_child)
    return _module_child


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/status").read_text()
    except (FileNotFoundError, ProcessLookupError):  # reaped before or while it was read
        return True
    return "\nState:\tZ" in state  # a zombie no longer holds the model


def _wait_gone(pid: int, timeout: float = 15.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if _gone(pid):
            return True
        time.sleep(0.1)
    return False


def _crash(pid: int, sig: signal.Signals) -> None:
    """Freeze the child first, so no more tokens are produced, then deliver the fatal signal."""
    os.kill(pid, signal.SIGSTOP)
    os.kill(pid, sig)
    if sig != signal.SIGKILL:
        os.kill(pid, signal.SIGCONT)  # a stopped process gets its pending SIGSEGV when it resumes


def test_default_model_is_the_embedded_one_when_nothing_is_configured() -> None:
    s = resolve({}, {}, {}, env={})
    assert s.model == DEFAULT_LOCAL_MODEL and s.is_local_default and "embedded default" in s.model_source
    assert resolve({}, {}, {}, env={"ANTHROPIC_API_KEY": "k"}).model.startswith("anthropic/")
    assert (
        resolve({}, {}, {"model": "ollama/qwen2.5"}, env={"ANTHROPIC_API_KEY": "k"}).model == "ollama/qwen2.5"
    )


def test_tool_traffic_is_flattened_for_the_small_chat_template() -> None:
    chat = to_plain_chat(
        [
            {"role": "system", "content": "s"},
            {"role": "user", "content": "u"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "c", "type": "function", "function": {"name": "bash", "arguments": "{}"}}
                ],
            },
            {"role": "tool", "tool_call_id": "c", "content": "out"},
        ]
    )
    assert [m["role"] for m in chat] == ["system", "user", "assistant", "user"]
    assert "bash" in chat[2]["content"] and "[tool result]" in chat[3]["content"]


def test_the_small_model_gets_no_environment_reminder_and_the_model_cards_sampling() -> None:
    """Measured on SmolLM2-135M: the environment reminder merged into the user's turn and the server's
    default temperature (0.8) both derailed short factual answers; other reminders (hooks) stay."""
    from myrm_tui.context.types import synthetic_user

    env = synthetic_user("- workspace: /tmp/w", "env", "environment").to_api()
    hook = synthetic_user("lint is clean", "hook", "hook").to_api()
    chat = to_plain_chat([{"role": "system", "content": "s"}, env, hook, {"role": "user", "content": "hi"}])
    assert [m["role"] for m in chat] == ["system", "user"]
    assert "/tmp/w" not in chat[1]["content"] and "lint is clean" in chat[1]["content"]
    assert chat[1]["content"].endswith("hi")
    assert local.sampling(None) == {"temperature": 0.2, "top_p": 0.9}
    assert local.sampling(0.0)["temperature"] == 0.0  # doctor's deterministic self-test


@needs_model
def test_a_small_model_decodes_on_one_thread_and_every_model_reads_its_prompt_on_all(tmp_path: Path) -> None:
    def threads(cmd: list[str]) -> tuple[str, str]:
        return cmd[cmd.index("--n_threads") + 1], cmd[cmd.index("--n_threads_batch") + 1]

    assert threads(EmbeddedServer(threads=4)._command()) == ("1", "4")  # the bundled SmolLM2-135M
    big = tmp_path / "big.gguf"
    with big.open("wb") as f:
        f.truncate(local.SINGLE_THREAD_DECODE_BYTES)  # sparse: a model of that size, on no disk
    assert threads(EmbeddedServer(model_path=big, threads=4)._command()) == ("4", "4")


def test_exit_descriptions_name_the_signal() -> None:
    assert local.describe_exit(-11) == "signal 11, SIGSEGV"
    assert local.describe_exit(-9) == "signal 9, SIGKILL"
    assert local.describe_exit(1) == "exit code 1"


async def test_embedded_agent_gets_the_chat_prompt_and_no_tools(store: Store, workspace: Path) -> None:
    agent = await make_agent(store, workspace, resolve({}, {}, {}, env={}))
    assert not agent.session.sends_tools and agent.session.prompt_mode == "chat"
    assert agent.session.system_prompt is not None and "no tools" in agent.session.system_prompt
    explicit = await make_agent(store, workspace, resolve({}, {}, {"prompt_mode": "lean"}, env={}))
    assert explicit.session.prompt_mode == "lean"  # an explicit choice is kept


@needs_model
async def test_embedded_model_streams_an_answer_from_a_child_process(running: EmbeddedServer) -> None:
    events = [
        ev
        async for ev in LLMClient().stream(
            ModelSpec(DEFAULT_LOCAL_MODEL),
            [{"role": "user", "content": "What is the capital of France?"}],
            max_tokens=24,
        )
    ]
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert len([e for e in events if isinstance(e, TextDelta)]) > 1 and text.strip()
    usage = next(e for e in events if isinstance(e, Usage))
    assert usage.prompt_tokens > 0 and usage.completion_tokens > 0
    pid = running.pid()
    assert pid is not None and pid != os.getpid() and running.alive()
    assert Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[:3] == [
        sys.executable.encode(),
        b"-m",
        b"myrm_tui.llm.embedded_child",
    ]


@needs_model
async def test_a_second_request_waits_instead_of_cutting_the_running_stream(running: EmbeddedServer) -> None:
    """Live failure: a preheat sent while a turn streamed made llama.cpp's server end the turn with a bare
    [DONE] ("the provider's stream ended without a reply"). Both requests must complete."""
    import asyncio

    client = LLMClient()
    streaming = asyncio.Event()

    async def ask(text: str, max_tokens: int) -> list[object]:
        out: list[object] = []
        async for ev in client.stream(
            ModelSpec(DEFAULT_LOCAL_MODEL), [{"role": "user", "content": text}], max_tokens=max_tokens
        ):
            out.append(ev)
            if isinstance(ev, TextDelta):
                streaming.set()
        return out

    turn = asyncio.ensure_future(ask(STORY, 48))
    await asyncio.wait_for(streaming.wait(), 120)  # the second request goes out mid-stream
    second = await ask("Say hi.", 1)
    events = await turn
    usage = next(e for e in events if isinstance(e, Usage))
    assert usage.completion_tokens >= 24, "the running stream was cut"
    assert len([e for e in events if isinstance(e, TextDelta)]) >= 8
    assert any(isinstance(e, Usage) for e in second)


@needs_model
async def test_agent_turn_on_the_embedded_model(
    store: Store, workspace: Path, running: EmbeddedServer
) -> None:
    agent = await make_agent(store, workspace, resolve({}, {}, {"max_output_tokens": 32}, env={}))
    events = await collect(agent, "Say hello.")
    assert isinstance(events[-1], TurnDone)
    assert "".join(e.text for e in events if isinstance(e, TextChunk)).strip()
    assert (await store.load_messages(agent.session_id))[-1].role == "assistant"


@needs_model
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGSEGV], ids=["SIGKILL", "SIGSEGV"])
async def test_child_dying_mid_stream_ends_the_turn_clearly_and_the_next_turn_works(
    sig: signal.Signals,
    store: Store,
    workspace: Path,
    embedded: EmbeddedServer,
) -> None:
    agent = await make_agent(
        store, workspace, resolve({}, {}, {"max_output_tokens": CRASH_REPLY_TOKENS}, env={})
    )
    events = []
    dead: int | None = None
    async for ev in agent.turns.run(STORY):
        events.append(ev)
        if isinstance(ev, TextChunk) and dead is None:
            dead = embedded.pid()
            assert dead is not None
            _crash(dead, sig)
    failed = [e for e in events if isinstance(e, TurnFailed)]
    assert len(failed) == 1 and isinstance(events[-1], TurnDone)
    assert (
        failed[0].error
        == f"the embedded model stopped (signal {sig.value}, {sig.name}); restarting — your message is kept"
    )
    history = await store.load_messages(agent.session_id)
    assert [m.text for m in history if m.role == "user" and not m.synthetic] == [STORY]
    assert history[-1].role == "assistant" and history[-1].meta.get(
        "interrupted"
    )  # the partial reply, marked
    assert dead is not None and _wait_gone(dead)

    agent.session.settings = replace(agent.session.settings, max_output_tokens=NEXT_REPLY_TOKENS)
    events = await collect(agent, "Say hello.")
    assert not [e for e in events if isinstance(e, TurnFailed)] and isinstance(events[-1], TurnDone)
    assert "".join(e.text for e in events if isinstance(e, TextChunk)).strip()
    assert embedded.starts == 2 and embedded.pid() != dead


@needs_model
async def test_a_child_that_died_while_idle_is_restarted_without_an_error(embedded: EmbeddedServer) -> None:
    client = LLMClient()
    msgs = [{"role": "user", "content": "Say hi."}]
    [ev async for ev in client.stream(ModelSpec(DEFAULT_LOCAL_MODEL), msgs, max_tokens=4)]
    first = embedded.pid()
    assert first is not None
    os.kill(first, signal.SIGKILL)
    assert _wait_gone(first)
    events = [ev async for ev in client.stream(ModelSpec(DEFAULT_LOCAL_MODEL), msgs, max_tokens=4)]
    assert any(isinstance(e, TextDelta) for e in events) and embedded.pid() != first


@needs_model
async def test_each_call_learns_its_own_child_died_whoever_saw_it_first(embedded: EmbeddedServer) -> None:
    """Live failure: a turn's title request, queued behind the reply, saw the crash first and started the
    next child; the turn then found a live child, took the crash for a cut stream and retried, and the
    user never saw the crash line."""
    msgs = [{"role": "user", "content": "Say hi."}]
    turn, title = EmbeddedAdapter(embedded), EmbeddedAdapter(embedded)
    await turn.open({}, msgs, None)
    await title.open({}, msgs, None)
    first = embedded.pid()
    assert first is not None and turn.child is title.child
    os.kill(first, signal.SIGKILL)
    seen_first = await asyncio.to_thread(title.stopped_error, 10.0)
    assert seen_first is not None and embedded.starts == 2  # it started the next child
    seen_second = turn.stopped_error()
    assert seen_second is not None
    assert str(seen_second).startswith("the embedded model stopped (signal 9, SIGKILL); restarting")
    assert embedded.starts == 2 and embedded.pid() != first  # one new child, not two
    await embedded.ensure()
    fresh = EmbeddedAdapter(embedded)
    await fresh.open({}, msgs, None)
    assert fresh.stopped_error() is None  # a call on the new child sees it alive


CHILD_OF_KILLED_PARENT = """
import asyncio, sys
from myrm_tui.llm import local
srv = local.server()
asyncio.run(srv.ensure())
print(srv.pid(), flush=True)
sys.stdin.read()
"""


@needs_model
def test_the_child_exits_when_myrm_is_killed_with_sigkill() -> None:
    parent = subprocess.Popen(
        [sys.executable, "-c", CHILD_OF_KILLED_PARENT],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
        assert not _gone(child)
    finally:
        parent.kill()  # no atexit, no cleanup: only the child's own watch can end it
        parent.wait()
    gone = _wait_gone(child)
    if not gone:  # do not leave a model server behind when the watch is broken
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signal.SIGKILL)
    assert gone, f"embedded model child {child} outlived its parent"


def _cli_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("MYRM_")}
    return {**env, "MYRM_DB": str(tmp_path / "cli.db"), "MYRM_CONFIG": str(tmp_path / "config.toml"), **extra}


def test_doctor_fails_when_the_runtime_cannot_generate(tmp_path: Path) -> None:
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"GGUF" + os.urandom(4096))  # loads nowhere: the server dies at start-up
    proc = warm.run(
        [sys.executable, "-m", "myrm_tui.cli", "doctor", "--quiet"],
        capture_output=True,
        text=True,
        env=_cli_env(tmp_path, MYRM_EMBEDDED_GGUF=str(broken)),
        timeout=120,
        cwd=tmp_path,
    )
    assert proc.returncode == 1
    assert "the embedded model cannot generate" in proc.stdout and "could not start" in proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr


@needs_model
def test_doctor_generates_and_reports_speeds(tmp_path: Path) -> None:
    proc = warm.run(
        [sys.executable, "-m", "myrm_tui.cli", "doctor"],
        capture_output=True,
        text=True,
        env=_cli_env(tmp_path),
        timeout=180,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    line = next(ln for ln in proc.stdout.splitlines() if "embedded model:" in ln)
    assert "loaded in" in line and "tok/s prefill" in line and "tok/s decode" in line


@needs_model
def test_ask_exits_non_zero_with_one_line_when_the_child_crashes(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text("max_output_tokens = 400\n")
    ask = warm.Popen(
        [sys.executable, "-m", "myrm_tui.cli", "ask", "--json", STORY],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_cli_env(tmp_path),
        cwd=tmp_path,
    )
    assert ask.stdout is not None and ask.stderr is not None
    try:
        for line in ask.stdout:
            if json.loads(line).get("type") == "message_delta":
                break
        children = subprocess.run(
            ["pgrep", "-P", str(ask.pid), "-f", "embedded_child"], capture_output=True, text=True
        ).stdout.split()
        assert len(children) == 1
        _crash(int(children[0]), signal.SIGSEGV)
        rest, err = ask.communicate(timeout=120)
    finally:
        if ask.poll() is None:
            ask.kill()
    assert ask.returncode == 1, rest + err
    assert "the embedded model stopped (signal 11, SIGSEGV); restarting — your message is kept" in err
    assert "Traceback" not in err + rest
    assert _wait_gone(int(children[0]))


def test_a_gguf_named_by_myrm_embedded_gguf_that_is_not_there_is_named_in_the_one_line(
    tmp_path: Path, absent_gguf: dict[str, str]
) -> None:
    from tests.helpers import cli_env, run_myrm

    env = {k: v for k, v in cli_env(tmp_path).items() if not k.endswith("_API_KEY") and k != "MYRM_MODEL"}
    done = run_myrm(
        ["ask", "hi"], env={**env, **absent_gguf, "MYRM_LOG": str(tmp_path / "myrm.log")}, cwd=tmp_path
    )
    assert done.returncode == 1
    line = f"myrm: MYRM_EMBEDDED_GGUF: {absent_gguf['MYRM_EMBEDDED_GGUF']}: no such file"
    assert line in done.stderr.splitlines(), done.stderr
