"""``hermes tools`` on a terminal: choose a family, a provider and a model, and enter a key."""

from __future__ import annotations

import stat
from pathlib import Path

import yaml
from homes import bundled_home as home  # noqa: F401  (the fixture)
from terminal_support import Terminal

from hermes_hooks.admin.envfile import read_env_file


def test_the_picker_writes_the_choice_and_saves_a_missing_key(home: Path) -> None:
    term = Terminal(home, "tools", env={"OPENAI_API_KEY": ""})
    term.expect("image_generate")  # the listing comes first
    term.expect("Configure a provider family:")
    term.expect("1) Image generation  (now: local)")
    term.expect("Choose [q]:")
    term.type("1\r")
    menu = term.expect("Choose [")
    openai = next(line for line in menu.splitlines() if ") openai  OpenAI" in line)
    assert "needs OPENAI_API_KEY" in openai
    term.type(openai.strip().split(")")[0] + "\r")
    term.expect("Models of openai:")
    term.expect("Choose [2]:")  # the provider's default model
    term.type("3\r")
    term.expect("OPENAI_API_KEY is not set")
    term.expect("empty to skip):")
    term.type("sk-test-123\r")
    term.expect("Saved OPENAI_API_KEY in")
    term.expect("image_gen.provider = openai, image_gen.model = gpt-image-2-high")
    term.expect("Choose [q]:")
    term.type("q\r")
    assert term.wait() == 0
    assert "sk-test-123" not in term.seen  # the key is never echoed
    config = yaml.safe_load((home / "config.yaml").read_text(encoding="utf-8"))
    assert config["image_gen"] == {"provider": "openai", "model": "gpt-image-2-high"}
    assert read_env_file(home) == {"OPENAI_API_KEY": "sk-test-123"}
    assert stat.S_IMODE((home / ".env").stat().st_mode) == 0o600


def test_off_a_terminal_it_only_lists(home: Path) -> None:
    from click.testing import CliRunner

    from hermes_hooks.cli import cli

    result = CliRunner().invoke(cli, ["--home", str(home), "tools"], input="1\n")
    assert result.exit_code == 0
    assert "Configure a provider family" not in result.output
    config = home / "config.yaml"
    assert not config.exists() or "image_gen" not in config.read_text(encoding="utf-8")
