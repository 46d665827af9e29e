"""CPU seconds a test, not wall: ``pytest -p tests.cpu_times [--cpu-times=N] [--cpu-times-file=PATH]``.

``python -m tests.cpu_times [PATH ...]`` runs the suite one directory at a time (each ``tests/<dir>``, then
the top-level ``tests/test_*.py`` files together) as ``make unit`` runs it, and prints each one's CPU
(user + sys of pytest and every process it waited for: workers, the warm interpreter, ``myrm`` and model
children), wall time and test count, their sum, and the tests and fixtures that used the most CPU. Run it
under ``nice`` on a shared machine; the figures it prints are the ones docs/perf.md's testing section
keeps.

On a machine others share, ``--durations`` measures the load as much as the test; the CPU a test's process
spends (its threads, plus the children it waited for) does not move with the load. The warm interpreter's
forks (``tests/warm.py``) are its children, not the test's, so their CPU is only in the whole run's figure
(``/usr/bin/time`` around pytest).
"""

from __future__ import annotations

import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

_KEY = "cpu_seconds"
_FIXTURES_KEY = "fixture_cpu_seconds"
_start: dict[str, float] = {}
_seen: dict[str, float] = {}
# A fixture's setup CPU, by name, summed over every time it was set up (once for a session-scoped one).
_fixtures: dict[str, float] = {}
_setting_up: dict[str, float] = {}


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("cpu_times")
    group.addoption("--cpu-times", type=int, default=30, help="print the N tests that used the most CPU")
    group.addoption("--cpu-times-file", default=None, help="write every test's CPU seconds there (tsv)")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    _start[item.nodeid] = _cpu()


@pytest.hookimpl(hookwrapper=True)
def pytest_fixture_setup(fixturedef: pytest.FixtureDef[Any]) -> Generator[None]:
    # pytest sets up the fixtures a fixture requests before this hook: each figure is the fixture's own.
    start = _cpu()
    yield
    name = fixturedef.argname
    _setting_up[name] = _setting_up.get(name, 0.0) + _cpu() - start


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, None]:
    outcome = yield
    report = outcome.get_result()
    if call.when == "setup" and _setting_up:
        report.user_properties.append((_FIXTURES_KEY, dict(_setting_up)))
        _setting_up.clear()
    if call.when == "teardown" and item.nodeid in _start:
        report.user_properties.append((_KEY, _cpu() - _start.pop(item.nodeid)))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    for key, value in report.user_properties:
        if key == _KEY and isinstance(value, float) and report.when == "teardown":
            _seen[report.nodeid] = value
        elif key == _FIXTURES_KEY and isinstance(value, dict) and report.when == "setup":
            for name, cpu in value.items():
                _fixtures[name] = _fixtures.get(name, 0.0) + cpu


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    if hasattr(config, "workerinput") or not _seen:
        return
    ranked = sorted(_seen.items(), key=lambda kv: kv[1], reverse=True)
    fixtures = sorted(_fixtures.items(), key=lambda kv: kv[1], reverse=True)
    path = config.getoption("cpu_times_file")
    if path:
        lines = [f"{cpu:.3f}\t{node}\n" for node, cpu in ranked]
        lines += [f"{cpu:.3f}\tfixture:{name}\n" for name, cpu in fixtures]
        Path(path).write_text("".join(lines), encoding="utf-8")
    count = config.getoption("cpu_times")
    terminalreporter.write_sep("=", f"{min(count, len(ranked))} most CPU (s, setup to teardown)")
    for node, cpu in ranked[:count]:
        terminalreporter.write_line(f"{cpu:7.2f}  {node}")
    terminalreporter.write_line(f"{sum(_seen.values()):7.1f}  all {len(_seen)} tests")
    terminalreporter.write_sep("=", "fixtures' setup CPU (s, summed; in the tests' figures)")
    for name, cpu in fixtures[: min(count, 15)]:
        terminalreporter.write_line(f"{cpu:7.2f}  {name}")


# -- python -m tests.cpu_times: the suite directory by directory ------------------------------------------

_COUNTS = re.compile(r"(\d+) (passed|failed|skipped|errors?|xfailed|xpassed)")


def _targets(root: Path) -> list[list[str]]:
    tests = root / "tests"
    dirs = [[f"tests/{d.name}"] for d in sorted(tests.iterdir()) if d.is_dir() and any(d.rglob("test_*.py"))]
    return [*dirs, [f"tests/{f.name}" for f in sorted(tests.glob("test_*.py"))]]


