"""Credential and PII redaction for anything the pipeline writes into compressed history.

Two passes: credentials (provider API keys, bearer tokens, private keys, passwords in URLs,
``password=`` assignments) and PII (emails, phone numbers, card numbers passing Luhn, IBANs).
Originals stay in the raw store and vault on this machine; summaries never carry them.
"""

from __future__ import annotations

import re

_CREDENTIALS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "PRIVATE_KEY",
        re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----"),
    ),
    ("ANTHROPIC_KEY", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{16,}")),
    ("OPENAI_KEY", re.compile(r"\bsk-(?:proj-|svcacct-)?[A-Za-z0-9_-]{20,}")),
    ("AWS_KEY", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    (
        "GITHUB_TOKEN",
        re.compile(r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}\b|\bgithub_pat_[A-Za-z0-9_]{40,}"),
    ),
    ("GOOGLE_KEY", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
    ("SLACK_TOKEN", re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}")),
    ("STRIPE_KEY", re.compile(r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}")),
    ("HF_TOKEN", re.compile(r"\bhf_[A-Za-z0-9]{30,}\b")),
    ("JWT", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    ("BEARER", re.compile(r"(?i)\b(bearer|token)\s+[A-Za-z0-9._~+/=-]{20,}")),
)
_URL_PASSWORD = re.compile(r"(\b[a-z][a-z0-9+.-]*://[^:/\s@]+:)([^@\s/]+)(@)")
_ASSIGNED_SECRET = re.compile(
    r"(?i)\b((?:password|passwd|pwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token)\s*[:=]\s*[\"']?)([^\s\"',;]{4,})"
)
_EMAIL = re.compile(r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b")
_PHONE = re.compile(
    r"(?<![\w+])(?:\+\d{1,3}(?:[\s.-]?\(?\d{2,4}\)?){2,4}|(?:\(\d{3}\)\s?|\d{3}[\s.-])\d{3}[\s.-]\d{4})(?![\w])"
)
_CARD = re.compile(r"(?<!\d)(?:\d[ -]?){12,18}\d(?!\d)")
_IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?:[ ]?[A-Z0-9]{4}){2,7}(?:[ ]?[A-Z0-9]{1,4})?\b")


def luhn_ok(digits: str) -> bool:
    total, alt = 0, False
    for ch in reversed(digits):
        d = ord(ch) - 48
        if alt:
            d *= 2
            if d > 9:
                d -= 9
        total += d
        alt = not alt
    return total % 10 == 0


def _iban_ok(s: str) -> bool:
    s = s.replace(" ", "")
    if not 15 <= len(s) <= 34:
        return False
    rearranged = s[4:] + s[:4]
    num = "".join(str(int(c, 36)) for c in rearranged)
    return int(num) % 97 == 1


# A literal each credential pattern cannot match without (checked with ``in`` first: most texts hold
# none, and a substring test is a hundred times cheaper than a regex scan).
_NEEDS: dict[str, tuple[str, ...]] = {
    "PRIVATE_KEY": ("PRIVATE KEY",),
    "ANTHROPIC_KEY": ("sk-ant-",),
    "OPENAI_KEY": ("sk-",),
    "AWS_KEY": ("AKIA", "ASIA"),
    "GITHUB_TOKEN": ("_",),
    "GOOGLE_KEY": ("AIza",),
    "SLACK_TOKEN": ("xox",),
    "STRIPE_KEY": ("k_live_", "k_test_"),
    "HF_TOKEN": ("hf_",),
    "JWT": ("eyJ",),
}
_SECRET_WORDS = ("pass", "pwd", "secret", "key", "token")


def redact_credentials(text: str) -> str:
    for label, pat in _CREDENTIALS:
        needs = _NEEDS.get(label)
        if needs is not None and not any(n in text for n in needs):
            continue
        text = pat.sub(f"[REDACTED:{label}]", text)
    if "://" in text:
        text = _URL_PASSWORD.sub(r"\1[REDACTED:PASSWORD]\3", text)
    low = text.lower()
    if any(w in low for w in _SECRET_WORDS):
        text = _ASSIGNED_SECRET.sub(r"\1[REDACTED:SECRET]", text)
    return text


def redact_pii(text: str) -> str:
    if "@" in text:
        text = _EMAIL.sub("[REDACTED:EMAIL]", text)

    def card(m: re.Match[str]) -> str:
        digits = re.sub(r"\D", "", m.group(0))
        return "[REDACTED:CARD]" if 13 <= len(digits) <= 19 and luhn_ok(digits) else m.group(0)

    # Each pattern needs a least number of digits (a card 13, a phone 5, an IBAN its 2 check digits):
    # ten C-level counts skip the scans for most texts.
    digits = sum(map(text.count, "0123456789"))
    if digits >= 13:
        text = _CARD.sub(card, text)
    if digits >= 2:
        text = _IBAN.sub(lambda m: "[REDACTED:IBAN]" if _iban_ok(m.group(0)) else m.group(0), text)
    return _PHONE.sub("[REDACTED:PHONE]", text) if digits >= 5 else text


def redact(text: str) -> str:
    """Both passes; credentials first, so a key is never half-matched as a phone number."""
    return redact_pii(redact_credentials(text))
