"""Credential and PII redaction for anything the pipeline writes into compressed history.

Two passes: credentials (the token formats of ``secret_rules``, private keys — a key cut before its END
line too —, passwords in URLs, ``Authorization`` headers, and assignments to any name holding a
credential word: ``DB_PASSWORD=``, ``client_secret:``, ``"jwtSecret": "…"``, ``--token x``) and PII
(emails, phone numbers, card numbers passing Luhn, IBANs). Originals stay in the raw store and vault on
this machine; summaries never carry them.

Every pattern is linear on any input (literal prefixes, bounded or single-class repeats) and never
crosses a ``\\x00`` field separator. ``redact`` never raises: on an internal error the text becomes
``[redacted]`` and the error is logged once.
"""

from __future__ import annotations

import base64
import binascii
import logging
import re
from collections.abc import Callable, Iterator

from myrm_tui.context.privacy.secret_rules import BENIGN_LAST_PART, BENIGN_VALUES, NAME_WORDS, TOKENS

log = logging.getLogger(__name__)

_PEM = re.compile(
    r"-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----"
    # Headers of an encrypted or armored key (Proc-Type, DEK-Info, Version, Comment), then the body:
    # base64, line breaks (real or JSON-escaped) and field separators, up to the END line if there is one.
    r"(?:[ \t]{0,8}(?:\\n|\r?\n)?[ \t]{0,8}[A-Za-z][A-Za-z-]{0,30}:[ \t]{0,3}[^\n\x00\\]{0,200}){0,6}"
    # Body lines may be indented (a quoted file, a ledger line): indentation is allowed after a line break.
    r"(?:[A-Za-z0-9+/=\t\\\x00]|\r?\n[ \t]{0,12})*"
    r"(?:-----END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----)?"
)
_ANY_NEEDLE = re.compile("|".join(sorted({re.escape(n) for _, _, needs in TOKENS for n in needs})))
_URL_PASSWORD = re.compile(r"(://[^:/\s@\x00?#]{0,256}:)([^@\s/\x00]{1,256})(@)")
_VALUE = r"(?:\"([^\"\n\x00]{1,500})\"|'([^'\n\x00]{1,500})'|([^\s\"'`,;&\x00]{1,500}))"
# NAME = value in .env, shell, YAML, JSON, TOML, INI, properties, code: the name is any identifier holding
# a credential word. Found from the word (one C-level scan), then matched once from the identifier's start.
_KEYWORD = re.compile(r"(?i)(?:" + NAME_WORDS + r")")
# The same words on the lower-cased text: case-sensitive, ``re`` skips to their first letters, where an
# ``(?i)`` scan tries every position (half of a summary's redaction). The two find the same words where
# lowering keeps every position and no character ``(?i)`` folds to a letter of theirs is other than ASCII
# (``_FOLDS_TO_ASCII``, all of them: tests/context/privacy/test_redact_speed.py checks every code point).
_KEYWORD_LOW = re.compile(r"(?:" + NAME_WORDS + r")")
_FOLDS_TO_ASCII = "\u0130\u0131\u017f\u212a"  # İ ı ſ K (Kelvin)
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_NAME_RUN = re.compile(r"[A-Za-z0-9_.-]*")
_ASSIGNED = re.compile(r"([A-Za-z0-9_.-]{1,100})([\"']?[ \t]{0,3}(?::=|=>|==?|:)[ \t]{0,3})" + _VALUE)
_FLAG = re.compile(
    r"(?i)(?<![\w-])(--(?:password|passwd|pass|token|secret|api-key|apikey|access-token|auth-token)"
    r"[ \t]{1,3})" + _VALUE
)
_NETRC = re.compile(r"(?i)(\blogin[ \t]{1,8}[^\s\x00]{1,200}[ \t]{1,8}password[ \t]{1,8})([^\s\x00]{1,500})")
_AUTH_HEADER = re.compile(
    r"(?i)\b((?:proxy-)?authorization[\"']?[ \t]{0,3}[:=][ \t]{0,3}[\"']?"
    r"(?:(?:basic|bearer|token|digest|negotiate|ntlm|apikey|aws4-hmac-sha256)[ \t]{1,3})?)"
    r"([^\s\"'\x00]{1,4000})"
)
_BEARER = re.compile(r"(?i)\b(bearer|token)([ \t]{1,3})([A-Za-z0-9._~+/=-]{20,})")
_BASIC = re.compile(r"\b(Basic[ \t]{1,3})([A-Za-z0-9+/]{8,}={0,2})")
_COOKIE = re.compile(r"(?i)\b((?:set-)?cookie[ \t]{0,3}:[ \t]{0,3})([^\r\n\x00]{1,4000})")
# A value that is code, not a literal: a call, a subscript, an attribute of self (``tokens[0]``,
# ``get_password()``, ``self._secret``).
_CODE_VALUE = re.compile(r"(?:self|cls|this)\.|[A-Za-z_][\w.]{0,200}[\[(]")
_NAME_PARTS = re.compile(r"[_.\-]+|(?<=[a-z0-9])(?=[A-Z])")

