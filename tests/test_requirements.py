"""What a manifest asks of its host: ``requires_hermes`` and a ``version`` that is a version."""

from __future__ import annotations

import pytest
from plugin_builders import PluginHome, home, info

from hermes_hooks import HERMES_CONTRACT_VERSION
from hermes_hooks.errors import PluginLoadError

__all__ = ["home"]

CODE = "def register(ctx):\n    ctx.register_hook('on_session_start', lambda **kw: None)\n"


def test_a_plugin_for_a_newer_hermes_is_not_loaded_and_says_so(home: PluginHome) -> None:
    home.add_plugin("future", CODE, manifest={"requires_hermes": ">=99"})
    home.add_plugin("written-for-hermes", CODE, manifest={"requires_hermes": "0.19"})
    pm = home.load()
    future = info(pm, "future")
    assert future.status == "error"
    assert future.error == (
        f"requires Hermes >=99 (requires_hermes), and this host implements the plugin "
        f"contract of Hermes {HERMES_CONTRACT_VERSION}"
    )
    assert info(pm, "written-for-hermes").status == "enabled"


def test_an_invalid_version_is_a_warning_and_strict_refuses_it(home: PluginHome) -> None:
    home.add_plugin("sloppy", CODE, manifest={"version": "not-a-version!!"})
    pm = home.load()
    sloppy = info(pm, "sloppy")
    assert sloppy.status == "enabled"
    assert sloppy.warnings == (
        "version 'not-a-version!!' is not a version such as '1.0.0' (PEP 440)",
    )
    strict = home.manager()
    strict.strict = True
    with pytest.raises(PluginLoadError, match="is not a version"):
        strict.discover_and_load()
