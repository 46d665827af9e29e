"""Typed provider errors. litellm's exceptions are mapped by class name, so this module (and the
UI importing it) never imports litellm itself."""

from __future__ import annotations

import os
import re
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import parse_qsl, unquote, urlsplit


class LLMError(Exception):
    """Base of every model-call failure; ``str()`` is a message fit for the user."""

    retryable = False

    def __init__(self, message: str, status: int | None = None, provider_message: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.provider_message = provider_message or message


class ContextOverflowError(LLMError):
    """The request is larger than the model's window (provider ``context_length_exceeded``)."""

    def sizes(self) -> tuple[int, int] | None:
        """(the provider's input limit, the input it counted), when its message says both."""
        text = re.sub(r"(?<=\d),(?=\d{3})", "", self.provider_message)  # 9,500 -> 9500
        if m := re.search(r"too long: (\d+) tokens > (\d+)", text):  # Anthropic
            return int(m[2]), int(m[1])
        if m := re.search(r"(\d+) \+ (\d+) > (\d+)", text):  # Anthropic: input + max_tokens > window
            return int(m[3]) - int(m[2]), int(m[1])
        limit = re.search(r"maximum context length is (\d+)", text)
        if limit and (m := re.search(r"\((\d+) in the messages,? (\d+) in the completion", text)):
            return int(limit[1]) - int(m[2]), int(m[1])
        asked = re.search(r"(?:resulted in|requested) (\d+)", text)
        if limit and asked:  # OpenAI and OpenAI-compatible servers
            return int(limit[1]), int(asked[1])
        return None


class RateLimitError(LLMError):
    retryable = True


class AuthError(LLMError):
    pass


class LLMTimeoutError(LLMError):
    retryable = True


class InactivityTimeoutError(LLMTimeoutError):
    """The stream went silent longer than the inactivity limit (the model is dead, not slow)."""


class BadRequestError(LLMError):
    pass


class ProviderError(LLMError):
    """5xx, connection refused, malformed stream: the provider failed, not the request."""

    retryable = True


class IncompleteStreamError(ProviderError):
    """The stream ended without the provider's finish reason: the connection dropped mid-answer, or
    the body was no stream at all (``[DONE]`` only, an HTML page). litellm papers over both with a
    made-up ``stop``, so the client checks what the provider itself sent."""


class EmptyReplyError(ProviderError):
    """The provider finished the reply without any text or tool call."""

    retryable = False


class ModelNotAvailableError(LLMError):
    """The embedded model (or its runtime) is not installed."""


class EmbeddedModelStopped(ProviderError):
    """The embedded model's child process died (a crash, OOM, a kill) or could not start."""

    retryable = False

    def __init__(self, message: str, exit_code: int | None = None) -> None:
        super().__init__(message)
        self.exit_code = exit_code


_BY_NAME: dict[str, type[LLMError]] = {
    "ContextWindowExceededError": ContextOverflowError,
    "RateLimitError": RateLimitError,
    "AuthenticationError": AuthError,
    "PermissionDeniedError": AuthError,
    "Timeout": LLMTimeoutError,
    "APITimeoutError": LLMTimeoutError,
    "BadRequestError": BadRequestError,
    "UnprocessableEntityError": BadRequestError,
    "UnsupportedParamsError": BadRequestError,
    "NotFoundError": BadRequestError,
    "ServiceUnavailableError": ProviderError,
    "InternalServerError": ProviderError,
    "BadGatewayError": ProviderError,
    "APIConnectionError": ProviderError,
    "APIError": ProviderError,
    "MidStreamFallbackError": ProviderError,
}

_OVERFLOW_HINTS = (
    "context_length_exceeded",
    "maximum context length",
    "prompt is too long",
    "context window",
)


# The key sent to an OpenAI-compatible local server when none is set (the OpenAI client refuses to send
# without one; the servers ignore it): no setting of the user's.
PLACEHOLDER_KEY = "sk-no-key-needed"


@dataclass(frozen=True)
class Endpoint:
    """What a call was sent to, for its error message: the model, the base the user gave (None: the
    provider's default) and the key sent (only ever to hide it)."""

    model: str
    api_base: str | None = None
    api_key: str | None = None


def classify(exc: BaseException, endpoint: Endpoint | None = None) -> LLMError:
    """Map any exception raised by litellm (or the transport) to one of ours. With ``endpoint``, an error
    about reaching it (refused, DNS, TLS, a 404, a refused key) names the address tried and the likely
    fix; every message has the key, secrets from the environment and a URL's userinfo and query hidden."""
    if isinstance(exc, LLMError):
        return exc
    text = redact(str(exc), endpoint)
    status = getattr(exc, "status_code", None)
    kind: type[LLMError] = ProviderError
    for klass in type(exc).__mro__:
        if klass.__name__ in _BY_NAME:
            kind = _BY_NAME[klass.__name__]
            break
    # litellm wraps some HTTP errors as a connection error (Anthropic's 403): the answer's own status says.
    if (answered := _http_status(exc)) is not None:
        status = answered
        if kind is ProviderError and answered in (401, 403):
            kind = AuthError
    if kind in (BadRequestError, ProviderError) and any(h in text.lower() for h in _OVERFLOW_HINTS):
        kind = ContextOverflowError
    if kind is ProviderError and isinstance(exc, TimeoutError):
        kind = LLMTimeoutError
    if kind is ProviderError and any(
        h in text.lower() for h in ("missing credentials", "api_key client option must be set", "no api key")
    ):
        kind = AuthError
    # guard: reach-errors-name-the-address-and-fix
    if endpoint is not None and (line := _endpoint_problem(exc, kind, status, text, endpoint)):
        return kind(line, status=status, provider_message=text)
    labels = {
        ContextOverflowError: "The request is larger than the model's context window",
        RateLimitError: "Rate limited by the provider",
        AuthError: "The provider refused the API key",
        LLMTimeoutError: "The model did not answer in time",
        BadRequestError: "The provider rejected the request",
        ProviderError: "The provider failed",
    }
    return kind(
        f"{labels.get(kind, 'Model call failed')}: {_short(text)}", status=status, provider_message=text
    )


# Exceptions (by class name, in the cause chain) raised while connecting, before any request was sent:
# httpx's, aiohttp's (litellm's transport), the OpenAI SDK's.
_CONNECTING = frozenset(
    {
        "ConnectError",
        "ConnectTimeout",
        "ClientConnectorError",
        "ConnectionTimeoutError",
        "gaierror",
        "ConnectionRefusedError",
    }
)
_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH", re.I)
_URL = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s'\"<>`]+")


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    node: BaseException | None = exc
    while node is not None and id(node) not in seen:
        seen.add(id(node))
        yield node
        node = node.__cause__ or node.__context__


def _names(exc: BaseException) -> set[str]:
    return {k.__name__ for e in _chain(exc) for k in type(e).__mro__}


def safe_url(url: str) -> str:
    """``scheme://host:port/path`` of ``url``: never its userinfo, query or fragment."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port or {"https": 443, "http": 80}.get(parts.scheme.lower())
    except ValueError:
        return "(an unreadable address)"
    host = parts.hostname or ""
    host = f"[{host}]" if ":" in host else host
    return f"{parts.scheme.lower()}://{host}{f':{port}' if port else ''}{parts.path}"


def _secrets(endpoint: Endpoint | None) -> list[str]:
    # A value with no letter is a setting (MAX_TOKENS=128000), and hiding it would hide the window a
    # context overflow's message states.
    found = [
        v
        for k, v in os.environ.items()
        if _SECRET_NAME.search(k) and len(v) >= 6 and re.search(r"[A-Za-z]", v)
    ]
    if endpoint is not None:
        found += [endpoint.api_key or ""]
        if endpoint.api_base:
            try:
                parts = urlsplit(endpoint.api_base)
                found += [parts.username or "", parts.password or "", parts.query, parts.fragment]
                found += [v for _, v in parse_qsl(parts.query)]
            except ValueError:
                found.append(endpoint.api_base)
    found += [unquote(s) for s in found]
    # The longest first: a secret holding another is hidden whole.
    return sorted({s for s in found if len(s) >= 4}, key=len, reverse=True)


def redact(text: str, endpoint: Endpoint | None = None) -> str:
    """``text`` with every URL cut to ``scheme://host:port/path``, the key sent and the environment's
    secrets hidden, then any credential the history's redaction knows by its form (another provider's key)."""
    from myrm_tui.context.privacy.redact import redact_credentials  # only once a call failed

    text = _URL.sub(lambda m: safe_url(m[0]), text)
    # guard: error-messages-hide-known-secrets
    for secret in _secrets(endpoint):
        text = text.replace(secret, "***")
    return redact_credentials(text)


def base_address(endpoint: Endpoint) -> str | None:
    """The base the user gave, as ``scheme://host:port/path`` with its secrets hidden; None: none given."""
    return redact(safe_url(endpoint.api_base), endpoint) if endpoint.api_base else None


