"""``make perf``: how long the TUI takes to show its first frame and the ring's first figure, and how
much memory it holds idle, for the embedded default model and for a provider's model.

Each run launches the real ``myrm`` command in a pseudo-terminal (140x42) against a fresh database and
config, exactly as a user would, and reads what it writes to the terminal:

- **first frame**: seconds from ``exec`` until the screen with the context ring is on the terminal
  (the ring's "ctrl+k to compact" line is in the output);
- **first figure**: until the ring shows its first usage figure ("1,234 / 128,000 tokens");
- **ready**: until the status line says "ready" (the agent is built);
- **idle RSS**: the app process's resident memory once it is ready and has been idle for a moment
  (child processes, such as a model server, are reported apart).

The provider's model is ``-m openai/gpt-4o`` against the provider emulator (``myrm_tui/testing``) with a
made-up key: its start-up preheat really runs, as it does against the provider. Targets (medians over
the runs, after one warm-up run that writes Python's bytecode caches as a user's first launch does):
first frame <= 0.5 s, first figure <= 1 s, idle RSS <= 200 MB (embedded) / 250 MB (provider). Exit status
1 if one is missed. The load average is printed with the result: on a busy machine every wall-clock
number is slower; the CPU seconds the app had used by the first frame and figure are printed beside them.
No Pilot, no test harness: the numbers include interpreter start-up and imports. ``--markdown
docs/perf.md`` writes the table (with the date, commit and load) as that file's section, and what
``import litellm`` costs on its own beside it.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import pty
import re
import select
import signal
import statistics
import struct
import sys
import tempfile
import termios
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

FIRST_FRAME_TARGET_S = 0.5
FIRST_FIGURE_TARGET_S = 1.0
IDLE_RSS_TARGET_MB = {"embedded": 200.0, "provider": 250.0}
RING_MARK = "ctrl+k to compact"  # drawn by the context ring in the first frame
FIGURE = re.compile(r"\d[\d,]* / \d[\d,]* tokens")  # the ring's usage figure, once the window is known
READY = re.compile(r"(?<![\w-])ready(?![\w-])")  # the status line once the agent is built
ANSI = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[PX^_][^\x1b]*\x1b\\|\x1b[@-Z\\-_]"
)


@dataclass
class Run:
    first_frame_s: float
    first_frame_cpu_s: float  # CPU time the app had used by then: what the wall time is on an idle machine
    ready_s: float | None
    idle_rss_mb: float
    children_rss_mb: float
    typing_s: float | None = None  # 40 characters typed at once after "ready", until all are shown
    first_figure_s: float | None = None  # the ring's first usage figure
    first_figure_cpu_s: float | None = None
    ready_cpu_s: float | None = None  # CPU time the app had used by "ready"
    phases: dict[str, float] = field(default_factory=dict)  # CPU seconds of each start-up step (its log)


def _rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _cpu_s(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime
    except (OSError, IndexError, ValueError):
        return 0.0


def _descendants(pid: int) -> list[int]:
    out: list[int] = []
    todo = [pid]
    while todo:
        p = todo.pop()
        kids: list[str] = []
        # Every thread's children: the embedded model's child is started from a worker thread.
        for task in Path(f"/proc/{p}/task").glob("*"):
            try:
                kids += (task / "children").read_text().split()
            except OSError:
                continue
        out += [int(k) for k in kids]
        todo += [int(k) for k in kids]
    return out


PHASE = re.compile(r"([\w ]+?) [\d.]+ s \(([\d.]+) s CPU\)")


def phases_of(log: Path) -> dict[str, float]:
    """CPU seconds of each start-up step and of building the transcript's first page, as the app logged
    them (``flows/sessions.py``'s ``Phases``, ``ChatLog.load``)."""
    out: dict[str, float] = {}
    try:
        text = log.read_text(errors="replace")
    except OSError:
        return out
    for line in text.splitlines():
        if "start-up phases: " in line:
            for name, cpu in PHASE.findall(line.split("start-up phases: ", 1)[1]):
                out[name.strip(", ")] = float(cpu)
        elif m := re.search(r"transcript: \d+ items, (\d+) built in [\d.]+ s \(([\d.]+) s CPU\)", line):
            out["first page"] = float(m.group(2))
            out["items built"] = float(m.group(1))
    return out


PHASE_NAMES = ("database", "session", "messages", "agent", "baseline", "first page")


def _phase_cell(phases: dict[str, float], name: str) -> str:
    if name not in phases:
        return "–"
    built = phases.get("items built")
    items = f" ({built:.0f} item{'s' if built != 1 else ''})" if name == "first page" and built else ""
    return f"{phases[name]:.2f} s{items}"


def _phase_line(phases: dict[str, float]) -> str:
    return ", ".join(f"{k} {_phase_cell(phases, k)}" for k in PHASE_NAMES if k in phases)


TYPED = "q" * 40


def _time_typing(fd: int, timeout: float) -> float | None:
    """Seconds from writing 40 characters to the prompt until the terminal shows all of them."""
    start = time.perf_counter()
    os.write(fd, TYPED.encode())
    screen = ""
    while time.perf_counter() - start < timeout:
        r, _, _ = select.select([fd], [], [], 0.01)
        if not r:
            continue
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            return None
        screen = (screen + ANSI.sub("", chunk.decode("utf-8", "replace")))[-20000:]
        if TYPED in screen:
            return time.perf_counter() - start
    return None


QUIET_CPU_S = 0.05  # CPU seconds a second below which the app counts as idle (its start-up work done)


def _drain(fd: int, seconds: float) -> bool:
    """Read what the app writes for ``seconds`` (a full pty would block it); False once it is closed."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        r, _, _ = select.select([fd], [], [], 0.05)
        if r:
            try:
                os.read(fd, 65536)
            except OSError:
                return False
    return True


def _runnable_threads(pid: int) -> int:
    """How many of the process's threads are running or waiting for a CPU (state R)."""
    n = 0
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            n += (task / "stat").read_text().rsplit(")", 1)[1].split()[0] == "R"
        except (OSError, IndexError):
            continue
    return n


def _wait_quiet(fd: int, pid: int, timeout: float) -> None:
    """Until the app's start-up work (a provider's preheat: litellm's import and a request) is done: a
    second in which it used less than QUIET_CPU_S of CPU and was seldom runnable. On a loaded machine a
    process waiting for a CPU uses none: it is runnable, so it does not count as quiet."""
    end = time.perf_counter() + timeout
    while time.perf_counter() < end:
        before, runnable = _cpu_s(pid), 0
        for _ in range(10):
            if not _drain(fd, 0.1):
                return
            runnable += _runnable_threads(pid) > 0
        if runnable <= 2 and _cpu_s(pid) - before < QUIET_CPU_S:
            return


def one_run(
    command: list[str],
    size: tuple[int, int],
    idle_s: float,
    timeout: float,
    db: Path | None = None,
    environ: dict[str, str] | None = None,
) -> Run:
    """One launch; ``db`` is an existing database to open (a stored session), else a fresh one;
    ``environ`` replaces this process's environment. After "ready", 40 typed characters are timed until
    they are all on the terminal."""
    with tempfile.TemporaryDirectory(prefix="myrm-perf-") as tmp:
        env = {
            **(os.environ if environ is None else environ),
            "TERM": "xterm-256color",
            "COLORTERM": "truecolor",
            "MYRM_DB": str(db) if db is not None else f"{tmp}/perf.db",
            "MYRM_CONFIG": f"{tmp}/config.toml",
            "XDG_CONFIG_HOME": f"{tmp}/config",
            "XDG_DATA_HOME": f"{tmp}/data",
            "MYRM_LOG": f"{tmp}/myrm.log",
        }
        env.pop("TEXTUAL", None)
        env.pop(
            "PYTHONDONTWRITEBYTECODE", None
        )  # a user's Python caches compiled modules; so does the warm-up run
        start = time.perf_counter()
        pid, fd = pty.fork()
        if pid == 0:  # the child: the app, on the pseudo-terminal's slave side
            fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", size[1], size[0], 0, 0))
            os.chdir(tmp)
            os.execvpe(command[0], command, env)
        screen = ""
        first: float | None = None
        first_cpu = 0.0
        figure: float | None = None
        figure_cpu: float | None = None
        ready: float | None = None
        ready_cpu: float | None = None
        deadline = start + timeout
        try:
            while time.perf_counter() < deadline and (ready is None or figure is None):
                r, _, _ = select.select([fd], [], [], 0.01)
                if not r:
                    continue
                try:
                    chunk = os.read(fd, 65536)
                except OSError:
                    break
                screen = (screen + ANSI.sub("", chunk.decode("utf-8", "replace")))[-20000:]
                now = time.perf_counter() - start
                if first is None and RING_MARK in screen:
                    first, first_cpu = now, _cpu_s(pid)
                if first is not None and figure is None and FIGURE.search(screen):
                    figure, figure_cpu = now, _cpu_s(pid)
                if first is not None and ready is None and READY.search(screen):
                    ready, ready_cpu = now, _cpu_s(pid)
            if first is None:
                raise RuntimeError(f"no first frame within {timeout:.0f} s; last output:\n{screen[-2000:]}")
            # Idle: keep draining the terminal (a full pty would block the app) and sample memory.
            _wait_quiet(fd, pid, timeout)
            end = time.perf_counter() + idle_s
            samples: list[tuple[float, float]] = []
            while time.perf_counter() < end:
                r, _, _ = select.select([fd], [], [], 0.05)
                if r:
                    try:
                        os.read(fd, 65536)
                    except OSError:
                        break
                samples.append((_rss_mb(pid), sum(_rss_mb(c) for c in _descendants(pid))))
            rss, kids = samples[-1] if samples else (0.0, 0.0)
            typed = _time_typing(fd, timeout) if ready is not None else None
            return Run(
                round(first, 3),
                round(first_cpu, 3),
                round(ready, 3) if ready is not None else None,
                round(rss, 1),
                round(kids, 1),
                round(typed, 3) if typed is not None else None,
                round(figure, 3) if figure is not None else None,
                round(figure_cpu, 3) if figure_cpu is not None else None,
                round(ready_cpu, 3) if ready_cpu is not None else None,
                phases_of(Path(f"{tmp}/myrm.log")),
            )
        finally:
            try:
                os.write(fd, b"\x11")  # ctrl+q
                stop = time.perf_counter() + 5
                while time.perf_counter() < stop:
                    done, _ = os.waitpid(pid, os.WNOHANG)
                    if done:
                        break
                    r, _, _ = select.select([fd], [], [], 0.05)
                    if r:
                        try:
                            os.read(fd, 65536)
                        except OSError:
                            pass
                else:
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
            except (OSError, ChildProcessError):
                pass
            os.close(fd)


# -- long sessions (issue 32): reopen a stored session of 0/300/3,000/10,000 messages -------------------
READY_RATIO_TARGET = 1.5  # a long session is ready in at most 1.5x the time of an empty one
EXTRA_RSS_TARGET_MB = 60.0  # and holds at most 60 MB more
SEARCH_TARGET_MS = 50.0  # the search counter after a key
TYPING_TARGET_S = 0.2  # 40 characters on screen
SEARCH_WORDS = ("reproduce", "traceback", "def test_", "assert", "no-such-word-anywhere")


async def make_session(db: Path, n: int, corpus: Path, api_base: str = "") -> str:
    """A stored session of ``n`` messages: the corpus's real conversations one after another (repeated,
    with fresh call ids), cut only between rounds so every call keeps its result. With ``api_base`` (the
    emulator) it is then compacted once, as a session that grew that long has been: its context state
    is stored, and reopening it rebuilds the view from that state."""
    from dataclasses import replace

    from myrm_tui.bench.corpus import load_conversations
    from myrm_tui.context.tokens import TokenCounter
    from myrm_tui.context.types import ToolCall
    from myrm_tui.store.db import Store

    counter = TokenCounter()
    store = await Store.open(db)
    try:
        row = await store.create_session(title=f"{n} messages", model="openai/gpt-4o")
        convs = load_conversations(corpus)
        written, rep = 0, 0
        while written < n:
            for conv in convs:
                msgs = [m for m in conv.messages if m.role != "system" or written == 0]
                async with store.transaction():  # one commit a conversation
                    for m in msgs:
                        if written >= n and m.role != "tool":  # the last calls keep their results
                            break
                        calls = tuple(ToolCall(f"{c.id}-{rep}", c.name, c.arguments) for c in m.tool_calls)
                        call_id = f"{m.tool_call_id}-{rep}" if m.tool_call_id else None
                        m = replace(m, id="", tool_calls=calls, tool_call_id=call_id)
                        # with its token count, as AgentSession.append stores every message
                        await store.append_message(row.id, m, counter.message(m))
                        written += 1
                if written >= n:
                    break
            rep += 1
    finally:
        await store.close()
    if api_base and n:
        from myrm_tui.app.controller import Controller

        ctl = Controller(db, db.parent, {"model": "openai/gpt-4o", "api_base": api_base, "preheat": False})
        await ctl.open()
        try:
            await ctl.open_session(row.id)
            await ctl.compact()
        finally:
            await ctl.close()
    return row.id


def search_ms(db: Path) -> tuple[float, float]:
    """(median, max) milliseconds of the transcript's search over a stored session, once per key of each
    word in ``SEARCH_WORDS`` typed as you type: the work the counter waits for after a key."""
    import asyncio

    from myrm_tui.app.widgets.chat_log import ChatLog
    from myrm_tui.app.widgets.chat_render import Item, items_of
    from myrm_tui.store.db import Store

    async def messages() -> list:
        store = await Store.open(db)
        try:
            (row,) = await store.list_sessions()
            return await store.load_messages(row.id)
        finally:
            await store.close()

    chat = ChatLog()
    calls: dict[str, Item] = {}
    for m in asyncio.run(messages()):
        chat.items += items_of(m, chat.pastes, calls)
    times = []
    for word in SEARCH_WORDS:
        for k in range(1, len(word) + 1):
            t = time.perf_counter()
            chat.find(word[:k])
            times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times), max(times)


