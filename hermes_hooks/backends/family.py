"""One mechanism for every provider family: declared once, registered, chosen by config.

A *family* is a kind of backend that plugins provide and config chooses: image and video
generation, web search, browsers and the model providers (memory and context engines are not
families yet). Each is one :class:`Family` value, which declares:

- its names: ``name`` (``image_gen``: ``pm.image_gen``, the extension point, messages),
  ``cli_name`` (``image-gen``: ``hermes tools image-gen``) and ``title`` for people;
- its ABC (``provider_type``): a registration of anything else is refused;
- its selection keys (:class:`Selection`: ``image_gen.provider``; web search has
  ``web.backend`` and ``web.extract_backend``), with what is chosen when a key is unset;
- the ``ctx.register_<family>_provider`` method it adds to ``PluginContext``, and any further
  ``ctx`` attributes (the models family serves ``ctx.llm``);
- the host tools it installs on every manager (``image_generate``) and its
  ``hermes tools <family>`` section (:mod:`hermes_hooks.backends.listing`).

Each manager has one :class:`ProviderRegistry` per family (``pm.image_gen``). Providers follow
Hermes' *last writer wins* through the registries' one ownership policy
(:class:`~hermes_hooks.registries.base.Registry`): registering a taken name displaces the
provider there (a user plugin overriding a bundled one), and unloading the plugin brings it
back. The families are listed at the plugin layer's extension point
(:mod:`hermes_hooks.plugins.extensions`) by the composition root.
"""

from __future__ import annotations

import difflib
import logging
import weakref
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Generic, Protocol, TypeVar

import attrs

from hermes_hooks.errors import HermesHooksError, RegistrationError
from hermes_hooks.plugins.config import get_hermes_home, load_config
from hermes_hooks.plugins.settings import keys_of, read_mapping
from hermes_hooks.registries.base import HOST, Handle, Registry, describe_owner

if TYPE_CHECKING:
    from hermes_hooks.plugins.manager import PluginManager

__all__ = [
    "Family",
    "FamilyError",
    "FamilySettings",
    "NoProviderError",
    "ProviderChoiceError",
    "ProviderNotRegisteredError",
    "ProviderRegistry",
    "Selection",
    "SettingsLike",
    "is_available_safe",
]

logger = logging.getLogger(__name__)

P = TypeVar("P")


class FamilyError(HermesHooksError):
    """No provider of a family can serve a call; :attr:`error_type` names the reason."""

    error_type = "provider_error"


class ProviderNotRegisteredError(FamilyError):
    """A selection key names a provider that no loaded plugin registered."""

    error_type = "provider_not_registered"


class NoProviderError(FamilyError):
    """A selection key is unset and no provider can be chosen for it."""

    error_type = "no_provider"


class ProviderChoiceError(FamilyError):
    """``hermes tools <family> --provider NAME`` names no provider, or a model it lacks."""

    error_type = "invalid_choice"


@attrs.frozen
class Selection:
    """One config key that chooses a family's provider.

    :param key: the dotted key, ``section.field`` (``image_gen.provider``).
    :param default: the provider chosen when the key is unset and several are available.
    :param accepts: which providers may serve this key (``supports_extract`` for
        ``web.extract_backend``); every provider when ``None``.
    :param override: a key read *before* this one, in the same section (Hermes'
        ``web.search_backend`` over ``web.backend``).
    :param fallback: a key read when this one and ``override`` are unset (``web.backend`` for
        ``web.extract_backend``); a provider it names that this selection does not accept is
        passed over, as Hermes does, instead of being an error.
    :param cli_option: the ``hermes tools <family>`` option that writes this key; the first
        selection's is always ``--provider``.
    :param serves: what this key chooses the provider of, for people (``web_extract``).
    """

    key: str
    default: str | None = None
    accepts: Callable[[Any], bool] | None = None
    override: str | None = None
    fallback: str | None = None
    cli_option: str | None = None
    serves: str | None = None

    @property
    def section(self) -> str:
        """The config section: ``image_gen``."""
        return self.key.partition(".")[0]

    @property
    def field(self) -> str:
        """The field in the section: ``provider``."""
        return self.key.partition(".")[2]

    def read_order(self) -> tuple[tuple[Selection, bool], ...]:
        """Return the keys read for this selection, in order, each with whether it is the
        fallback (whose names this selection may pass over)."""
        found: list[tuple[Selection, bool]] = []
        if self.override:
            found.append((Selection(self.override), False))
        found.append((Selection(self.key), False))
        if self.fallback:
            found.append((Selection(self.fallback), True))
        return tuple(found)

    def accepts_provider(self, provider: object) -> bool:
        """Tell whether ``provider`` may serve this selection (a raising check means no)."""
        if self.accepts is None:
            return True
        try:
            return bool(self.accepts(provider))
        except Exception as exc:
            logger.debug("provider %r: the check of %s raised %r", provider, self.key, exc)
            return False


