"""docs/how-to/model-providers.md is true: its plugin and test run, its table is the bundled
profiles, its config block reads as it says."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from plugin_builders import isolated_home, load, write_config

from hermes_hooks.backends.models import ModelSettings, get_models
from hermes_hooks.backends.models.profile_backend import ProfileBackend

pytest_plugins = ["pytester"]

HOW_TO = Path(__file__).resolve().parents[1] / "docs" / "how-to" / "model-providers.md"
_BLOCK = re.compile(r"^```(\w+)\n# file: (\S+)\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def how_to_files() -> dict[str, str]:
    """Return the files of the how-to's ``# file: PATH`` blocks, by path."""
    return {path: body for _, path, body in _BLOCK.findall(HOW_TO.read_text(encoding="utf-8"))}


def test_the_how_to_test_passes(pytester: pytest.Pytester) -> None:
    """The plugin and its test, as an author has them, in their own pytest run."""
    files = how_to_files()
    plugin = pytester.path / "nimbus"
    plugin.mkdir()
    for path, body in files.items():
        if path.startswith("nimbus/"):
            (plugin / path.removeprefix("nimbus/")).write_text(body, encoding="utf-8")
    pytester.makepyfile(test_nimbus=files["test_nimbus.py"])
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider", timeout=120)
    result.assert_outcomes(passed=2)


def test_the_table_is_the_bundled_profiles(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = isolated_home(tmp_path, monkeypatch, bundled=True)
    write_config(home)
    registry = get_models(load(home))
    text = HOW_TO.read_text(encoding="utf-8").partition("## The bundled profiles")[2]
    rows = re.findall(
        r"^\| `([\w-]+)` \| (.*?) \| `(\w+)` \| (.*?) \| `(\S+)` \| (.*?) \|$", text, re.M
    )
    documented = {name: rest for name, *rest in rows}
    profiles = {b.name: b for b in registry.list_providers() if isinstance(b, ProfileBackend)}
    assert sorted(documented) == sorted(profiles)
    for name, (aliases, mode, key, url, model) in documented.items():
        profile = profiles[name].profile
        assert re.findall(r"`([\w-]+)`", aliases) == list(profile.aliases), name
        assert (mode, url) == (profile.api_mode, profile.base_url), name
        assert re.findall(r"`(\w+)`", key) == list(profile.key_env_vars), name
        suggested = re.findall(r"`(\S+)`", model)
        assert suggested == list(profile.fallback_models[:1]), name


def test_the_config_block_reads_as_the_page_says() -> None:
    config = yaml.safe_load(how_to_files()["config.yaml"])
    settings = ModelSettings.from_config(config)
    assert (settings.provider, settings.name) == ("claude", "claude-haiku-4-5")
    assert (settings.connect_timeout, settings.timeout) == (10.0, 120.0)
    assert (settings.max_retries, settings.retry_backoff) == (3, 1.0)
    assert settings.entry("anthropic").base_url == "http://127.0.0.1:8080"
    openrouter = settings.entry("openrouter")
    assert (openrouter.api_key_env, openrouter.default) == ("MY_OPENROUTER_KEY", "openai/gpt-4.1")