def _address(exc: BaseException, endpoint: Endpoint) -> str:
    """The URL the failed request went to, else the base given. httpx and the OpenAI SDK keep the
    request on their exceptions; litellm's wrappers carry a made-up one, so the innermost wins."""
    for e in reversed(list(_chain(exc))):
        try:
            url = getattr(getattr(e, "request", None), "url", None)
        except RuntimeError:  # httpx: "the .request property has not been set"
            url = None
        if url:
            return redact(safe_url(str(url)), endpoint)
    return base_address(endpoint) or "the provider's API"


def _http_status(exc: BaseException) -> int | None:
    """The status of the HTTP answer the error came from (httpx keeps it), the innermost; None: no answer."""
    for e in reversed(list(_chain(exc))):
        code = getattr(getattr(e, "response", None), "status_code", None)
        if isinstance(code, int):
            return code
    return None


def redacted_traceback(exc: BaseException, endpoint: Endpoint | None = None) -> str:
    """``exc``'s traceback (its causes too) for the log, with what ``redact`` hides hidden."""
    return redact("".join(traceback.format_exception(exc)), endpoint)


def _unreachable(exc: BaseException) -> tuple[str, str] | None:
    """Why the connection failed and the likely fix, when it did (None: it connected)."""
    names = _names(exc)
    if not names & _CONNECTING and "SSLError" not in names:
        return None
    if "ConnectionRefusedError" in names:
        return "connection refused", "is the server running?"
    if "gaierror" in names or "ClientConnectorDNSError" in names:
        return "host name not found", "is the host name right?"
    if "SSLCertVerificationError" in names or "ClientConnectorCertificateError" in names:
        return "TLS certificate not trusted", "is the server's certificate (or SSL_CERT_FILE) right?"
    if "SSLError" in names or "ClientConnectorSSLError" in names:
        return "TLS handshake failed", "does the server speak https? A plain-http one needs http://"
    if names & {"TimeoutError", "ConnectTimeout", "ConnectionTimeoutError"}:
        return "timed out connecting", "is the server running, and the address reachable from here?"
    errors = [e for e in _chain(exc) if isinstance(e, OSError) and e.strerror]
    reason = errors[-1].strerror.lower() if errors and errors[-1].strerror else "connection failed"
    return reason, "is the server running, and the address reachable from here?"


