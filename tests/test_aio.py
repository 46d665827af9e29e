"""``within``: a timed wait that never loses a cancel (``asyncio.wait_for`` on 3.11 did)."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from myrm_tui.aio import to_the_end, within


async def test_a_cancel_in_the_loop_turn_the_awaited_thing_finishes_is_kept() -> None:
    done: asyncio.Future[int] = asyncio.get_running_loop().create_future()
    task = asyncio.ensure_future(within(asyncio.shield(done), 5.0))
    await asyncio.sleep(0)
    done.set_result(1)  # finished...
    task.cancel()  # ...in the same turn as the cancel
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_the_result_in_time_and_a_timeout_that_cancels_what_it_waited_for() -> None:
    assert await within(asyncio.sleep(0, result=7), 5.0) == 7
    slow = asyncio.ensure_future(asyncio.sleep(30))
    with pytest.raises(TimeoutError):
        await within(slow, 0.01)
    assert slow.cancelled()


async def test_to_the_end_runs_on_after_a_cancel_and_logs_what_fails_then(
    caplog: pytest.LogCaptureFixture,
) -> None:
    gate = asyncio.Event()
    done: list[str] = []

    async def work(fail: bool) -> str:
        await gate.wait()
        if fail:
            raise OSError("disk full")
        done.append("finished")
        return "ok"

    for fail in (False, True):
        gate.clear()
        caller = asyncio.ensure_future(to_the_end(work(fail)))
        await asyncio.sleep(0)
        caller.cancel()
        with pytest.raises(asyncio.CancelledError):
            await caller  # at once, not when the work ends
        gate.set()
        for _ in range(3):
            await asyncio.sleep(0)
    assert done == ["finished"]
    assert "failed after its caller was cancelled" in caplog.text and "disk full" in caplog.text
    gate.set()
    assert await to_the_end(work(False)) == "ok"  # not cancelled: the result, and nothing logged
    with pytest.raises(OSError):
        await to_the_end(work(True))
    assert caplog.text.count("failed after its caller was cancelled") == 1


async def test_to_the_end_logs_a_failure_that_came_with_the_cancel_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The work fails and the caller is cancelled in the same loop turn, before the work's done-callback
    has run: the failure is still logged, and only once."""

    async def work() -> None:
        await asyncio.sleep(0)
        raise OSError("disk full")

    caller = asyncio.ensure_future(to_the_end(work()))

    async def cancel_as_it_fails() -> None:
        await asyncio.sleep(0)
        await asyncio.sleep(0)  # the turn right after the work raised
        caller.cancel()

    canceller = asyncio.ensure_future(cancel_as_it_fails())
    with pytest.raises(asyncio.CancelledError):
        await caller
    await canceller
    for _ in range(3):
        await asyncio.sleep(0)
    assert caplog.text.count("failed after its caller was cancelled") == 1


def test_no_module_waits_with_asyncio_wait_for() -> None:
    package = Path(__file__).resolve().parents[1] / "myrm_tui"
    users = [
        str(p.relative_to(package))
        for p in package.rglob("*.py")
        if re.search(r"\bwait_for\(", p.read_text()) and p.name != "aio.py"
    ]
    assert users == [], f"use myrm_tui.aio.within, not asyncio.wait_for (3.11 loses cancels): {users}"
