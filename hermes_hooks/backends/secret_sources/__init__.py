"""Secret sources: where credentials come from besides the shell and ``$HERMES_HOME/.env``.

The default is what it always was: the environment, then ``.env`` for what the environment
does not set. A plugin adds a source with ``ctx.register_secret_source(source)`` (Hermes'
``agent.secret_sources.base.SecretSource``, served by the compatibility layer); it runs only
when ``secrets.<name>.enabled`` is true::

    secrets:
      sources: [vault]          # the order, before registration order
      vault:
        enabled: true
        override_existing: false
        timeout_seconds: 10

:func:`apply_secret_sources` is Hermes' orchestrator: after the plugins load (a source is
registered then, after ``.env`` was read) it fetches every enabled source within its
``timeout_seconds`` (isolated: a source that raises, hangs or returns something else is
reported, never fatal) and applies the results to the environment: mapped sources before
bulk ones, the first source to supply a variable wins, a value the shell or ``.env`` set is
kept unless the source may ``override_existing`` (and always for the variables
``secrets.preserve_existing`` lists), and a source's protected variables are never written.
"""

from __future__ import annotations

import functools
import re
import types
from collections.abc import Mapping, MutableMapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import attrs

from hermes_hooks.backends.calls import call_provider
from hermes_hooks.backends.family import Family, ProviderRegistry, Selection
from hermes_hooks.backends.secret_sources.base import (
    _SOURCE_ENVIRONMENT,
    DEFAULT_FETCH_TIMEOUT_SECONDS,
    SECRET_SOURCE_API_VERSION,
    ErrorKind,
    FetchResult,
    SecretSource,
    get_source_environment,
    is_valid_env_name,
)
from hermes_hooks.errors import ConfigError, HermesHooksError, RegistrationError
from hermes_hooks.registries.base import HOST, Handle

if TYPE_CHECKING:
    from hermes_hooks.plugins.manager import PluginManager

__all__ = [
    "DEFAULT_FETCH_TIMEOUT_SECONDS",
    "SECRET_SOURCES",
    "SECRET_SOURCE_API_VERSION",
    "ApplyReport",
    "ErrorKind",
    "FetchResult",
    "SecretSource",
    "SourceReport",
    "apply_secret_sources",
    "get_source_environment",
    "is_valid_env_name",
]

_NAME: Final = re.compile(r"^[a-z0-9_]+$")


@attrs.frozen
class SecretSettings:
    """The ``secrets`` section: the order ``secrets.sources`` gives, and the whole section."""

    sources: tuple[str, ...] = ()
    section: Mapping[str, Any] = attrs.field(factory=dict)

    @property
    def model(self) -> str | None:
        """Secret sources have no model."""
        return None

    def choice(self, selection: Selection) -> str | None:
        """The first source ``secrets.sources`` names, or ``None``."""
        return self.sources[0] if self.sources else None

    @classmethod
    def read(cls, config: Mapping[str, Any], source: Path | None = None) -> SecretSettings:
        """Read the ``secrets`` section of a whole config.

        :raises ConfigError: the section is not a mapping, or ``sources`` is not a list of
            names.
        """
        where = f"{source}: " if source is not None else ""
        section = config.get("secrets")
        if section is None:
            return cls()
        if not isinstance(section, Mapping):
            raise ConfigError(
                f"{where}secrets must be a mapping (sources, <name>: {{enabled: true}}), "
                f"found {type(section).__name__}"
            )
        order = section.get("sources")
        if order is not None and (
            not isinstance(order, list) or not all(isinstance(n, str) for n in order)
        ):
            raise ConfigError(
                f"{where}secrets.sources must be a list of source names, found {order!r}"
            )
        return cls(tuple(n.strip() for n in order or () if n.strip()), dict(section))


class SecretSourceRegistry(ProviderRegistry[SecretSource]):
    """One manager's secret sources, with Hermes' rules of registration."""

    def __init__(self, home: Path | None = None) -> None:
        super().__init__(SECRET_SOURCES, home)
        self._order: list[str] = []

    def register_provider(self, provider: object, *, owner: str = HOST) -> Handle:
        """Register a source: Hermes refuses a bad name, another contract version, a shape
        other than ``mapped``/``bulk``, a name or a scheme another plugin holds.

        :raises RegistrationError: saying which.
        """
        if isinstance(provider, SecretSource):
            name = provider.name
            who = f"secret source {type(provider).__name__} from plugin {owner!r}"
            if not isinstance(name, str) or not _NAME.match(name):
                raise RegistrationError(
                    f"{who} is refused: its name must be lower case letters, digits and '_' "
                    f"(the section under secrets:), found {name!r}"
                )
            if provider.api_version != SECRET_SOURCE_API_VERSION:
                raise RegistrationError(
                    f"{who} is refused: built against secret-source API "
                    f"v{provider.api_version}, this host speaks v{SECRET_SOURCE_API_VERSION}"
                )
            if provider.shape not in ("mapped", "bulk"):
                raise RegistrationError(
                    f"{who} is refused: shape must be 'mapped' or 'bulk', found {provider.shape!r}"
                )
            holder = self.owner_of(name)
            if holder is not None and holder != owner:
                raise RegistrationError(
                    f"{who} is refused: a secret source {name!r} is registered already by "
                    f"{holder!r}"
                )
            for other in self.list_providers():
                if other.name != name and provider.scheme and other.scheme == provider.scheme:
                    raise RegistrationError(
                        f"{who} is refused: scheme '{provider.scheme}://' is owned by source "
                        f"{other.name!r}"
                    )
            if name not in self._order:
                self._order.append(name)
        return super().register_provider(provider, owner=owner)

    def in_registration_order(self) -> list[SecretSource]:
        """The sources, in the order they were first registered (Hermes' default order)."""
        rank = {name: index for index, name in enumerate(self._order)}
        return sorted(self.list_providers(), key=lambda s: rank.get(s.name, len(rank)))


