"""Credentials and PII never survive into summaries."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from myrm_tui.context.privacy.redact import luhn_ok, redact
from myrm_tui.store.db import Store
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.helpers import collect, make_agent, openai_settings

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


# (a realistic line, the secret it holds, context that must survive). Formats from .env files, shell,
# docker-compose, Kubernetes, JSON configs, .npmrc/.pypirc/.netrc, HTTP headers, connection strings and
# provider token formats (gitleaks' rule table).
FORMATS: list[tuple[str, str, str]] = [
    ("DB_PASSWORD=hunter2hunter2", "hunter2hunter2", "DB_PASSWORD="),
    ('export JWT_SECRET="jwt-signing-s3cret"', "jwt-signing-s3cret", "export JWT_SECRET="),
    ("STRIPE_API_KEY=rk_9f8e7d6c5b4a39281706", "rk_9f8e7d6c5b4a39281706", "STRIPE_API_KEY="),
    (
        "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "AWS_SECRET_ACCESS_KEY=",
    ),
    (
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYzzzzzzzzzz",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzzzzzzzzzz",
        "aws_secret_access_key =",
    ),
    (
        "AWS_SESSION_TOKEN=FwoGZXIvYXdzEBYaDHqa0AP1/EXAMPLE+sessiontoken==",
        "FwoGZXIvYXdzEBYaDHqa0AP1/EXAMPLE+sessiontoken==",
        "AWS_SESSION_TOKEN=",
    ),
    ("  client_secret: 8Q~abcDEFghiJKLmnoPQRstu", "8Q~abcDEFghiJKLmnoPQRstu", "client_secret:"),
    ("      MYSQL_ROOT_PASSWORD: rootpw-2024!", "rootpw-2024!", "MYSQL_ROOT_PASSWORD:"),
    ("      - POSTGRES_PASSWORD=pg_pass_123", "pg_pass_123", "POSTGRES_PASSWORD="),
    (
        '{"client_secret": "GOCSPX-not-the-real-one", "client_id": "1234.apps"}',
        "GOCSPX-not-the-real-one",
        '"client_id": "1234.apps"',
    ),
    ('  "password": "correct horse battery staple",', "correct horse battery staple", '"password":'),
    ("spring.datasource.password=Sup3rS3cret", "Sup3rS3cret", "spring.datasource.password="),
    ('DATABASE_PASSWD = "pa55wd"', "pa55wd", "DATABASE_PASSWD ="),
    ("const apiKey = 'AbCdEf0123456789';", "AbCdEf0123456789", "const apiKey ="),
    ("x-api-key: 3f1c9a77d2e54b6f", "3f1c9a77d2e54b6f", "x-api-key:"),
    (
        "PRIVATE_KEY=0x4c0883a69102937d6231471b5dbb6204fe512961708279f1d7b1b3a9b2c9a8f1",
        "0x4c0883a69102937d6231471b5dbb6204fe5129",
        "PRIVATE_KEY=",
    ),
    (
        "GOOGLE_APPLICATION_CREDENTIALS_JSON='{type:service_account}'",
        "{type:service_account}",
        "GOOGLE_APPLICATION_CREDENTIALS_JSON=",
    ),
    (
        "SECRET_KEY_BASE=9d1f0e9b2c3a4d5e6f708192a3b4c5d6",
        "9d1f0e9b2c3a4d5e6f708192a3b4c5d6",
        "SECRET_KEY_BASE=",
    ),
    ('db_password := "go-pass-1"', "go-pass-1", "db_password :="),
    ("'password' => 'php-secret-9',", "php-secret-9", "'password' =>"),
    ("Authorization: Basic dXNlcjpwYXNzd29yZDEyMw==", "dXNlcjpwYXNzd29yZDEyMw==", "Authorization: Basic"),
    ("Authorization: Bearer abc.def-ghi_jkl", "abc.def-ghi_jkl", "Authorization: Bearer"),
    (
        'curl -H "Authorization: token ghx_notreal12345" https://api.example.com',
        "ghx_notreal12345",
        "https://api.example.com",
    ),
    ("Proxy-Authorization: Basic YWRtaW46YWRtaW4=", "YWRtaW46YWRtaW4=", "Proxy-Authorization:"),
    ("Cookie: sessionid=9b2f0c1d4e5a6b7c8d9e; csrftoken=abc", "9b2f0c1d4e5a6b7c8d9e", "Cookie:"),
    (
        "git remote add origin https://oauth2:glpat-AbCdEfGhIjKlMnOpQrSt@gitlab.com/g/p.git",
        "glpat-AbCdEfGhIjKlMnOpQrSt",
        "gitlab.com/g/p.git",
    ),
    ("token glpat-xYz0123456789AbCdEfGh", "glpat-xYz0123456789AbCdEfGh", "token"),
    (
        "//registry.npmjs.org/:_authToken=npm_abcdefghijklmnopqrstuvwxyz0123456789",
        "npm_abcdefghijklmnopqrstuvwxyz0123456789",
        "//registry.npmjs.org/:_authToken=",
    ),
    ("//npm.pkg.github.com/:_authToken=6f1e2d3c4b5a", "6f1e2d3c4b5a", "//npm.pkg.github.com/"),
    (
        "password = pypi-AgEIcHlwaS5vcmcCJGFiY2RlZmdoLWlqa2wtbW5vcC1xcnN0LXV2d3h5ejAxMjM0NTY3ODk",
        "pypi-AgEIcHlwaS5vcmcCJGFiY2Rl",
        "password =",
    ),
    (
        "machine github.com login octocat password gho_notaprefixmatch",
        "gho_notaprefixmatch",
        "machine github.com login octocat",
    ),
    ("DATABASE_URL=postgres://app:pg-Pa55w0rd@db.internal:5432/app", "pg-Pa55w0rd", "@db.internal:5432/app"),
    ("mysql://root:rootpass@127.0.0.1:3306/test", "rootpass", "mysql://root:"),
    ("redis://:redis-pass-1@cache:6379/0", "redis-pass-1", "@cache:6379/0"),
    (
        "mongodb+srv://admin:m0ng0Pass@cluster0.abcde.mongodb.net/?retryWrites=true",
        "m0ng0Pass",
        "cluster0.abcde.mongodb.net",
    ),
    (
        "Server=tcp:x.database.windows.net;Database=db;User ID=sa;Password=Azur3Pass!;",
        "Azur3Pass!",
        "Server=tcp:x.database.windows.net",
    ),
    (
        "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4==;EndpointSuffix=core.windows.net",
        "Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4==",
        "AccountName=acct",
    ),
    ("docker login --password s3cr3t-reg registry.example.com", "s3cr3t-reg", "registry.example.com"),
    (
        "gh auth login --token ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        "gh auth login",
    ),
    ("using key AKIAIOSFODNN7EXAMPLE for us-east-1", "AKIAIOSFODNN7EXAMPLE", "for us-east-1"),
    (
        "SLACK_WEBHOOK=https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
        "XXXXXXXXXXXXXXXXXXXXXXXX",
        "SLACK_WEBHOOK=",
    ),
    (
        "sendgrid: SG.abcdefghijklmnopqrstuv.abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQ",
        "SG.abcdefghijklmnopqrstuv",
        "sendgrid:",
    ),
    (
        "stripe.api_key = 'sk_live_4eC39HqLyjWDarjtT1zdp7dc'",
        "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
        "stripe.api_key =",
    ),
    (
        "OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz012345",
        "sk-proj-abcdefghijklmnopqrstuvwxyz012345",
        "OPENAI_API_KEY=",
    ),
    ("HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyzABCDEFGH", "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH", "HF_TOKEN="),
    (
        "bot = Bot('123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawz')",
        "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawz",
        "bot = Bot(",
    ),
    (
        "VAULT_TOKEN=hvs.CAESIJlU8lMsomethingsomethingabcdef",
        "hvs.CAESIJlU8lMsomethingsomethingabcdef",
        "VAULT_TOKEN=",
    ),
    (
        "export GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        "export GITHUB_TOKEN=",
    ),
    ("DIGITALOCEAN=dop_v1_" + "a1" * 32, "dop_v1_" + "a1" * 32, "DIGITALOCEAN="),
    (
        "jwt: eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.abcdefghijklmnop",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0",
        "jwt:",
    ),
    (
        'cfg = {"private_key": "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC'
        '\\n-----END PRIVATE KEY-----\\n", "x": 1}',
        "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC",
        '"x": 1',
    ),
    (
        "key:\n-----BEGIN OPENSSH PRIVATE KEY-----\n"
        "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\nAAAAMwAAAAtzc2gtZWQy\n",
        "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ",
        "key:",
    ),
    (
        "-----BEGIN EC PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,0123456789ABCDEF\n\n"
        "MHcCAQEEIBkg4LVWM9nuwNSk3yBZ\n-----END EC PRIVATE KEY-----\nnext line",
        "MHcCAQEEIBkg4LVWM9nuwNSk3yBZ",
        "next line",
    ),
    (
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBF0abcdEFGHijklMNOP\n=ab12\n"
        "-----END PGP PRIVATE KEY BLOCK-----",
        "lQOYBF0abcdEFGHijklMNOP",
        "",
    ),
]


@pytest.mark.parametrize(("line", "secret", "kept"), FORMATS, ids=[f[2][:30] or f[1][:20] for f in FORMATS])
def test_real_world_formats(line: str, secret: str, kept: str) -> None:
    out = redact(line)
    assert secret not in out, out
    assert kept in out and "[REDACTED" in out, out


def test_at_least_forty_formats() -> None:
    assert len(FORMATS) >= 40


@pytest.mark.parametrize(
    "text",
    [
        'password_reset_url = "https://example.com/account/reset"',
        "token_count = 5",
        "max_tokens = 4096",
        "prompt_tokens: 1234, completion_tokens: 56",
        "def login(user: str, password: str) -> bool:",
        "password = os.environ['DB_PASSWORD']",
        "DB_PASSWORD=${DB_PASSWORD}",
        'secret_name: "prod/db"',
        "commit 4b825dc642cb6eb9a060e54bf8d69288fbca4f1e fixes the tokenizer",
        "request 123e4567-e89b-12d3-a456-426614174000 took 42 ms",
        "Basic authentication is disabled for this endpoint.",
        "The bearer of this letter is welcome.",
        "use --password-stdin to read it from a pipe",
        "PWD=/home/user/project",
        "http://localhost:8080/api?x=1",
        "tokenizer = AutoTokenizer.from_pretrained(name)",
        "token = tokens[0]",
        "self.secret = self._load_secret(name)",
    ],
)
def test_ordinary_text_survives(text: str) -> None:
    assert redact(text) == text


def test_a_key_cut_before_its_end_line_is_masked_to_the_end_of_its_body() -> None:
    text = "log:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx4\nQ2hlY2sgdGhpcyBvdXQ=\n"
    out = redact(text)
    assert "MIIEowIBAAKCAQEAx4" not in out and "Q2hlY2sgdGhpcyBvdXQ" not in out and out.startswith("log:\n")


def test_keep_lines_keeps_the_line_count() -> None:
    text = "a\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\nabcd\n-----END RSA PRIVATE KEY-----\nb"
    out = redact(text, keep_lines=True)
    assert out.count("\n") == text.count("\n") and "MIIEowIBAAKCAQEA" not in out


def test_a_key_across_summary_items_does_not_crash_and_is_masked() -> None:
    """BEGIN and END in different items: the key pattern spanned the field separator, the item count
    changed and ``redact_summary`` raised StopIteration (every later turn failed)."""
    from myrm_tui.context.summary.fields import Summary, redact_summary

    summary = Summary(
        user_goal="deploy",
        key_facts=(
            "-----BEGIN RSA PRIVATE KEY-----",
            "MIIEowIBAAKCAQEAsecretbody",
            "-----END RSA PRIVATE KEY-----",
        ),
        errors=("DB_PASSWORD=hunter2hunter2 rejected",),
        next_steps=("rotate the key",),
    )
    out = redact_summary(summary)
    assert out.user_goal == "deploy"
    assert len(out.key_facts) == 3 and len(out.errors) == 1 and out.next_steps == ("rotate the key",)
    assert "MIIEowIBAAKCAQEAsecretbody" not in str(out) and "hunter2hunter2" not in str(out)


def test_redaction_never_raises(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    from myrm_tui.context.privacy import redact as mod
    from myrm_tui.context.summary.fields import Summary, redact_summary

    def broken(text: str) -> str:
        raise RuntimeError("pattern table broken")

    monkeypatch.setattr(mod, "redact_pii", broken)
    monkeypatch.setattr(mod, "_reported", False)
    out = redact_summary(Summary(user_goal="x DB_PASSWORD=hunter2", errors=("a", "b")))
    assert out == Summary(user_goal="[redacted]", errors=("[redacted]", "[redacted]"))
    assert redact("AKIAIOSFODNN7EXAMPLE") == "[redacted]"
    assert sum("redaction failed" in r.message for r in caplog.records) == 1


@pytest.mark.parametrize(
    "chunk",
    [
        "a",
        "a.",
        "x@",
        "password",
        "password=",
        "token ",
        "-----BEGIN RSA PRIVATE KEY-----",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIE",
        "://u:",
        "Authorization: Basic ",
        "1 ",
        "eyJ",
        "A_B_C_SECRET_",
    ],
)
def test_a_megabyte_of_adversarial_input_is_linear(chunk: str) -> None:
    import time

    text = chunk * (1_000_000 // len(chunk))
    t0 = time.perf_counter()
    redact(text)
    # Linear scans take well under a second here; a quadratic one takes minutes.
    assert time.perf_counter() - t0 < 5.0


AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq8Example"
DB_PASSWORD = "Pg-s3cret-Hunter42"
JWT_SECRET = "jwt-sign-9f8e7d6c5b4a"


async def test_no_secret_in_the_stored_summary_or_the_summary_block_sent_after_compaction(
    emulator: ProviderEmulator, store: Store, workspace: Path
) -> None:
    (workspace / ".env").write_text(
        f'AWS_SECRET_ACCESS_KEY={AWS_SECRET}\nDB_PASSWORD={DB_PASSWORD}\nexport JWT_SECRET="{JWT_SECRET}"\n'
        "DATABASE_URL=postgres://app:" + DB_PASSWORD + "@db.internal:5432/app\n"
    )
    agent = await make_agent(store, workspace, openai_settings(emulator), window=8_000)
    emulator.window = 8_000
    for i in range(10):
        command = "cat .env" if i < 3 else f"seq 1 {300 + i}"
        emulator.enqueue(Reply(tool_calls=[("bash", {"command": command})]), Reply(text=f"done {i}"))
        await collect(agent, f"step {i}: check the config")
    stored_raw = "".join(m.text for m in await store.load_messages(agent.session_id))
    assert AWS_SECRET in stored_raw and JWT_SECRET in stored_raw  # the raw store keeps originals
    await agent.session.prepare(force=True)  # the compact key
    assert agent.session.state.compactions >= 1
    state = await store.load_state(agent.session_id)
    assert state is not None and "compacted_summary" in state
    secrets = (AWS_SECRET, DB_PASSWORD, JWT_SECRET)
    summaries = [
        m["content"] for m in json.loads(state)["base"] if m.get("meta", {}).get("kind") == "summary"
    ]
    assert summaries
    assert "AWS_SECRET_ACCESS_KEY" in "".join(summaries)  # the folded outputs did reach the summary
    for s in secrets:
        assert s not in state  # anywhere in the stored context state, the summary record included
    emulator.enqueue(Reply(text="next"))
    await collect(agent, "what next?")
    sent = emulator.requests[-1].body["messages"]
    blocks = [json.dumps(m) for m in sent if "compacted_summary" in json.dumps(m)]
    assert blocks
    for s in secrets:
        assert all(s not in b for b in blocks)
