"""The image generation provider registry and the choice of the active provider.

Image generation is a provider family (:mod:`hermes_hooks.backends.family`): :data:`IMAGE_GEN`
declares it, and each :class:`~hermes_hooks.plugins.manager.PluginManager` has one
:class:`ImageGenRegistry` (``pm.image_gen``). Unlike tools, providers follow Hermes' *last
writer wins*: registering a provider under a name that is taken replaces the earlier one (a
user plugin overriding the bundled ``openai``, say), and removing the newer registration brings
the earlier one back.

The active provider comes from ``image_gen.provider`` in ``config.yaml``, read at each call so
that ``hermes tools image-gen --provider NAME`` takes effect in a running host.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import attrs

from hermes_hooks.backends.family import (
    Family,
    FamilyError,
    FamilySettings,
    NoProviderError,
    ProviderNotRegisteredError,
    ProviderRegistry,
    Selection,
    is_available_safe,
)
from hermes_hooks.backends.image_gen.provider import ImageGenProvider
from hermes_hooks.errors import ConfigError
from hermes_hooks.plugins.config import load_config

if TYPE_CHECKING:
    from hermes_hooks.plugins.manager import PluginManager

__all__ = [
    "DEFAULT_PROVIDER",
    "IMAGE_GEN",
    "ImageGenError",
    "ImageGenRegistry",
    "ImageGenSettings",
    "NoImageProviderError",
    "ProviderNotRegisteredError",
    "is_available_safe",
    "load_image_gen_section",
]

DEFAULT_PROVIDER: Final = "local"
"""Chosen when ``image_gen.provider`` is unset and more than one provider is available."""
LIST_HINT: Final = "run 'hermes tools image-gen' to list the providers"


ImageGenError = FamilyError
"""No provider can serve ``image_generate``; :attr:`error_type` names the reason."""

NoImageProviderError = NoProviderError
"""``image_gen.provider`` is unset and no provider can be chosen for it."""


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

    def choice(self, selection: Selection) -> str | None:
        """Return ``image_gen.provider`` (the family's one selection key)."""
        return self.provider

    @classmethod
    def from_config(cls, config: Mapping[str, Any], source: Path | None = None) -> ImageGenSettings:
        """Build from a whole config mapping.

        :raises ConfigError: ``image_gen`` is not a mapping, or ``provider``/``model`` is not a
            string.
        """
        read = FamilySettings.from_config(IMAGE_GEN, config, source)
        provider = read.choice(IMAGE_GEN.selections[0])
        return cls(provider=provider, model=read.model, section=read.section)

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


class ImageGenRegistry(ProviderRegistry[ImageGenProvider]):
    """Image generation providers by name, with owners; the last registration of a name wins.

    :param home: the Hermes home whose ``config.yaml`` chooses the active provider;
        ``$HERMES_HOME`` (read at each call) when ``None``.
    """

    def __init__(self, home: Path | None = None) -> None:
        super().__init__(IMAGE_GEN, home)

    def settings(self) -> ImageGenSettings:
        """Read the ``image_gen`` section of this registry's home now.

        :raises ConfigError: ``config.yaml`` is unreadable or the section is malformed.
        """
        return ImageGenSettings.from_home(self.config_home())


def _install_tools(manager: PluginManager, registry: ProviderRegistry[ImageGenProvider]) -> None:
    from hermes_hooks.backends.image_gen.tool import install_image_generate_tool

    install_image_generate_tool(manager)


def _capabilities_of(provider: ImageGenProvider) -> dict[str, Any]:
    try:
        caps = provider.capabilities()
    except Exception:  # a broken provider must not break the listing
        return {}
    return dict(caps) if isinstance(caps, Mapping) else {}


def _describe(provider: ImageGenProvider) -> dict[str, Any]:
    return {"capabilities": _capabilities_of(provider)}


def _detail_lines(described: Mapping[str, Any]) -> list[str]:
    capabilities = described.get("capabilities") or {}
    modalities = capabilities.get("modalities", ["text"]) if capabilities else []
    can_edit = "image" in modalities
    return [f"input: {'text and images (editing)' if can_edit else 'text'}"]


IMAGE_GEN: Final[Family[ImageGenProvider]] = Family(
    name="image_gen",
    title="image generation",
    provider_type=ImageGenProvider,
    selections=(Selection("image_gen.provider", default=DEFAULT_PROVIDER),),
    model_key="image_gen.model",
    cli_name="image-gen",
    cli_examples=("--provider openai --model gpt-image-2-high", "--provider local --json"),
    ctx_method="register_image_gen_provider",
    provider_kind="image provider",
    registry_class=ImageGenRegistry,
    read_settings=ImageGenSettings.from_config,
    install_tools=_install_tools,
    tool_names=("image_generate",),
    none_registered_hint="; the bundled 'image_gen/local' needs no key",
    describe_extra=_describe,
    detail_lines=_detail_lines,
    categories=("image_gen",),
    manifest_field="provides_image_gen_providers",
    timeout_key="image_gen.timeout",
    default_timeout=600.0,
)
"""The image generation family: ``image_gen.provider`` chooses who serves ``image_generate``."""
