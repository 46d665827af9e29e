"""Credentials and PII never survive into summaries."""

from __future__ import annotations

import pytest

from myrm_tui.context.redact import luhn_ok, redact

SECRETS = [
    "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789",
    "sk-proj-ABCDEFGHIJKLMNOPQRSTUVWXYZ012345",
    "AKIAIOSFODNN7EXAMPLE",
    "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    "AIzaSyA1234567890abcdefghijklmnopqrstuv",
    "xoxb-123456789012-abcdefghijkl",
    "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----",
]


@pytest.mark.parametrize("secret", SECRETS)
def test_credentials_are_masked(secret: str) -> None:
    out = redact(f"config: {secret} end")
    assert secret not in out and "[REDACTED:" in out


def test_passwords_in_urls_and_assignments() -> None:
    out = redact("postgres://admin:hunter2@db:5432/x and password=swordfish api_key: 'abcd1234'")
    assert "hunter2" not in out and "swordfish" not in out and "abcd1234" not in out
    assert "postgres://admin:" in out


def test_pii_emails_phones_cards_iban() -> None:
    text = (
        "mail jane.doe@example.com, call +1 415-555-0132, card 4111 1111 1111 1111, iban DE89 3704 "
        "0044 0532 0130 00"
    )
    out = redact(text)
    for leaked in ("jane.doe@example.com", "415-555-0132", "4111 1111 1111 1111", "DE89 3704"):
        assert leaked not in out


def test_luhn_rejects_random_digits_so_ids_survive() -> None:
    assert luhn_ok("4111111111111111") and not luhn_ok("4111111111111112")
    assert "1234 5678 9012 3456" in redact("order 1234 5678 9012 3456")


def test_plain_engineering_text_is_untouched() -> None:
    text = "python reproduce_issue.py failed with exit code 1 at line 42 of astropy/wcs/utils.py"
    assert redact(text) == text
