"""The compatibility layer tells the truth: the home read at each call, two managers' plugins of
one key each running their own code, a broken user copy never taking a bundled profile away."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from plugin_builders import PluginHome, home, info

__all__ = ["home"]

WHO = '''
from plugins.same.who import NAME

def register(ctx):
    schema = {"name": "who", "description": "", "parameters": {"type": "object", "properties": {}}}
    ctx.register_tool("who", "t", schema, lambda args, **kw: NAME)
'''


def test_get_hermes_home_reads_hermes_home_at_each_call(
    home: PluginHome, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pm = home.load()  # a live manager does not pin the home, as in Hermes
    from hermes_constants import (
        get_config_path,
        get_hermes_home,
        reset_hermes_home_override,
        set_hermes_home_override,
    )

    for name in ("first", "second"):
        monkeypatch.setenv("HERMES_HOME", str(tmp_path / name))
        assert get_hermes_home() == tmp_path / name
        assert get_config_path() == tmp_path / name / "config.yaml"
    with pm.activate():  # the manager calling plugin code answers for its own home
        assert get_hermes_home() == home.root
        token = set_hermes_home_override(tmp_path / "override")
        try:
            assert get_hermes_home() == tmp_path / "override"  # Hermes' override wins
        finally:
            reset_hermes_home_override(token)
        assert get_hermes_home() == home.root


def test_two_managers_each_run_their_own_plugin_of_one_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from plugin_builders import make_home

    (tmp_path / "a").mkdir()
    homes = [make_home(tmp_path / "a", monkeypatch), PluginHome(tmp_path / "b" / "home")]
    try:
        for letter, plugin_home in zip("ab", homes, strict=True):
            plugin_home.add_plugin("same", WHO, files={"who.py": f"NAME = {letter!r}\n"})
        managers = [plugin_home.load() for plugin_home in homes]
        answers = [pm.tools.get("who").handler({}) for pm in managers]  # type: ignore[union-attr]
        assert answers == ["a", "b"]
    finally:
        for plugin_home in homes:
            plugin_home.close()


def test_a_broken_user_copy_never_takes_the_bundled_profile_away(
    home: PluginHome, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HERMES_BUNDLED_PLUGINS")  # the shipped model-provider profiles
    home.add_plugin(
        "model-providers/openai", "raise RuntimeError('broken user copy')\n",
        manifest={"kind": "model-provider"}, enable=False,
    )  # fmt: skip
    pm = home.load()
    profile = pm.models.get_profile("openai")
    assert profile is not None
    assert profile.base_url == "https://api.openai.com/v1"
    plugin = info(pm, "model-providers/openai")
    assert (plugin.source, plugin.status) == ("bundled", "enabled")
    (warning,) = plugin.warnings
    assert "failed to load (RuntimeError: broken user copy" in warning
    assert warning.endswith("is loaded instead")


def test_a_broken_user_copy_alone_is_an_error(home: PluginHome) -> None:
    home.add_plugin("mine", "raise RuntimeError('broken')\n")
    plugin = info(home.load(), "mine")
    assert plugin.status == "error"
    assert "broken" in (plugin.error or "")
    assert "hermes_plugins.mine" not in sys.modules
