"""Every ``hermes_hooks`` name the README and docs/ show can be imported as shown.

Two kinds of mention: import statements in Python code blocks (``from hermes_hooks import
ImageGenProvider``), and dotted names in the text (``hermes_hooks.backends.models.ModelsRegistry``).
A module that moves, or a name that is renamed, fails here until the docs follow.
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])
PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```", re.M | re.S)
DOTTED = re.compile(r"(?<![\w./])hermes_hooks(?:\.[A-Za-z_]\w*)+")


def imports_in(page: Path) -> list[tuple[str, str | None]]:
    """Return ``(module, name)`` for each import of ``hermes_hooks`` in the page's code blocks."""
    found: list[tuple[str, str | None]] = []
    for block in PYTHON_BLOCK.findall(page.read_text(encoding="utf-8")):
        try:
            tree = ast.parse(block)
        except SyntaxError:  # a fragment (a signature, say), not a program
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("hermes_hooks"):
                found += [(node.module or "", alias.name) for alias in node.names]
            elif isinstance(node, ast.Import):
                found += [(a.name, None) for a in node.names if a.name.startswith("hermes_hooks")]
    return found


def resolve(dotted: str) -> object:
    """Import the longest module prefix of ``dotted`` and get the rest as attributes."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            value: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attribute in parts[cut:]:
            value = getattr(value, attribute)
        return value
    raise ModuleNotFoundError(dotted)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_import_the_page_shows_works(page: Path) -> None:
    broken = []
    for module, name in imports_in(page):
        try:
            imported = importlib.import_module(module)
            if name is not None and name != "*":
                getattr(imported, name)
        except (ImportError, AttributeError) as exc:
            broken.append(f"from {module} import {name}: {exc}")
    assert broken == []


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_dotted_name_the_page_mentions_exists(page: Path) -> None:
    broken = []
    for dotted in sorted(set(DOTTED.findall(page.read_text(encoding="utf-8")))):
        try:
            resolve(dotted)
        except (ImportError, AttributeError) as exc:
            broken.append(f"{dotted}: {exc}")
    assert broken == []


def test_the_plugin_facing_names_are_importable_from_the_package() -> None:
    import hermes_hooks

    missing = [name for name in hermes_hooks.__all__ if not hasattr(hermes_hooks, name)]
    assert missing == []
    assert sorted(hermes_hooks.__all__) == sorted(set(hermes_hooks.__all__))
