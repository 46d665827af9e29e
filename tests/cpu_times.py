"""CPU seconds a test, not wall: ``pytest -p tests.cpu_times [--cpu-times=N] [--cpu-times-file=PATH]``.

On a machine others share, ``--durations`` measures the load as much as the test; the CPU a test's process
spends (its threads, plus the children it waited for) does not move with the load. The warm interpreter's
forks (``tests/warm.py``) are its children, not the test's, so their CPU is only in the whole run's figure
(``/usr/bin/time`` around pytest).
"""

from __future__ import annotations

import resource
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

_KEY = "cpu_seconds"
_start: dict[str, float] = {}
_seen: dict[str, float] = {}


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
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, None]:
    outcome = yield
    if call.when == "teardown" and item.nodeid in _start:
        report = outcome.get_result()
        report.user_properties.append((_KEY, _cpu() - _start.pop(item.nodeid)))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when != "teardown":
        return
    for key, value in report.user_properties:
        if key == _KEY and isinstance(value, float):
            _seen[report.nodeid] = value


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    if hasattr(config, "workerinput") or not _seen:
        return
    ranked = sorted(_seen.items(), key=lambda kv: kv[1], reverse=True)
    path = config.getoption("cpu_times_file")
    if path:
        Path(path).write_text("".join(f"{cpu:.3f}\t{node}\n" for node, cpu in ranked), encoding="utf-8")
    count = config.getoption("cpu_times")
    terminalreporter.write_sep("=", f"{min(count, len(ranked))} most CPU (s, setup to teardown)")
    for node, cpu in ranked[:count]:
        terminalreporter.write_line(f"{cpu:7.2f}  {node}")
    terminalreporter.write_line(f"{sum(_seen.values()):7.1f}  all {len(_seen)} tests")
