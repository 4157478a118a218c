"""A package's public names, listed once: in its ``if TYPE_CHECKING:`` block.

Type checkers read the block's imports (``from module import Name as Name`` re-exports
``Name``); at run time :func:`lazy_names` reads the same lines from the package's source, on
first need, into the package's ``__all__`` and its lazy imports, so that importing the package
imports none of those modules. The root package (``hermes_hooks``) and ``hermes_hooks.host``
and ``hermes_hooks.testing`` are written so: their module ``__getattr__`` (and ``__dir__``)
come from :func:`lazy_module`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, MutableMapping
from pathlib import Path
from typing import Any

__all__ = ["lazy_module", "lazy_names", "load"]


def lazy_names(source_file: str) -> dict[str, str]:
    """Return each name the first ``if`` block of *source_file* (its ``if TYPE_CHECKING:``)
    imports: ``module`` when the name is the same there, else ``module:name``."""
    import ast  # here: importing a package must stay cheap

    tree = ast.parse(Path(source_file).read_text(encoding="utf-8"))
    block = next(node for node in tree.body if isinstance(node, ast.If))
    return {
        alias.asname or alias.name: (
            node.module if alias.asname in (None, alias.name) else f"{node.module}:{alias.name}"
        )
        for node in block.body
        if isinstance(node, ast.ImportFrom) and node.module
        for alias in node.names
    }


def load(target: str, name: str) -> Any:
    """Import what *target* (a value of :func:`lazy_names`) names, for the public *name*."""
    module_name, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module_name), attribute or name)


def lazy_module(
    namespace: MutableMapping[str, Any], *, eager: Iterable[str] = ()
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """Return the ``__getattr__`` and ``__dir__`` of the package whose globals are *namespace*.

    ``__all__`` is *eager* (the names bound at import) and every name of :func:`lazy_names`;
    any other name is imported on first use and kept in *namespace*.
    """
    module = str(namespace["__name__"])
    source = str(namespace["__file__"])
    bound = tuple(eager)
    names: dict[str, str] = {}

    def public() -> dict[str, str]:
        if not names:
            names.update(lazy_names(source))
        return names

    def getattr_(name: str) -> Any:
        if name == "__all__":
            value: Any = sorted([*bound, *public()])
        else:
            target = public().get(name)
            if target is None:
                raise AttributeError(f"module {module!r} has no attribute {name!r}")
            value = load(target, name)
        namespace[name] = value
        return value

    def dir_() -> list[str]:
        return sorted(set(namespace) | {*bound, *public()})

    return getattr_, dir_
