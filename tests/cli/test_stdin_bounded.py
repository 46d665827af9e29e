"""Standard input from a program (``myrm ask -``, ``--input-format stream-json``) is read bounded and in
one pass: ``yes | myrm ask -`` or a line that never ends is refused in one line at ``STDIN_LIMIT``
instead of growing without end, and a long line costs its length (it was read again at every chunk)."""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from myrm_tui.agent import stream_json
from myrm_tui.agent.stream_json import lines_of
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.helpers import cli_env, emulator_args, run_myrm


def _chunked(data: bytes, sizes: list[int]) -> Iterator[bytes]:
    at, k = 0, 0
    while at < len(data):
        size = sizes[k % len(sizes)] if sizes else len(data)
        yield data[at : at + size]
        at, k = at + size, k + 1


@settings(max_examples=300, deadline=None)
@given(
    lines=st.lists(st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")), max_size=8),
    end=st.booleans(),
    sizes=st.lists(st.integers(1, 17), max_size=4),
)
def test_the_lines_are_those_of_the_bytes_whatever_the_chunks(
    lines: list[bytes], end: bool, sizes: list[int]
) -> None:
    data = b"\n".join(lines) + (b"\n" if end and lines else b"")
    want = [ln.decode(errors="replace") + "\n" for ln in data.split(b"\n")[:-1]]
    if not data.endswith(b"\n") and data.split(b"\n")[-1]:
        want.append(data.split(b"\n")[-1].decode(errors="replace"))
    assert list(lines_of(_chunked(data, sizes), limit=10_000)) == want


@settings(max_examples=50, deadline=None)
@given(before=st.integers(0, 3), over=st.integers(1, 5_000), chunk=st.integers(1, 4096))
def test_a_line_over_the_bound_is_a_value_error_naming_it(before: int, over: int, chunk: int) -> None:
    limit = 10_000
    data = b"ok\n" * before + b"x" * (limit + over) + b"\nnever read\n"
    got: list[str] = []
    with pytest.raises(ValueError, match=rf"^stdin line {before + 1}: over 10,000 bytes$"):
        got.extend(lines_of(_chunked(data, [chunk]), limit=limit))
    assert got == ["ok\n"] * before


def test_a_line_that_never_ends_is_refused_holding_about_the_bound() -> None:
    """An endless stream without a newline (``cat /dev/zero``): refused, memory near the bound."""

    def endless() -> Iterator[bytes]:
        while True:
            yield b"\0" * 65536

    limit = 1 << 20
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match="stdin line 1"):
            for _ in lines_of(endless(), limit=limit):
                pass
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 * limit, f"{peak:,} bytes held"


def test_ask_refuses_a_message_over_the_bound_in_one_line(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(stream_json, "STDIN_LIMIT", 100_000)
    emulator.requests.clear()
    args = ["ask", *emulator_args(emulator, workspace)]
    env = cli_env(tmp_path)
    over = run_myrm([*args, "-"], env=env, stdin="y\n" * 60_000)
    assert over.returncode == 2 and "Traceback" not in over.stderr, over.stderr
    assert over.stderr.strip().count("\n") == 0 and "over 100,000 bytes" in over.stderr
    line = json.dumps({"type": "user", "text": "y" * 100_001})
    streamed = run_myrm([*args, "--input-format", "stream-json"], env=env, stdin=line + "\n")
    assert streamed.returncode == 2 and "stdin line 1: over 100,000 bytes" in streamed.stderr, streamed.stderr
    assert emulator.requests == []  # nothing was sent
    emulator.enqueue(Reply(text="Read it."))
    under = run_myrm([*args, "-"], env=env, stdin="caf\u00e9 " * 1000)  # under the bound: as before
    assert under.returncode == 0 and "Read it." in under.stdout, under.stderr
