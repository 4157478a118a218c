"""A package's public names, listed once: in its ``if TYPE_CHECKING:`` block.

Type checkers read the block's imports (``from module import Name as Name`` re-exports
``Name``); at run time :func:`lazy_names` reads the same lines from the package's source, on
first need, into the package's ``__all__`` and its lazy imports, so that importing the package
imports none of those modules. The root package (``hermes_hooks``) and ``hermes_hooks.host``
are written so; each one's ``__getattr__`` asks :func:`lazy_names` and :func:`load`.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path
from typing import Any

__all__ = ["lazy_names", "load"]


def lazy_names(source_file: str) -> dict[str, str]:
    """Return each name the first ``if`` block of *source_file* (its ``if TYPE_CHECKING:``)
    imports: ``module`` when the name is the same there, else ``module:name``."""
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