_EMAIL = re.compile(r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9.-]{1,253}\.[A-Za-z]{2,24}\b")
# Each opens with the class of its first character, its look-behind checked once that character is read:
# ``re`` then skips in C to where that class matches, instead of trying the look-behind at every position
# (3-4 times faster on a summary). The patterns as first written, which these match exactly
# (tests/context/privacy/test_redact_speed.py), are in the comment above each.
# (?<![\w+])(?:\+\d{1,3}(?:[ \t.-]?\(?\d{2,4}\)?){2,4}
#     |(?:\(\d{3}\)[ \t]?|\d{3}[ \t.-])\d{3}[ \t.-]\d{4})(?![\w])
_PHONE = re.compile(
    r"[+(\d](?<![\w+][+(\d])(?:(?<=\+)\d{1,3}(?:[ \t.-]?\(?\d{2,4}\)?){2,4}"
    r"|(?:(?<=\()\d{3}\)[ \t]?|(?<=\d)\d{2}[ \t.-])\d{3}[ \t.-]\d{4})(?![\w])"
)
# (?<!\d)(?:\d[ -]?){12,18}\d(?!\d)
_CARD = re.compile(r"\d(?<!\d\d)[ -]?(?:\d[ -]?){11,17}\d(?!\d)")
# \b[A-Z]{2}\d{2}(?:[ ]?[A-Z0-9]{4}){2,7}(?:[ ]?[A-Z0-9]{1,4})?\b
_IBAN = re.compile(r"[A-Z](?<!\w[A-Z])[A-Z]\d{2}(?:[ ]?[A-Z0-9]{4}){2,7}(?:[ ]?[A-Z0-9]{1,4})?\b")


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


_SECRET_WORDS = ("pass", "pwd", "secret", "key", "token", "credential")


def _benign_name(name: str) -> bool:
    parts = [p for p in _NAME_PARTS.split(name) if p]
    if not parts:
        return True
    low = name.strip("-_.").lower()
    return low in ("pwd", "oldpwd") or parts[-1].lower() in BENIGN_LAST_PART


def _benign_value(value: str) -> bool:
    """A type, a literal, a reference to where the secret lives (``$VAR``, ``os.environ[…]``), a call,
    a mask."""
    low = value.rstrip(")]}").lower()
    return (
        low in BENIGN_VALUES
        or value.startswith(("$", "[REDACTED", "%(", "{{", "os.environ", "os.getenv", "process.env", "env("))
        or value.strip("*x•") == ""
        or _CODE_VALUE.match(value) is not None
    )


def _assigned(m: re.Match[str]) -> str:
    name, sep = m.group(1), m.group(2)
    value = next(g for g in m.groups()[2:] if g is not None)
    if _benign_name(name) or _benign_value(value):
        return m.group(0)
    quote = '"' if m.group(3) is not None else "'" if m.group(4) is not None else ""
    return f"{name}{sep}{quote}[REDACTED:SECRET]{quote}"


def _keywords(text: str) -> Iterator[re.Match[str]]:
    """``_KEYWORD.finditer(text)``, by ``_KEYWORD_LOW`` on the lower-cased text where that finds the same."""
    low = text.lower()
    # guard: keywords-on-lowered-text-only-where-positions
    if len(low) == len(text) and not any(c in text for c in _FOLDS_TO_ASCII):
        return _KEYWORD_LOW.finditer(low)
    return _KEYWORD.finditer(text)


