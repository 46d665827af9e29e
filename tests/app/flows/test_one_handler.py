"""Each message has one handler: the app's flows and the chat screen never both act on the same message
(issue 47: ``SessionLoaded``, ``PromptInput.Submitted`` and ``TextArea.Changed`` were each handled twice,
on the way down and again on the way back up)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from textual import events
from textual.message import Message
from textual.message_pump import MessagePump
from textual.widget import Widget

import myrm_tui.app.screens.main as main_screen
from myrm_tui.app.app import MyrmApp
from myrm_tui.app.widgets.chat_message import AssistantMessage
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.helpers import SMALL_SCREEN, make_app, send_turn, started, wait_until


def _ours(cls: type) -> bool:
    return cls.__module__.startswith("myrm_tui.")


def _handler_names(cls: type) -> dict[str, list[str]]:
    """Each ``on_…``/``action_…`` name defined by the project's classes in ``cls``'s MRO -> those classes."""
    found: dict[str, list[str]] = {}
    for klass in cls.__mro__:
        if not _ours(klass):
            continue
        for name in vars(klass):
            bare = name.removeprefix("_")
            if bare.startswith(("on_", "action_")) and callable(vars(klass)[name]):
                found.setdefault(bare, []).append(klass.__qualname__)
    return found


def _subclasses(cls: type[Any]) -> Iterator[type[Any]]:
    sub: type[Any]
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


def _bubbling_handlers() -> set[str]:
    """Handler names of the messages that bubble (a ``Mount`` or a ``Resize`` is each node's own)."""
    import myrm_tui.app.messages  # noqa: F401  (every message class of the app is defined)

    return {m.handler_name for m in _subclasses(Message) if m.bubble}


def _widget_classes() -> list[type]:
    """The chat screen and every widget the project defines (the nodes a message passes on its way up)."""
    import myrm_tui.app.widgets

    for path in sorted(Path(myrm_tui.app.widgets.__file__).parent.glob("*.py")):
        __import__(f"myrm_tui.app.widgets.{path.stem}")
    return [
        main_screen.MainScreen,
        *(c for c in _subclasses(Widget) if c.__module__.startswith("myrm_tui.app")),
    ]


def test_each_handler_and_action_of_the_app_is_defined_in_one_flow() -> None:
    """Textual calls every handler of a name along the MRO: a second definition in another flow would run
    too, and a second action would shadow the first."""
    doubled = {name: where for name, where in _handler_names(MyrmApp).items() if len(where) > 1}
    assert not doubled, doubled


def test_no_message_that_reaches_the_app_is_handled_on_its_way_there() -> None:
    """What the app handles, no widget or screen below it handles too (the screen draws what the app's
    workers post to it, and those messages stop there)."""
    bubbling = _bubbling_handlers()
    app_handlers = {name for name in _handler_names(MyrmApp) if name.startswith("on_")} & bubbling
    twice = sorted(
        f"{name}: {cls.__qualname__} and the app"
        for cls in _widget_classes()
        for name in _handler_names(cls)
        if name in app_handlers
    )
    assert not twice, twice


class _Handled:
    """Every handler of the project's code Textual runs, by message (the real dispatch, observed)."""

    def __init__(self) -> None:
        self.by_message: dict[int, tuple[Message, list[str]]] = {}

    def wrap(self, dispatch: Callable[..., Iterable[tuple[type, Any]]]) -> Callable[..., Any]:
        def observed(node: MessagePump, method_name: str, message: Message) -> Iterator[tuple[type, Any]]:
            for cls, method in dispatch(node, method_name, message):
                if _ours(cls):
                    entry = self.by_message.setdefault(id(message), (message, []))
                    entry[1].append(f"{type(node).__name__}.{method.__name__}")
                yield cls, method

        return observed

    def twice(self) -> list[str]:
        return sorted(
            f"{type(m).__qualname__}: {', '.join(where)}"
            for m, where in self.by_message.values()
            if len(where) > 1
        )

    def seen(self) -> set[str]:
        return {type(m).__qualname__ for m, _ in self.by_message.values()}


async def test_a_session_typed_into_sent_and_switched_handles_each_message_once(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Start-up, typing, a paste, a turn, a new session: each message the project's handlers see is
    handled by one of them, once."""
    handled = _Handled()
    monkeypatch.setattr(MessagePump, "_get_dispatch_methods", handled.wrap(MessagePump._get_dispatch_methods))
    emulator.enqueue(Reply(text="Read it."))
    app = make_app(emulator, tmp_path, workspace, preheat=False)
    async with started(app, size=SMALL_SCREEN) as pilot:
        app.post_message(events.Paste("line\n" * 40))  # a paste, shown by its label
        await send_turn(pilot, app, "look at this", 60)
        await wait_until(pilot, lambda: bool(app.query(AssistantMessage)))
        await pilot.press("ctrl+n")
        await wait_until(pilot, lambda: not app.query(AssistantMessage))
    seen = handled.seen()
    assert {"SessionLoaded", "PromptInput.Submitted", "TextArea.Changed", "AgentEventMessage"} <= seen, seen
    assert not handled.twice(), handled.twice()
