"""Shared fixtures: a provider emulator on 127.0.0.1, temporary stores and workspaces, corpus paths."""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import gc
import os
import re
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

# `make test` (and any run with CI set) runs the property tests on a fixed sequence of examples, so a run is
# repeatable; a plain `pytest` explores new ones (and Hypothesis replays any failure it stored). No deadline
# there: an example that took over Hypothesis' 200 ms once on a loaded machine (the first one builds the
# tokenizer's encoding) failed the suite as "flaky" (test_tokens, load 8); speed is make perf's to measure.
settings.register_profile("ci", derandomize=True, database=None, deadline=None)
if os.environ.get("CI"):
    settings.load_profile("ci")

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
for key in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "DEEPSEEK_API_KEY", "MYRM_MODEL"):
    os.environ.pop(key, None)

from myrm_tui.offline import configure_offline_env  # noqa: E402

configure_offline_env()

import textual._wait  # noqa: E402

from myrm_tui import gc_policy  # noqa: E402
from myrm_tui.store.db import Store  # noqa: E402
from myrm_tui.testing.emulator import ProviderEmulator  # noqa: E402

# The product's collector policy (``myrm`` sets it in ``cli.main``; the first LLM call freezes what the
# litellm import made): the tests run the app as it runs, and half the TUI tests' time was collections.
gc_policy.configure()
gc_policy.settle()
# At exit the interpreter's shutdown walks the whole heap a worker has built (litellm's, every finished
# app's) once more: a second or more of each worker's last seconds, which the run waits for. pytest has
# made its own last collection by then (to report what finalizers raised), so what was garbage when the
# session ended is gone; freezing skips the walk for the rest (exit handlers registered before this
# one, by the libraries imported above, still run after it: they only close what they hold).
atexit.register(gc.freeze)

# Pilot waits after every key until the app looks idle: it sleeps in steps of 20 ms until a step used
# under 1 ms of CPU, so each key of a typed message cost at least 40 ms of nothing (a third of the TUI
# tests' time). Steps of 5 ms with the same ratio (5 % of a step) ask the same question four times as often.
textual._wait.SLEEP_GRANULARITY = 0.005
textual._wait.SLEEP_IDLE = textual._wait.SLEEP_GRANULARITY / 20


def pytest_configure(config: pytest.Config) -> None:
    """pytest's last look for unraisable exceptions (a finalizer that raised) collects garbage five times
    over at each worker's end: 0.4 s a pass over the heap a worker has built by then, 2 s of every
    worker's last seconds. One pass still collects what is garbage then and reports what its finalizers
    raised; only garbage made by those finalizers in turn waits for the process's exit."""
    from _pytest.unraisableexception import gc_collect_iterations_key

    config.stash[gc_collect_iterations_key] = 1
    if not hasattr(config, "workerinput") and config.getoption("numprocesses", None):
        # The controller of parallel workers: one warm interpreter for all of them (``tests.warm``), its
        # imports made while the workers start; it is stopped when this process exits.
        from tests import warm

        warm.share()


CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def corpus_file(name: str) -> Path:
    path = CORPUS / name
    if not path.is_file():
        pytest.skip(f"corpus not available ({path}); ../shared is absent")
    return path


@pytest.fixture(autouse=True)
def _isolated_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reads the developer's own config file or database."""
    monkeypatch.setenv("MYRM_CONFIG", str(tmp_path / "no-config.toml"))
    monkeypatch.setenv("MYRM_DB", str(tmp_path / "default.db"))


_LOOP_KEY = re.compile(r"-\d+$")


@pytest.fixture(autouse=True)
def _package_log_restored() -> Iterator[None]:
    """A command run in-process (``myrm doctor`` through typer's runner) sends the package's records to
    its log file only (``logs.setup_logging``: no propagation). Left so, every later test of the worker
    had an empty ``caplog``, whichever test that was."""
    from tests.helpers import package_log_kept

    with package_log_kept():
        yield


@pytest.fixture(autouse=True)
def _drop_llm_clients() -> Iterator[None]:
    """litellm keeps an HTTP client per event loop for an hour, and each test has its own loop. A client's
    keep-alive timer holds the context it was made in, so every finished app stayed alive: 900,000
    objects in one worker at the end, 3 s of pytest's final collections. The test's clients are closed
    (on a loop of their own, as litellm's exit hook does: the test's is gone) and dropped; the ones made
    outside any loop, and litellm's module-level ones, are shared and stay."""
    yield
    litellm = sys.modules.get("litellm")
    if litellm is None:
        return
    cache = litellm.in_memory_llm_clients_cache
    # litellm's module-level clients (Anthropic streams through one) may sit under a loop's key too.
    shared = {
        id(getattr(litellm, name, None)) for name in ("module_level_aclient", "base_llm_aiohttp_handler")
    }
    stale = [k for k, v in list(cache.cache_dict.items()) if _LOOP_KEY.search(k) and id(v) not in shared]
    if not stale:
        return
    clients = [cache.cache_dict[k] for k in stale]
    for k in stale:
        cache.delete_cache(k)
    asyncio.run(_close_clients(clients))


async def _close_clients(clients: list[Any]) -> None:
    for c in clients:
        http = getattr(c, "client", c)  # litellm's handler wraps an httpx client; AsyncOpenAI is one
        close = getattr(http, "aclose", None) or getattr(http, "close", None)
        if close is not None:
            with contextlib.suppress(Exception):
                await close()


@pytest.fixture(scope="session")
def emulator_server() -> Iterator[ProviderEmulator]:
    emu = ProviderEmulator().start()
    yield emu
    emu.stop()


@pytest.fixture
def emulator(emulator_server: ProviderEmulator) -> ProviderEmulator:
    """The shared server, reset: empty script, no recorded requests, cold caches, default window."""
    e = emulator_server
    e.script.clear()
    e.requests.clear()
    e.openai_cache.reset()
    e.anthropic_cache.reset()
    e.window = 128_000
    e.token_scale = 1.0
    e.versioned_only = False
    e.api_key = None
    e.windows.clear()
    e._release.clear()
    from myrm_tui.testing.emulator import Reply

    e.default = Reply(text="ok")
    return e


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    s = await Store.open(tmp_path / "test.db")
    yield s
    await s.close()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "hello.py").write_text("def greet():\n    return 'hello'\n")
    return ws


@pytest.fixture
def absent_gguf(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The environment entry for a ``myrm doctor`` whose case is not the embedded model: a GGUF that is
    not there, so doctor's self test (llama.cpp loading the model and generating: ~3 s of CPU, ~10 s on
    a loaded machine) fails at once, and the rest of the report is printed (exit 1). The process-wide
    server keeps the GGUF it was made with: this test's is made afresh and dropped afterwards. The self
    test itself is tests/llm/test_local.py's and ``test_doctor_reports_model_and_offline_setup``'s."""
    monkeypatch.setattr("myrm_tui.llm.local._server", None)
    return {"MYRM_EMBEDDED_GGUF": str(tmp_path / "absent.gguf")}
