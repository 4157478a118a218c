"""``hermes plugins doctor`` checks a model-provider plugin's profile as model.provider would
use it (it loads the plugin as the first profile lookup does)."""

from __future__ import annotations

from pathlib import Path

from cli_support import hermes
from plugin_builders import write_plugin

PROFILE = """\
from hermes_hooks import ProviderProfile

def register(ctx):
    ctx.register_model_provider(ProviderProfile(
        name="{name}", api_mode="{mode}", base_url="{url}", env_vars=("{name_upper}_KEY",),
    ))
"""


def profile_plugin(root: Path, name: str, mode: str, url: str) -> Path:
    code = PROFILE.format(name=name, mode=mode, url=url, name_upper=name.upper())
    return write_plugin(root, name, code, manifest={"kind": "model-provider"})


def test_a_good_profile_is_described_and_a_bad_one_is_an_error(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    good = profile_plugin(tmp_path / "src", "goodprov", "chat_completions", "https://x.test/v1")
    bad = profile_plugin(tmp_path / "src", "badprov", "bedrock_converse", "ftp://x.test")
    said = hermes(home, "plugins", "doctor", str(good))
    assert said.returncode == 0, said.stdout + said.stderr
    assert "profile 'goodprov': chat_completions at https://x.test/v1" in said.stdout
    refused = hermes(home, "plugins", "doctor", str(bad))
    assert refused.returncode == 1
    assert "api_mode 'bedrock_converse' is not spoken" in refused.stdout
    assert "base_url 'ftp://x.test' is not an http(s) URL" in refused.stdout
