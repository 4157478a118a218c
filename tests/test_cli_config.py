"""``hermes config`` and ``hermes plugins config``, and the typo warnings every command gives.

The keys, their types and defaults come from one table (``plugins/settings.py``); these tests
change a real ``config.yaml`` in a temporary home.
"""

from __future__ import annotations

from pathlib import Path

from cli_support import (
    hermes,
    home as home,  # the fixture
    invoke,
    read_config,
)

from hermes_hooks.plugins.settings import SECTIONS, check_config, parse_value

COMMENTED = """\
# my settings
model:
  provider: offline  # no key needed
plugins:
  enabled: [no-rm]
"""


def write(home: Path, text: str) -> Path:
    path = home / "config.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_set_get_unset_keep_comments_and_check_types(home: Path) -> None:
    path = write(home, COMMENTED)
    result = invoke("config", "set", "plugins.load_timeout", "20")
    assert result.exit_code == 0, result.output
    assert invoke("config", "get", "plugins.load_timeout").stdout == "20\n"
    text = path.read_text(encoding="utf-8")
    assert "# my settings" in text
    assert "# no key needed" in text

    refused = invoke("config", "set", "plugins.load_timeout", "soon")
    assert refused.exit_code == 2
    assert "plugins.load_timeout: expected a number of seconds" in refused.stderr
    assert read_config(home) == {
        "model": {"provider": "offline"},
        "plugins": {"enabled": ["no-rm"], "load_timeout": 20},
    }

    assert invoke("config", "set", "model.name", "1.5").exit_code == 0
    assert read_config(home)["model"]["name"] == "1.5"  # a string key
    assert invoke("config", "unset", "model.name").exit_code == 0
    assert invoke("config", "unset", "model.name").exit_code == 1
    # Unset, a key the framework reads shows its default.
    assert invoke("config", "get", "plugins.hook_callback_timeout").stdout == "30.0\n"
    assert invoke("config", "get", "no.such").exit_code == 1
    assert invoke("config", "path").stdout == f"{path}\n"


def test_a_list_of_plugin_keys_is_checked_item_by_item(home: Path) -> None:
    refused = invoke("config", "set", "plugins.enabled", "[a, 3]")
    assert refused.exit_code == 2
    assert "expected a list of plugin keys" in refused.stderr
    assert not (home / "config.yaml").exists()  # nothing written


def test_plugin_settings_are_read_and_written_by_name(home: Path) -> None:
    assert "has no settings" in invoke("plugins", "config", "no-rm").stdout
    assert invoke("plugins", "config", "no-rm", "limit", "5").exit_code == 0
    assert invoke("plugins", "config", "no-rm", "limit").stdout == "5\n"
    assert invoke("plugins", "config", "no-rm").stdout == "limit: 5\n"
    refused = invoke("plugins", "config", "no-rm", "allow_tool_override", "yes please")
    assert refused.exit_code == 2
    assert "expected true or false" in refused.stderr
    assert read_config(home) == {"plugins": {"entries": {"no-rm": {"limit": 5}}}}


def test_check_names_the_closest_known_key(home: Path) -> None:
    write(home, "modle: x\nplugins:\n  enabeld: [a]\nmodel:\n  temprature: 0.3\nterminal: {}\n")
    result = invoke("config", "check")
    assert result.exit_code == 0  # warnings only
    assert "modle: unknown key; did you mean 'model'?" in result.stderr
    assert "plugins.enabeld: unknown key; did you mean 'enabled'?" in result.stderr
    assert "model.temprature: unknown key; did you mean 'temperature'?" in result.stderr
    assert "terminal" not in result.stderr  # a key Hermes reads is known


def test_check_exits_1_on_a_wrong_type(home: Path) -> None:
    write(home, "plugins:\n  enabled: no-rm\n")
    result = invoke("config", "check", "--json")
    assert result.exit_code == 1
    assert '"level": "error"' in result.stdout
    assert "plugins.enabled: expected a list of plugin keys" in result.stdout


def test_every_command_warns_once_and_a_broken_file_exits_1_everywhere(tmp_path: Path) -> None:
    folder = tmp_path / "home"
    folder.mkdir()
    write(folder, "modle: x\n")
    listed = hermes(folder, "plugins", "list")
    assert listed.returncode == 0
    assert listed.stderr.count("did you mean 'model'?") == 1
    doctor = hermes(folder, "doctor")
    assert (doctor.stdout + doctor.stderr).count("did you mean 'model'?") == 1
    write(folder, "plugins: [unclosed\n")
    for args in (("plugins", "list"), ("hooks",), ("doctor",), ("config", "check")):
        result = hermes(folder, *args)
        assert result.returncode == 1, args
        said = result.stdout + result.stderr
        assert said.count("invalid YAML") == 1, (args, said)


def test_the_table_covers_what_set_accepts() -> None:
    assert parse_value("plugins.entries.x.allow_tool_override", "true") is True
    assert parse_value("model.max_retries", "3") == 3
    assert parse_value("anything.else", "[1, 2]") == [1, 2]
    # Every default fits its own key's type.
    for section in SECTIONS.values():
        for key in section.keys:
            if key.default is not None:
                key.kind.check(key.default)
    assert check_config({"model": "gpt-4.1"}) == []  # the short form of the model section


def test_the_config_reference_is_generated_from_the_table() -> None:
    from hermes_hooks.plugins.settings import render_reference

    reference = Path(__file__).resolve().parent.parent / "docs" / "reference" / "config.md"
    assert reference.read_text(encoding="utf-8") == render_reference(), (
        "docs/reference/config.md is out of date: run "
        "'python -m hermes_hooks.plugins.settings > docs/reference/config.md'"
    )
