"""One HTTP model request: timeouts, failures classified, ``Retry-After`` read, keys redacted.

The answer is read through :func:`hermes_hooks.backends.http.read_response`: ``model.timeout``
bounds the whole request and ``model.max_response_bytes`` its decoded size.

:class:`HttpModel` is the base of the clients that speak a provider's wire protocol over
``httpx`` (:class:`~hermes_hooks.backends.models.openai_compat.OpenAICompatibleModel`,
:class:`~hermes_hooks.backends.models.anthropic.AnthropicMessagesModel`). It makes one attempt
per call, with separate connect and read timeouts, and turns every failure into a
:class:`~hermes_hooks.backends.models.ModelError` that says whether a retry may help and how long
the server asked to wait (retries are the caller's: see
:mod:`~hermes_hooks.backends.models.retry`).

The API key is a secret: it is sent in a header and never appears in a message, a log line or
``--debug`` output. Whatever the server sends back (an error that quotes the key, say) is
redacted before it reaches an exception, and the request logged at debug level shows its
headers with the key replaced by ``***``.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping
from typing import Any, Final

import httpx

from hermes_hooks import __version__
from hermes_hooks.backends.http import (
    DEFAULT_MAX_RESPONSE_BYTES,
    Bounds,
    DeadlineExceeded,
    Fetched,
    ResponseTooLarge,
    read_response,
)
from hermes_hooks.backends.models.base import ModelError, ModelProvider
from hermes_hooks.backends.models.profiles import OMIT_TEMPERATURE, ProviderProfile
from hermes_hooks.backends.models.retry import parse_retry_after
from hermes_hooks.plugins.newer_ctx import redact_everywhere

__all__ = ["REDACTED", "RETRYABLE_STATUS", "HttpModel", "redact"]

logger = logging.getLogger(__name__)

REDACTED: Final = "***"
"""What a key is replaced by wherever it would be shown."""

RETRYABLE_STATUS: Final = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
"""HTTP statuses a retry may cure (with 5xx in general)."""

_MAX_ERROR_TEXT: Final = 500
_SECRET_HEADERS: Final = frozenset({"authorization", "x-api-key", "api-key", "x-goog-api-key"})
_MIN_SECRET: Final = 4  # a shorter "key" would redact ordinary words


def secret_forms(secret: str) -> set[str]:
    """Every form of *secret* a server or a library may show: as it is, lower- and upper-cased,
    URL-encoded, base64 (of the key and of ``Bearer <key>``), and escaped by ``repr``."""
    import base64
    import urllib.parse

    forms = {secret, secret.lower(), secret.upper(), repr(secret)[1:-1]}
    for quoted in (urllib.parse.quote(secret, safe=""), urllib.parse.quote_plus(secret)):
        forms |= {quoted, quoted.lower()}
    for raw in (secret, f"Bearer {secret}"):
        encoded = base64.b64encode(raw.encode()).decode()
        forms |= {encoded, encoded.rstrip("=")}
    return {form for form in forms if len(form) >= _MIN_SECRET}


def redact(text: str, secrets: Iterable[str]) -> str:
    """Return ``text`` with every secret in it replaced by :data:`REDACTED`: every form
    :func:`secret_forms` knows, a truncated prefix of at least half the key (12 characters
    or more), matched without regard to case, and what the plugins' redaction patterns match."""
    keys = {s for s in secrets if s and len(s) >= _MIN_SECRET}
    forms = set().union(*(secret_forms(s) for s in keys)) if keys else set()
    for form in sorted(forms, key=len, reverse=True):
        text = re.sub(re.escape(form), REDACTED, text, flags=re.IGNORECASE)
    for key in keys:
        shortest = max(12, len(key) // 2)
        if len(key) > shortest:
            prefixes = "|".join(re.escape(key[:n]) for n in range(len(key) - 1, shortest - 1, -1))
            text = re.sub(prefixes, REDACTED, text, flags=re.IGNORECASE)
    return redact_everywhere(
        text, REDACTED
    )  # and the plugins' patterns (register_redaction_patterns)


def clean_key(api_key: str | None) -> str | None:
    """Return *api_key* without the whitespace around it (a key file with CRLF line ends).

    :raises ModelError: a control character remains inside it (it is not shown).
    """
    if api_key is None:
        return None
    key = api_key.strip()
    if any(ord(c) < 32 or ord(c) == 127 for c in key):
        raise ModelError(
            f"the API key ({len(key)} characters) holds a control character inside it; expected "
            f"one line of text (check the file or variable it is read from)",
            reason="auth",
        )
    return key or None


def _reason_for(status: int) -> str:
    if status == 429:
        return "rate_limit"
    if status in (401, 403):
        return "auth"
    if status >= 500:
        return "server_error"
    return "bad_request"


def _error_text(response: Fetched) -> str:
    """The error message a provider sent: OpenAI's and Anthropic's shapes, else the body."""
    try:
        data = response.json()
    except ValueError:
        return response.text[:_MAX_ERROR_TEXT]
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])[:_MAX_ERROR_TEXT]
    if isinstance(error, str):
        return error[:_MAX_ERROR_TEXT]
    return response.text[:_MAX_ERROR_TEXT]


