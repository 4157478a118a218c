"""The public API is stated in docs/reference/api.md (generated) and is what is exported."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from hermes_hooks.testing.apidoc import INTERNAL_NOTE, PUBLIC_MODULES, render

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "docs" / "reference" / "api.md"
PACKAGE = ROOT / "hermes_hooks"
IMPORT = re.compile(r"^\s*(?:from (hermes_hooks[\w.]*) import|import (hermes_hooks[\w.]*))", re.M)
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def test_api_reference_is_up_to_date() -> None:
    assert REFERENCE.read_text(encoding="utf-8") == render(), (
        "docs/reference/api.md is out of date: run "
        "'python -m hermes_hooks.testing.apidoc > docs/reference/api.md'"
    )


@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_every_public_name_is_listed_and_importable(name: str) -> None:
    module = importlib.import_module(name)
    text = REFERENCE.read_text(encoding="utf-8")
    section = text.split(f"## `{name}`\n", 1)[1].split("\n## ", 1)[0]
    listed = set(re.findall(r"^\| `(\w+)` \|", section, re.M))
    assert listed == set(module.__all__) - {"__version__"}
    assert [a for a in module.__all__ if not hasattr(module, a)] == []


def test_the_docs_import_only_from_public_modules() -> None:
    private = [
        f"{page.relative_to(ROOT)}: {a or b}"
        for page in PAGES
        for a, b in IMPORT.findall(page.read_text(encoding="utf-8"))
        if (a or b) not in PUBLIC_MODULES
    ]
    assert private == [], "the docs show imports of internal modules"


def _doc(module: str) -> str:
    return importlib.import_module(module).__doc__ or ""


def test_every_other_package_says_it_is_internal() -> None:
    public = {name.split(".")[1] for name in PUBLIC_MODULES if "." in name}
    unmarked = [
        path.parent.name
        for path in sorted(PACKAGE.glob("*/__init__.py"))
        if path.parent.name not in public
        and INTERNAL_NOTE not in (_doc(f"hermes_hooks.{path.parent.name}"))
    ]
    assert unmarked == []
