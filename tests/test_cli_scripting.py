"""``hermes -z`` as a scripting tool: the answer alone on stdout, stdin prompts, exit codes,
and a model chosen for one run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from cli_support import clean_env
from plugin_builders import user_plugin, write_config

NOISY = """\
print("loading noisy")

def register(ctx):
    print("registering noisy")
    def shout(**kwargs):
        print("a hook prints")
    ctx.register_hook("pre_llm_call", shout)
"""


def run(home: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hermes_hooks", *args],
        env=clean_env(home),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_only_the_answer_goes_to_stdout_and_stdin_gives_the_prompt(tmp_path: Path) -> None:
    home = tmp_path / "home"
    user_plugin(home, "noisy", NOISY)
    write_config(home, ["noisy"])
    result = run(home, "-z", "-", stdin="run `echo piped`\n")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Ran `echo piped` (exit code 0):\npiped\n"
    for printed in ("loading noisy", "registering noisy", "a hook prints"):
        assert printed in result.stderr


def test_an_empty_prompt_is_a_usage_error(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    assert run(home, "-z", "  ").returncode == 2
    from_stdin = run(home, "-z", "-", stdin="\n")
    assert from_stdin.returncode == 2
    assert "-z needs a prompt; stdin gave an empty one" in from_stdin.stderr


def test_model_and_provider_choose_for_this_run_only(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text("model:\n  provider: offline\n  name: kept\n")
    chosen = run(home, "-z", "hi", "--json", "-m", "other-model", "--provider", "offline")
    assert chosen.returncode == 0, chosen.stderr
    assert json.loads(chosen.stdout)["model"] == "other-model"
    assert (home / "config.yaml").read_text() == "model:\n  provider: offline\n  name: kept\n"
    unknown = run(home, "-z", "hi", "--provider", "nosuch")
    assert unknown.returncode == 1
    assert unknown.stdout == ""
    assert "'nosuch' is unknown" in unknown.stderr
