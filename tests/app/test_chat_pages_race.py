"""Page builds, remounts and new items at once: the transcript's window always says what is mounted.

A page build awaits its mount; a search or the cursor far away remounted the window meanwhile, and the build
then set a window it no longer had (``Window.set`` raised ``(1155, 613)`` under a loaded suite). Every change
of the mounted items now holds one lock; these run the changes concurrently in generated orders."""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from textual.app import App, ComposeResult

from myrm_tui.app.widgets.chat_log import ChatLog
from myrm_tui.context.types import Message

EXCHANGES = 150

op = st.one_of(
    st.tuples(st.just("older"), st.integers(1, 40)),
    st.tuples(st.just("newer"), st.integers(1, 40)),
    st.tuples(st.just("show"), st.integers(0, 2 * EXCHANGES - 1)),
    st.tuples(st.just("append"), st.just(0)),
    st.tuples(st.just("card"), st.integers(0, EXCHANGES - 1)),
)


class LogApp(App[None]):
    def compose(self) -> ComposeResult:
        yield ChatLog()


def _stored() -> list[Message]:
    out: list[Message] = []
    for i in range(EXCHANGES):
        out += [
            Message(role="user", content=f"question {i}", id=f"u{i}"),
            Message(role="assistant", content=f"answer {i}", id=f"a{i}"),
        ]
    return out


async def _scenario(ops: list[tuple[str, int]], start: int) -> None:
    app = LogApp()
    async with app.run_test(size=(80, 24)) as pilot:
        chat = app.query_one(ChatLog)
        await chat.load(_stored())
        # Each answer stands for a tool call's row, which a vault card goes under (a stored call's row shows
        # its result after a refresh, which a mount held here would not have had).
        chat._calls = {f"c{i}": chat.items[2 * i + 1] for i in range(EXCHANGES)}
        await chat.show_item(start)  # a window in the middle, so pages can be built both ways
        await pilot.pause()
        gate = asyncio.Event()
        mount_all = chat.mount_all

        def held_mount(*args: Any, **kwargs: Any) -> Any:
            async def later() -> None:
                await gate.wait()  # every mount waits until all the changes have started
                await mount_all(*args, **kwargs)

            return later()

        chat.mount_all = held_mount  # type: ignore[method-assign,assignment]

        async def run(kind: str, n: int) -> None:
            if kind == "older":
                await chat.build_older(n)
            elif kind == "newer":
                await chat.build_newer(n)
            elif kind == "card":  # the side panel offers a call's vaulted output under it (PanelData)
                chat.add_vault_cards(f"c{n}", [f"vault://s/{n:016x}"])
            elif kind == "show":
                await chat.show_item(min(n, len(chat.items) - 1))
            else:
                await chat.add_user(f"typed {len(chat.items)}")

        tasks = [asyncio.ensure_future(run(k, n)) for k, n in ops]
        await asyncio.sleep(0)
        gate.set()
        await asyncio.gather(*tasks)  # none raises
        await app.workers.wait_for_complete()  # a card held back by a page build is added after it
        chat.mount_all = mount_all  # type: ignore[method-assign]
        await pilot.pause()
        lo, hi = chat.window.span
        assert 0 <= lo <= hi <= len(chat.items)
        mounted = [w for w in chat.children if w.id not in ("earlier", "newer")]
        assert mounted == [it.widget for it in chat.items[lo:hi]]  # the window is what is mounted, in order
        assert all(it.widget is None for it in chat.items[:lo] + chat.items[hi:])


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=st.lists(op, min_size=2, max_size=5), start=st.integers(100, 200))
def test_concurrent_page_builds_remounts_and_appends_leave_the_window_what_is_mounted(
    ops: list[tuple[str, int]], start: int
) -> None:
    asyncio.run(_scenario(ops, start))


def test_a_remount_during_a_page_build_waits_for_it() -> None:
    """The failure the loaded suite found: a page built before the window while the cursor moved far."""
    asyncio.run(_scenario([("older", 20), ("show", 5)], 150))


def test_a_vault_card_added_during_a_page_build_waits_for_it() -> None:
    """The side panel's cards come whenever a turn ends: one inserted above a page being built shifted the
    items under it, and the build then set the window it had read before."""
    asyncio.run(_scenario([("older", 20), ("card", 10)], 150))
