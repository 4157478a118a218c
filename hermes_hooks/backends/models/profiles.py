"""Model-provider profiles: Hermes' ``ProviderProfile``, one provider declared in one place.

A profile says everything the host needs to talk to one inference provider: its wire protocol
(``api_mode``), endpoint, the environment variables that hold its key, its aliases, headers and
request quirks (a fixed temperature, a default ``max_tokens``), and models to offer when the
person names none. Model-provider plugins build one and register it at import time, as Hermes'
``plugins/model-providers/*`` do::

    from providers import register_provider
    from providers.base import ProviderProfile

    register_provider(ProviderProfile(name="acme", base_url="https://api.acme.test/v1",
                                      env_vars=("ACME_API_KEY",)))

A subclass overrides the hooks (:meth:`ProviderProfile.prepare_messages`,
:meth:`~ProviderProfile.build_extra_body`, :meth:`~ProviderProfile.build_api_kwargs_extras`,
:meth:`~ProviderProfile.get_max_tokens`, :meth:`~ProviderProfile.resolve_base_url`...) for
a provider's quirks. Profiles are declarative: the clients that speak each ``api_mode`` live in
:mod:`~hermes_hooks.backends.models.openai_compat` and
:mod:`~hermes_hooks.backends.models.anthropic`, and
:mod:`~hermes_hooks.backends.models.profile_backend` builds one from a profile and the config.

The class is a standard-library dataclass, as in Hermes, so that a plugin's own
``@dataclass class MyProfile(ProviderProfile)`` with extra fields keeps working.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import urlparse

__all__ = [
    "API_MODES",
    "MAX_MODELS_RESPONSE_BYTES",
    "OMIT_TEMPERATURE",
    "SUPPORTED_API_MODES",
    "ProviderProfile",
    "is_base_url_variable",
]

logger = logging.getLogger(__name__)


class _OmitTemperature:
    """The type of :data:`OMIT_TEMPERATURE` (a readable repr in listings and errors)."""

    def __repr__(self) -> str:
        return "OMIT_TEMPERATURE"


OMIT_TEMPERATURE: Final[Any] = _OmitTemperature()
"""``fixed_temperature=OMIT_TEMPERATURE``: never send a temperature (the server manages it)."""

API_MODES: Final[tuple[str, ...]] = (
    "chat_completions",
    "anthropic_messages",
    "codex_responses",
    "bedrock_converse",
    "codex_app_server",
)
"""The wire protocols Hermes knows (``hermes_cli/runtime_provider.py``)."""

SUPPORTED_API_MODES: Final[tuple[str, ...]] = ("chat_completions", "anthropic_messages")
"""The ones this version speaks; a profile of another mode is listed and refused when chosen."""

MAX_MODELS_RESPONSE_BYTES: Final = 16 * 1024 * 1024
"""The largest model catalog :meth:`ProviderProfile.fetch_models` reads, as in Hermes."""


def is_base_url_variable(name: str) -> bool:
    """Tell whether an entry of ``env_vars`` holds an endpoint (``LM_BASE_URL``), not a key."""
    return name.upper().endswith(("_BASE_URL", "_API_BASE"))


@dataclass
class ProviderProfile:
    """One inference provider, as Hermes declares it; subclass it or build it with keywords.

    :param name: the name ``model.provider`` takes (lower case, no spaces).
    :param api_mode: the wire protocol: ``chat_completions`` (OpenAI's), ``anthropic_messages``;
        the others of :data:`API_MODES` are listed but not spoken by this version.
    :param aliases: other names ``model.provider`` may use for it (``claude`` for anthropic).
    :param display_name: for people, in ``hermes models``.
    :param description: one line about it.
    :param signup_url: where to get a key.
    :param env_vars: the environment variables of its key, the first one set winning; an
        entry ending in ``_BASE_URL`` holds the endpoint instead.
    :param base_url: the API root (``https://openrouter.ai/api/v1``).
    :param models_url: the model catalog, when it is not ``{base_url}/models``.
    :param auth_type: ``api_key`` (the only one this version uses), or Hermes' others.
    :param fallback_models: models to offer (the first one is used when ``model.default``
        names none).
    :param default_headers: sent with every request.
    :param fixed_temperature: always this temperature; :data:`OMIT_TEMPERATURE` never sends
        one; ``None`` sends the caller's.
    :param default_max_tokens: ``max_tokens`` when the caller gives none (see
        :meth:`get_max_tokens`).
    """

    # Identity
    name: str
    api_mode: str = "chat_completions"
    aliases: tuple[str, ...] = ()

    # For people
    display_name: str = ""
    description: str = ""
    signup_url: str = ""

    # Auth and endpoints
    env_vars: tuple[str, ...] = ()
    base_url: str = ""
    models_url: str = ""
    auth_type: str = "api_key"
    supports_health_check: bool = True
    supports_model_listing: bool = True

    # Vision (kept as Hermes declares them; this host does not read them yet)
    supports_vision: bool = False
    supports_vision_tool_messages: bool = True
    supports_vision_user_messages: bool = False
    supports_prompt_cache_key: bool = False

    # Models
    fallback_models: tuple[str, ...] = ()
    hostname: str = ""

    # Client and request quirks
    default_headers: dict[str, str] = field(default_factory=dict)
    fixed_temperature: Any = None
    default_max_tokens: int | None = None
    default_aux_model: str = ""

    # -- what this host reads -----------------------------------------------------------------

    @property
    def key_env_vars(self) -> tuple[str, ...]:
        """The entries of :attr:`env_vars` that hold a key (not an endpoint)."""
        return tuple(v for v in self.env_vars if not is_base_url_variable(v))

    @property
    def base_url_env_vars(self) -> tuple[str, ...]:
        """The entries of :attr:`env_vars` that hold an endpoint (``LM_BASE_URL``)."""
        return tuple(v for v in self.env_vars if is_base_url_variable(v))

    @property
    def label(self) -> str:
        """:attr:`display_name`, else :attr:`name`."""
        return self.display_name or self.name

    # -- hooks: override in a subclass for a provider's quirks ----------------------------------

    def get_hostname(self) -> str:
        """Return the provider's host name: :attr:`hostname`, else the one of :attr:`base_url`."""
        if self.hostname:
            return self.hostname
        return (urlparse(self.base_url).hostname or "") if self.base_url else ""

    def resolve_base_url(
        self, *, api_key: str, default_url: str, env_url: str, probe: bool = True
    ) -> str:
        """Return the endpoint to use: ``env_url`` (what config or the environment says) when
        given, else ``default_url`` (the profile's own).

        :param probe: ``False`` when only displaying it (a subclass must then not probe).
        """
        return env_url or default_url

    def prepare_messages(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Return the messages as this provider wants them (by default, unchanged)."""
        return messages

    def build_extra_body(self, *, session_id: str | None = None, **context: Any) -> dict[str, Any]:
        """Return fields merged into the request body (by default none).

        :param context: ``model`` and whatever else the host knows (``provider_preferences``).
        """
        return {}

    def build_api_kwargs_extras(
        self, *, reasoning_config: dict[str, Any] | None = None, **context: Any
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """Return ``(extra_body, top_level)`` additions to the request (by default none).

        Both are merged into the JSON body here (an OpenAI SDK sends ``extra_body`` that way
        too); ``top_level["extra_headers"]`` is sent as headers.
        """
        return {}, {}

    def default_vision_model(self) -> str | None:
        """Return the provider's default vision model, or ``None``."""
        return None

    def get_max_tokens(self, model: str | None) -> int | None:
        """Return the ``max_tokens`` to send for ``model`` when the caller gives none."""
        return self.default_max_tokens

    def fetch_models(
        self, *, api_key: str | None = None, base_url: str | None = None, timeout: float = 8.0
    ) -> list[str] | None:
        """Return the model ids of the provider's catalog, or ``None`` when it cannot be read.

        ``GET`` :attr:`models_url`, else ``{base_url}/models`` (the ``base_url`` given, else the
        profile's), with ``Authorization: Bearer`` when a key is given and the default headers;
        a body over :data:`MAX_MODELS_RESPONSE_BYTES` is refused. Never raises.
        """
        url = self.models_url.strip()
        if not url:
            root = base_url or self.base_url
            if not root:
                return None
            url = root.rstrip("/") + "/models"
        import httpx  # imported here: listing profiles needs no HTTP client

        from hermes_hooks import __version__

        headers = {"Accept": "application/json", "User-Agent": f"hermes-hooks/{__version__}"}
        headers.update(self.default_headers)
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        from hermes_hooks.backends.http import Bounds, read_response

        try:
            with httpx.Client(timeout=timeout) as client:
                fetched = read_response(
                    client,
                    "GET",
                    url,
                    bounds=Bounds(deadline=timeout, max_bytes=MAX_MODELS_RESPONSE_BYTES),
                    headers=headers,
                )
            if fetched.status_code >= 400:
                raise ValueError(f"HTTP {fetched.status_code} from {url}")
            data = fetched.json()
            items = data if isinstance(data, list) else data.get("data", [])
            return [str(m["id"]) for m in items if isinstance(m, dict) and "id" in m]
        except Exception as exc:  # as in Hermes: the caller falls back to fallback_models
            logger.debug("fetch_models(%s): %s", self.name, exc)
            return None
