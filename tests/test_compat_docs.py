"""docs/reference/compat.md documents every Hermes module the layer serves, and every name of it.

The page is the contract a plugin author reads before porting a Hermes plugin: a module added
to ``surface.MODULES``, or a name added to one of its ``__all__``, fails here until the page
has its row, in that module's own section.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hermes_hooks.compat import surface

PAGE = Path(__file__).resolve().parent.parent / "docs" / "reference" / "compat.md"
SECTION = re.compile(r"^## `([^`]+)`\n(.*?)(?=^## |\Z)", re.M | re.S)


def sections() -> dict[str, str]:
    """Return each ``## `module``` section of the page by its module name."""
    return dict(SECTION.findall(PAGE.read_text(encoding="utf-8")))


@pytest.mark.parametrize("module", sorted(surface.MODULES))
def test_every_served_module_has_a_section_listing_each_of_its_names(module: str) -> None:
    text = sections().get(module)
    assert text is not None, f"{PAGE.name} has no '## `{module}`' section"
    names = surface.provided_names(module)
    assert names, f"{surface.MODULES[module]} declares no __all__"
    missing = [n for n in names if not re.search(rf"`{re.escape(n)}[`(]", text)]
    assert not missing, f"the '{module}' section of {PAGE.name} does not document {missing}"


def test_the_module_table_names_every_served_module_and_what_serves_it() -> None:
    table = PAGE.read_text(encoding="utf-8").partition("## Modules")[2].partition("\n## ")[0]
    for module, serving in surface.MODULES.items():
        assert f"| `{module}` | `{serving}` |" in table, f"no table row for {module}"
