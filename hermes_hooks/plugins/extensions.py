"""The plugin layer's extension point: what the layers above plug in, by dotted path.

The plugin layer knows no backend by name, and no compatibility module. The composition root,
``hermes_hooks/__init__.py``, lists here:

- each provider family (:func:`add_family`); a family is imported the first time anything asks
  for it (a manager being built, a ``ctx.register_<family>_provider`` call, ``ctx.llm``,
  ``hermes tools``). The manager, :class:`~hermes_hooks.plugins.context.PluginContext` and the
  CLI reach families only through this module, and only through the :class:`Family` protocol
  below; ``hermes_hooks.backends.family`` implements it;
- the import finder that serves Hermes' plugin-facing modules (:func:`set_import_finder`),
  installed by the first manager that loads plugins (:func:`install_import_finder`).
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from hermes_hooks.errors import HermesHooksError

if TYPE_CHECKING:
    from hermes_hooks.registries.base import Handle

__all__ = [
    "add_service",
    "service",
    "Family",
    "FamilyRegistry",
    "add_family",
    "families",
    "family_names",
    "find_context_attribute",
    "find_context_method",
    "find_kind_family",
    "get_family",
    "import_finder_target",
    "install_import_finder",
    "mcp_caller",
    "remove_family",
    "set_import_finder",
    "set_mcp_caller",
]


class FamilyRegistry(Protocol):
    """What the plugin layer needs of one manager's registry of a family's providers."""

    def register_provider(self, provider: object, *, owner: str) -> Handle:
        """Register ``provider`` for plugin ``owner``; a later one of the same name wins."""
        ...

    def remove_owner(self, owner: str) -> list[str]:
        """Remove every provider ``owner`` registered, restoring what they displaced."""
        ...

    def names(self, *, owner: str | None = None) -> list[str]:
        """Return the names of the registered providers (only ``owner``'s when given)."""
        ...

    def set_acting_plugins(self, lookup: Callable[[], frozenset[str]] | None) -> None:
        """Let plugin code register only as itself (see ``Registry.set_acting_plugins``)."""
        ...


class Family(Protocol):
    """A provider family as the plugin layer sees it (``hermes_hooks.backends.family.Family``)."""

    @property
    def name(self) -> str:
        """The family's identifier: ``pm.<name>`` is its registry, e.g. ``image_gen``."""
        ...

    @property
    def ctx_method(self) -> str | None:
        """The ``PluginContext`` method that registers a provider, or ``None``."""
        ...

    @property
    def context_attributes(self) -> Mapping[str, Callable[[Any, str], object]]:
        """Further ``ctx`` attributes it serves, each built from (manager, plugin key)."""
        ...

    def create_registry(self, manager: Any) -> FamilyRegistry:
        """Return a new registry of this family's providers for ``manager``."""
        ...

    def install(self, manager: Any, registry: Any) -> None:
        """Register the family's host tools on ``manager`` (before any plugin loads)."""
        ...

    @property
    def plugin_kind(self) -> str | None:
        """The plugin kind it serves instead of ``plugins.enabled`` (``exclusive``), if any."""
        ...

    @property
    def selection_key(self) -> str:
        """Its main config key, which selects a provider (``memory.provider``)."""
        ...

    def selected_name(self, config: Mapping[str, Any]) -> str | None:
        """Return the provider name the selection key holds in ``config``, or ``None``.

        :raises ConfigError: the family's section is malformed.
        """
        ...


_lock = threading.RLock()
_targets: dict[str, str] = {}
_loaded: dict[str, Family] = {}


class ExtensionError(HermesHooksError):
    """A family listed at the extension point cannot be imported or is not a family."""


def add_family(name: str, target: str) -> None:
    """List family ``name``, found at ``"package.module:ATTRIBUTE"`` when first asked for.

    Listing a name again replaces its target (and forgets the family imported from the old).
    """
    if ":" not in target:
        raise ValueError(f"family {name!r}: target must be 'module:attribute', found {target!r}")
    with _lock:
        _targets[name] = target
        _loaded.pop(name, None)


def remove_family(name: str) -> None:
    """Forget family ``name`` (for tests that list a family of their own)."""
    with _lock:
        _targets.pop(name, None)
        _loaded.pop(name, None)


def family_names() -> list[str]:
    """Return the names of the listed families, in the order they were listed."""
    with _lock:
        return list(_targets)


def get_family(name: str) -> Family | None:
    """Return family ``name``, importing it on first use; ``None`` when it is not listed.

    :raises ExtensionError: its module cannot be imported, or the attribute is missing or
        names a different family.
    """
    with _lock:
        family = _loaded.get(name)
        if family is not None:
            return family
        target = _targets.get(name)
        if target is None:
            return None
        module_name, _, attribute = target.partition(":")
        try:
            found: Family = getattr(importlib.import_module(module_name), attribute)
        except (ImportError, AttributeError) as exc:
            raise ExtensionError(
                f"family {name!r} is listed at {target!r}, which cannot be imported: {exc}"
            ) from exc
        if getattr(found, "name", None) != name:
            raise ExtensionError(
                f"family {name!r} is listed at {target!r}, which holds "
                f"{getattr(found, 'name', type(found).__name__)!r} instead"
            )
        _loaded[name] = found
        return found


def families() -> list[Family]:
    """Return every listed family (importing those not imported yet), in listing order."""
    found = []
    for name in family_names():
        family = get_family(name)
        if family is not None:
            found.append(family)
    return found


def find_context_method(method: str) -> Family | None:
    """Return the family whose ``ctx`` method is ``method`` (``register_image_gen_provider``,
    ``register_context_engine``)."""
    if not method.startswith("register_"):
        return None
    return next((f for f in families() if f.ctx_method == method), None)


def find_kind_family(kind: str) -> Family | None:
    """Return the family that serves plugins of ``kind`` (``exclusive``), or ``None``."""
    return next((f for f in families() if f.plugin_kind == kind), None)


def find_context_attribute(attribute: str) -> Callable[[Any, str], object] | None:
    """Return the builder of ``ctx.<attribute>`` a family serves (``ctx.llm``), or ``None``."""
    for family in families():
        builder = family.context_attributes.get(attribute)
        if builder is not None:
            return builder
    return None


_finder_target: str | None = None
_finder_installed = False


def set_import_finder(target: str | None) -> None:
    """List the import finder installer, ``"package.module:function"``; ``None`` removes it.

    Nothing is imported here; :func:`install_import_finder` imports and calls it once.
    """
    global _finder_target, _finder_installed
    if target is not None and ":" not in target:
        raise ValueError(f"import finder: target must be 'module:function', found {target!r}")
    with _lock:
        _finder_target = target
        _finder_installed = False


def import_finder_target() -> str | None:
    """Return the import finder installer listed, or ``None``."""
    return _finder_target


def install_import_finder() -> bool:
    """Import and call the listed import finder installer, once; return whether one is listed.

    :raises ExtensionError: the installer cannot be imported.
    """
    global _finder_installed
    with _lock:
        target = _finder_target
        if target is None:
            return False
        if _finder_installed:
            return True
        module_name, _, attribute = target.partition(":")
        try:
            install: Callable[[], object] = getattr(importlib.import_module(module_name), attribute)
        except (ImportError, AttributeError) as exc:
            raise ExtensionError(
                f"the import finder is listed at {target!r}, which cannot be imported: {exc}"
            ) from exc
        install()
        _finder_installed = True
        return True


_mcp_target: str | None = None


def set_mcp_caller(target: str | None) -> None:
    """List what ``ctx.call_mcp`` calls, ``"package.module:function"``; ``None`` removes it.

    The function takes ``(manager, plugin_id, server, tool, arguments, timeout)``; it is
    imported on the first ``ctx.call_mcp``, so no plugin that never calls it pays for MCP.
    """
    global _mcp_target
    if target is not None and ":" not in target:
        raise ValueError(f"MCP caller: target must be 'module:function', found {target!r}")
    with _lock:
        _mcp_target = target


def mcp_caller() -> Callable[..., Any] | None:
    """Return the function ``ctx.call_mcp`` calls (imported now), or ``None`` if none is listed.

    :raises ExtensionError: the listed function cannot be imported.
    """
    target = _mcp_target
    if target is None:
        return None
    module_name, _, attribute = target.partition(":")
    try:
        caller: Callable[..., Any] = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as exc:
        raise ExtensionError(f"MCP caller {target!r} cannot be imported: {exc}") from exc
    return caller


_services: dict[str, str] = {}


def add_service(name: str, target: str) -> None:
    """List service ``name`` (a function a lower layer calls, written in a higher one), found at
    ``"package.module:function"`` when first asked for: the cron scheduler of the backends
    layer runs a job through the reference host this way."""
    if ":" not in target:
        raise ValueError(f"service {name!r}: target must be 'module:function', found {target!r}")
    with _lock:
        _services[name] = target


def service(name: str) -> Callable[..., Any]:
    """Return the function listed as service ``name``.

    :raises ExtensionError: none is listed, or it cannot be imported.
    """
    with _lock:
        target = _services.get(name)
    if target is None:
        raise ExtensionError(f"no service {name!r} is listed at the extension point")
    module_name, _, attribute = target.partition(":")
    try:
        found: Callable[..., Any] = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as exc:
        raise ExtensionError(
            f"service {name!r} is listed at {target!r}, which cannot be imported: {exc}"
        ) from exc
    return found
