"""The layers of ``hermes_hooks`` point one way: a package imports, or names, only those below it.

The layer table is the one of ``docs/explanation/layout.md``. Every import
counts: module level, inside a function, under ``TYPE_CHECKING``; and so does a string that
names a module of a higher layer (``importlib.import_module("hermes_hooks.backends...")``, a
lazy-command target ``"hermes_hooks.cli.x:y"``). Docstrings are documentation and may point
anywhere. Run it alone with ``python -m pytest tests/test_layers.py``.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Final

import pytest

import hermes_hooks

ROOT: Final = Path(hermes_hooks.__file__).parent

LAYERS: Final[dict[str, int]] = {
    "errors": 0,
    "spec": 1,
    "calling": 2,
    "registries": 3,
    "plugins": 4,
    "backends": 5,
    "compat": 6,
    "admin": 7,
    "host": 8,
    "bridges": 9,
    "adapters": 10,
    "dashboard": 11,
    "cli": 12,
    "testing": 13,
}
"""Rank of each top-level part of ``hermes_hooks``; a module may import ranks up to its own."""

TOP: Final = len(LAYERS)
"""The composition root (``hermes_hooks/__init__.py``) and ``__main__``: above every layer."""

TOP_LEVEL_MODULES: Final = {"__init__.py", "__main__.py", "errors.py"}

_MODULE_NAME: Final = re.compile(r"hermes_hooks(?:\.[A-Za-z_][A-Za-z0-9_]*)+")


def module_name(path: Path, root: Path = ROOT) -> str:
    """Return the dotted name of a module file under ``root`` (the ``hermes_hooks`` folder)."""
    parts = ["hermes_hooks", *path.relative_to(root).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer_of(module: str) -> int:
    """Return the layer rank of a ``hermes_hooks`` module (``TOP`` for the root itself)."""
    parts = module.split(".")
    if len(parts) == 1 or parts[1] == "__main__":
        return TOP
    if parts[1] not in LAYERS:
        raise KeyError(f"{module}: {parts[1]!r} is in no layer; add it to LAYERS and the docs")
    return LAYERS[parts[1]]


def _root_names() -> dict[str, str]:
    """Map each name ``from hermes_hooks import NAME`` may give to the module it comes from."""
    lazy = hermes_hooks._public_names()
    names = {name: target.partition(":")[0] for name, target in lazy.items()}
    markers = ("hookimpl", "hookspec", "PROJECT_NAME")
    names.update(dict.fromkeys(markers, "hermes_hooks.spec.markers"))
    names["__version__"] = "hermes_hooks.errors"  # a constant of the root: rank 0
    return names


def _docstrings(tree: ast.Module) -> set[int]:
    """Return the ``id`` of every docstring node (module, class and function docstrings)."""
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def imported_modules(
    source: str, module: str, *, is_package: bool, root_names: Mapping[str, str]
) -> Iterator[tuple[int, str]]:
    """Yield ``(line, module)`` for every ``hermes_hooks`` module that ``source`` imports or names.

    :param module: the dotted name of the module ``source`` is, to resolve relative imports.
    """
    tree = ast.parse(source)
    docstrings = _docstrings(tree)
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "hermes_hooks":
                    yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            if target.split(".")[0] != "hermes_hooks":
                continue
            if target == "hermes_hooks":
                for alias in node.names:
                    sub = f"hermes_hooks.{alias.name}"
                    if (ROOT / alias.name).is_dir() or (ROOT / f"{alias.name}.py").is_file():
                        yield node.lineno, sub
                    else:
                        yield node.lineno, root_names.get(alias.name, "hermes_hooks")
            else:
                yield node.lineno, target
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings
        ):
            for match in _MODULE_NAME.finditer(node.value):
                yield getattr(node, "lineno", 0), match.group(0)


def violations(
    modules: Mapping[str, tuple[str, bool]], root_names: Mapping[str, str] | None = None
) -> list[str]:
    """Return one line per import or name that points from a lower layer to a higher one.

    :param modules: dotted module name → (its source, whether it is a package ``__init__``).
    """
    names = _root_names() if root_names is None else root_names
    found = []
    for module, (source, is_package) in sorted(modules.items()):
        rank = layer_of(module)
        for line, target in imported_modules(
            source, module, is_package=is_package, root_names=names
        ):
            if layer_of(target) > rank:
                found.append(
                    f"{module}:{line} (layer {module.split('.')[1]}) names {target} "
                    f"(layer {target.split('.')[1] if '.' in target else 'root'})"
                )
    return found


def package_modules(root: Path = ROOT) -> dict[str, tuple[str, bool]]:
    """Return every module of ``hermes_hooks`` as :func:`violations` takes them."""
    return {
        module_name(path, root): (path.read_text(encoding="utf-8"), path.name == "__init__.py")
        for path in sorted(root.rglob("*.py"))
    }


def test_no_layer_imports_or_names_a_higher_one() -> None:
    found = violations(package_modules())
    assert not found, "imports that point up the layers:\n" + "\n".join(found)


def test_only_the_root_modules_sit_at_the_top() -> None:
    loose = sorted(p.name for p in ROOT.glob("*.py") if p.name not in TOP_LEVEL_MODULES)
    assert loose == [], f"modules outside every package: {loose}; give each its layer's package"


def test_every_package_is_in_a_layer() -> None:
    packages = {p.name for p in ROOT.iterdir() if p.is_dir() and (p / "__init__.py").is_file()}
    assert packages <= set(LAYERS), f"packages in no layer: {sorted(packages - set(LAYERS))}"


@pytest.mark.parametrize(
    ("module", "source"),
    [
        ("hermes_hooks.plugins.manager", "from hermes_hooks.backends.image_gen import Provider\n"),
        ("hermes_hooks.plugins.manager", "import hermes_hooks.host.runtime\n"),
        (
            "hermes_hooks.calling.facade",
            "from typing import TYPE_CHECKING\n"
            "if TYPE_CHECKING:\n    from hermes_hooks.plugins.manager import PluginManager\n",
        ),
        ("hermes_hooks.spec.hookspecs", "def f():\n    from hermes_hooks.calling import aio\n"),
        (
            "hermes_hooks.plugins.context",
            "import importlib\nmod = importlib.import_module('hermes_hooks.backends.models')\n",
        ),
        ("hermes_hooks.plugins.manager", "TARGET = 'hermes_hooks.cli.plugins:plugins'\n"),
        ("hermes_hooks.spec.hookspecs", "from hermes_hooks import PluginManager\n"),
        ("hermes_hooks.registries.tools", "from ..plugins import config\n"),
        ("hermes_hooks.spec", "from . import hookspecs\nfrom ..calling import aio\n"),
    ],
)
def test_the_check_catches_an_upward_import(module: str, source: str) -> None:
    is_package = module == "hermes_hooks.spec"
    assert len(violations({module: (source, is_package)})) == 1


@pytest.mark.parametrize(
    ("module", "source"),
    [
        ("hermes_hooks.plugins.manager", "from hermes_hooks.calling.handoff import Sink\n"),
        ("hermes_hooks.cli.main", "from hermes_hooks.backends.image_gen import Provider\n"),
        ("hermes_hooks.spec.hookspecs", "from hermes_hooks import hookspec\n"),
        ("hermes_hooks.calling.aio", "from hermes_hooks import __version__\n"),
        ("hermes_hooks.plugins.manager", '"""See hermes_hooks.host.runtime for a host."""\n'),
        ("hermes_hooks", "from hermes_hooks.cli import main\n"),
    ],
)
def test_the_check_allows_what_points_down(module: str, source: str) -> None:
    assert violations({module: (source, module == "hermes_hooks")}) == []
