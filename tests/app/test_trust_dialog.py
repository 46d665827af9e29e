"""The full screen asks once per folder whose own configuration it would honour: y trusts the folder (its
rules filter the output the model sees), n does not (the rules are skipped and the conversation says so);
the answer is remembered and not asked again."""

from __future__ import annotations

from pathlib import Path

import pytest

from myrm_tui import trust
from myrm_tui.app.screens.trust import TrustScreen
from myrm_tui.app.widgets.chat_message import Notice
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.app.screens.test_approval import press_at
from tests.helpers import SMALL_SCREEN, make_app, send_turn, started, wait_until
from tests.test_trust import NOTICE, hostile  # noqa: F401  (the fixture)


@pytest.mark.parametrize("key", ["y", "n"])
async def test_the_answer_decides_what_the_model_sees_and_is_asked_once(
    emulator: ProviderEmulator,
    tmp_path: Path,
    hostile: Path,  # noqa: F811
    key: str,
) -> None:
    app = make_app(emulator, tmp_path, hostile)
    emulator.enqueue(Reply(tool_calls=[("bash", {"command": "cat out.txt"})]), Reply(text="done"))
    async with app.run_test(size=SMALL_SCREEN) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, TrustScreen), 60)
        screen = app.screen
        assert isinstance(screen, TrustScreen) and not app.ready.is_set()  # no agent before the answer
        assert ".myrm/filters/hide.yaml" in str(screen.query_one("#files").render())
        await wait_until(pilot, lambda: screen.shown_at is not None)
        assert screen.shown_at is not None
        await press_at(pilot, key, screen.shown_at + 0.1)  # typed as it opened: does nothing
        still_open = app.screen is screen
        assert still_open and trust.remembered(hostile) is None
        screen.shown_at -= 3600.0  # read long ago: the key answers
        await pilot.press(key)
        await wait_until(pilot, app.ready.is_set, 60)
        assert trust.remembered(hostile) is (key == "y")
        await send_turn(pilot, app, "what failed?", timeout=30)
        # (the app's other requests, a title or a cache warm-up, carry no tool result)
        sent = [m["content"] for r in emulator.accepted for m in r.body["messages"] if m["role"] == "tool"]
        notices = [str(n.render()) for n in app.query(Notice)]
        if key == "y":
            assert "FAILED" not in sent[0] and "[rule hide-failures: 40 lines removed]" in sent[0]
            assert not any("not trusted" in n for n in notices)
        else:
            assert sent[0].count("FAILED") == 40 and NOTICE in notices
    again = make_app(emulator, tmp_path, hostile)
    async with started(again, size=SMALL_SCREEN) as pilot:
        assert not isinstance(again.screen, TrustScreen)  # remembered: not asked twice


async def test_a_folder_without_its_own_configuration_is_not_asked_about(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    app = make_app(emulator, tmp_path, workspace)
    async with started(app, size=(100, 30)):
        assert not isinstance(app.screen, TrustScreen)
    assert not trust.trust_file().exists()
