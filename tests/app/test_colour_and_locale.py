"""Colour and locale. ``NO_COLOR`` set: the full screen writes no colour (Textual's own answer to it,
``Monochrome``, wrote every colour as a grey: 256-colour codes on every cell), and what colour alone marked
shows another way. An ASCII locale (``LANG=C``): one line says why boxes show as "?" and what to set."""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from myrm_tui.app.app import ascii_locale_note
from myrm_tui.app.widgets.prompt_input import PromptInput
from myrm_tui.app.widgets.slash_menu import SlashMenu
from myrm_tui.testing.emulator import ProviderEmulator
from tests.helpers import SMALL_SCREEN, make_app, started, type_text, wait_until

_SGR = re.compile(r"\x1b\[([0-9;]*)m")


def _written(app: Any) -> str:
    """The screen as the terminal receives it (the compositor's update through a 256-colour console, as the
    driver writes it)."""
    out = io.StringIO()
    # no_color=False: rich would honour the test's NO_COLOR itself and hide what the app wrote
    console = Console(file=out, force_terminal=True, color_system="256", width=app.size.width, no_color=False)
    console.print(app.screen._compositor.render_update(full=True))
    return out.getvalue()


def _colours(written: str) -> set[str]:
    """Every colour an SGR sequence of ``written`` sets (39/49, the terminal's own colours, are none)."""
    found = set()
    for params in _SGR.findall(written):
        codes = params.split(";")
        for k, code in enumerate(codes):
            if code in ("38", "48") or (code.isdigit() and (30 <= int(code) <= 37 or 40 <= int(code) <= 47)):
                found.add(";".join(codes[k : k + 3]) if code in ("38", "48") else code)
            elif code.isdigit() and (90 <= int(code) <= 97 or 100 <= int(code) <= 107):
                found.add(code)
    return found


def _styled_text(written: str, code: str) -> list[str]:
    """Each run of text drawn with SGR attribute ``code`` (7 reverse video, 4 underline) until a reset."""
    runs: list[str] = []
    on, start = False, 0
    for m in _SGR.finditer(written):
        codes = m.group(1).split(";")
        now = code in codes or (on and not {"0", f"2{code}", ""} & set(codes))
        if on and not now:
            runs.append(written[start : m.start()])
        elif now and not on:
            start = m.end()
        on = now
    return [_SGR.sub("", r) for r in runs]


async def test_no_color_writes_no_colour_and_the_highlight_is_reverse_video(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    app = make_app(emulator, tmp_path, workspace)
    async with started(app, size=SMALL_SCREEN) as pilot:
        prompt = app.screen.query_one(PromptInput)
        prompt.cursor_blink = False  # drawn at every render, not half of them: the check reads one
        await type_text(pilot, "/")
        menu = app.screen.query_one(SlashMenu)
        await wait_until(pilot, lambda: menu.is_open and menu.highlighted == 0)
        await pilot.press("down")
        await wait_until(pilot, lambda: menu.highlighted == 1)
        written = _written(app)
    assert _colours(written) == set()
    chosen = str(menu.get_option_at_index(1).prompt).split()[0]
    underlined = _styled_text(written, "4")
    assert [text.split()[0] for text in underlined if text.strip()] == [chosen], underlined
    assert " " in _styled_text(written, "7")  # the prompt's cursor after the "/" (besides the box's edge)


async def test_without_no_color_the_screen_has_its_colours(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check above reads real colour codes: the same screen without ``NO_COLOR`` has them."""
    monkeypatch.delenv("NO_COLOR", raising=False)
    app = make_app(emulator, tmp_path, workspace)
    async with started(app, size=SMALL_SCREEN) as pilot:
        await type_text(pilot, "/")
        await wait_until(pilot, lambda: app.screen.query_one(SlashMenu).is_open)
        assert _colours(_written(app))


@pytest.mark.parametrize(
    ("env", "named"),
    [
        # ``LANG=C myrm``: Python has set LC_CTYPE=C.UTF-8 by the time myrm reads its environment (PEP 538)
        ({"LANG": "C", "LC_CTYPE": "C.UTF-8"}, "LANG=C"),
        ({"LC_ALL": "C", "LANG": "en_US.UTF-8"}, "LC_ALL=C"),
    ],
)
async def test_an_ascii_locale_is_said_in_one_line(
    env: dict[str, str],
    named: str,
    emulator: ProviderEmulator,
    tmp_path: Path,
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Textual writes UTF-8 whatever the locale: an ASCII terminal shows the boxes, the ring and the
    ellipses as "?". The user is told why, in words that terminal draws."""
    for name in ("LC_ALL", "LC_CTYPE", "LANG"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    app = make_app(emulator, tmp_path, workspace)
    async with started(app, size=SMALL_SCREEN) as pilot:
        await wait_until(pilot, lambda: bool(app._notifications))
        notes = [n.message for n in app._notifications]
    assert len(notes) == 1 and f"({named})" in notes[0] and "LANG=C.UTF-8" in notes[0]
    assert notes[0].isascii()


@pytest.mark.parametrize(
    "env",
    [{}, {"LANG": "en_US.UTF-8"}, {"LC_ALL": "de_DE.utf8", "LANG": "C"}, {"LC_CTYPE": "C.UTF-8"}],
)
def test_a_utf8_locale_or_none_says_nothing(env: dict[str, str]) -> None:
    assert ascii_locale_note(env) is None
