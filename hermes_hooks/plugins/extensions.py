"""The plugin layer's extension point: the provider families that the layers above plug in.

The plugin layer knows no backend by name. The composition root, ``hermes_hooks/__init__.py``,
lists each family here by dotted path (:func:`add_family`); a family is imported the first
time anything asks for it (a manager being built, a ``ctx.register_<family>_provider`` call,
``ctx.llm``, ``hermes tools``). The manager, :class:`~hermes_hooks.plugins.context.PluginContext`
and the CLI reach families only through this module, and only through the :class:`Family`
protocol below; ``hermes_hooks.backends.family`` implements it.
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
    "Family",
    "FamilyRegistry",
    "add_family",
    "families",
    "family_names",
    "find_context_attribute",
    "find_context_method",
    "get_family",
    "remove_family",
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
    """Return the family whose ``ctx`` method is ``method`` (``register_image_gen_provider``)."""
    if not (method.startswith("register_") and method.endswith("_provider")):
        return None
    return next((f for f in families() if f.ctx_method == method), None)


def find_context_attribute(attribute: str) -> Callable[[Any, str], object] | None:
    """Return the builder of ``ctx.<attribute>`` a family serves (``ctx.llm``), or ``None``."""
    for family in families():
        builder = family.context_attributes.get(attribute)
        if builder is not None:
            return builder
    return None
