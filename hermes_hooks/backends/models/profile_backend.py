"""A registered profile as a models-family backend: from a profile and the config, a client.

:class:`ProfileBackend` is what ``pm.models`` holds for each :class:`ProviderProfile`. When
``model.provider`` (or ``ctx.llm``) chooses it, :meth:`ProfileBackend.create` works out, from the
profile and ``config.yaml``:

- the **model**: ``model.default`` when ``model.provider`` names this profile (the caller's
  own model wins in ``ctx.llm``), else ``providers.<name>.default``, else the profile's first
  ``fallback_models``;
- the **endpoint**: ``model.base_url`` when ``model.provider`` names this profile, else
  ``providers.<name>.base_url``, else a ``*_BASE_URL`` variable of its ``env_vars``, else its
  ``base_url`` (through the profile's ``resolve_base_url`` hook);
- the **key**: the variable ``model.api_key_env`` (when ``model.provider`` names this profile)
  or ``providers.<name>.api_key_env`` names, else the first of its key ``env_vars`` that is
  set; a profile with key variables and none set is refused, naming them, unless its endpoint
  is on this machine (``localhost``, ``127.0.0.1``, ``::1``: Ollama, LM Studio, a test
  server), where the key is sent only when set;
- the **client** of its ``api_mode``: ``chat_completions`` and ``anthropic_messages``; any other
  mode is refused with an error naming it.
"""

from __future__ import annotations

import ipaddress
import os
from typing import TYPE_CHECKING, Final, Literal
from urllib.parse import urlparse

import attrs

from hermes_hooks.backends.models.base import ModelBackend, ModelProvider, ModelSettings
from hermes_hooks.backends.models.profiles import API_MODES, SUPPORTED_API_MODES, ProviderProfile
from hermes_hooks.errors import ConfigError

if TYPE_CHECKING:
    from hermes_hooks.backends.models.transport import HttpModel

__all__ = ["KeyStatus", "ProfileBackend", "Resolved", "is_local_url"]

_AUTH_TYPES: Final = frozenset({"api_key", "none", ""})


def is_local_url(url: str) -> bool:
    """Tell whether ``url`` points at this machine (a loopback address or ``localhost``)."""
    host = (urlparse(url).hostname or "").strip("[]").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@attrs.frozen
class KeyStatus:
    """Whether a profile's key is there: ``set`` (in ``variable``), ``missing`` (one of
    ``variables`` is needed) or ``not needed`` (a local server)."""

    state: Literal["set", "missing", "not needed"]
    variable: str | None = None
    variables: tuple[str, ...] = ()


@attrs.frozen
class Resolved:
    """What a profile resolves to for one request: endpoint, model and key."""

    base_url: str
    model: str
    api_key: str | None = attrs.field(default=None, repr=False)
    key: KeyStatus = KeyStatus("not needed")


