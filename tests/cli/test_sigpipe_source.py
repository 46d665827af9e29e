"""``myrm ask`` stops on SIGPIPE only when its own output's reader went away.

The kernel sends SIGPIPE for a write to *any* pipe without a reader: a hook's stdin, a server's pipe, a
provider's socket. Taken as "stdout closed", such a write stopped a healthy run with exit 141 (seen in the
suite: a hook whose child kept running). And asyncio, removing its handler, leaves SIGPIPE at SIG_DFL: a
later write to a closed pipe killed the process (an xdist worker died of it)."""

from __future__ import annotations

import asyncio
import os
import signal

from myrm_tui import cli


async def _write_to_a_pipe_nobody_reads() -> int:
    read, write = os.pipe()
    os.close(read)
    try:
        os.write(write, b"x")
    except BrokenPipeError:
        pass
    finally:
        os.close(write)
    # The handler runs from the loop's wakeup pipe: give the loop a few turns to deliver it.
    for _ in range(50):
        await asyncio.sleep(0)
    return 7


def test_a_broken_pipe_that_is_not_the_output_does_not_stop_the_run() -> None:
    before = signal.getsignal(signal.SIGPIPE)
    try:
        assert asyncio.run(cli._stoppable(_write_to_a_pipe_nobody_reads(), pipe=True)) == 7
    finally:
        signal.signal(signal.SIGPIPE, before)


def test_after_the_run_sigpipe_is_ignored_again() -> None:
    async def done() -> int:
        return 0

    before = signal.getsignal(signal.SIGPIPE)
    try:
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)  # Python's own start-up setting
        assert asyncio.run(cli._stoppable(done(), pipe=True)) == 0
        assert signal.getsignal(signal.SIGPIPE) == signal.SIG_IGN
    finally:
        signal.signal(signal.SIGPIPE, before)
