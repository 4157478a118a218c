"""The table of config keys (plugins/settings.py) agrees with what each provider family reads.

The families declare their selection, model and timeout keys (backends/family.py) and the
table declares them again for `hermes config`, typo warnings and docs/reference/config.md;
the plugins layer cannot import the families, so this test keeps the two in step.
"""

from __future__ import annotations

import pytest

import hermes_hooks  # noqa: F401  (the composition root lists the families)
from hermes_hooks.backends.family import Family
from hermes_hooks.plugins import extensions
from hermes_hooks.plugins.settings import HERMES_ONLY_SECTIONS, SECTIONS

FAMILIES = extensions.family_names()


@pytest.mark.parametrize("name", FAMILIES)
def test_a_familys_keys_and_timeout_default_are_in_the_table(name: str) -> None:
    family = extensions.get_family(name)
    assert isinstance(family, Family)
    section = SECTIONS.get(family.section)
    if section is None:  # read by Hermes and the family, not checked key by key here
        assert family.section in HERMES_ONLY_SECTIONS, f"{family.section}: in no table"
        return
    missing = [field for field in family.setting_fields if section.key(field) is None]
    assert missing == [], f"{family.section}: fields the family reads are not in the table"
    if family.timeout_key and family.timeout_key.startswith(f"{family.section}."):
        key = section.key(family.timeout_key.partition(".")[2])
        assert key is not None, family.timeout_key
        assert key.default == family.default_timeout, family.timeout_key