class SettingsLike(Protocol):
    """What a family's settings give: the configured name for each selection, and a model."""

    @property
    def model(self) -> str | None: ...

    def choice(self, selection: Selection) -> str | None:
        """Return the provider ``selection``'s key names, or ``None`` when it is unset."""
        ...


@attrs.frozen
class FamilySettings:
    """A family's config section, read for its selection keys and its model key.

    :param chosen: each selection field (``provider``) with its stripped value, or ``None``.
    :param model: the model field's value, when the family has one.
    :param section: the whole section, for provider-specific keys.
    """

    chosen: Mapping[str, str | None] = attrs.field(factory=dict)
    model: str | None = None
    section: Mapping[str, Any] = attrs.field(factory=dict)

    def choice(self, selection: Selection) -> str | None:
        """Return the provider ``selection``'s key names, or ``None`` when it is unset."""
        return self.chosen.get(selection.field)

    @classmethod
    def from_config(
        cls, family: Family[Any], config: Mapping[str, Any], source: Path | None = None
    ) -> FamilySettings:
        """Read ``family``'s section of a whole config mapping.

        :raises ConfigError: the section is not a mapping, or a selection or model field is
            not a string.
        """
        section = config.get(family.section)
        if section is None:
            return cls()
        read, _ = read_mapping(
            keys_of(family.section, family.setting_fields, defaults=False), section, source=source
        )
        assert isinstance(section, Mapping)  # read_mapping refuses anything else
        values: dict[str, str | None] = {
            field: (raw.strip() or None) if isinstance(raw, str) else None
            for field, raw in read.items()
        }
        model = values.pop(family.model_field, None) if family.model_field else None
        return cls(chosen=values, model=model, section=dict(section))


def is_available_safe(provider: object) -> bool:
    """Return ``provider.is_available()``, treating a raising provider as unavailable.

    A provider without ``is_available`` (a context engine: Hermes' ABC has none) is available.
    """
    method = getattr(provider, "is_available", None)
    if method is None:
        return True
    try:
        return bool(method())
    except Exception as exc:
        logger.debug("provider %r: is_available() raised %r", provider, exc)
        return False