SECRET_SOURCES: Final[Family[SecretSource]] = Family(
    name="secret_sources",
    title="secret source",
    provider_type=SecretSource,
    selections=(Selection("secrets.sources"),),
    ctx_method="register_secret_source",
    provider_kind="secret source",
    registry_class=SecretSourceRegistry,
    read_settings=SecretSettings.read,
    default_timeout=DEFAULT_FETCH_TIMEOUT_SECONDS,
)
"""The secret-source family."""


@attrs.define
class SourceReport:
    """One source's part in an apply."""

    name: str
    result: FetchResult
    applied: list[str] = attrs.Factory(list)
    skipped_existing: list[str] = attrs.Factory(list)
    skipped_claimed: list[str] = attrs.Factory(list)
    skipped_protected: list[str] = attrs.Factory(list)
    skipped_invalid: list[str] = attrs.Factory(list)


@attrs.define
class ApplyReport:
    """What one apply did: each source's report, who set each variable, the conflicts."""

    sources: list[SourceReport] = attrs.Factory(list)
    provenance: dict[str, str] = attrs.Factory(dict)
    conflicts: list[str] = attrs.Factory(list)
    error: str | None = None


def _fetch(
    source: SecretSource, cfg: dict[str, Any], home: Path, environ: MutableMapping[str, str]
) -> Any:
    token = _SOURCE_ENVIRONMENT.set(environ)
    try:
        return source.fetch(cfg, home)
    finally:
        _SOURCE_ENVIRONMENT.reset(token)


def _fetch_bounded(
    registry: SecretSourceRegistry,
    source: SecretSource,
    cfg: dict[str, Any],
    home: Path,
    environ: MutableMapping[str, str],
) -> FetchResult:
    try:
        timeout = float(source.fetch_timeout_seconds(cfg))
    except Exception:
        timeout = DEFAULT_FETCH_TIMEOUT_SECONDS
    bound = functools.partial(_fetch, source, cfg, home, environ)
    try:
        result = call_provider(
            SECRET_SOURCES,
            source,
            "fetch",
            timeout=timeout,
            registry=registry,
            check_available=False,
            on=types.SimpleNamespace(fetch=bound),
        )
    except HermesHooksError as exc:
        kind = ErrorKind.TIMEOUT if "did not answer" in str(exc) else ErrorKind.INTERNAL
        return FetchResult().fail(str(exc), kind)
    if not isinstance(result, FetchResult):
        return FetchResult().fail(
            f"secret source {source.name!r}: fetch() returned {type(result).__name__} "
            "instead of FetchResult"
        )
    return result


def _section(section: Mapping[str, Any], name: str) -> dict[str, Any]:
    found = section.get(name)
    return dict(found) if isinstance(found, Mapping) else {}


def apply_secret_sources(
    pm: PluginManager, environ: MutableMapping[str, str] | None = None
) -> ApplyReport:
    """Fetch every enabled source of ``pm`` and apply the results to ``environ``
    (``os.environ`` by default), as the module's docstring says. Never raises."""
    import os

    env = os.environ if environ is None else environ
    report = ApplyReport()
    registry = SECRET_SOURCES.registry(pm)
    if not isinstance(registry, SecretSourceRegistry) or not registry.has_providers():
        return report
    try:
        settings = registry.settings()
    except HermesHooksError as exc:
        report.error = str(exc)
        return report
    assert isinstance(settings, SecretSettings)
    sources = {s.name: s for s in registry.in_registration_order()}
    order = [n for n in settings.sources if n in sources] + list(sources)
    enabled: list[SecretSource] = []
    for name in dict.fromkeys(order):
        try:
            if sources[name].is_enabled(_section(settings.section, name)):
                enabled.append(sources[name])
        except Exception as exc:
            report.conflicts.append(f"secret source {name!r}: is_enabled() raised {exc!r}")
    enabled.sort(key=lambda s: 0 if s.shape == "mapped" else 1)  # stable: order kept within
    protected: set[str] = set()
    for source in enabled:
        try:
            protected |= set(source.protected_env_vars(_section(settings.section, source.name)))
        except Exception:
            continue
    pinned = settings.section.get("preserve_existing")
    preserve = {n for n in pinned if isinstance(n, str)} if isinstance(pinned, list) else set()
    claimed: dict[str, str] = {}
    home = registry.config_home()
    for source in enabled:
        cfg = _section(settings.section, source.name)
        result = _fetch_bounded(registry, source, cfg, home, env)
        part = SourceReport(source.name, result)
        report.sources.append(part)
        if not result.ok:
            continue
        try:
            override = bool(source.override_existing(cfg))
        except Exception:
            override = False
        supplied: dict[Any, Any] = result.secrets  # a plugin's: checked item by item
        for var, value in supplied.items():
            if not isinstance(var, str) or not isinstance(value, str):
                continue
            if not is_valid_env_name(var):
                part.skipped_invalid.append(var)
            elif var in protected:
                part.skipped_protected.append(var)
            elif var in claimed:
                part.skipped_claimed.append(var)
                report.conflicts.append(
                    f"{var}: kept the value from {claimed[var]}; {source.name} supplies it too "
                    "(the first source wins: remove one binding or reorder secrets.sources)"
                )
            elif env.get(var) and (not override or var in preserve):
                part.skipped_existing.append(var)
            else:
                env[var] = value
                claimed[var] = source.name
                part.applied.append(var)
                report.provenance[var] = source.name
    return report
