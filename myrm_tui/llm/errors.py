"""Typed provider errors. litellm's exceptions are mapped by class name, so this module (and the
UI importing it) never imports litellm itself."""

from __future__ import annotations

import re


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


def classify(exc: BaseException) -> LLMError:
    """Map any exception raised by litellm (or the transport) to one of ours."""
    if isinstance(exc, LLMError):
        return exc
    text = str(exc)
    status = getattr(exc, "status_code", None)
    kind: type[LLMError] = ProviderError
    for klass in type(exc).__mro__:
        if klass.__name__ in _BY_NAME:
            kind = _BY_NAME[klass.__name__]
            break
    if kind in (BadRequestError, ProviderError) and any(h in text.lower() for h in _OVERFLOW_HINTS):
        kind = ContextOverflowError
    if kind is ProviderError and isinstance(exc, TimeoutError):
        kind = LLMTimeoutError
    if kind is ProviderError and any(
        h in text.lower() for h in ("missing credentials", "api_key client option must be set", "no api key")
    ):
        kind = AuthError
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


def _short(text: str, n: int = 400) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"
