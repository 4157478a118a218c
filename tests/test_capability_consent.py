"""Capability consent at enable: ``hermes plugins enable`` shows the manifest's
``capabilities``, asks, and stores the grant with the hash of what was declared; a changed set
asks again; ``ctx.has_capability`` answers from the stored grant, through a plugin loaded from
a folder, and refuses a capability the manifest did not declare.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_support import home, invoke, read_config
from plugin_builders import user_plugin

from hermes_hooks.host import create_manager
from hermes_hooks.plugins.capabilities import capability_set_hash

__all__ = ["home"]

PROBE = """\
import json, os

def register(ctx):
    answers = {c: ctx.has_capability(c) for c in
               ("gateway.platform_actions", "tools.override", "llm.model_override")}
    with open(os.path.join(str(ctx.hermes_home), "answers.json"), "w") as out:
        json.dump(answers, out)
"""


@pytest.fixture
def on_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    # Every module that imports is_terminal by name is imported first, so that none binds
    # the patched function for good (and says "a terminal" to the tests after this one).
    import hermes_hooks.cli.common
    import hermes_hooks.cli.enabling
    import hermes_hooks.cli.hooks
    import hermes_hooks.cli.install

    for module in (
        hermes_hooks.cli.common,
        hermes_hooks.cli.enabling,
        hermes_hooks.cli.hooks,
        hermes_hooks.cli.install,
    ):
        monkeypatch.setattr(module, "is_terminal", lambda: True)


def _answers(home: Path) -> dict[str, Any]:
    import json

    pm = create_manager(home)
    try:
        info = pm.get_plugin_info("probe")
        assert info is not None
        assert info.status == "enabled", info.error
        found: dict[str, Any] = json.loads((home / "answers.json").read_text())
        return found
    finally:
        pm.unload_all()


def _entry(home: Path) -> dict[str, Any]:
    found: dict[str, Any] = read_config(home)["plugins"]["entries"]["probe"]
    return found


def test_enable_asks_stores_the_grant_with_its_hash_and_has_capability_reads_it(
    home: Path, on_terminal: None
) -> None:
    declared = ["gateway.platform_actions", "tools.override"]
    user_plugin(home, "probe", PROBE, manifest={"capabilities": declared})
    asked = invoke("plugins", "enable", "probe", input="y\n")
    assert "asks for capabilities" in asked.output
    assert "gateway.platform_actions: Act on connected chat platforms" in asked.output
    entry = _entry(home)
    assert entry["granted_capabilities"] == sorted(declared)
    assert entry["capabilities_consent"]["hash"] == capability_set_hash(declared)
    assert entry["allow_platform_actions"] is True  # the legacy key, as Hermes mirrors it
    answers = _answers(home)
    assert answers["gateway.platform_actions"] is True
    assert answers["tools.override"] is True
    assert answers["llm.model_override"] is False  # not declared: refused

    again = invoke("plugins", "enable", "probe")  # the same set: not asked again
    assert "asks for capabilities" not in again.output
    shown = invoke("plugins", "info", "probe").output
    assert "gateway.platform_actions (granted)" in shown

    # A new version declares one more: only the addition is asked about, and stays off
    # until granted.
    user_plugin(home, "probe", PROBE, manifest={"capabilities": [*declared, "llm.model_override"]})
    assert _answers(home)["llm.model_override"] is False
    reasked = invoke("plugins", "enable", "probe", input="n\n")
    assert "llm.model_override" in reasked.output
    assert "gateway.platform_actions:" not in reasked.output
    assert "runs without llm.model_override" in reasked.output
    assert _answers(home)["llm.model_override"] is False
    assert _answers(home)["gateway.platform_actions"] is True  # earlier grants stay


def test_off_a_terminal_nothing_is_granted_unless_yes(home: Path) -> None:
    user_plugin(home, "probe", PROBE, manifest={"capabilities": ["gateway.platform_actions"]})
    refused = invoke("plugins", "enable", "probe")
    assert "no terminal to ask" in refused.output
    assert "granted_capabilities" not in read_config(home)["plugins"].get("entries", {}).get(
        "probe", {}
    )
    assert _answers(home)["gateway.platform_actions"] is False
    assert "gateway.platform_actions (not granted)" in invoke("plugins", "info", "probe").output
    granted = invoke("plugins", "enable", "probe", "--yes")
    assert "Granted gateway.platform_actions" in granted.output
    assert _answers(home)["gateway.platform_actions"] is True


def test_an_unknown_declared_capability_is_named_and_never_granted(home: Path) -> None:
    user_plugin(home, "probe", PROBE, manifest={"capabilities": ["root.shell"]})
    result = invoke("plugins", "enable", "probe", "--yes")
    assert "root.shell" in result.output
    assert "never granted" in result.output
    assert "asks for capabilities" not in result.output


def test_a_bundled_plugin_has_tools_override_a_user_plugin_needs_the_grant(
    home: Path,
) -> None:
    import os

    from plugin_builders import write_config, write_plugin

    bundled = Path(os.environ["HERMES_BUNDLED_PLUGINS"])
    manifest = {"capabilities": ["tools.override", "gateway.platform_actions"]}
    write_plugin(bundled, "probe", PROBE, manifest=manifest)
    write_config(home, ["probe"])
    answers = _answers(home)
    assert answers["tools.override"] is True  # Hermes trusts its maintainers' overrides
    assert answers["gateway.platform_actions"] is False  # every other capability is granted