def _run(root: Path, target: list[str], workers: int, extra: list[str], out: Path) -> dict[str, Any]:
    """One pytest run as ``make unit`` runs it; its CPU is every process it waited for (``RUSAGE_CHILDREN``
    grows by a child's time and that of the children it reaped in turn)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(root)
    cmd = [sys.executable, "-m", "pytest", *target, "-q", "-p", "tests.cpu_times", f"--cpu-times-file={out}"]
    cmd += ["-m", "not long", "--hypothesis-profile=ci", "--cpu-times=0", *extra]
    if workers > 0:
        cmd += ["-n", str(workers), "--dist", "worksteal"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    done = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, check=False)
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    tail = done.stdout.strip().splitlines()[-1:] or [""]
    counts = {kind.rstrip("s"): int(n) for n, kind in _COUNTS.findall(tail[0])}
    if done.returncode not in (0, 5):
        sys.stderr.write(done.stdout[-4000:] + done.stderr[-2000:])
    return {"target": " ".join(target), "cpu": cpu, "wall": wall, "counts": counts, "rc": done.returncode}


def _markdown(
    path: Path,
    rows: list[dict[str, Any]],
    workers: int,
    load: tuple[float, ...],
    commit: str | None,
    note: str = "",
) -> None:
    """docs/perf.md's ``tests`` section: this run's table, with its command, date, commit and load."""
    from myrm_tui.app.perf import _loads, _stamp, write_section

    stamp = _stamp(_loads(load, os.getloadavg()))
    if commit:
        stamp = stamp.replace(", ", f", commit {commit}, ", 1) if ", commit " not in stamp else stamp
    lines = [
        "## Test suite CPU",
        "",
        "`python -m tests.cpu_times --markdown docs/perf.md`: `make unit`'s pytest (`-m 'not long' "
        "--hypothesis-profile=ci`) run one directory at a time on "
        f"{workers} workers: the CPU (user + sys) of pytest and every process it waited "
        "for (its workers, the warm interpreter, the `myrm` and model processes the tests start). Each run "
        "pays its workers' start (collection, imports), which a whole run pays once, so the sum is over a "
        f"whole run's figure. The goal is 50× one `import litellm` on two cores. {stamp}. {note}".strip(),
        "",
        "| tests | CPU | wall | passed | failed, errors |",
        "|---|---:|---:|---:|---:|",
    ]
    for r in rows:
        c = r["counts"]
        bad = c.get("failed", 0) + c.get("error", 0)
        target = r["target"] if len(r["target"]) < 40 else "tests/test_*.py"
        lines.append(f"| {target} | {r['cpu']:.1f} s | {r['wall']:.0f} s | {c.get('passed', 0)} | {bad} |")
    total = sum(r["cpu"] for r in rows)
    passed = sum(r["counts"].get("passed", 0) for r in rows)
    bad = sum(r["counts"].get("failed", 0) + r["counts"].get("error", 0) for r in rows)
    lines.append(f"| **sum** | **{total:.1f} s** | {sum(r['wall'] for r in rows):.0f} s | {passed} | {bad} |")
    write_section(path, "tests", "\n".join(lines))


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m tests.cpu_times", description=__doc__)
    parser.add_argument("paths", nargs="*", help="test directories or files (default: each of tests/)")
    parser.add_argument("-n", "--workers", type=int, default=2, help="xdist workers a run (0: none)")
    parser.add_argument(
        "--out",
        default=os.path.join(tempfile.gettempdir(), "myrm-cpu-times"),
        help="folder for each run's per-test tsv (default: the temporary folder's myrm-cpu-times)",
    )
    parser.add_argument("--top", type=int, default=25, help="tests and fixtures to rank at the end")
    parser.add_argument("--markdown", type=Path, help="write the table as this file's tests section")
    parser.add_argument("--commit", default=None, help="the commit measured (default: git's HEAD here)")
    parser.add_argument("--note", default="", help="a sentence for the section (what the run lacked)")
    args, extra = parser.parse_known_args(argv)
    root = Path(__file__).resolve().parents[1]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    targets = [[p] for p in args.paths] or _targets(root)
    rows = []
    load_before = os.getloadavg()
    print(f"load {' '.join(f'{x:.1f}' for x in load_before)}; {args.workers} workers", flush=True)
    for target in targets:
        tsv = (out / (target[0].replace("/", "_") + ".tsv")).resolve()
        row = _run(root, target, args.workers, extra, tsv)
        rows.append((row, tsv))
        counts = ", ".join(f"{n} {k}" for k, n in row["counts"].items())
        print(f"{row['cpu']:7.1f} s CPU {row['wall']:7.1f} s wall  {row['target']}: {counts}", flush=True)
    total = sum(r["cpu"] for r, _ in rows)
    tests = sum(r["counts"].get("passed", 0) + r["counts"].get("failed", 0) for r, _ in rows)
    print(f"{total:7.1f} s CPU {sum(r['wall'] for r, _ in rows):7.1f} s wall  sum: {tests} passed or failed")
    print(f"load {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    if args.markdown:
        _markdown(args.markdown, [r for r, _ in rows], args.workers, load_before, args.commit, args.note)
    by_test: list[tuple[float, str]] = []
    by_fixture: dict[str, float] = {}
    for _, tsv in rows:
        if not tsv.exists():
            continue
        for line in tsv.read_text(encoding="utf-8").splitlines():
            figure, _, name = line.partition("\t")
            if name.startswith("fixture:"):
                by_fixture[name[8:]] = by_fixture.get(name[8:], 0.0) + float(figure)
            else:
                by_test.append((float(figure), name))
    in_tests = sum(c for c, _ in by_test)
    print(f"-- {args.top} tests by CPU (setup to teardown, in their worker; {in_tests:.1f} s in all)")
    for cpu, name in sorted(by_test, reverse=True)[: args.top]:
        print(f"{cpu:7.2f}  {name}")
    print(f"-- {args.top} fixtures by setup CPU (summed over their setups)")
    for name, cpu in sorted(by_fixture.items(), key=lambda kv: kv[1], reverse=True)[: args.top]:
        print(f"{cpu:7.2f}  {name}")
    return 1 if any(r["rc"] not in (0, 5) for r, _ in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