def long_sessions(
    sizes: list[int], corpus: Path, runs: int, idle_s: float, timeout: float, markdown: Path | None = None
) -> int:
    """Reopen-ready time, idle RSS, typing and search latency per session size, against the provider
    emulator (a cloud model's path: ``-m openai/gpt-4o``)."""
    import asyncio

    from myrm_tui.testing.emulator import ProviderEmulator

    emu = ProviderEmulator().start()
    os.environ.setdefault("OPENAI_API_KEY", "sk-perf")
    myrm = Path(sys.executable).with_name("myrm")
    base = [str(myrm)] if myrm.exists() else [sys.executable, "-m", "myrm_tui.cli"]
    rows: list[tuple[int, float, float, float, float, float]] = []
    searched: list[float] = []
    cpus: list[float] = []  # CPU seconds the app had used by "ready"
    phases: list[dict[str, float]] = []  # and in which step of the start-up (medians)
    load_before = os.getloadavg()
    try:
        with tempfile.TemporaryDirectory(prefix="myrm-perf-long-") as tmp:
            for n in sizes:
                db = Path(tmp) / f"s{n}.db"
                sid = asyncio.run(make_session(db, n, corpus, emu.openai_base))
                command = [*base, "--session", sid, "-m", "openai/gpt-4o", "--api-base", emu.openai_base]
                one_run(command, (120, 40), idle_s, timeout, db)  # warm-up: bytecode caches, page cache
                got = [one_run(command, (120, 40), idle_s, timeout, db) for _ in range(runs)]
                ready = statistics.median(r.ready_s if r.ready_s is not None else timeout for r in got)
                rss = statistics.median(r.idle_rss_mb for r in got)
                typing = statistics.median(r.typing_s if r.typing_s is not None else timeout for r in got)
                s_med, s_max = search_ms(db)
                searched.append(s_med)
                cpus.append(_median([r.ready_cpu_s for r in got], timeout))
                names = dict.fromkeys(k for r in got for k in r.phases)
                phases.append({k: statistics.median(r.phases.get(k, 0.0) for r in got) for k in names})
                rows.append((n, statistics.median(r.first_frame_s for r in got), ready, rss, typing, s_max))
                print(
                    f"{n:>6,} messages: first frame {rows[-1][1]:.2f} s, ready {ready:.2f} s "
                    f"({cpus[-1]:.2f} s CPU: {_phase_line(phases[-1])}), idle RSS "
                    f"{rss:.0f} MB, 40 chars shown in {typing:.2f} s, search {s_med:.1f} ms median / "
                    f"{s_max:.1f} ms max a key",
                    flush=True,
                )
    finally:
        emu.stop()
    load = os.getloadavg()
    print(f"load average {' '.join(f'{x:.1f}' for x in load)} on {os.cpu_count()} CPUs")
    empty = next((r for r in rows if r[0] == 0), rows[0])
    ok = True
    table = [
        "## Long sessions (`make perf-sessions`)",
        "",
        f"Stored sessions of real corpus conversations ({corpus.name}, repeated, compacted once), reopened "
        f"with `--session ID -m openai/gpt-4o` against the provider emulator in a 120×40 pseudo-terminal; "
        f"medians of {runs} launches after a warm-up; {_stamp(_loads(load_before, load))}.",
        "",
        f"| messages | first frame | ready (≤ {READY_RATIO_TARGET}× empty) | CPU by ready | idle RSS (≤ +"
        f"{EXTRA_RSS_TARGET_MB:.0f} MB) | 40 chars shown (≤ {TYPING_TARGET_S} s) | search a key, median / "
        f"max (≤ {SEARCH_TARGET_MS:.0f} ms) |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    empty_cpu = cpus[rows.index(empty)]
    verdicts: list[str] = []
    for (n, first, ready, rss, typing, s_max), s_med, cpu in zip(rows, searched, cpus, strict=True):
        table.append(
            f"| {n:,} | {first:.2f} s | {ready:.2f} s ({ready / empty[2]:.2f}×) | {cpu:.2f} s "
            f"({cpu / empty_cpu:.2f}×) | {rss:.0f} MB ({rss - empty[3]:+.0f}) | {typing:.2f} s | "
            f"{s_med:.1f} / {s_max:.1f} ms |"
        )
    table += [
        "",
        "Where the CPU went until ready (medians, from the app's log: the start-up's steps, and building the "
        "transcript's first page, which runs on the UI loop beside the agent's step):",
        "",
        "| messages | " + " | ".join(PHASE_NAMES) + " |",
        "|---:|" + "---:|" * len(PHASE_NAMES),
        *(
            f"| {n:,} | " + " | ".join(_phase_cell(p, k) for k in PHASE_NAMES) + " |"
            for (n, *_), p in zip(rows, phases, strict=True)
        ),
    ]
    for n, _, ready, rss, typing, s_max in rows:
        checks = [
            ready <= READY_RATIO_TARGET * empty[2],
            rss <= empty[3] + EXTRA_RSS_TARGET_MB,
            typing <= TYPING_TARGET_S,
            s_max <= SEARCH_TARGET_MS,
        ]
        ok = ok and all(checks)
        print(
            f"{n:>6,}: ready {ready / empty[2]:.2f}x empty (<= {READY_RATIO_TARGET}), RSS "
            f"{rss - empty[3]:+.0f} MB (<= +{EXTRA_RSS_TARGET_MB:.0f}), typing {typing:.2f} s "
            f"(<= {TYPING_TARGET_S}), search max {s_max:.1f} ms (<= {SEARCH_TARGET_MS:.0f}): "
            f"{'ok' if all(checks) else 'MISSED'}"
        )
        missed = [w for w, met in zip(("ready", "RSS", "typing", "search"), checks, strict=True) if not met]
        verdicts.append(f"{n:,}: {'ok' if not missed else 'MISSED ' + ', '.join(missed)}")
    if markdown is not None:
        write_section(markdown, "sessions", "\n".join([*table, "", f"Targets: {'; '.join(verdicts)}."]))
    return 0 if ok else 1


# -- compaction of a history far over the window (issue 45.9) ------------------------------------------
COMPACTION_TARGET_S = 10.0  # 10,000 messages (2.7M tokens) compacted into a 16K window


async def _compact_over_window(db: Path, window: int) -> tuple[int, int, float, float, float, str]:
    """(messages, tokens, seconds of the first request's pipeline, seconds and CPU seconds of the whole
    prepare, headline): the session reopened with a model whose window it exceeds many times over, as its
    first message is. The CPU seconds are what the wall time is on an idle machine (the store's thread
    included)."""
    from myrm_tui.agent.factory import build_agent
    from myrm_tui.config import resolve
    from myrm_tui.store.db import Store

    store = await Store.open(db)
    try:
        (row,) = await store.list_sessions()
        cli = {"model": "openai/gpt-4o-mini", "api_key": "sk-perf", "summarizer_model": "extractive"}
        settings = resolve({}, {}, cli, env={})
        agent = await build_agent(store, row.id, settings, db.parent, window=window)
        await agent.load()
        tokens = agent.session.counter.messages(agent.session.history)
        t, cpu = time.perf_counter(), time.process_time()
        _, run = await agent.session.prepare(background=True)
        total, cpu = time.perf_counter() - t, time.process_time() - cpu
        headline = run.metrics.compaction.headline() if run.metrics.compaction else ""
        return len(agent.session.history), tokens, run.metrics.total_ms / 1000, total, cpu, headline
    finally:
        await store.close()


def compaction(sizes: list[int], corpus: Path, window: int) -> int:
    """The first request of a stored session of each size, reopened at ``window``: its compaction's time.
    Cost should grow about linearly with the history."""
    import asyncio

    rows = []
    with tempfile.TemporaryDirectory(prefix="myrm-perf-compact-") as tmp:
        for n in sizes:
            db = Path(tmp) / f"c{n}.db"
            asyncio.run(make_session(db, n, corpus))
            msgs, tokens, pipeline_s, total_s, cpu_s, headline = asyncio.run(_compact_over_window(db, window))
            rows.append((msgs, tokens, cpu_s))
            print(
                f"{msgs:>6,} messages, {tokens:>9,} tokens into {window:,}: pipeline {pipeline_s:.1f} s, "
                f"prepare {total_s:.1f} s, {cpu_s:.1f} s of CPU ({headline})",
                flush=True,
            )
    print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
    ok = all(total <= COMPACTION_TARGET_S for _, _, total in rows)
    if len(rows) > 1:
        (m0, _, t0), (m1, _, t1) = rows[0], rows[-1]
        print(f"{m1 / m0:.1f}x the messages took {t1 / t0:.1f}x the CPU time")
    print(f"target <= {COMPACTION_TARGET_S:.0f} s of CPU each: {'ok' if ok else 'MISSED'}")
    return 0 if ok else 1


def _median(values: list[float | None], missing: float) -> float:
    return statistics.median(v if v is not None else missing for v in values)


# -- docs/perf.md: each mode writes its own section from what it measured ------------------------------
DOC_HEAD = (
    "# Start-up time and memory\n\n[← README](../README.md) · the bench and the other timings: "
    "[benchmark.md](benchmark.md)\n\nWritten by `python -m myrm_tui.app.perf --markdown docs/perf.md` "
    "(`make perf`, `make perf-sessions`): each section is replaced by the run that measured it, never "
    "edited by hand. Wall times depend on the machine's load, printed with each table; the CPU seconds "
    "the app had used by then are what an idle machine waits.\n"
)
SECTION = re.compile(r"<!-- perf:(\w+) -->\n.*?\n<!-- /perf:\1 -->", re.S)


def write_section(path: Path, name: str, text: str) -> None:
    """Write ``text`` as the section ``name`` of ``path`` (between two HTML comments) under the page's
    head: a run before's section of that name is replaced where it was, the others are kept."""
    sections = {m.group(1): m.group(0) for m in SECTION.finditer(path.read_text() if path.exists() else "")}
    sections[name] = f"<!-- perf:{name} -->\n{text.strip()}\n<!-- /perf:{name} -->"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(DOC_HEAD + "".join(f"\n{block}\n" for block in sections.values()))


def _stamp(load: str) -> str:
    """When, at which commit, on how many CPUs and at what load."""
    import subprocess

    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=10
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit = ""
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    return f"{when}{f', commit {commit}' if commit else ''}, {os.cpu_count()} CPUs, load average {load}"


def _loads(*loads: tuple[float, ...]) -> str:
    return " → ".join(" ".join(f"{x:.1f}" for x in load) for load in loads)


LITELLM_ALONE = r"""
import os, time
def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
before, cpu = rss(), time.process_time()
import litellm
print(time.process_time() - cpu, rss() - before)
"""


def litellm_alone(runs: int) -> tuple[float, float]:
    """(CPU seconds, MB of RSS) of ``import litellm`` in a bare interpreter, offline (medians): what it
    costs on its own, before myrm loads anything with it."""
    import subprocess

    from myrm_tui.offline import configure_offline_env

    configure_offline_env()  # into this environment, inherited: the import reads no network
    got = []
    for _ in range(max(1, runs)):
        command = [sys.executable, "-c", LITELLM_ALONE]
        out = subprocess.run(command, capture_output=True, text=True, check=True)
        cpu, mb = out.stdout.split()
        got.append((float(cpu), float(mb)))
    return statistics.median(c for c, _ in got), statistics.median(m for _, m in got)


def measure(
    kind: str, command: list[str], environ: dict[str, str], runs: int, idle_s: float, timeout: float
) -> dict[str, Any]:
    """One warm-up launch and ``runs`` measured ones of ``command``; the medians and whether each meets
    its target."""
    # The warm-up writes the bytecode caches, like a first launch.
    cold = one_run(command, (140, 42), idle_s, timeout, environ=environ)
    print(
        f"{kind}: warm-up run (not counted): first frame {cold.first_frame_s:.3f} s, idle RSS "
        f"{cold.idle_rss_mb:.0f} MB",
        flush=True,
    )
    got = [one_run(command, (140, 42), idle_s, timeout, environ=environ) for _ in range(runs)]
    for i, r in enumerate(got, 1):
        figure = (
            f"{r.first_figure_s:.3f} s ({r.first_figure_cpu_s:.2f} s CPU)" if r.first_figure_s else "never"
        )
        ready = f"{r.ready_s:.2f} s" if r.ready_s is not None else "never"
        print(
            f"{kind} run {i}: first frame {r.first_frame_s:.3f} s ({r.first_frame_cpu_s:.2f} s CPU), "
            f"first figure {figure}, ready {ready}, idle RSS {r.idle_rss_mb:.0f} MB "
            f"(+ children {r.children_rss_mb:.0f} MB)",
            flush=True,
        )
    out: dict[str, Any] = {
        "runs": [asdict(r) for r in got],
        "first_frame_s": statistics.median(r.first_frame_s for r in got),
        "first_frame_cpu_s": statistics.median(r.first_frame_cpu_s for r in got),
        "first_figure_s": _median([r.first_figure_s for r in got], timeout),
        "first_figure_cpu_s": _median([r.first_figure_cpu_s for r in got], timeout),
        "ready_s": _median([r.ready_s for r in got], timeout),
        "idle_rss_mb": statistics.median(r.idle_rss_mb for r in got),
    }
    out["ok"] = {
        "first_frame": out["first_frame_s"] <= FIRST_FRAME_TARGET_S,
        "first_figure": out["first_figure_s"] <= FIRST_FIGURE_TARGET_S,
        "idle_rss": out["idle_rss_mb"] <= IDLE_RSS_TARGET_MB[kind],
    }
    return out


def _verdict(ok: bool) -> str:
    return "ok" if ok else "MISSED"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--idle", type=float, default=3.0, help="seconds idle after 'ready' before reading RSS")
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--json", type=Path, help="write the runs and the medians here")
    ap.add_argument(
        "--kinds", default="embedded,provider", help="which models: embedded (the default), provider"
    )
    ap.add_argument("args", nargs="*", help="extra arguments for myrm (e.g. --workspace DIR)")
    ap.add_argument(
        "--sessions",
        help="reopen stored sessions of these sizes (e.g. 0,300,3000,10000): ready, RSS, typing, search",
    )
    ap.add_argument("--corpus", type=Path, default=Path("../shared/corpus/swe-dev.jsonl.gz"))
    ap.add_argument(
        "--compaction",
        help="compact stored sessions of these sizes (e.g. 2500,5000,10000) at the first request, reopened "
        "with a small window (--window): seconds per size",
    )
    ap.add_argument("--window", type=int, default=16_000)
    ap.add_argument("--markdown", type=Path, help="write the table as this file's section (docs/perf.md)")
    ns = ap.parse_args(argv)
    if ns.compaction:
        return compaction([int(x) for x in ns.compaction.split(",")], ns.corpus, ns.window)
    if ns.sessions:
        sizes = [int(x) for x in ns.sessions.split(",")]
        return long_sessions(sizes, ns.corpus, ns.runs, ns.idle, ns.timeout, ns.markdown)
    from myrm_tui.config import KEY_DEFAULTS
    from myrm_tui.testing.emulator import ProviderEmulator

    myrm = Path(sys.executable).with_name("myrm")
    base = [str(myrm)] if myrm.exists() else [sys.executable, "-m", "myrm_tui.cli"]
    kinds = [k.strip() for k in ns.kinds.split(",") if k.strip()]
    load_before = os.getloadavg()
    results: dict[str, dict[str, Any]] = {}
    emu = ProviderEmulator().start() if "provider" in kinds else None
    # A provider's key in the environment would pick that provider's model instead of the embedded one.
    plain = {k: v for k, v in os.environ.items() if k not in {var for var, _ in KEY_DEFAULTS}}
    try:
        for kind in kinds:
            extra: list[str] = []
            environ = plain
            if emu is not None and kind == "provider":
                extra = ["-m", "openai/gpt-4o", "--api-base", emu.openai_base]
                environ = {**plain, "OPENAI_API_KEY": "sk-perf"}  # made up: the emulator takes any key
            command = [*base, *extra, *ns.args]
            results[kind] = measure(kind, command, environ, ns.runs, ns.idle, ns.timeout)
    finally:
        if emu is not None:
            emu.stop()
    load = os.getloadavg()
    print(
        f"load average {' '.join(f'{x:.1f}' for x in load_before)} before, "
        f"{' '.join(f'{x:.1f}' for x in load)} after, on {os.cpu_count()} CPUs"
    )
    for kind, r in results.items():
        ok = r["ok"]
        print(
            f"{kind}: median first frame {r['first_frame_s']:.3f} s ({r['first_frame_cpu_s']:.2f} s CPU; "
            f"<= {FIRST_FRAME_TARGET_S} s: {_verdict(ok['first_frame'])}), first figure "
            f"{r['first_figure_s']:.3f} s ({r['first_figure_cpu_s']:.2f} s CPU; "
            f"<= {FIRST_FIGURE_TARGET_S} s: {_verdict(ok['first_figure'])}), ready {r['ready_s']:.2f} s, "
            f"idle RSS {r['idle_rss_mb']:.0f} MB (<= {IDLE_RSS_TARGET_MB[kind]:.0f} MB: "
            f"{_verdict(ok['idle_rss'])})"
        )
    alone = litellm_alone(ns.runs) if "provider" in kinds else None
    if alone is not None:
        print(
            f"litellm on its own (python -c 'import litellm', offline): {alone[0]:.2f} s of CPU, "
            f"+{alone[1]:.0f} MB"
        )
    if ns.json:
        ns.json.write_text(json.dumps({**results, "loadavg": [load_before, load]}, indent=2))
    if ns.markdown:
        write_section(ns.markdown, "start", start_table(results, ns.runs, _loads(load_before, load), alone))
    return 0 if all(all(r["ok"].values()) for r in results.values()) else 1


def start_table(
    results: dict[str, dict[str, Any]], runs: int, load: str, alone: tuple[float, float] | None
) -> str:
    """The start-up section of docs/perf.md, from ``measure``'s medians."""
    names = {"embedded": "embedded default", "provider": "`openai/gpt-4o` (provider emulator)"}
    lines = [
        "## Start-up (`make perf`)",
        "",
        f"Medians of {runs} launches of the real `myrm` in a 140×42 pseudo-terminal, after a warm-up "
        f"launch; {_stamp(load)}. Idle RSS is read once the app has been quiet for a second (a "
        "provider model's start-up preheat, litellm's import and its request, done).",
        "",
        f"| model | first frame (≤ {FIRST_FRAME_TARGET_S} s) | first figure (≤ {FIRST_FIGURE_TARGET_S} s) "
        "| ready | idle RSS |",
        "|---|---:|---:|---:|---:|",
    ]
    for kind, r in results.items():
        ok = r["ok"]
        lines.append(
            f"| {names.get(kind, kind)} | {r['first_frame_s']:.2f} s ({r['first_frame_cpu_s']:.2f} s CPU): "
            f"{_verdict(ok['first_frame'])} | {r['first_figure_s']:.2f} s ({r['first_figure_cpu_s']:.2f} s "
            f"CPU): {_verdict(ok['first_figure'])} | {r['ready_s']:.2f} s | {r['idle_rss_mb']:.0f} MB "
            f"(≤ {IDLE_RSS_TARGET_MB[kind]:.0f}): {_verdict(ok['idle_rss'])} |"
        )
    if alone is not None:
        lines += [
            "",
            f'litellm on its own (`python -c "import litellm"`, offline, same machine): {alone[0]:.2f} s '
            f"of CPU and +{alone[1]:.0f} MB of RSS.",
        ]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
