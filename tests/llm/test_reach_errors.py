"""A provider that cannot be reached, answers 404 or refuses the key: one line naming the address tried and
the likely fix, never a secret. Through the real litellm HTTP stack to a closed port and the emulator."""

from __future__ import annotations

import logging
import os
import socket
import string
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from myrm_tui.llm.client import LLMClient, ModelSpec
from myrm_tui.llm.errors import (
    AuthError,
    BadRequestError,
    ContextOverflowError,
    Endpoint,
    LLMError,
    LLMTimeoutError,
    ProviderError,
    classify,
)
from myrm_tui.testing.emulator import ProviderEmulator, Reply
from tests.helpers import cli_env, run_myrm

HI = [{"role": "user", "content": "hi"}]


async def _failure(spec: ModelSpec) -> LLMError:
    with pytest.raises(LLMError) as err:
        async for _ in LLMClient(inactivity_timeout=30, total_timeout=30).stream(spec, HI):
            pass
    return err.value


@pytest.fixture
def refusing_port() -> Iterator[int]:
    """A port bound and not listening: every connection to it is refused (held, so nothing takes it)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        yield s.getsockname()[1]


async def test_a_closed_port_names_the_url_and_asks_if_the_server_runs(
    refusing_port: int, caplog: pytest.LogCaptureFixture
) -> None:
    spec = ModelSpec("openai/gpt-4o-mini", api_base=f"http://127.0.0.1:{refusing_port}/v1", api_key="sk-x")
    with caplog.at_level(logging.WARNING, logger="myrm_tui.llm"):
        err = await _failure(spec)
    assert isinstance(err, ProviderError)
    line = f"could not reach http://127.0.0.1:{refusing_port}/v1/chat/completions (connection refused): "
    assert str(err) == line + "is the server running?"
    said = [r.getMessage() for r in caplog.records]
    logged = [m for m in said if m.startswith(f"model call failed: {err}\n")]
    assert logged and "Traceback (most recent call last)" in logged[0]
    assert "ConnectionRefusedError" in logged[0]  # the whole chain


async def test_anthropic_on_a_closed_port_names_its_url(refusing_port: int) -> None:
    spec = ModelSpec("anthropic/claude-sonnet-4-5", api_base=f"http://127.0.0.1:{refusing_port}", api_key="k")
    err = await _failure(spec)
    assert str(err) == (
        f"could not reach http://127.0.0.1:{refusing_port}/v1/messages (connection refused): "
        "is the server running?"
    )


@pytest.fixture
def full_backlog() -> Iterator[int]:
    """A port whose listen queue is full (backlog 0, one connection waiting): a new connection's SYN is
    dropped, so connecting hangs until the client gives up, as with a firewalled host."""
    with socket.socket() as srv, socket.socket() as first:
        srv.bind(("127.0.0.1", 0))
        srv.listen(0)
        first.connect(srv.getsockname())
        yield srv.getsockname()[1]


@pytest.mark.parametrize(
    ("model", "path"), [("openai/gpt-4o-mini", "/v1/chat/completions"), ("anthropic/x", "/v1/messages")]
)
async def test_a_connect_timeout_names_the_url(full_backlog: int, model: str, path: str) -> None:
    base = f"http://127.0.0.1:{full_backlog}" + ("/v1" if model.startswith("openai/") else "")
    client = LLMClient(inactivity_timeout=60, total_timeout=60)
    with pytest.raises(LLMTimeoutError) as err:  # litellm's own timeout: 1 s to connect
        _ = [ev async for ev in client.stream(ModelSpec(model, base, "sk-x"), HI, extra={"timeout": 1.0})]
    assert str(err.value) == (
        f"could not reach http://127.0.0.1:{full_backlog}{path} (timed out connecting): "
        "is the server running, and the address reachable from here?"
    )


async def test_an_unknown_host_says_so() -> None:
    spec = ModelSpec("openai/gpt-4o-mini", api_base="http://myrm-no-such-host.invalid/v1", api_key="sk-x")
    assert str(await _failure(spec)) == (
        "could not reach http://myrm-no-such-host.invalid:80/v1/chat/completions (host name not found): "
        "is the host name right?"
    )


async def test_https_to_a_plain_http_server_is_a_tls_failure(emulator: ProviderEmulator) -> None:
    spec = ModelSpec("openai/gpt-4o-mini", api_base=f"https://127.0.0.1:{emulator.port}/v1", api_key="sk-x")
    assert str(await _failure(spec)) == (
        f"could not reach https://127.0.0.1:{emulator.port}/v1/chat/completions (TLS handshake failed): "
        "does the server speak https? A plain-http one needs http://"
    )
    assert not emulator.requests


async def test_a_base_without_v1_gets_a_404_that_suggests_it(emulator: ProviderEmulator) -> None:
    emulator.versioned_only = True  # as Ollama and vLLM: /chat/completions is not theirs, /v1/... is
    err = await _failure(ModelSpec("openai/llama3", api_base=emulator.url, api_key="sk-x"))
    assert isinstance(err, BadRequestError) and err.status == 404
    assert str(err) == (
        f"{emulator.url}/chat/completions answered 404 Not Found: an OpenAI-compatible server's base ends "
        f"in /v1 (Ollama, vLLM, LM Studio); try --api-base {emulator.url}/v1"
    )
    suggested = str(err).rsplit("--api-base ", 1)[1]
    got = [ev async for ev in LLMClient().stream(ModelSpec("openai/llama3", suggested, "sk-x"), HI)]
    assert got and emulator.accepted  # the suggestion is the base that answers


async def test_a_missing_model_still_says_the_model(emulator: ProviderEmulator) -> None:
    body = {"error": {"message": "The model `gpt-9` does not exist", "code": "model_not_found"}}
    emulator.enqueue(Reply(error=(404, body)))
    err = await _failure(ModelSpec("openai/gpt-9", api_base=emulator.openai_base, api_key="sk-x"))
    assert isinstance(err, BadRequestError) and "The model `gpt-9` does not exist" in str(err)


@pytest.mark.parametrize(
    ("model", "variable", "status"),
    [
        ("openai/gpt-4o-mini", "OPENAI_API_KEY", 401),
        ("gpt-4o-mini", "OPENAI_API_KEY", 401),  # a bare name: its provider from litellm's registry file
        ("anthropic/claude-sonnet-4-5", "ANTHROPIC_API_KEY", 403),  # litellm calls it a connection error
    ],
)
async def test_a_refused_key_names_the_variable_read_never_its_value(
    emulator: ProviderEmulator,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    model: str,
    variable: str,
    status: int,
) -> None:
    caplog.set_level(logging.WARNING, logger="myrm_tui.llm")
    key = "sk-live-0123456789abcdef"
    monkeypatch.setenv(variable, key)
    # Providers echo (part of) the key they refused.
    said = {"type": "error", "error": {"type": "authentication_error", "message": f"Invalid key: {key}"}}
    emulator.enqueue(Reply(error=(status, said)))
    openai = "anthropic" not in model
    base = emulator.openai_base if openai else emulator.url
    err = await _failure(ModelSpec(model, api_base=base, api_key=key))
    path = "/v1/chat/completions" if openai else "/v1/messages"
    assert isinstance(err, AuthError)
    assert str(err) == (
        f"{emulator.url}{path} refused the API key (HTTP {status}): myrm sends {variable} for {model}; "
        "is it set and valid for this server?"
    )
    assert key not in str(err) and key not in err.provider_message
    logged = [r.getMessage() for r in caplog.records if r.getMessage().startswith("model call failed")]
    assert logged and "Traceback (most recent call last)" in logged[0] and key not in logged[0]


async def test_a_key_from_the_settings_is_named_so(emulator: ProviderEmulator) -> None:
    emulator.enqueue(Reply(error=(401, {"error": {"message": "Incorrect API key provided"}})))
    err = await _failure(ModelSpec("openai/gpt-4o-mini", emulator.openai_base, "sk-from-the-settings-0123"))
    assert str(err) == (
        f"{emulator.openai_base}/chat/completions refused the API key (HTTP 401): myrm sends the api_key "
        "setting (MYRM_API_KEY or api_key in the config file) for openai/gpt-4o-mini; is it set and valid "
        "for this server?"
    )


async def test_a_numeric_setting_in_the_environment_is_no_secret(
    emulator: ProviderEmulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MAX_TOKENS", "128000")
    said = "This model's maximum context length is 128000 tokens. However, you requested 130000 tokens"
    emulator.enqueue(Reply(error=(400, {"error": {"message": said, "code": "context_length_exceeded"}})))
    err = await _failure(ModelSpec("openai/gpt-4o-mini", emulator.openai_base, "sk-x"))
    assert isinstance(err, ContextOverflowError) and err.sizes() == (128_000, 130_000)


def test_myrm_ask_prints_the_one_line(refusing_port: int, tmp_path: Path, workspace: Path) -> None:
    base = f"http://127.0.0.1:{refusing_port}/v1"
    args = ["ask", "--model", "openai/gpt-4o-mini", "--api-base", base, "--workspace", str(workspace), "hi"]
    done = run_myrm(args, env=cli_env(tmp_path))
    assert done.returncode == 1
    want = f"myrm: could not reach {base}/chat/completions (connection refused): is the server running?"
    assert want in done.stderr.splitlines()


# -- no message holds a secret ----------------------------------------------------------------------

# "~" first: no fixed word of a message can hold a secret by chance.
_secret = st.text(string.ascii_letters + string.digits + "-_.~!$", min_size=7, max_size=24).map("~".__add__)


@contextmanager
def _env(**values: str) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _raised(exc: BaseException, cause: BaseException) -> BaseException:
    try:
        raise exc from cause
    except BaseException as e:
        return e


class AuthenticationError(Exception):  # named as litellm's: classify maps by class name
    status_code = 401


class NotFoundError(Exception):
    status_code = 404


class APIConnectionError(Exception):
    pass


@settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow])
@given(
    key=_secret,
    env_secret=_secret,
    user=_secret,
    password=_secret,
    token=_secret,
    kind=st.sampled_from(["refused", "401", "404"]),
    echo=st.booleans(),
)
def test_no_message_holds_a_secret(
    key: str, env_secret: str, user: str, password: str, token: str, kind: str, echo: bool
) -> None:
    """Whatever the provider's text and the URL hold: the key sent, a secret in the environment, a URL's
    userinfo and query never reach the message (the message does name the host)."""
    base = f"http://{user}:{password}@127.0.0.1:8080/base?api-key={token}"
    url = f"{base.split('?')[0]}/chat/completions?api-key={token}"
    request = httpx.Request("POST", url)
    said = f"{url} {key} {env_secret} {user} {password} {token}" if echo else "no details"
    inner: BaseException
    if kind == "refused":
        inner = httpx.ConnectError(said, request=request)
        inner.__cause__ = ConnectionRefusedError(111, "Connection refused")
        outer: BaseException = _raised(APIConnectionError(said), inner)
    else:
        response = httpx.Response(int(kind), request=request)
        inner = httpx.HTTPStatusError(said, request=request, response=response)
        outer = _raised((AuthenticationError if kind == "401" else NotFoundError)(said), inner)
    with _env(MYRM_TEST_SECRET_TOKEN=env_secret, OPENAI_API_KEY=key):
        err = classify(outer, Endpoint("openai/gpt-4o-mini", base, key))
    message = f"{err} {err.provider_message}"
    for secret in (key, env_secret, user, password, token):
        assert secret not in message
    assert "127.0.0.1:8080/base" in str(err)
