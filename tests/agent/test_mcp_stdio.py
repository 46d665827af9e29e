"""A hostile MCP server's output (attacker6, item 2): stderr without end, bytes that are not UTF-8, a line
that is not JSON, a message larger than myrm takes, a server that dies half-way through an answer, and
notifications without end (leftovers8). Each is one line at most, the connection's other calls go on
where the server still can, and myrm's log of the server's stderr stays bounded (``agent/mcp_stdio.py``)."""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from myrm_tui.agent import mcp_client, mcp_stdio
from myrm_tui.agent.mcp_client import McpServerConfig, McpTool, connect_all
from myrm_tui.agent.tools.base import ToolContext, ToolError
from myrm_tui.context.vault import ArtifactVault
from tests.conftest import FIXTURES

SERVER = str(FIXTURES / "mcp_hostile_io.py")


@pytest.fixture
def log_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MYRM_LOG", str(tmp_path / "myrm.log"))
    return tmp_path


async def _tools(*args: str, env: dict[str, str] | None = None) -> tuple[list, dict[str, McpTool]]:  # type: ignore[type-arg]
    conns, tools, errors = await connect_all(
        [McpServerConfig("h", sys.executable, (SERVER, *args), env or {})]
    )
    assert errors == []
    return conns, {t.remote: t for t in tools}


async def test_a_servers_stderr_flood_bad_bytes_and_garbage_lines_cost_nothing(
    log_dir: Path, tmp_path: Path
) -> None:
    """30 MB of stderr: at most ``STDERR_LOG_BYTES`` of it in ``mcp-servers.log`` (it had all 30 MB, and a
    server that logs without end filled the disk). Bytes that are not UTF-8 arrive as U+FFFD (the SDK's
    reader died on them and the call waited its two minutes); a line that is not JSON is skipped."""
    conns, tools = await _tools("stderr")
    ctx = ToolContext(workspace=tmp_path, vault=ArtifactVault("s"))
    try:
        assert (await tools["fine"].run({"text": "a"}, ctx)).content == "fine: a"
        assert (await tools["badutf8"].run({}, ctx)).content == "bad \ufffd\ufffd end"
        assert (await tools["garbage"].run({}, ctx)).content == "after garbage"
        assert (await tools["fine"].run({"text": "b"}, ctx)).content == "fine: b"
    finally:
        for c in conns:
            await c.close()
    log = (log_dir / "mcp-servers.log").read_bytes()
    assert b"e" * 1000 in log and len(log) < mcp_stdio.STDERR_LOG_BYTES + 1_000
    assert b"dropped" in log


async def test_a_message_over_the_limit_stops_its_server_in_one_line(
    log_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A result larger than ``MAX_MESSAGE_BYTES`` (1 MB here, a 3 MB answer) is not read: the call and the
    next one fail in one line each, naming why; myrm's memory holds no more than the limit."""
    monkeypatch.setattr(mcp_stdio, "MAX_MESSAGE_BYTES", 1 << 20)
    conns, tools = await _tools(env={"GIANT": "3000000"})
    ctx = ToolContext(workspace=tmp_path, vault=ArtifactVault("s"))
    try:
        with pytest.raises(ToolError) as first:
            await tools["giant"].run({}, ctx)
        with pytest.raises(ToolError) as second:
            await tools["fine"].run({"text": "a"}, ctx)
    finally:
        for c in conns:
            await c.close()
    for exc in (first, second):
        assert "over 1 MB" in str(exc.value) and "\n" not in str(exc.value), str(exc.value)


async def test_a_large_result_under_the_limit_is_read_whole_and_vaulted(
    log_dir: Path, tmp_path: Path
) -> None:
    """5 MB of text under the limit: read whole (its lines are joined once, not at every chunk), spilled
    to the vault with a pointer; a server that then dies half-way through an answer is one line."""
    conns, tools = await _tools(env={"GIANT": "5000000"})
    vault = ArtifactVault("s")
    ctx = ToolContext(workspace=tmp_path, vault=vault)
    try:
        big = await tools["giant"].run({}, ctx)
        uri = big.meta["vault_uri"]
        assert uri in big.content and len(vault.get_cached(uri).content) == 5_000_000  # type: ignore[union-attr]
        with pytest.raises(ToolError) as died:
            await tools["die"].run({}, ctx)
        assert "\n" not in str(died.value)
    finally:
        for c in conns:
            await c.close()


async def test_a_server_sending_notifications_without_end_is_stopped_in_one_line(
    log_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tool that sends log notifications without end and never answers (leftovers8): each costs myrm
    ~70 µs of CPU, so it burned a core until the call's time limit. Past the message budget the server is
    stopped: the call fails with the budget's line (not the time limit's: that is cut to 30 s here, so
    without the budget the test ends there, failing), the next call with one line too. 2,000 notifications
    before an answer, under the budget, are a server's chatter: that call is answered."""
    monkeypatch.setattr(mcp_client, "CALL_TIMEOUT", 30.0)
    conns, tools = await _tools()
    ctx = ToolContext(workspace=tmp_path, vault=ArtifactVault("s"))
    try:
        assert (await tools["flood"].run({"count": 2_000}, ctx)).content == "flooded 2000"
        with pytest.raises(ToolError) as flooded:
            await tools["flood"].run({}, ctx)
        with pytest.raises(ToolError) as after:
            await tools["fine"].run({"text": "a"}, ctx)
    finally:
        for c in conns:
            await c.close()
    for exc in (flooded, after):
        assert "sent messages without pause" in str(exc.value) and "\n" not in str(exc.value), str(exc.value)


@settings(max_examples=60)
@given(
    burst=st.integers(1, 50),
    rate=st.floats(1.0, 1_000.0),
    gaps=st.lists(st.floats(0.0, 0.05), min_size=1, max_size=150),
)
def test_the_message_budget_takes_burst_plus_rate_a_second_at_most(
    burst: int, rate: float, gaps: list[float]
) -> None:
    """Over any arrival times, the messages taken between any two of them number at most ``burst`` plus
    ``rate`` a second of the time between; and a stream no faster than ``rate`` is never refused."""
    budget = mcp_stdio.MessageBudget(burst, rate)
    times = list(itertools.accumulate(gaps))
    taken = [t for t in times if budget.take(t)]
    for i, start in enumerate(taken):
        for j in range(i, len(taken)):
            assert j - i + 1 <= burst + rate * (taken[j] - start) + 1e-6
    steady = mcp_stdio.MessageBudget(burst, rate)
    assert all(steady.take(n * 1.001 / rate) for n in range(len(gaps)))


async def test_a_server_that_talks_while_its_connection_closes_is_closed_without_an_error(
    log_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A server that sends notifications (its log, its progress; ``CHATTY`` at once, within the budget)
    when myrm closes the connection: what it says then is not read, and the close is clean. The
    transport's reader, held on a message no session read any more, failed when its stream was closed:
    each close logged "MCP server stopped" with that error and marked the server dead."""
    conns, _ = await _tools("chatty")
    (conn,) = conns
    await conn.close()
    assert conn.dead is None
    assert not [r for r in caplog.records if "stopped" in r.getMessage()]