@attrs.frozen(kw_only=True)
class Family(Generic[P]):
    """The declaration of one provider family (see the module's docstring).

    :param name: the identifier: ``pm.<name>``, the extension point's name, messages.
    :param title: for people: ``image generation``.
    :param provider_type: the ABC every provider is an instance of.
    :param selections: the config keys that choose providers; the first is the main one.
    :param model_key: the config key of the model the chosen provider runs, if any.
    :param cli_name: the ``hermes tools <cli_name>`` section, or ``None`` for none.
    :param cli_examples: arguments of that command shown as examples in its help.
    :param ctx_method: the ``PluginContext`` method registering a provider, or ``None``.
    :param context_attributes: further ``ctx`` attributes, each built from (manager, key).
    :param provider_kind: how one provider is named in messages: ``image provider``.
    :param registry_class: the registry each manager gets, a :class:`ProviderRegistry`.
    :param read_settings: builds the settings from (config, its path); by default
        :meth:`FamilySettings.from_config`.
    :param install_tools: registers the family's host tools on a manager.
    :param tool_names: the tools the chosen provider serves (``image_generate``).
    :param none_registered_hint: added to the "no provider is registered" error.
    :param describe_extra: more of a provider for ``hermes tools <family> --json``.
    :param detail_lines: more lines of a listed provider (from its described dict).
    :param plugin_kind: the plugin kind this family serves instead of ``plugins.enabled``
        (memory: ``exclusive``; model-provider profiles: ``model-provider``): such a plugin
        loads when the main selection key names it.
    :param categories: the category folders whose plugins belong to this family
        (``image_gen`` for ``image_gen/openai``): ``hermes tools <family>`` lists such a
        plugin from its manifest while it is not loaded (a ``requires_env`` unset, say).
    :param manifest_field: the manifest field listing the providers a plugin offers
        (``provides_web_providers``): such a plugin belongs to this family wherever it sits.
    :param timeout_key: the config key bounding each call of a provider (``image_gen.timeout``).
    :param default_timeout: the bound when that key is unset, in seconds (0: unbounded).
    :param reserved_names: provider names a plugin may not take (lower case), because the
        host has engines of those names (Hermes' built-in speech engines).
    :param reserved_what: what a reserved name is, for the refusal: ``a built-in
        text-to-speech engine of Hermes``.
    """

    name: str
    title: str
    provider_type: type  # type[P] refuses an abstract class (mypy's type-abstract)
    selections: tuple[Selection, ...]
    model_key: str | None = None
    cli_name: str | None = None
    cli_examples: tuple[str, ...] = ()
    ctx_method: str | None = None
    context_attributes: Mapping[str, Callable[[Any, str], object]] = attrs.field(factory=dict)
    provider_kind: str = ""
    registry_class: type[ProviderRegistry[P]] | None = None
    read_settings: Callable[[Mapping[str, Any], Path | None], SettingsLike] | None = None
    install_tools: Callable[[PluginManager, ProviderRegistry[P]], object] | None = None
    tool_names: tuple[str, ...] = ()
    none_registered_hint: str = ""
    describe_extra: Callable[[P], Mapping[str, Any]] | None = None
    detail_lines: Callable[[Mapping[str, Any]], list[str]] | None = None
    plugin_kind: str | None = None
    categories: tuple[str, ...] = ()
    manifest_field: str | None = None
    timeout_key: str | None = None
    default_timeout: float = 60.0
    reserved_names: frozenset[str] = frozenset()
    reserved_what: str = "a name the host keeps for itself"

    @property
    def section(self) -> str:
        """The config section of the main selection key (``image_gen``, ``model``)."""
        return self.selections[0].section

    @property
    def kind(self) -> str:
        """How one provider is named in messages."""
        return self.provider_kind or f"{self.name} provider"

    @property
    def model_field(self) -> str | None:
        """The field of :attr:`model_key` in the section, or ``None``."""
        return self.model_key.partition(".")[2] if self.model_key else None

    @property
    def setting_fields(self) -> tuple[str, ...]:
        """The fields of the section that selection and model keys name."""
        fields: list[str] = []
        for selection in self.selections:
            for read, _ in selection.read_order():
                if read.section == self.section and read.field not in fields:
                    fields.append(read.field)
        if self.model_field:
            fields.append(self.model_field)
        return tuple(fields)

    def settings_from(self, config: Mapping[str, Any], source: Path | None = None) -> SettingsLike:
        """Read this family's settings from a whole config mapping."""
        if self.read_settings is not None:
            return self.read_settings(config, source)
        return FamilySettings.from_config(self, config, source)

    @property
    def selection_key(self) -> str:
        """The main selection key (``image_gen.provider``)."""
        return self.selections[0].key

    def selected_name(self, config: Mapping[str, Any]) -> str | None:
        """Return the provider name the main selection key holds in ``config``, or ``None``.

        :raises ConfigError: the family's section is malformed.
        """
        return self.settings_from(config).choice(self.selections[0])

    # -- what the plugin layer's extension point asks of a family ------------------------------

    def create_registry(self, manager: Any) -> ProviderRegistry[P]:
        """Return a new registry of this family's providers for ``manager``."""
        registry = (
            ProviderRegistry(self, manager.hermes_home)
            if self.registry_class is None
            else self.registry_class(manager.hermes_home)
        )
        registry.attach(manager)
        return registry

    def install(self, manager: PluginManager, registry: ProviderRegistry[P]) -> None:
        """Register this family's host tools on ``manager``."""
        if self.install_tools is not None:
            self.install_tools(manager, registry)

    def registry(self, manager: PluginManager) -> ProviderRegistry[P]:
        """Return ``manager``'s registry of this family (``pm.<name>``), typed."""
        found: ProviderRegistry[P] = manager.backend(self.name)
        return found

    def list_hint(self) -> str:
        """Return how people list the providers, for messages."""
        if self.cli_name is None:
            return "run 'hermes plugins list --all' to see the plugins"
        return f"run 'hermes tools {self.cli_name}' to list the providers"

    def choose_hint(self) -> str:
        """Return how people choose a provider, for messages."""
        if self.cli_name is None:
            return f"set {self.selections[0].key} in config.yaml"
        return f"'hermes tools {self.cli_name} --provider NAME'"


