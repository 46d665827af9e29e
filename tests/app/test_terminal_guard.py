"""Bytes on the terminal that are not UTF-8 (a binary paste, Alt on a terminal that sends 8-bit meta, a
terminal set to Latin-1) arrive as U+FFFD, and the keys around them as typed. Textual's input thread
decoded strictly: one such byte raised ``UnicodeDecodeError`` there and the app ended with a traceback.

A real ``myrm`` on a pseudo-terminal of its own (``tests/app/test_hangup.py``'s ``Myrm``); what reached the
box is checked where it lands, in the request sent to the provider emulator."""

from __future__ import annotations

import shutil
import string
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from myrm_tui.app.perf import READY
from myrm_tui.testing.emulator import ProviderEmulator
from tests.app import test_hangup
from tests.app.test_hangup import CTRL_Q, ENTER, EXIT_BOUND_S, Myrm

pytestmark = pytest.mark.slow
sessions = test_hangup.templates  # the fixture: an empty session and a long one, made once

# Bytes that never start or continue a valid UTF-8 sequence on their own: each one is one U+FFFD.
BAD = st.sampled_from([*range(0x80, 0xC0), *range(0xF8, 0x100)]).map(lambda b: bytes([b]))
WORDS = st.text(string.ascii_letters + string.digits + " ", min_size=1, max_size=4).map(str.encode)


def expected(typed: bytes) -> str:
    return typed.decode("utf-8", "replace")


def _text(message: dict[str, Any]) -> str:
    content = message["content"]
    if isinstance(content, list):
        content = "".join(part.get("text", "") for part in content)
    return str(content).strip()


@settings(
    max_examples=2,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    database=None,
    phases=[Phase.explicit, Phase.generate],  # each example is a real process: reported, not shrunk
)
@given(
    parts=st.lists(st.one_of(WORDS, BAD), min_size=2, max_size=6).filter(
        lambda p: any(len(x) == 1 and x[0] >= 0x80 for x in p)
    )
)
@example(parts=[b"ab", b"\xff", b"cd", b"\xe9", b"z"])
def test_bytes_that_are_not_utf8_on_the_terminal_arrive_as_replacement_characters(
    emulator: ProviderEmulator, sessions: dict[str, tuple[Path, str]], parts: list[bytes]
) -> None:
    """Typed in one burst, then Enter: the provider gets the text with U+FFFD for each bad byte, the
    app is still running, and ctrl+q ends it with code 0 and no traceback."""
    typed = b"q " + b"".join(parts) + b" end"  # never only spaces, never starting with / or @
    template, sid = sessions["empty"]
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        db = folder / "t.db"
        shutil.copy(template, db)
        myrm = Myrm(folder, db, sid, emulator, "close")
        try:
            myrm.until(lambda: bool(READY.search(myrm.screen)), "ready")
            asked = len(emulator.requests)
            myrm.type(typed)
            myrm.until(lambda: "end" in myrm.screen, "the typed text")
            myrm.type(ENTER)
            want = expected(typed)
            # The turn's request (a cache warm-up may come first) carries the message as the box held it.
            myrm.until(
                lambda: any(
                    want in [_text(m) for m in r.body["messages"] if m.get("role") == "user"]
                    for r in emulator.requests[asked:]
                ),
                f"a request with {want!r}",
            )
            myrm.type(CTRL_Q)
            code, _ = myrm.exit_code(EXIT_BOUND_S)
        finally:
            myrm.close()
        log = myrm.log.read_text() if myrm.log.exists() else ""
        assert code == 0, f"{myrm.screen[-2000:]}\n{log}"
        assert "Traceback" not in myrm.screen + log, f"{myrm.screen[-3000:]}\n{log}"