class HttpModel(ModelProvider):
    """A model behind an HTTP API: the client, the headers, the timeouts and the profile.

    :param base_url: the API root; a subclass appends its path.
    :param model: the model id sent in every request.
    :param api_key: the key, sent the way the subclass says; ``None`` sends none.
    :param timeout: the read timeout: seconds to wait for the answer.
    :param connect_timeout: seconds to wait for a connection.
    :param deadline: seconds the whole request may take (``model.timeout``); ``None`` for none.
    :param max_response_bytes: the most bytes of one answer, decoded.
    :param profile: the provider profile whose quirks apply (headers, temperature, hooks).
    :param provider: the name reported as :attr:`provider` (the profile's by default).
    :param client: an ``httpx.Client`` to use instead of making one (it is not closed here).
    """

    provider = "http"

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        timeout: float = 60.0,
        connect_timeout: float = 10.0,
        deadline: float | None = None,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        profile: ProviderProfile | None = None,
        provider: str | None = None,
        client: httpx.Client | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.profile = profile
        if provider is not None:
            self.provider = provider
        elif profile is not None:
            self.provider = profile.name
        api_key = clean_key(api_key)
        self.timeouts = httpx.Timeout(timeout, connect=connect_timeout)
        self.bounds = Bounds(deadline=deadline, max_bytes=max_response_bytes)
        self._secrets = (api_key,) if api_key else ()
        headers = {"User-Agent": f"hermes-hooks/{__version__}"}
        if profile is not None:
            headers.update({str(k): str(v) for k, v in profile.default_headers.items()})
        headers.update(self.auth_headers(api_key) if api_key else {})
        self.headers = headers
        self._owns_client = client is None
        self._client = client or httpx.Client(timeout=self.timeouts)

    def auth_headers(self, api_key: str) -> dict[str, str]:
        """Return the headers that carry ``api_key`` (a bearer token unless overridden)."""
        return {"Authorization": f"Bearer {api_key}"}

    @property
    def has_key(self) -> bool:
        """Whether a key is sent."""
        return bool(self._secrets)

    def redact(self, text: str) -> str:
        """Return ``text`` with this model's key replaced by :data:`REDACTED`."""
        return redact(text, self._secrets)

    def close(self) -> None:
        """Close the HTTP connections (only when this object made the client)."""
        if self._owns_client:
            self._client.close()

    # -- request quirks of the profile --------------------------------------------------------

    def temperature_for(self, requested: float | None) -> float | None:
        """Return the temperature to send: the profile's fixed one, none, or ``requested``."""
        fixed = self.profile.fixed_temperature if self.profile is not None else None
        if fixed is OMIT_TEMPERATURE:
            return None
        if fixed is not None:
            return float(fixed)
        return requested

    def max_tokens_for(self, requested: int | None, model: str) -> int | None:
        """Return ``requested``, else the profile's ``get_max_tokens(model)``."""
        if requested is not None or self.profile is None:
            return requested
        return self.profile.get_max_tokens(model)

    def _call_hook(self, hook: str, *args: Any, **kwargs: Any) -> Any:
        assert self.profile is not None
        try:
            return getattr(self.profile, hook)(*args, **kwargs)
        except Exception as exc:  # a plugin's quirk must fail the request, named, not the host
            raise ModelError(
                f"profile {self.profile.name!r} ({type(self.profile).__name__}.{hook}) raised "
                f"{type(exc).__name__}: {self.redact(str(exc))}",
                reason="provider_error",
            ) from exc

    def prepare_messages(self, messages: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Return copies of ``messages``, passed through the profile's ``prepare_messages``.

        :raises ModelError: the hook raised or did not return a list.
        """
        copied = [dict(message) for message in messages]
        if self.profile is None:
            return copied
        prepared = self._call_hook("prepare_messages", copied)
        if not isinstance(prepared, list):
            raise ModelError(
                f"profile {self.profile.name!r}: prepare_messages must return a list of "
                f"messages, found {type(prepared).__name__}",
                reason="provider_error",
            )
        return prepared

    def profile_extras(self, model: str) -> tuple[dict[str, Any], dict[str, str]]:
        """Return what the profile adds to a request: ``(body fields, headers)``.

        ``build_extra_body`` and both halves of ``build_api_kwargs_extras`` go into the body,
        except ``extra_headers`` (sent as headers) and the OpenAI SDK's own ``timeout`` and
        ``extra_query``, which have no place in a JSON body.

        :raises ModelError: a hook raised or returned something else than dicts.
        """
        if self.profile is None:
            return {}, {}
        name = self.profile.name
        extra = self._call_hook("build_extra_body", session_id=None, model=model)
        pair = self._call_hook(
            "build_api_kwargs_extras", reasoning_config=None, model=model, session_id=None
        )
        if (
            not isinstance(extra, dict)
            or not isinstance(pair, tuple)
            or len(pair) != 2
            or not all(isinstance(part, dict) for part in pair)
        ):
            raise ModelError(
                f"profile {name!r}: build_extra_body must return a dict and "
                f"build_api_kwargs_extras a (dict, dict) tuple",
                reason="provider_error",
            )
        extra_body, top_level = dict(pair[0]), dict(pair[1])
        headers = top_level.pop("extra_headers", None) or {}
        nested = top_level.pop("extra_body", None) or {}
        for ignored in ("timeout", "extra_query"):
            top_level.pop(ignored, None)
        fields = {
            **extra,
            **extra_body,
            **(nested if isinstance(nested, dict) else {}),
            **top_level,
        }
        sent = {str(k): str(v) for k, v in headers.items()} if isinstance(headers, dict) else {}
        return fields, sent

    # -- one attempt ---------------------------------------------------------------------------

    def post_json(
        self, url: str, body: Mapping[str, Any], headers: Mapping[str, str] | None = None
    ) -> Any:
        """POST ``body`` as JSON to ``url`` once and return the decoded answer.

        :raises ModelError: the server could not be reached, timed out, answered with an HTTP
            error (``retry_after`` set from its ``Retry-After``), or sent something that is
            not JSON.
        """
        sent = {**self.headers, **(headers or {})}
        if logger.isEnabledFor(logging.DEBUG):
            shown = {k: REDACTED if k.lower() in _SECRET_HEADERS else v for k, v in sent.items()}
            logger.debug("%s: POST %s headers=%s", self.provider, url, self.redact(str(shown)))
        who = f"{url} ({self.provider})"
        try:
            response = read_response(
                self._client,
                "POST",
                url,
                bounds=self.bounds,
                timeout=self.timeouts,
                headers=sent,
                json=dict(body),
            )
        except DeadlineExceeded as exc:
            raise ModelError(
                f"{who} did not finish in time: the whole request took more than "
                f"{exc.deadline:g} s (model.timeout)",
                retryable=True,
                reason="timeout",
            ) from exc
        except ResponseTooLarge as exc:
            raise ModelError(
                f"{who} sent an answer larger than {exc.max_bytes} bytes once decoded "
                f"(model.max_response_bytes); not read further",
                reason="bad_response",
            ) from exc
        except httpx.TimeoutException as exc:
            kind = "connect" if isinstance(exc, httpx.ConnectTimeout) else "read"
            limit = self.timeouts.connect if kind == "connect" else self.timeouts.read
            raise ModelError(
                f"{who} did not answer in time: {kind} timeout of {limit:g} s "
                f"(model.{kind}_timeout)",
                retryable=True,
                reason="timeout",
            ) from exc
        except (httpx.HTTPError, ValueError) as exc:
            raise ModelError(
                f"cannot reach {who}: {self.redact(str(exc))}", retryable=True, reason="connection"
            ) from exc
        status = response.status_code
        logger.debug("%s: HTTP %d from %s", self.provider, status, url)
        if status >= 400:
            raise ModelError(
                f"{who} answered HTTP {status}: {self.redact(_error_text(response))}",
                status_code=status,
                retryable=status in RETRYABLE_STATUS or status >= 500,
                reason=_reason_for(status),
                retry_after=parse_retry_after(response.headers.get("Retry-After")),
            )
        try:
            return response.json()
        except ValueError as exc:
            raise ModelError(
                f"{who} did not send JSON: {self.redact(response.text[:_MAX_ERROR_TEXT])!r}",
                status_code=status,
                reason="bad_response",
            ) from exc

    def bad_response(self, url: str, data: object, what: str) -> ModelError:
        """Return the error for an answer that is JSON but not ``what``."""
        text = self.redact(repr(data)[:_MAX_ERROR_TEXT])
        return ModelError(
            f"{url} ({self.provider}) did not send {what}: {text}", reason="bad_response"
        )
