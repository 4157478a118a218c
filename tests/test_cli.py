"""The ``hermes`` command, run as people and scripts run it: a real process on a temporary home."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from hermes_hooks import __version__
from hermes_hooks.cli import cli


def write_plugin(home: Path, name: str, init: str, manifest: str | None = None) -> Path:
    folder = home / "plugins" / name
    folder.mkdir(parents=True)
    (folder / "plugin.yaml").write_text(manifest or f"name: {name}\nversion: 1.2.3\n")
    (folder / "__init__.py").write_text(init)
    return folder


def enable(home: Path, *keys: str) -> None:
    (home / "config.yaml").write_text(
        "plugins:\n  enabled:\n" + "".join(f"    - {k}\n" for k in keys)
    )


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


def hermes(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERMES_")}
    env["HERMES_HOME"] = str(home)
    env["COLUMNS"] = "200"
    return subprocess.run(
        [sys.executable, "-m", "hermes_hooks", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


GOOD = (
    "from hermes_hooks import hookimpl\n\n"
    "@hookimpl\ndef pre_tool_call(tool_name):\n    return None\n"
)


def test_version() -> None:
    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0
    assert result.output.strip() == f"hermes, version {__version__}"


def test_list_shows_enabled_and_broken_plugins_with_the_error(home: Path) -> None:
    write_plugin(home, "good", GOOD)
    write_plugin(home, "broken", "raise RuntimeError('kaput')\n")
    write_plugin(home, "idle", GOOD)
    enable(home, "good", "broken")
    result = hermes(home, "plugins", "list")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["KEY", "STATUS", "VERSION", "KIND", "SOURCE", "DESCRIPTION"]
    rows = {line.split()[0]: line for line in lines[1:] if not line.startswith(" ")}
    assert rows["good"].split()[1] == "enabled"
    assert rows["broken"].split()[1] == "error"
    assert "not enabled" in rows["idle"]
    error_line = lines[lines.index(rows["broken"]) + 1]
    assert "RuntimeError: kaput" in error_line
    assert "broken/__init__.py:1" in error_line


def test_list_json_has_the_plugin_info_fields(home: Path) -> None:
    write_plugin(home, "good", GOOD)
    enable(home, "good")
    result = hermes(home, "plugins", "list", "--json")
    assert result.returncode == 0, result.stderr
    (info,) = json.loads(result.stdout)
    assert info["key"] == "good"
    assert info["status"] == "enabled"
    assert info["version"] == "1.2.3"
    assert info["source"] == "user"
    assert info["hooks"] == ["pre_tool_call"]
    assert info["error"] is None
    for field in ("name", "kind", "path", "tools", "commands", "skills"):
        assert field in info


def test_bundled_plugins_are_hidden_unless_all(home: Path) -> None:
    result = hermes(home, "plugins", "list", "--json")
    assert json.loads(result.stdout) == []
    everything = json.loads(hermes(home, "plugins", "list", "--all", "--json").stdout)
    assert {"command-guard", "tool-log"} <= {info["key"] for info in everything}
    assert {info["source"] for info in everything} == {"bundled"}


def test_empty_list_prints_a_hint(home: Path) -> None:
    result = hermes(home, "plugins", "list")
    assert result.returncode == 0
    assert "No plugins found" in result.stdout
    assert "--all" in result.stdout
    assert str(home / "plugins") in result.stdout


def test_list_filters_by_hook_and_enabled(home: Path) -> None:
    write_plugin(home, "good", GOOD)
    write_plugin(home, "other", "def register(ctx):\n    pass\n")
    write_plugin(home, "off", GOOD)
    enable(home, "good", "other")
    by_hook = json.loads(
        hermes(home, "plugins", "list", "--json", "--hook", "pre_tool_call").stdout
    )
    assert [i["key"] for i in by_hook] == ["good"]
    enabled = json.loads(hermes(home, "plugins", "list", "--json", "--enabled").stdout)
    assert [i["key"] for i in enabled] == ["good", "other"]


def test_broken_config_is_one_line_without_traceback(home: Path) -> None:
    (home / "config.yaml").write_text("plugins: [unclosed\n")
    result = hermes(home, "plugins", "list")
    assert result.returncode == 0  # the listing still works; the config error is reported
    assert "config.yaml" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_plugin_that_exits_does_not_end_the_command(home: Path) -> None:
    write_plugin(home, "quitter", "import sys\nsys.exit(3)\n")
    enable(home, "quitter")
    result = hermes(home, "plugins", "list", "--json")
    assert result.returncode == 0, result.stderr
    (info,) = json.loads(result.stdout)
    assert info["status"] == "error"
    assert "SystemExit" in info["error"]
