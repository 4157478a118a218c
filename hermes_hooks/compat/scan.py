"""Which Hermes modules a plugin imports: a static scan of its source, for the doctor.

The import finder only sees a module's first importer, so it cannot tell which plugins use
which Hermes names; reading the plugin's files can. :func:`scan_plugin` parses every ``.py``
file of a plugin folder (nothing is imported or run) and lists each absolute import of a
Hermes top-level name: served here (and which of its names exist), a self-import
(``plugins.<key>``), or a Hermes module this version does not serve.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path
from typing import Final, Literal

import attrs

from hermes_hooks.compat import surface

__all__ = ["HERMES_TOP_NAMES", "HermesImport", "scan_plugin"]

HERMES_TOP_NAMES: Final = frozenset(
    {
        *surface.top_names(),
        "acp_adapter", "cli", "cron", "gateway", "hermes_logging", "hermes_state",
        "hermes_time", "hermes_yaml", "model_tools", "plugin_runtime", "providers",
        "registration_lifecycle", "run_agent", "toolsets", "tui_gateway",
    }
)  # fmt: skip
"""Top-level modules of Hermes Agent that plugins import (those served, and others)."""

_MAX_FILES: Final = 500
_MAX_BYTES: Final = 1024 * 1024

Kind = Literal["served", "self", "not served"]


@attrs.frozen
class HermesImport:
    """One import of a Hermes module by a plugin.

    :param names: the names a ``from ... import`` takes (empty for ``import x``).
    :param kind: ``served`` here, a ``self`` import (``plugins.*``), or ``not served``.
    :param missing: for a served module, the names it does not provide.
    """

    module: str
    names: tuple[str, ...]
    file: str
    line: int
    kind: Kind
    missing: tuple[str, ...] = ()


def _python_files(folder: Path) -> Iterator[Path]:
    count = 0
    for path in sorted(folder.rglob("*.py")):
        relative = path.relative_to(folder).parts
        if any(part == "__pycache__" or part.startswith(".") for part in relative):
            continue
        count += 1
        if count > _MAX_FILES:
            return
        yield path


def _classify(module: str, names: tuple[str, ...]) -> tuple[Kind, tuple[str, ...]]:
    if module.partition(".")[0] == surface.SELF_IMPORT_ROOT:
        return "self", ()
    if not surface.is_served(module):
        return "not served", ()
    if module not in surface.MODULES:
        # A package (``from agent import image_gen_provider``): its served submodules.
        served = {
            name.rpartition(".")[2] for name in surface.MODULES if name.startswith(f"{module}.")
        } | set(surface.PACKAGE_ATTRIBUTES.get(module, {}))
        return "served", tuple(n for n in names if n not in served)
    provided = set(surface.provided_names(module))
    return "served", tuple(n for n in names if n != "*" and n not in provided)


def _imports(tree: ast.AST) -> Iterator[tuple[str, tuple[str, ...], int]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, (), node.lineno
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module, tuple(alias.name for alias in node.names), node.lineno


def scan_plugin(folder: Path) -> list[HermesImport]:
    """Return every import of a Hermes module in the plugin folder's ``.py`` files, in order.

    Files that cannot be read or parsed are skipped (loading the plugin reports them).
    """
    found: list[HermesImport] = []
    for path in _python_files(folder):
        try:
            if path.stat().st_size > _MAX_BYTES:
                continue
            tree = ast.parse(path.read_text(encoding="utf-8-sig"), filename=str(path))
        except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
            continue
        for module, names, line in _imports(tree):
            if module.partition(".")[0] not in HERMES_TOP_NAMES:
                continue
            kind, missing = _classify(module, names)
            found.append(HermesImport(module, names, str(path), line, kind, missing))
    return found
