"""The app's stylesheet parses each CSS source once a process, per set of CSS variables (``app/css.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import textual.css.stylesheet
from textual.color import Color

from myrm_tui.app.css import ProcessStylesheet
from myrm_tui.app.screens.help import HelpScreen
from myrm_tui.testing.emulator import ProviderEmulator
from tests.helpers import make_app, started, wait_until


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Where each CSS source Textual parses from now on was read from."""
    seen: list[str] = []
    parse = textual.css.stylesheet.parse

    def counted(scope: str, css: str, read_from: Any, **kw: Any) -> Any:
        seen.append(str(read_from))
        return parse(scope, css, read_from, **kw)

    monkeypatch.setattr(textual.css.stylesheet, "parse", counted)
    return seen


async def test_a_second_app_in_the_process_parses_no_css_again(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path, parsed: list[str]
) -> None:
    for run in ("first", "second"):
        parsed.clear()  # the first parses what no earlier app of this process had
        (tmp_path / run).mkdir()
        app = make_app(emulator, tmp_path / run, workspace, preheat=False)
        async with started(app, size=(120, 40)) as pilot:
            await pilot.press("f1")  # a pushed screen brings its own CSS
            await wait_until(pilot, lambda: isinstance(pilot.app.screen, HelpScreen))
            await pilot.press("escape")
    assert parsed == []


def color_of(stylesheet: ProcessStylesheet, css: str) -> Color | None:
    stylesheet.add_source(css, read_from=("test", "Probe"))
    stylesheet.parse()
    return stylesheet.rules[0].styles.color


def test_other_variables_parse_afresh_and_keep_their_own_colours(parsed: list[str]) -> None:
    css = "Probe { color: $probe; }"
    red = color_of(ProcessStylesheet(variables={"probe": "#ff0000"}), css)
    green = color_of(ProcessStylesheet(variables={"probe": "#00ff00"}), css)
    assert (red, green) == (Color.parse("#ff0000"), Color.parse("#00ff00"))
    assert len(parsed) == 2
    # Each set of variables finds its own parse again, and a stylesheet switched to other variables
    # (a theme change) does not empty the cache the others share.
    switched = ProcessStylesheet(variables={"probe": "#ff0000"})
    switched.set_variables({"probe": "#0000ff"})
    assert color_of(switched, css) == Color.parse("#0000ff")
    assert color_of(ProcessStylesheet(variables={"probe": "#ff0000"}), css) == red
    assert color_of(ProcessStylesheet(variables={"probe": "#00ff00"}), css) == green
    assert len(parsed) == 3
