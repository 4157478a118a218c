"""The image generation provider registry and the choice of the active provider.

One registry per :class:`~hermes_hooks.plugins.manager.PluginManager` (``pm.image_gen``). Unlike
tools, providers follow Hermes' *last writer wins*: registering a provider under a name that is
taken replaces the earlier one (a user plugin overriding the bundled ``openai``, say), and
removing the newer registration brings the earlier one back.

The active provider comes from ``image_gen.provider`` in ``config.yaml``, read at each call so
that ``hermes tools image-gen --provider NAME`` takes effect in a running host.
"""

from __future__ import annotations

import difflib
import logging
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

import attrs

from hermes_hooks.backends.image_gen.provider import ImageGenProvider
from hermes_hooks.errors import ConfigError, HermesHooksError, RegistrationError
from hermes_hooks.plugins.config import get_hermes_home, load_config
from hermes_hooks.registries.base import HOST, Handle, describe_owner

__all__ = [
    "DEFAULT_PROVIDER",
    "ImageGenError",
    "ImageGenRegistry",
    "ImageGenSettings",
    "NoImageProviderError",
    "ProviderNotRegisteredError",
    "is_available_safe",
    "load_image_gen_section",
]

logger = logging.getLogger(__name__)

DEFAULT_PROVIDER: Final = "local"
"""Chosen when ``image_gen.provider`` is unset and more than one provider is available."""
LIST_HINT: Final = "run 'hermes tools image-gen' to list the providers"


class ImageGenError(HermesHooksError):
    """No provider can serve ``image_generate``; :attr:`error_type` names the reason."""

    error_type = "provider_error"


class ProviderNotRegisteredError(ImageGenError):
    """``image_gen.provider`` names a provider that no loaded plugin registered."""

    error_type = "provider_not_registered"


class NoImageProviderError(ImageGenError):
    """``image_gen.provider`` is unset and no provider can be chosen for it."""

    error_type = "no_provider"


@attrs.frozen
class ImageGenSettings:
    """The ``image_gen`` section of ``config.yaml``.

    :param provider: ``image_gen.provider``, stripped; ``None`` when unset or blank.
    :param model: ``image_gen.model``, stripped; ``None`` when unset or blank.
    :param section: the whole section, for provider-specific keys (``image_gen.comfyui.url``).
    """

    provider: str | None = None
    model: str | None = None
    section: Mapping[str, Any] = attrs.field(factory=dict)

    @classmethod
    def from_config(cls, config: Mapping[str, Any], source: Path | None = None) -> ImageGenSettings:
        """Build from a whole config mapping.

        :raises ConfigError: ``image_gen`` is not a mapping, or ``provider``/``model`` is not a
            string.
        """
        where = f"{source}: " if source is not None else ""
        section = config.get("image_gen")
        if section is None:
            return cls()
        if not isinstance(section, Mapping):
            raise ConfigError(
                f"{where}image_gen must be a mapping (provider, model, ...), "
                f"found {type(section).__name__}"
            )
        values: dict[str, str | None] = {}
        for key in ("provider", "model"):
            raw = section.get(key)
            if raw is not None and not isinstance(raw, str):
                raise ConfigError(
                    f"{where}image_gen.{key} must be a string, found {type(raw).__name__} {raw!r}"
                )
            values[key] = (raw.strip() or None) if isinstance(raw, str) else None
        return cls(provider=values["provider"], model=values["model"], section=dict(section))

    @classmethod
    def from_home(cls, home: Path) -> ImageGenSettings:
        """Read ``<home>/config.yaml``; a missing file gives empty settings.

        :raises ConfigError: the file cannot be read or the section has the wrong types.
        """
        return cls.from_config(load_config(home), source=home / "config.yaml")