class ProviderRegistry(Generic[P]):
    """One manager's providers of one family, by name, with owners; the last writer wins.

    :param family: the family the providers belong to.
    :param home: the Hermes home whose ``config.yaml`` chooses the active provider;
        ``$HERMES_HOME`` (read at each call) when ``None``.
    """

    def __init__(self, family: Family[P], home: Path | None = None) -> None:
        self.family = family
        self.home = home
        self._registry: Registry[P] = Registry(
            family.kind, normalize=str.strip, last_writer_wins=True
        )
        self._manager: weakref.ref[Any] | None = None
        self._warned: set[tuple[str, str]] = set()

    def attach(self, manager: object) -> None:
        """Know the manager whose plugins register here (for names of plugins not loaded)."""
        self._manager = weakref.ref(manager)

    @property
    def manager(self) -> PluginManager | None:
        """The manager this registry belongs to, or ``None`` (a registry of its own)."""
        found: PluginManager | None = self._manager() if self._manager is not None else None
        return found

    def __len__(self) -> int:
        return len(self._registry)

    def __contains__(self, name: object) -> bool:
        return name in self._registry

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self._registry.names()}>"

    def set_acting_plugins(self, lookup: Callable[[], frozenset[str]] | None) -> None:
        """Let plugin code register only as itself (see ``Registry.set_acting_plugins``)."""
        self._registry.set_acting_plugins(lookup)

    # -- writing ------------------------------------------------------------------------------

    def register_provider(self, provider: object, *, owner: str = HOST) -> Handle:
        """Register ``provider`` for ``owner``; an earlier provider of the same name is replaced.

        :returns: a handle whose ``unregister()`` removes this registration and restores the
            one it replaced.
        :raises RegistrationError: ``provider`` is not an instance of the family's ABC, or its
            ``name`` is not a non-empty string without spaces.
        """
        family = self.family
        who = describe_owner(owner)
        expected = family.provider_type.__name__
        if not isinstance(provider, family.provider_type):
            hint = " (a class: pass an instance)" if isinstance(provider, type) else ""
            raise RegistrationError(
                f"{family.name} provider from {who} is refused: expected an {expected} "
                f"instance (from hermes_hooks), found {type(provider).__name__}{hint}"
            )
        try:
            raw = provider.name  # type: ignore[attr-defined]
        except Exception as exc:
            raise RegistrationError(
                f"{family.name} provider {type(provider).__name__} from {who} is refused: its "
                f"name property raised {type(exc).__name__}: {exc}"
            ) from exc
        if not isinstance(raw, str) or not raw.strip() or any(c.isspace() for c in raw.strip()):
            raise RegistrationError(
                f"{family.name} provider {type(provider).__name__} from {who} is refused: name "
                f"must be a non-empty string without spaces (used as "
                f"{family.selections[0].key}), found {raw!r}"
            )
        if raw.strip().lower() in family.reserved_names:
            raise RegistrationError(
                f"{family.kind} {raw!r} from plugin {owner!r} is refused: that is the name of "
                f"{family.reserved_what} ({', '.join(sorted(family.reserved_names))}); "
                f"choose another name"
            )
        previous = self._registry.owner_of(raw)
        if previous is not None:
            logger.debug(
                "%s provider %r from %s replaces the one from %s",
                family.name,
                raw.strip(),
                who,
                describe_owner(previous),
            )
        accepted: P = provider  # type: ignore[assignment]  # checked against provider_type
        return self._registry.register(raw, accepted, owner=owner)

    def remove_owner(self, owner: str) -> list[str]:
        """Remove every provider ``owner`` registered, restoring what they replaced."""
        return self._registry.remove_owner(owner)

    # -- reading ------------------------------------------------------------------------------

    def get_provider(self, name: object) -> P | None:
        """Return the provider registered last under ``name``, or ``None``."""
        return self._registry.get(name) if isinstance(name, str) else None

    def owner_of(self, name: object) -> str | None:
        """Return who registered the active provider ``name``, or ``None``."""
        return self._registry.owner_of(name) if isinstance(name, str) else None

    def names(self, *, owner: str | None = None) -> list[str]:
        """Return the registered provider names, sorted; only those ``owner`` registered."""
        return self._registry.names(owner=owner)

    def list_providers(self) -> list[P]:
        """Return the active provider of every name, sorted by name."""
        return [entry.value for entry in self._registry.entries()]

    def has_providers(self) -> bool:
        """Return whether any provider is registered (the family's tools check it)."""
        return len(self._registry) > 0

    # -- choosing -----------------------------------------------------------------------------

    def config_home(self) -> Path:
        """Return the home whose ``config.yaml`` chooses: this registry's, else ``$HERMES_HOME``."""
        return self.home if self.home is not None else get_hermes_home()

    def settings(self) -> Any:
        """Read the family's settings from this registry's home now.

        :raises ConfigError: ``config.yaml`` is unreadable or the section is malformed.
        """
        home = self.config_home()
        return self.family.settings_from(load_config(home), home / "config.yaml")

    def select_provider(
        self, settings: SettingsLike | None = None, *, selection: Selection | None = None
    ) -> P:
        """Return the provider that serves ``selection`` (the family's first by default).

        Its key's value when set and registered, even if that provider is not available (the
        tool then says why it is not); the value may also be the manifest name of the plugin
        that registered it. The selection's ``override`` key is read first and its
        ``fallback`` last. When all are unset: the single available provider, else the
        selection's default when it is available.

        :raises ProviderNotRegisteredError: the key names no registered provider; another
            backend is never chosen silently instead.
        :raises NoProviderError: unset, and no provider (or several) can be chosen.
        :raises ConfigError: ``config.yaml`` cannot be read.
        """
        family = self.family
        chosen_by = selection if selection is not None else family.selections[0]
        settings = settings if settings is not None else self.settings()
        providers = {
            entry.name: entry.value
            for entry in self._registry.entries()
            if chosen_by.accepts_provider(entry.value)
        }
        for read, is_fallback in chosen_by.read_order():
            configured = settings.choice(read)
            if configured is None:
                continue
            found = providers.get(configured)
            if found is None:
                found = self._provider_of_plugin(configured, read.key, providers)
            if found is not None:
                return found
            if is_fallback and self._is_known_elsewhere(configured):
                break  # a provider of another capability (search only): passed over
            raise self._unregistered_error(read.key, configured, providers)
        available = sorted(name for name, p in providers.items() if is_available_safe(p))
        if len(available) == 1:
            return providers[available[0]]
        if chosen_by.default is not None and chosen_by.default in available:
            return providers[chosen_by.default]
        if not providers:
            raise NoProviderError(
                f"no {family.title} provider is registered: enable {_article(family.name)} "
                f"{family.name} plugin ('hermes plugins list --all' shows them"
                f"{family.none_registered_hint}) or install one, then choose it with "
                f"{family.choose_hint()}"
            )
        if not available:
            raise NoProviderError(
                f"no {family.title} provider is available (registered: "
                f"{', '.join(sorted(providers))}); {family.list_hint()} with what each one "
                f"needs, or set {chosen_by.key} with {family.choose_hint()}"
            )
        raise NoProviderError(
            f"several {family.title} providers are available ({', '.join(available)}) and "
            f"{chosen_by.key} is not set; choose one with {family.choose_hint()}"
        )

    def _matching_plugins(self, name: str) -> list[Any]:
        """Return the discovered plugins ``name`` may stand for (key, folder, manifest name)."""
        manager = self.manager
        if manager is None:
            return []
        return [
            info
            for info in manager.list_plugins()
            if name in {info.key, info.key.rsplit("/", 1)[-1], info.name, *info.aliases}
        ]

    def _provider_of_plugin(
        self, configured: str, key: str, providers: Mapping[str, P]
    ) -> P | None:
        """Return the one provider of the loaded plugin named ``configured``, if it has one.

        A selection key may hold a plugin's manifest name (``hermes tools <family> --provider
        NAME`` writes it for a plugin not loaded yet); when the provider the plugin registered
        has another ``name``, that one serves, with a warning (once).
        """
        for info in self._matching_plugins(configured):
            if info.status != "enabled":
                continue
            own = [n for n in self._registry.names(owner=info.key) if n in providers]
            if len(own) != 1:
                continue
            name = own[0]
            if (configured, name) not in self._warned:
                self._warned.add((configured, name))
                logger.warning(
                    "%s names plugin %r, whose %s is named %r: it serves; set %s: %s to "
                    "name the provider itself",
                    key,
                    info.key,
                    self.family.kind,
                    name,
                    key,
                    name,
                )
            return providers[name]
        return None

    def _is_known_elsewhere(self, name: str) -> bool:
        """Tell whether ``name`` is a registered provider (or its plugin's name) at all."""
        if name in self._registry:
            return True
        return any(self._registry.names(owner=info.key) for info in self._matching_plugins(name))

    def _unregistered_error(
        self, key: str, configured: str, providers: Mapping[str, P]
    ) -> ProviderNotRegisteredError:
        family = self.family
        close = difflib.get_close_matches(configured, list(providers), n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
        known = ", ".join(sorted(providers)) or "none"
        why = ""
        for info in self._matching_plugins(configured):
            if info.status != "enabled":
                detail = info.error or info.reason or info.status
                why = f"; its plugin {info.key!r} is {info.status}: {detail}"
                break
        return ProviderNotRegisteredError(
            f"{key} is {configured!r}, but no loaded plugin registered "
            f"{_article(family.kind)} {family.kind} of that name{hint}{why} (registered: "
            f"{known}); {family.list_hint()}, {family.choose_hint()} to choose one, and "
            f"'hermes plugins list --all' to see whether its plugin is enabled"
        )

    def get_active_provider(self, *, selection: Selection | None = None) -> P | None:
        """Return the active provider as :meth:`select_provider` chooses it, or ``None``.

        Hermes' ``get_active_provider()``; never raises.
        """
        try:
            return self.select_provider(selection=selection)
        except HermesHooksError as exc:
            logger.debug("no active %s provider: %s", self.family.name, exc)
            return None


_VOWELS: Final = frozenset("aeiou")


def _article(word: str) -> str:
    return "an" if word[:1].lower() in _VOWELS else "a"
