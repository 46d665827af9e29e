"""The redaction's faster scans find exactly what the patterns as first written find: the PII patterns
opening with their first character's class, and the credential words looked up on the lower-cased text
where that keeps every position and nothing folds to their letters but ASCII."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from myrm_tui.context.privacy import redact as r
from myrm_tui.context.privacy.secret_rules import NAME_WORDS

# The patterns as they were written before the speed-up (their comments in redact.py).
PHONE = re.compile(
    r"(?<![\w+])(?:\+\d{1,3}(?:[ \t.-]?\(?\d{2,4}\)?){2,4}"
    r"|(?:\(\d{3}\)[ \t]?|\d{3}[ \t.-])\d{3}[ \t.-]\d{4})(?![\w])"
)
CARD = re.compile(r"(?<!\d)(?:\d[ -]?){12,18}\d(?!\d)")
IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?:[ ]?[A-Z0-9]{4}){2,7}(?:[ ]?[A-Z0-9]{1,4})?\b")

PIECES = [
    "4111 1111 1111 1111", "4111-1111-1111-1111", "41111111111111111111", "DE89 3704 0044 0532 0130 00",
    "GB82WEST12345698765432", "+1 (555) 123-4567", "(555) 123-4567", "555-123-4567", "+44 20 7946 0958",
    "password", "PassWord", "API_KEY", "api-key", "Secret", "tOkEn", "credentials", "pwd", "ſecret", "İ",
    "ı", "K", "ey", "=", ": ", '"x9"', "'v'", "x", "a1", "_", "-", "+", "(", ")", " ", "\n", "\t", "0", "7",
    "١٢٣", "é", "→", "…", "ß", "Σ", "\x00", "@", "a@b.co",
]  # fmt: skip
texts = st.lists(st.sampled_from(PIECES), max_size=30).map("".join)


def spans(
    rx: re.Pattern[str] | None, text: str, found: Iterator[re.Match[str]] | None = None
) -> list[tuple[int, int]]:
    it = found if found is not None else rx.finditer(text) if rx is not None else iter(())
    return [m.span() for m in it]


@settings(max_examples=500)
@given(texts)
def test_each_faster_pattern_finds_what_the_first_one_finds(text: str) -> None:
    assert spans(r._PHONE, text) == spans(PHONE, text)
    assert spans(r._CARD, text) == spans(CARD, text)
    assert spans(r._IBAN, text) == spans(IBAN, text)
    assert spans(None, text, r._keywords(text)) == spans(r._KEYWORD, text)


@settings(max_examples=300)
@given(texts)
def test_redaction_is_what_the_first_patterns_make(text: str) -> None:
    fast = r.redact(text), r.redact(text, keep_lines=True)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(r, "_PHONE", PHONE)
        m.setattr(r, "_CARD", CARD)
        m.setattr(r, "_IBAN", IBAN)
        m.setattr(r, "_keywords", r._KEYWORD.finditer)
        assert (r.redact(text), r.redact(text, keep_lines=True)) == fast


def test_every_character_that_folds_to_a_credential_words_letter_is_known() -> None:
    """``_FOLDS_TO_ASCII``: every character but ASCII that ``(?i)`` matches to a letter (or ``_``, ``-``)
    of the credential words, or that lower-cases to one. Checked over every code point."""
    letters = "".join(sorted(set(re.findall(r"[a-z]", NAME_WORDS)))) + "_-"
    folds = re.compile(f"(?i)[{re.escape(letters)}]")
    found = {
        chr(cp)
        for cp in range(128, 0x110000)
        if not 0xD800 <= cp <= 0xDFFF and (folds.match(chr(cp)) or any(c in letters for c in chr(cp).lower()))
    }
    assert found == set(r._FOLDS_TO_ASCII)