def load_image_gen_section(home: Path, provider: str | None = None) -> dict[str, Any]:
    """Return ``image_gen`` (or its ``image_gen.<provider>`` sub-section) from ``config.yaml``.

    For providers reading their own keys, such as ``image_gen.comfyui.url``. A missing section
    gives ``{}``.

    :raises ConfigError: ``config.yaml`` cannot be read, or the section is not a mapping.
    """
    section = dict(ImageGenSettings.from_home(home).section)
    if provider is None:
        return section
    sub = section.get(provider)
    if sub is None:
        return {}
    if not isinstance(sub, Mapping):
        raise ConfigError(
            f"{home / 'config.yaml'}: image_gen.{provider} must be a mapping, "
            f"found {type(sub).__name__}"
        )
    return dict(sub)


def is_available_safe(provider: ImageGenProvider) -> bool:
    """Return ``provider.is_available()``, treating a raising provider as unavailable."""
    try:
        return bool(provider.is_available())
    except Exception as exc:
        logger.debug("image_gen provider %r: is_available() raised %r", provider, exc)
        return False


@attrs.frozen(eq=False)
class _Slot:
    provider: ImageGenProvider
    owner: str


class ImageGenRegistry:
    """Image generation providers by name, with owners; the last registration of a name wins.

    :param home: the Hermes home whose ``config.yaml`` chooses the active provider;
        ``$HERMES_HOME`` (read at each call) when ``None``.
    """

    def __init__(self, home: Path | None = None) -> None:
        self.home = home
        # Per name, every live registration, oldest first: the last one is the active entry.
        self._slots: dict[str, list[_Slot]] = {}
        self._lock = threading.RLock()

    def __len__(self) -> int:
        return len(self._slots)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.strip() in self._slots

    def __repr__(self) -> str:
        return f"<ImageGenRegistry {sorted(self._slots)}>"

    # -- writing ------------------------------------------------------------------------------

    def register_provider(self, provider: object, *, owner: str = HOST) -> Handle:
        """Register ``provider`` for ``owner``; an earlier provider of the same name is replaced.

        :returns: a handle whose ``unregister()`` removes this registration and restores the
            one it replaced.
        :raises RegistrationError: ``provider`` is not an :class:`ImageGenProvider` instance,
            or its ``name`` is not a non-empty string without spaces.
        """
        who = describe_owner(owner)
        if not isinstance(provider, ImageGenProvider):
            hint = " (a class: pass an instance)" if isinstance(provider, type) else ""
            raise RegistrationError(
                f"image_gen provider from {who} is refused: expected an ImageGenProvider "
                f"instance (from hermes_hooks), found {type(provider).__name__}{hint}"
            )
        try:
            raw = provider.name
        except Exception as exc:
            raise RegistrationError(
                f"image_gen provider {type(provider).__name__} from {who} is refused: its "
                f"name property raised {type(exc).__name__}: {exc}"
            ) from exc
        if not isinstance(raw, str) or not raw.strip() or any(c.isspace() for c in raw.strip()):
            raise RegistrationError(
                f"image_gen provider {type(provider).__name__} from {who} is refused: name "
                f"must be a non-empty string without spaces (used as image_gen.provider), "
                f"found {raw!r}"
            )
        name = raw.strip()
        slot = _Slot(provider, owner)
        with self._lock:
            stack = self._slots.setdefault(name, [])
            if stack:
                logger.debug(
                    "image_gen provider %r from %s replaces the one from %s",
                    name,
                    who,
                    describe_owner(stack[-1].owner),
                )
            stack.append(slot)
        return Handle(lambda: self._remove(name, slot), name, owner, "image_gen provider")

    def _remove(self, name: str, slot: _Slot) -> None:
        with self._lock:
            stack = self._slots.get(name, [])
            if slot in stack:
                stack.remove(slot)
            if not stack:
                self._slots.pop(name, None)

    def remove_owner(self, owner: str) -> list[str]:
        """Remove every provider ``owner`` registered, restoring what they replaced."""
        removed: set[str] = set()
        with self._lock:
            for name, stack in list(self._slots.items()):
                kept = [s for s in stack if s.owner != owner]
                if len(kept) != len(stack):
                    removed.add(name)
                if kept:
                    self._slots[name] = kept
                else:
                    del self._slots[name]
        return sorted(removed)

    # -- reading ------------------------------------------------------------------------------

    def get_provider(self, name: object) -> ImageGenProvider | None:
        """Return the provider registered last under ``name``, or ``None``."""
        if not isinstance(name, str):
            return None
        with self._lock:
            stack = self._slots.get(name.strip())
            return stack[-1].provider if stack else None

    def owner_of(self, name: object) -> str | None:
        """Return who registered the active provider ``name``, or ``None``."""
        with self._lock:
            stack = self._slots.get(name.strip()) if isinstance(name, str) else None
            return stack[-1].owner if stack else None

    def names(self, *, owner: str | None = None) -> list[str]:
        """Return the registered provider names, sorted; only those ``owner`` registered."""
        with self._lock:
            return sorted(
                name
                for name, stack in self._slots.items()
                if owner is None or any(s.owner == owner for s in stack)
            )

    def list_providers(self) -> list[ImageGenProvider]:
        """Return the active provider of every name, sorted by name."""
        with self._lock:
            return [self._slots[name][-1].provider for name in sorted(self._slots)]

    def has_providers(self) -> bool:
        """Return whether any provider is registered (the ``image_generate`` check)."""
        return bool(self._slots)

    # -- choosing -----------------------------------------------------------------------------

    def settings(self) -> ImageGenSettings:
        """Read the ``image_gen`` section of this registry's home now.

        :raises ConfigError: ``config.yaml`` is unreadable or the section is malformed.
        """
        return ImageGenSettings.from_home(self.home if self.home is not None else get_hermes_home())

    def select_provider(self, settings: ImageGenSettings | None = None) -> ImageGenProvider:
        """Return the provider that serves ``image_generate``.

        ``image_gen.provider`` when set and registered, even if it is not available (so its own
        "key missing" error reaches the person); when unset, the single available provider,
        else :data:`DEFAULT_PROVIDER` when it is available.

        :raises ProviderNotRegisteredError: ``image_gen.provider`` names no registered provider;
            another backend is never chosen silently instead.
        :raises NoImageProviderError: unset, and no provider (or several) can be chosen.
        :raises ConfigError: ``config.yaml`` cannot be read.
        """
        settings = settings if settings is not None else self.settings()
        with self._lock:
            providers = {name: stack[-1].provider for name, stack in self._slots.items()}
        configured = settings.provider
        if configured is not None:
            chosen = providers.get(configured)
            if chosen is not None:
                return chosen
            close = difflib.get_close_matches(configured, list(providers), n=3, cutoff=0.6)
            hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
            known = ", ".join(sorted(providers)) or "none"
            raise ProviderNotRegisteredError(
                f"image_gen.provider is {configured!r}, but no loaded plugin registered an "
                f"image provider of that name{hint} (registered: {known}); {LIST_HINT}, "
                f"'hermes tools image-gen --provider NAME' to choose one, and 'hermes plugins "
                f"list --all' to see whether its plugin is enabled"
            )
        available = sorted(name for name, p in providers.items() if is_available_safe(p))
        if len(available) == 1:
            return providers[available[0]]
        if DEFAULT_PROVIDER in available:
            return providers[DEFAULT_PROVIDER]
        if not providers:
            raise NoImageProviderError(
                "no image generation provider is registered: enable an image_gen plugin "
                "('hermes plugins list --all' shows them; the bundled 'image_gen/local' needs "
                "no key) or install one, then choose it with 'hermes tools image-gen "
                "--provider NAME'"
            )
        if not available:
            raise NoImageProviderError(
                f"no image generation provider is available (registered: "
                f"{', '.join(sorted(providers))}); {LIST_HINT} with what each one needs, or "
                f"set image_gen.provider with 'hermes tools image-gen --provider NAME'"
            )
        raise NoImageProviderError(
            f"several image generation providers are available ({', '.join(available)}) and "
            f"image_gen.provider is not set; choose one with 'hermes tools image-gen "
            f"--provider NAME'"
        )

    def get_active_provider(self) -> ImageGenProvider | None:
        """Return the active provider as :meth:`select_provider` chooses it, or ``None``.

        Hermes' ``get_active_provider()``; never raises.
        """
        try:
            return self.select_provider()
        except HermesHooksError as exc:
            logger.debug("no active image_gen provider: %s", exc)
            return None
