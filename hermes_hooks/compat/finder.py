"""The import finder that serves Hermes' module names, without ever shadowing a real module.

:func:`install` puts one :class:`HermesCompatFinder` on ``sys.meta_path``, just before the
standard path finder; the first manager that discovers plugins calls it through the plugin
layer's extension point. For a name it serves (:mod:`hermes_hooks.compat.surface`, and
``plugins.*`` self-imports), the finder first asks every other finder on ``sys.meta_path``:

- a real module or regular package anywhere on ``sys.path`` (or from any other finder) always
  wins: the finder steps aside and the import proceeds as if it were not there. ``utils``,
  ``tools``, ``plugins`` and ``providers`` are common names;
- a bare folder that would only make a namespace package (a ``tools/`` directory in the
  working folder, say) does not beat the served module: such a folder has no code, and a
  namespace package would turn every plugin's ``from tools.registry import ...`` into an
  error.

The served modules are the very module objects of this package (``agent.image_gen_provider``
is :mod:`hermes_hooks.compat.image_gen_provider`), and ``plugins.<key>`` is the plugin's own
module: the import system enters them in ``sys.modules`` under the Hermes name and nothing is
executed twice. Nothing is imported until a plugin asks.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import threading
import types
from collections.abc import Sequence
from typing import Final

from hermes_hooks.compat import selfimports, surface
from hermes_hooks.plugins.loading import register_alias

__all__ = ["COMPAT_MARK", "HermesCompatFinder", "install", "installed_finder", "uninstall"]

COMPAT_MARK: Final = "__hermes_compat__"
"""The attribute every package this finder makes carries (``agent``, ``plugins``...)."""


class _AliasLoader(importlib.abc.Loader):
    """Enters an existing module (or one imported on demand) under another name."""

    def __init__(self, target: str | types.ModuleType, *, alias_for_eviction: bool) -> None:
        self._target = target
        self._alias_for_eviction = alias_for_eviction
        self._own_spec: importlib.machinery.ModuleSpec | None = None
        self._alias = ""

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = self._target
        if isinstance(module, str):
            module = importlib.import_module(module)
        # The import system sets module.__spec__ to the alias's spec; put the module's own
        # back in exec_module, so the module keeps telling its real name.
        self._own_spec = module.__spec__
        self._alias = spec.name
        self._target = module
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        if self._own_spec is not None:
            module.__spec__ = self._own_spec
        if self._alias_for_eviction:
            # Forgotten with the plugin's modules when it unloads: no stale module stays.
            register_alias(self._alias, module.__name__)


class _PackageLoader(importlib.abc.Loader):
    """Makes an empty package that only holds served modules (``agent``, ``plugins``...)."""

    def __init__(self, doc: str, category: str | None = None) -> None:
        self._doc = doc
        self._category = category

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        module.__doc__ = self._doc
        setattr(module, COMPAT_MARK, True)
        for name, value in surface.PACKAGE_ATTRIBUTES.get(module.__name__, {}).items():
            setattr(module, name, value)
        if self._category is not None:
            setattr(module, selfimports.CATEGORY_MARK, self._category)


def _is_namespace(spec: importlib.machinery.ModuleSpec) -> bool:
    if spec.loader is None:
        return True
    return type(spec.loader).__name__ == "NamespaceLoader" or (
        spec.origin is None and spec.submodule_search_locations is not None
    )


class HermesCompatFinder(importlib.abc.MetaPathFinder):
    """Serves Hermes' plugin-facing modules by name (see the module's docstring)."""

    def __init__(self) -> None:
        self._tops = surface.top_names()
        self._packages = surface.package_names()
        self._probing = threading.local()

    def __repr__(self) -> str:
        return f"<HermesCompatFinder {sorted(self._tops)}>"

    # -- the precedence rule ------------------------------------------------------------------

    def real_spec(
        self, fullname: str, path: Sequence[str] | None
    ) -> importlib.machinery.ModuleSpec | None:
        """Return the spec another finder gives ``fullname`` when it is a real module.

        ``None`` when no finder has it, or only as a namespace package (a bare folder).
        """
        probing: set[str] = self._probing.__dict__.setdefault("names", set())
        if fullname in probing:
            return None
        probing.add(fullname)
        try:
            for finder in list(sys.meta_path):
                if finder is self or not hasattr(finder, "find_spec"):
                    continue
                try:
                    spec = finder.find_spec(fullname, path)
                except (ImportError, ValueError):
                    continue
                if spec is not None and not _is_namespace(spec):
                    return spec
            return None
        finally:
            probing.discard(fullname)

    # -- finding ------------------------------------------------------------------------------

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: types.ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        top, dot, _ = fullname.partition(".")
        if top not in self._tops:
            return None  # every other import of the process: one set look-up
        if not dot:
            if self.real_spec(fullname, path) is not None:
                return None  # a real module of that name wins
            return self._served(fullname)
        parent = sys.modules.get(fullname.rpartition(".")[0])
        if parent is None:
            return None
        if top == surface.SELF_IMPORT_ROOT:
            return self._self_import(fullname, parent)
        if not getattr(parent, COMPAT_MARK, False):
            return None  # a real package of that name won: its children are its own
        return self._served(fullname)

    def _served(self, fullname: str) -> importlib.machinery.ModuleSpec | None:
        if fullname in surface.MODULES:
            loader = _AliasLoader(surface.MODULES[fullname], alias_for_eviction=False)
            return importlib.util.spec_from_loader(fullname, loader)
        if fullname in self._packages or fullname == surface.SELF_IMPORT_ROOT:
            return self._package(fullname, f"Hermes' {fullname}, served by hermes-hooks.")
        return None

    @staticmethod
    def _package(
        fullname: str, doc: str, category: str | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        loader = _PackageLoader(doc, category)
        return importlib.util.spec_from_loader(fullname, loader, is_package=True)

    def _self_import(
        self, fullname: str, parent: types.ModuleType
    ) -> importlib.machinery.ModuleSpec | None:
        parent_name = fullname.rpartition(".")[0]
        if getattr(parent, COMPAT_MARK, False):
            key = selfimports.key_of(fullname)
            module = selfimports.find_plugin_module(key)
            if module is not None:
                loader = _AliasLoader(module, alias_for_eviction=True)
                package = hasattr(module, "__path__")
                return importlib.util.spec_from_loader(fullname, loader, is_package=package)
            if selfimports.is_category(key):
                doc = f"The category {key}/ of loaded plugins, as Hermes' {fullname}."
                return self._package(fullname, doc, category=key)
            return selfimports.helper_spec(fullname)
        if parent.__name__ != parent_name:
            # The parent is a plugin's module entered under its Hermes name: its submodule is
            # the one of the plugin's own package, imported the usual way.
            child = f"{parent.__name__}.{fullname.rpartition('.')[2]}"
            if importlib.util.find_spec(child) is None:
                return None
            loader = _AliasLoader(child, alias_for_eviction=True)
            return importlib.util.spec_from_loader(fullname, loader)
        return None  # a helper package: its own __path__ serves its modules


_lock = threading.Lock()
_finder: HermesCompatFinder | None = None


def install() -> HermesCompatFinder:
    """Put the finder on ``sys.meta_path`` (just before the path finder), once; return it."""
    global _finder
    with _lock:
        if _finder is not None and _finder in sys.meta_path:
            return _finder
        finder = _finder or HermesCompatFinder()
        position = next(
            (i for i, f in enumerate(sys.meta_path) if f is importlib.machinery.PathFinder),
            len(sys.meta_path),
        )
        sys.meta_path.insert(position, finder)
        _finder = finder
        return finder


def uninstall() -> None:
    """Take the finder off ``sys.meta_path`` (modules it served stay in ``sys.modules``)."""
    with _lock:
        if _finder is not None and _finder in sys.meta_path:
            sys.meta_path.remove(_finder)


def installed_finder() -> HermesCompatFinder | None:
    """Return the finder when it is on ``sys.meta_path``, else ``None``."""
    finder = _finder
    return finder if finder is not None and finder in sys.meta_path else None