class ProfileBackend(ModelBackend):
    """The models-family backend of one :class:`ProviderProfile`.

    :param profile: the profile, as its plugin registered it.
    """

    def __init__(self, profile: ProviderProfile) -> None:
        self.profile = profile

    def __repr__(self) -> str:
        return f"<ProfileBackend {self.name!r} {self.api_mode}>"

    @property
    def name(self) -> str:
        """The profile's name, as ``model.provider`` takes it."""
        return str(self.profile.name).strip().lower()

    @property
    def display_name(self) -> str:
        """The profile's display name, else its name."""
        return str(self.profile.display_name or self.profile.name)

    @property
    def api_mode(self) -> str:
        """The profile's wire protocol."""
        return str(self.profile.api_mode or "chat_completions").strip().lower()

    @property
    def aliases(self) -> tuple[str, ...]:
        """The other names of the profile, lower case."""
        return tuple(str(a).strip().lower() for a in self.profile.aliases if str(a).strip())

    def is_supported(self) -> bool:
        """Whether this version speaks the profile's ``api_mode``."""
        return self.api_mode in SUPPORTED_API_MODES

    def is_available(self) -> bool:
        """Whether its mode is spoken and its key (if it needs one) is set."""
        return self.is_supported() and self.key_status(ModelSettings()).state != "missing"

    def _is_main(self, settings: ModelSettings) -> bool:
        return settings.provider in (self.name, *self.aliases)

    # -- resolution ---------------------------------------------------------------------------

    def configured_base_url(self, settings: ModelSettings) -> str:
        """Return the endpoint config or the environment gives, else ``""`` (no hook asked)."""
        configured = (settings.base_url if self._is_main(settings) else None) or (
            settings.entry(self.name).base_url
        )
        from_env = next(
            (os.environ[v] for v in self.profile.base_url_env_vars if os.environ.get(v)), ""
        )
        return configured or from_env

    def key_status(self, settings: ModelSettings, base_url: str | None = None) -> KeyStatus:
        """Return where the key comes from under ``settings``, and whether it is set.

        :param base_url: the endpoint; by default the configured one, else the profile's. A
            key is never *missing* for an endpoint on this machine.
        """
        entry = settings.entry(self.name)
        named = (settings.api_key_env if self._is_main(settings) else None) or entry.api_key_env
        candidates = (named,) if named else self.profile.key_env_vars
        for variable in candidates:
            if os.environ.get(variable):
                return KeyStatus("set", variable, tuple(candidates))
        url = (
            base_url
            if base_url is not None
            else (self.configured_base_url(settings) or self.profile.base_url)
        )
        auth = str(self.profile.auth_type or "").strip().lower()
        if not candidates or auth == "none" or is_local_url(url):
            return KeyStatus("not needed", None, tuple(candidates))
        return KeyStatus("missing", None, tuple(candidates))

    def resolve(self, settings: ModelSettings) -> Resolved:
        """Return the endpoint, model and key ``settings`` give this profile.

        :raises ConfigError: no model is named, the key is missing, or no endpoint is known.
        """
        name = self.name
        main = self._is_main(settings)
        entry = settings.entry(name)
        model = (settings.name if main else None) or entry.default
        if not model and self.profile.fallback_models:
            model = str(self.profile.fallback_models[0])
        if not model:
            where = (
                "model.default (hermes models use NAME --model ID)"
                if main
                else (f"providers.{name}.default")
            )
            raise ConfigError(
                f"model provider {name!r} needs a model and its profile suggests none: "
                f"set {where} in config.yaml"
            )
        named = self.key_status(settings, base_url="")  # which variable holds it, if set
        api_key = os.environ.get(named.variable) if named.variable else None
        try:
            base_url = self.profile.resolve_base_url(
                api_key=api_key or "",
                default_url=self.profile.base_url,
                env_url=self.configured_base_url(settings),
                probe=True,
            )
        except Exception as exc:
            raise ConfigError(
                f"model provider {name!r}: its profile's resolve_base_url raised "
                f"{type(exc).__name__}: {exc}"
            ) from exc
        if not isinstance(base_url, str) or not base_url.strip():
            raise ConfigError(
                f"model provider {name!r} has no base URL: set providers.{name}.base_url in "
                f"config.yaml"
            )
        base_url = base_url.strip()
        key = self.key_status(settings, base_url)
        if key.state == "missing":
            variables = " or ".join(key.variables)
            raise ConfigError(
                f"model provider {name!r} needs an API key in {variables}, which is not set: "
                f"put {key.variables[0]}=... in $HERMES_HOME/.env (the key is never read "
                f"from config.yaml)"
            )
        return Resolved(base_url, model, api_key, key)

    def create(self, settings: ModelSettings) -> ModelProvider:
        """Return the client of the profile's ``api_mode`` for ``settings``.

        :raises ConfigError: the mode is not spoken (named), the auth type is not an API key,
            or :meth:`resolve` fails.
        """
        name, mode = self.name, self.api_mode
        if mode not in SUPPORTED_API_MODES:
            known = "one Hermes knows" if mode in API_MODES else "not one Hermes knows"
            raise ConfigError(
                f"model provider {name!r} uses api_mode {mode!r} ({known}), which this version "
                f"does not speak: it speaks {' and '.join(SUPPORTED_API_MODES)}; choose another "
                f"provider with 'hermes models use NAME'"
            )
        auth = str(self.profile.auth_type or "").strip().lower()
        if auth not in _AUTH_TYPES:
            raise ConfigError(
                f"model provider {name!r} uses auth_type {auth!r}, which this version does not "
                f"support (only an API key from the environment)"
            )
        resolved = self.resolve(settings)
        client: type[HttpModel]
        if mode == "anthropic_messages":
            from hermes_hooks.backends.models.anthropic import AnthropicMessagesModel

            client = AnthropicMessagesModel
        else:
            from hermes_hooks.backends.models.openai_compat import OpenAICompatibleModel

            client = OpenAICompatibleModel
        return client(
            resolved.base_url,
            resolved.model,
            api_key=resolved.api_key,
            timeout=settings.timeout,
            connect_timeout=settings.connect_timeout,
            deadline=settings.deadline,
            max_response_bytes=settings.max_response_bytes,
            profile=self.profile,
            provider=name,
        )