def _redact_assignments(text: str) -> str:
    out: list[str] = []
    pos = skip_to = 0
    for k in _keywords(text):
        start = k.start()
        if start < skip_to:
            continue  # the rest of an identifier already looked at
        run = _NAME_RUN.match(text, start)
        skip_to = run.end() if run is not None else start + 1
        i = start
        while i > pos and start - i < 60 and text[i - 1] in _NAME_CHARS:
            i -= 1
        if i > 0 and text[i - 1] in _NAME_CHARS:
            continue  # not an identifier's start: a name longer than 60 before the word, or inside a match
        m = _ASSIGNED.match(text, i)
        if m is None:
            continue
        out.append(text[pos:i])
        out.append(_assigned(m))
        pos = skip_to = m.end()
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)


def _flag(m: re.Match[str]) -> str:
    value = next(g for g in m.groups()[1:] if g is not None)
    if _benign_value(value) or value.startswith("-"):
        return m.group(0)
    quote = '"' if m.group(2) is not None else "'" if m.group(3) is not None else ""
    return f"{m.group(1)}{quote}[REDACTED:SECRET]{quote}"


def _keep_unless_reference(label: str) -> Callable[[re.Match[str]], str]:
    def sub(m: re.Match[str]) -> str:
        return m.group(0) if _benign_value(m.group(2)) else f"{m.group(1)}[REDACTED:{label}]"

    return sub


def _basic(m: re.Match[str]) -> str:
    """``Basic <base64>`` only when it decodes to ``user:password`` (prose says "Basic authentication")."""
    try:
        raw = base64.b64decode(m.group(2) + "=" * (-len(m.group(2)) % 4), validate=True)
    except (binascii.Error, ValueError):
        return m.group(0)
    return f"{m.group(1)}[REDACTED:BASIC_AUTH]" if b":" in raw else m.group(0)


def redact_credentials(text: str, keep_lines: bool = False) -> str:
    """Credentials masked. ``keep_lines`` keeps every line break and ``\\x00`` of a masked private key, so a
    caller that split the text by lines or fields gets the same count back."""
    if "PRIVATE KEY" in text:

        def pem(m: re.Match[str]) -> str:
            kept = "".join(c for c in m.group(0) if c in "\n\x00") if keep_lines else ""
            return "[REDACTED:PRIVATE_KEY]" + kept

        text = _PEM.sub(pem, text)
    if _ANY_NEEDLE.search(text) is not None:  # one scan: most texts hold no token prefix at all
        for label, pat, needs in TOKENS:
            if any(n in text for n in needs):
                text = pat.sub(f"[REDACTED:{label}]", text)
    if "://" in text:
        text = _URL_PASSWORD.sub(r"\1[REDACTED:PASSWORD]\3", text)
    low = text.lower()
    if "authorization" in low:
        text = _AUTH_HEADER.sub(_keep_unless_reference("AUTH"), text)
    if "bearer" in low or "token" in low:
        text = _BEARER.sub(r"\1\2[REDACTED:BEARER]", text)
    if "Basic " in text or "Basic\t" in text:
        text = _BASIC.sub(_basic, text)
    if "cookie" in low:
        text = _COOKIE.sub(r"\1[REDACTED:COOKIE]", text)
    if any(w in low for w in _SECRET_WORDS):
        # guard: redaction-credential-names
        text = _redact_assignments(text)
        if "--" in text:
            text = _FLAG.sub(_flag, text)
        if "login" in low and "password" in low:
            text = _NETRC.sub(r"\1[REDACTED:PASSWORD]", text)
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


_reported = False


def report_failure(exc: BaseException) -> None:
    """Log a redaction failure once per process (a broken pattern would otherwise log every turn)."""
    global _reported
    if not _reported:
        _reported = True
        log.warning(
            "redaction failed (%s: %s); the text was replaced by [redacted]",
            type(exc).__name__,
            exc,
            exc_info=exc,
        )


def _redact(text: str, keep_lines: bool) -> str:
    if keep_lines:
        return redact_pii(redact_credentials(text, keep_lines=True))
    # guard: redaction-of-summaries
    return redact_pii(redact_credentials(text))


def redact(text: str, keep_lines: bool = False) -> str:
    """Both passes; credentials first, so a key is never half-matched as a phone number. Never raises."""
    try:
        return _redact(text, keep_lines)
    except Exception as exc:  # a summary must never carry what a broken pass left behind
        report_failure(exc)
        return "[redacted]"
