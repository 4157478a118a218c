"""``hermes tools image-gen``: list the providers, choose one and its model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result
from homes import detached_bundled_home as home  # noqa: F401  (the fixture)
from PIL import Image
from plugin_builders import write_config

from hermes_hooks.cli.main import cli


@pytest.fixture(autouse=True)
def tool_log_enabled(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test starts with no OpenAI key and a config that enables ``tool-log`` (which the
    command must keep)."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    write_config(home, text="plugins:\n  enabled: [tool-log]\n")


def run(home: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--home", str(home), "tools", "image-gen", *args])


def config(home: Path) -> dict[str, Any]:
    data = yaml.safe_load((home / "config.yaml").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def test_lists_the_providers_with_availability_models_and_needs(home: Path) -> None:
    result = run(home)
    assert result.exit_code == 0, result.output
    out = result.output
    assert "image_gen.provider: (not set)" in out
    assert "* local  Local placeholder [offline]  (available; plugin image_gen/local)" in out
    assert "  openai  OpenAI [paid]  (not available; plugin image_gen/openai)" in out
    assert "models: gpt-image-2-low, gpt-image-2-medium (default), gpt-image-2-high" in out
    assert "needs OPENAI_API_KEY (missing)  https://platform.openai.com/api-keys" in out
    assert "input: text and images (editing)" in out
    assert "* serves image_generate: local" in out


def test_json_listing(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    data = json.loads(run(home, "--json").output)
    assert (data["provider"], data["model"], data["active"], data["error"]) == (
        None,
        None,
        "local",
        None,
    )
    by_name = {p["name"]: p for p in data["providers"]}
    assert sorted(by_name) == ["comfyui", "local", "openai"]
    openai = by_name["openai"]
    assert (openai["available"], openai["plugin"], openai["default_model"]) == (
        True,
        "image_gen/openai",
        "gpt-image-2-medium",
    )
    assert openai["env_vars"][0]["key"] == "OPENAI_API_KEY"
    assert openai["env_vars"][0]["set"] is True
    assert by_name["local"]["active"] is True


def test_choosing_a_provider_writes_it_with_its_default_model(home: Path) -> None:
    result = run(home, "--provider", "openai")
    assert result.exit_code == 0, result.output
    assert "image_gen.provider = openai, image_gen.model = gpt-image-2-medium" in result.output
    assert "'openai' is not available yet" in result.output
    assert config(home) == {
        "plugins": {"enabled": ["tool-log"]},
        "image_gen": {"provider": "openai", "model": "gpt-image-2-medium"},
    }
    assert "* openai" in run(home).output

    assert run(home, "--provider", "openai", "--model", "gpt-image-2-high").exit_code == 0
    assert config(home)["image_gen"]["model"] == "gpt-image-2-high"
    assert run(home, "--model", "gpt-image-2-low").exit_code == 0
    assert config(home)["image_gen"] == {"provider": "openai", "model": "gpt-image-2-low"}


def test_switching_to_a_provider_without_a_catalog_drops_the_old_model(home: Path) -> None:
    run(home, "--provider", "openai", "--model", "gpt-image-2-high")
    result = run(home, "--provider", "comfyui", "--json")
    assert json.loads(result.output) == {"provider": "comfyui", "model": None, "available": False}
    assert config(home)["image_gen"] == {"provider": "comfyui"}
    assert run(home, "--model", "dreamshaper_8.safetensors").exit_code == 0
    assert config(home)["image_gen"]["model"] == "dreamshaper_8.safetensors"


def test_unknown_provider_and_model_are_refused_with_the_known_names(home: Path) -> None:
    result = run(home, "--provider", "opnai")
    assert result.exit_code == 2
    assert "no image provider named 'opnai'; did you mean 'openai'?" in result.output
    result = run(home, "--provider", "openai", "--model", "dall-e-3")
    assert result.exit_code == 2
    assert "provider 'openai' has no model 'dall-e-3'; its models: gpt-image-2-low" in result.output
    assert config(home) == {"plugins": {"enabled": ["tool-log"]}}


def test_a_configured_provider_that_is_gone_is_reported(home: Path) -> None:
    (home / "config.yaml").write_text("image_gen: {provider: gone}\n", encoding="utf-8")
    result = run(home)
    assert result.exit_code == 0
    assert "image_gen.provider is 'gone', but no loaded plugin registered" in result.output
    assert "* serves image_generate" not in result.output


def test_hermes_z_on_a_fresh_home_writes_a_png_and_prints_its_path(tmp_path: Path) -> None:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("HERMES_", "OPENAI_"))
    }
    home = tmp_path / "fresh-home"
    env.update(HOME=str(tmp_path), HERMES_HOME=str(home))
    done = subprocess.run(
        [sys.executable, "-m", "hermes_hooks", "-z", "Generate an image of a corgi in a spacesuit"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    (png,) = (home / "cache" / "images").glob("*.png")
    assert str(png) in done.stdout
    assert "not a generative model" in done.stdout
    with Image.open(png) as image:
        assert (image.format, image.size) == ("PNG", (1536, 1024))
