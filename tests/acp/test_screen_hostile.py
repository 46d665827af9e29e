"""What the editor sends is screened line by line before the SDK reads it: whatever a line holds (not JSON,
not an object, invalid UTF-8, arrays nested 100,000 deep, over the size limit), it gets one error and the
next line is served; a JSON object goes on to the SDK. The connection ends only when the editor's does."""

from __future__ import annotations

import asyncio
import json
import os

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from myrm_tui.acp.server import _screen

LIMIT = 4_096
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
lines = st.one_of(
    _JSON.map(lambda v: json.dumps(v).encode()),  # objects go through, the rest is refused
    st.builds(
        lambda i, m, p: json.dumps({"jsonrpc": "2.0", "id": i, "method": m, "params": p}).encode(),
        _JSON,
        _JSON,
        _JSON,
    ),
    st.builds(  # a notification sent as a request
        lambda i, p: json.dumps(
            {"jsonrpc": "2.0", "id": i, "method": "session/cancel", "params": p}
        ).encode(),
        st.integers(0, 99) | st.text(max_size=4),
        _JSON,
    ),
    # deep, within the size limit: past ~1,000 levels json raises RecursionError, not ValueError
    st.integers(1, 2_000).map(lambda n: b"[" * n + b"]" * n),
    st.integers(1, 500).map(lambda n: b'{"a": [' * n),
    st.binary(max_size=40).map(lambda b: b.replace(b"\n", b" ")),
    st.integers(LIMIT, 5 * LIMIT).map(lambda n: b'{"x": "' + b"a" * n + b'"}'),
    # over the limit with the id leading, as every client writes it: a request, or an answer to ours
    st.builds(
        lambda i, key, n: json.dumps({"jsonrpc": "2.0", "id": i, key: "a" * n}).encode(),
        st.integers(-5, 10**6) | st.text(max_size=6),
        st.sampled_from(["method", "result", "error"]),
        st.integers(LIMIT, 3 * LIMIT),
    ),
    st.builds(  # a method that is not a string
        lambda i, m: json.dumps({"jsonrpc": "2.0", "id": i, "method": m}).encode(),
        st.integers(0, 99),
        st.none() | st.integers() | st.lists(st.integers(), max_size=2),
    ),
)


def _fate(line: bytes) -> tuple[str, object]:
    """What the screen does with ``line``: ("forward", the line), ("fail", id: an over-long answer to one of
    our requests, failed as an error answer the SDK reads), ("error", the id the error carries) or
    ("notify", the message: a notification sent with an id, answered and forwarded without it)."""
    if len(line) + 1 > LIMIT:
        try:
            msg = json.loads(line)
        except ValueError:
            return "error", None
        if isinstance(msg, dict) and list(msg)[:2] == ["jsonrpc", "id"] and len(msg) > 2:
            key = list(msg)[2]
            if key == "method":
                return "error", msg["id"]
            if key in ("result", "error"):
                return "fail", msg["id"]
        return "error", None
    try:
        msg = json.loads(line)
    except (ValueError, RecursionError):
        return "error", None
    if not isinstance(msg, dict):
        return "error", None
    if "method" in msg and not isinstance(msg["method"], str):
        rid = msg.get("id")
        return "error", rid if isinstance(rid, str | int | float) and not isinstance(rid, bool) else None
    if msg.get("method") == "session/cancel" and "id" in msg:  # a notification sent with an id
        return "notify", msg
    return "forward", line


async def _pump(batch: list[bytes], limit: int = LIMIT) -> tuple[list[bytes], list[dict[str, object]]]:
    src = asyncio.StreamReader(limit=limit)
    dst = asyncio.StreamReader()
    out_r, out_w = os.pipe()
    os.set_blocking(out_r, False)
    loop = asyncio.get_running_loop()
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, os.fdopen(out_w, "wb", 0)
    )
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    pump = asyncio.create_task(_screen(src, dst, writer))
    said = b""
    try:
        for line in batch:
            src.feed_data(line + b"\n")
        src.feed_eof()
        forwarded = []
        while line := await asyncio.wait_for(dst.readline(), 30):
            forwarded.append(line.rstrip(b"\n"))
        await asyncio.wait_for(pump, 30)  # ended by the end of input, not by a line
        await writer.drain()
        while True:
            try:
                chunk = os.read(out_r, 1 << 16)
            except BlockingIOError:
                break
            if not chunk:
                break
            said += chunk
    finally:
        writer.close()
        os.close(out_r)
    return forwarded, [json.loads(x) for x in said.splitlines()]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batch=st.lists(lines, min_size=1, max_size=6))
@example(batch=[b"[" * 2_000 + b"]" * 2_000, b'{"jsonrpc": "2.0", "id": 1, "method": "initialize"}'])
@example(batch=[json.dumps({"jsonrpc": "2.0", "id": 7, "result": "a" * LIMIT}).encode()])
@example(batch=[b'{"jsonrpc": "2.0", "id": 3, "method": null}'])
@example(batch=[b'{"jsonrpc": "2.0", "id": 4, "method": "session/cancel", "params": {"sessionId": "s"}}'])
def test_every_line_is_forwarded_or_answered_and_the_next_one_is_read(batch: list[bytes]) -> None:
    forwarded, said = asyncio.run(_pump(batch))
    errors = [m for m in said if "error" in m]
    fates = [_fate(ln) for ln in batch if ln.strip()]
    passed = [(kind, what) for kind, what in fates if kind != "error"]
    assert len(forwarded) == len(passed)
    for line, (kind, what) in zip(forwarded, passed, strict=True):
        if kind == "forward":
            assert line == what
        elif kind == "notify":
            assert json.loads(line) == {k: v for k, v in what.items() if k != "id"}  # type: ignore[attr-defined]
        else:  # the SDK reads an error answer to its request: that request fails, none waits for ever
            failed = json.loads(line)
            assert failed["id"] == what and failed["error"]["code"] == -32600 and "result" not in failed
    assert [e["id"] for e in errors] == [what for kind, what in fates if kind == "error"]
    assert all(e["error"]["code"] in (-32700, -32600) for e in errors)  # type: ignore[index]
    answered = [m["id"] for m in said if "result" in m]
    assert answered == [what["id"] for kind, what in fates if kind == "notify"]  # type: ignore[index]


def test_a_line_over_a_limit_shorter_than_the_head_read_leaves_the_next_line_whole() -> None:
    """The first bytes of an over-long line are read for its id: under a limit shorter than that read
    (as a test's), the read went past the line's end into the next one."""
    forwarded, said = asyncio.run(
        _pump([b'{"jsonrpc": "2.0", "id": 5, "method": "x' + b"a" * 80 + b'"}', b'{"id": 1}'], 64)
    )
    assert forwarded == [b'{"id": 1}']
    assert [(m["id"], m["error"]["code"]) for m in said] == [(5, -32600)]  # type: ignore[index]
