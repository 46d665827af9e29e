"""Credential formats, kept as data: a label, a pattern, and literals the pattern cannot match without.

The token formats follow gitleaks' rule table (config/gitleaks.toml, MIT; rule ids in the comments) and
detect-secrets' plugins (Apache-2.0), rewritten so each pattern starts at a literal prefix and every
repeat is a single character class: a scan stays linear on any input (no nested quantifier can
backtrack). Classes never include ``\\n`` or ``\\x00``, so no match crosses a line or a field separator.
Patterns whose first group is kept (``KEEP_PREFIX``) replace only what follows it.
"""

from __future__ import annotations

import re

# (label, pattern, needles). Needles are case-sensitive substrings; a text holding none skips the scan.
TOKENS: tuple[tuple[str, re.Pattern[str], tuple[str, ...]], ...] = (
    ("ANTHROPIC_KEY", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{16,}"), ("sk-ant-",)),  # anthropic-api-key
    (
        "OPENAI_KEY",
        re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"),
        ("sk-",),
    ),  # openai-api-key
    (
        "AWS_KEY",
        re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}\b"),
        ("AKIA", "ASIA", "ABIA", "ACCA", "A3T"),
    ),
    (
        "GITHUB_TOKEN",  # github-pat, -oauth, -app-token, -refresh-token, -fine-grained-pat
        re.compile(r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}\b|\bgithub_pat_[A-Za-z0-9_]{40,}"),
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    ),
    (
        "GITLAB_TOKEN",  # gitlab-pat, -ptt, -deploy-token, -runner-token, -feed-token …
        re.compile(r"\bgl(?:pat|ptt|dt|rt|cbt|ft|imt|oas|soat|agent)-[A-Za-z0-9_-]{20,}"),
        ("glpat-", "glptt-", "gldt-", "glrt-", "glcbt-", "glft-", "glimt-", "gloas-", "glsoat-", "glagent-"),
    ),
    ("GOOGLE_KEY", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b"), ("AIza",)),  # gcp-api-key
    (
        "GOOGLE_OAUTH",
        re.compile(r"\bGOCSPX-[A-Za-z0-9_-]{28}|\bya29\.[0-9A-Za-z_-]{20,}"),
        ("GOCSPX-", "ya29."),
    ),
    (
        "SLACK_TOKEN",
        re.compile(r"\bxox[abeprs]-[A-Za-z0-9-]{10,}"),
        ("xox",),
    ),  # slack-bot-token, slack-user-token
    (
        "SLACK_WEBHOOK",
        re.compile(r"hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/_+-]{20,}"),
        ("hooks.slack.com",),
    ),
    (
        "STRIPE_KEY",
        re.compile(r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}|\bwhsec_[A-Za-z0-9]{24,}"),
        ("k_live_", "k_test_", "whsec_"),
    ),
    ("HF_TOKEN", re.compile(r"\bhf_[A-Za-z0-9]{30,}\b"), ("hf_",)),  # huggingface-access-token
    ("JWT", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"), ("eyJ",)),  # jwt
    ("NPM_TOKEN", re.compile(r"\bnpm_[A-Za-z0-9]{36}\b"), ("npm_",)),  # npm-access-token
    (
        "PYPI_TOKEN",
        re.compile(r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}"),
        ("pypi-AgEI",),
    ),  # pypi-upload-token
    (
        "SENDGRID_KEY",
        re.compile(r"\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}"),
        ("SG.",),
    ),  # sendgrid-api-token
    ("TWILIO_KEY", re.compile(r"\bSK[0-9a-fA-F]{32}\b"), ("SK",)),  # twilio-api-key
    ("MAILGUN_KEY", re.compile(r"\bkey-[0-9a-zA-Z]{32}\b"), ("key-",)),  # mailgun-private-api-token
    ("SHOPIFY_TOKEN", re.compile(r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b"), ("shp",)),  # shopify-*
    ("DIGITALOCEAN_TOKEN", re.compile(r"\bdo[opr]_v1_[a-f0-9]{64}\b"), ("_v1_",)),  # digitalocean-pat
    ("DATABRICKS_TOKEN", re.compile(r"\bdapi[a-f0-9]{32}(?:-\d)?\b"), ("dapi",)),  # databricks-api-token
    ("VAULT_TOKEN", re.compile(r"\bhv[sb]\.[A-Za-z0-9_-]{24,}"), ("hvs.", "hvb.")),  # hashicorp-vault token
    ("AGE_KEY", re.compile(r"AGE-SECRET-KEY-1[0-9A-Z]{58}"), ("AGE-SECRET-KEY-1",)),  # age-secret-key
    ("TELEGRAM_TOKEN", re.compile(r"\b\d{8,10}:AA[A-Za-z0-9_-]{33}\b"), (":AA",)),  # telegram-bot-api-token
    (
        "DISCORD_WEBHOOK",
        re.compile(r"discord(?:app)?\.com/api/webhooks/\d{5,30}/[A-Za-z0-9_-]{40,}"),
        ("/api/webhooks/",),
    ),
    ("GROQ_KEY", re.compile(r"\bgsk_[A-Za-z0-9]{48,}"), ("gsk_",)),
    ("REPLICATE_TOKEN", re.compile(r"\br8_[A-Za-z0-9]{37}\b"), ("r8_",)),
    ("XAI_KEY", re.compile(r"\bxai-[A-Za-z0-9]{40,}"), ("xai-",)),
    ("LINEAR_KEY", re.compile(r"\blin_api_[A-Za-z0-9]{40}\b"), ("lin_api_",)),  # linear-api-key
    ("NEWRELIC_KEY", re.compile(r"\bNRAK-[A-Z0-9]{27}\b"), ("NRAK-",)),  # new-relic-user-api-key
)

# Words a credential's name holds (matched case-insensitively inside a longer name: DB_PASSWORD,
# jwtSecret, AWS_SECRET_ACCESS_KEY, _authToken, SharedAccessKey, client_secret).
NAME_WORDS = (
    r"password|passwd|passphrase|pwd|secret|token|api[_-]?key|private[_-]?key|access[_-]?key"
    r"|account[_-]?key|credentials?|auth[_-]?key|signing[_-]?key|encryption[_-]?key"
)
# A name's last part that makes it about a credential rather than one (password_reset_url, token_count,
# max_tokens, secret_name): its value is not redacted.
BENIGN_LAST_PART = frozenset(
    """url uri urls link links count counts len length limit limits max min size file filename files path
    paths dir name names type types field fields endpoint policy prompt prompts hint label header headers
    regex pattern format expiry expires expiration ttl timeout reset enabled required changed rotation id ids
    index tokenizer tokenizers tokens usage budget column page template view form input strength error errors
    message msg mode validator validation visible length min_length param params arn ref version""".split()  # noqa: SIM905
)
# Values that are not credentials: types in signatures, literals, references to somewhere else.
BENIGN_VALUES = frozenset(
    "str string int bool bytes none null nil true false yes no optional any undefined required".split()  # noqa: SIM905
)