def key_variable(model: str) -> str:
    """The environment variable litellm reads ``model``'s key from (``gpt-4o`` -> ``OPENAI_API_KEY``)."""
    prefix, slash, _ = model.partition("/")
    if not slash:
        from myrm_tui.llm.bundled import bundled_provider  # only once a key was refused: it reads a file

        prefix = bundled_provider(model) or "openai"
    return f"{re.sub(r'[^A-Za-z0-9]', '_', prefix).upper()}_API_KEY"


def _endpoint_problem(
    exc: BaseException, kind: type[LLMError], status: int | None, text: str, endpoint: Endpoint
) -> str | None:
    if kind in (ProviderError, LLMTimeoutError) and (why := _unreachable(exc)) is not None:
        reason, fix = why
        return f"could not reach {_address(exc, endpoint)} ({reason}): {fix}"
    if kind is AuthError and status in (401, 403):
        var = key_variable(endpoint.model)
        env = os.environ.get(var)
        if endpoint.api_key and endpoint.api_key != env and env is not None:
            source = f"the api_key setting (MYRM_API_KEY or api_key in the config file), not {var}"
        elif env:
            source = var
        elif endpoint.api_key and endpoint.api_key != PLACEHOLDER_KEY:
            source = "the api_key setting (MYRM_API_KEY or api_key in the config file)"
        else:
            source = f"{var}, which is not set"
        return (
            f"{_address(exc, endpoint)} refused the API key (HTTP {status}): "
            f"myrm sends {source} for {endpoint.model}; is it set and valid for this server?"
        )
    if status == 404 and "model" not in text.lower():
        url = _address(exc, endpoint)
        base = safe_url(endpoint.api_base).rstrip("/") if endpoint.api_base else ""
        if base and url.endswith("/chat/completions") and not base.endswith("/v1"):
            return (
                f"{url} answered 404 Not Found: an OpenAI-compatible server's base ends in /v1 "
                f"(Ollama, vLLM, LM Studio); try --api-base {redact(base, endpoint)}/v1"
            )
        if base.endswith("/v1") and "/v1/v1/" in url:
            return f"{url} answered 404 Not Found: /v1 is added for this provider; try --api-base {base[:-3]}"
        return f"{url} answered 404 Not Found: is the --api-base right?"
    return None


def _short(text: str, n: int = 400) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"
