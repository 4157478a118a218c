"""The terminal-environment and secret-source families, through plugins loaded from folders:
the ``terminal`` tool runs where ``terminal.backend`` says (here by default), and credentials
come from the enabled secret sources after ``.env``; each with its failures.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from host_helpers import ScriptedModel, text, tool_call
from plugin_builders import PluginHome, home

from hermes_hooks.backends.secret_sources import apply_secret_sources
from hermes_hooks.host import Session, create_manager

__all__ = ["home"]

SANDBOX = """
from agent.terminal_env_provider import TerminalEnvironmentProvider

class Env:
    def __init__(self, cwd, task_id):
        self.cwd, self.task_id, self.ran = cwd, task_id, []
    def execute(self, command, cwd="", *, timeout=None, **kwargs):
        self.ran.append(command)
        if command == "explode":
            raise RuntimeError("sandbox lost")
        return {"output": f"[sandbox {self.task_id}] {command} ({len(self.ran)})",
                "returncode": 7}
    def cleanup(self):
        import os, pathlib
        pathlib.Path(os.environ["SANDBOX_CLEANED"]).write_text("yes")

class Sandbox(TerminalEnvironmentProvider):
    name = "sandbox"
    @property
    def strip_env_keys(self):
        return frozenset({"SANDBOX_VENDOR_TOKEN"})
    def is_available(self):
        return True
    def create_environment(self, *, cwd, timeout, task_id="default", **kwargs):
        return Env(cwd, task_id)

class Bad(TerminalEnvironmentProvider):
    name = "docker"
    def is_available(self):
        return True
    def create_environment(self, **kwargs):
        return None

class Shouty(Bad):
    name = "Loud Box"

class Broken(Bad):
    name = "broken"
    def create_environment(self, **kwargs):
        return object()

def register(ctx):
    ctx.register_terminal_environment_provider(Sandbox())
    ctx.register_terminal_environment_provider(Bad())
    ctx.register_terminal_environment_provider(Shouty())
    ctx.register_terminal_environment_provider(Broken())
"""


def _terminal(pm: Any, tmp_path: Path, *commands: str) -> list[dict[str, Any]]:
    calls = [tool_call("terminal", {"command": c}) for c in commands]
    model = ScriptedModel(*calls, text("done"))
    result = Session(pm, model, cwd=tmp_path).run_turn("go")
    return [json.loads(call.result) for call in result.tool_calls]


def _config(home: PluginHome, **sections: Any) -> None:
    home.write_config()
    path = home.root / "config.yaml"
    data = yaml.safe_load(path.read_text()) or {}
    data.update(sections)
    path.write_text(yaml.safe_dump(data))


def test_the_terminal_runs_locally_by_default_and_in_the_chosen_environment(
    home: PluginHome, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TERMINAL_ENV", raising=False)
    monkeypatch.setenv("SANDBOX_CLEANED", str(tmp_path / "cleaned"))
    home.add_plugin("sandbox", SANDBOX)
    _config(home)
    pm = create_manager(home.root)
    home.managers.append(pm)
    info = pm.get_plugin_info("sandbox")
    assert info is not None
    assert info.status == "enabled"
    warnings = " ".join(info.warnings)
    assert "'docker'" in warnings  # a built-in backend's name is refused
    assert "built-in terminal backend" in warnings
    assert "Loud Box" in warnings  # so is a name terminal.backend cannot hold
    monkeypatch.setenv("SANDBOX_VENDOR_TOKEN", "vendor-secret")
    [local] = _terminal(pm, tmp_path, "echo here ${SANDBOX_VENDOR_TOKEN:-stripped}")
    assert local == {"output": "here stripped\n", "exit_code": 0}  # its vendor key is not passed

    _config(home, terminal={"backend": "sandbox"})
    first, second = _terminal(pm, tmp_path, "echo one", "echo two")
    assert first["output"].startswith("[sandbox ")
    assert first["exit_code"] == 7
    assert second["output"].endswith("echo two (2)")  # one environment per task, kept
    pm.unload_plugin("sandbox")
    assert (tmp_path / "cleaned").read_text() == "yes"  # its environments are cleaned up


def test_a_failing_or_missing_terminal_environment_is_an_error_envelope(
    home: PluginHome, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SANDBOX_CLEANED", str(tmp_path / "cleaned"))
    home.add_plugin("sandbox", SANDBOX)
    _config(home, terminal={"backend": "sandbox"})
    pm = create_manager(home.root)
    home.managers.append(pm)
    [raised] = _terminal(pm, tmp_path, "explode")
    assert raised["exit_code"] == -1
    assert "sandbox lost" in raised["error"]
    assert "sandbox lost" in str(pm.get_plugin_info("sandbox").last_hook_error)  # type: ignore[union-attr]

    monkeypatch.setenv("TERMINAL_ENV", "nowhere")  # read before terminal.backend, as Hermes
    [missing] = _terminal(pm, tmp_path, "echo hi")
    assert "'nowhere'" in missing["error"]
    assert "sandbox" in missing["error"]  # what is registered
    monkeypatch.setenv("TERMINAL_ENV", "broken")
    [broken] = _terminal(pm, tmp_path, "echo hi")
    assert "no execute" in broken["error"]
    monkeypatch.setenv("TERMINAL_ENV", "docker")
    [builtin] = _terminal(pm, tmp_path, "echo hi")
    assert "built-in backend of Hermes" in builtin["error"]


VAULT = """
import os
from agent.secret_sources.base import ErrorKind, FetchResult, SecretSource

class Vault(SecretSource):
    name = "vault"
    label = "Test vault"
    def fetch(self, cfg, home_path):
        values = dict(cfg.get("values") or {})
        return FetchResult(secrets=values)
    def protected_env_vars(self, cfg):
        return frozenset({"VAULT_TOKEN"})

class Bulk(SecretSource):
    name = "bulk"
    shape = "bulk"
    def fetch(self, cfg, home_path):
        return FetchResult(secrets={"SHARED_KEY": "from-bulk", "BULK_ONLY": "b"})

class Cli(SecretSource):
    name = "cli"
    def fetch(self, cfg, home_path):
        import sys
        from agent.secret_sources.base import run_secret_cli
        done = run_secret_cli([sys.executable, "-c",
                               "import os; print(os.environ.get('LEAKY', 'clean'))"])
        return FetchResult(secrets={"CLI_KEY": done.stdout.strip(), "PINNED_KEY": "vault"})
    def override_existing(self, cfg):
        return True

class Down(SecretSource):
    name = "down"
    def fetch(self, cfg, home_path):
        return FetchResult().fail("vault sealed", ErrorKind.AUTH_FAILED)

class Raises(SecretSource):
    name = "raises"
    def fetch(self, cfg, home_path):
        raise RuntimeError("boom")

class Wrong(SecretSource):
    name = "wrong"
    def fetch(self, cfg, home_path):
        return {"NOT": "a result"}

class Old(SecretSource):
    name = "old"
    api_version = 0
    def fetch(self, cfg, home_path):
        return FetchResult()

class Upper(SecretSource):
    name = "Upper"
    def fetch(self, cfg, home_path):
        return FetchResult()

def register(ctx):
    for source in (Vault(), Bulk(), Cli(), Down(), Raises(), Wrong(), Old(), Upper()):
        ctx.register_secret_source(source)
"""


def test_secret_sources_fill_the_environment_after_dotenv(
    home: PluginHome, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("SHARED_KEY", "BULK_ONLY", "DOTENV_KEY", "VAULT_TOKEN", "CLI_KEY", "PINNED_KEY"):
        monkeypatch.setenv(name, "set")  # so that the test's changes are undone after it
        monkeypatch.delenv(name)
    home.add_plugin("vault", VAULT)
    (home.root / ".env").write_text("DOTENV_KEY=from-dotenv\n")
    values = {
        "SHARED_KEY": "from-vault",
        "DOTENV_KEY": "from-vault",
        "VAULT_TOKEN": "stolen",
        "BAD NAME": "x",
    }
    _config(
        home,
        secrets={
            "sources": ["bulk", "vault"],
            "preserve_existing": ["PINNED_KEY"],
            "cli": {"enabled": True},
            "vault": {"enabled": True, "values": values},
            "bulk": {"enabled": True},
            "down": {"enabled": True},
            "raises": {"enabled": True},
            "wrong": {"enabled": True},
            "old": {"enabled": True},
        },
    )
    pm = create_manager(home.root)
    home.managers.append(pm)
    warnings = " ".join(pm.get_plugin_info("vault").warnings)  # type: ignore[union-attr]
    assert "v0" in warnings  # another contract version is refused
    assert "'Upper'" in warnings
    environ = {"DOTENV_KEY": "from-dotenv", "PINNED_KEY": "local", "LEAKY": "x"}
    report = apply_secret_sources(pm, environ)
    assert environ["CLI_KEY"] == "clean"  # the vault's CLI never sees the environment
    assert environ["PINNED_KEY"] == "local"  # preserve_existing beats override_existing
    assert environ["SHARED_KEY"] == "from-vault"  # mapped beats bulk, whatever the order
    assert environ["BULK_ONLY"] == "b"
    assert environ["DOTENV_KEY"] == "from-dotenv"  # no override_existing: .env kept
    assert "VAULT_TOKEN" not in environ  # protected
    assert "BAD NAME" not in environ
    assert report.provenance == {"SHARED_KEY": "vault", "BULK_ONLY": "bulk", "CLI_KEY": "cli"}
    assert any("SHARED_KEY" in c for c in report.conflicts)
    failed = {part.name: part.result.error for part in report.sources if not part.result.ok}
    assert failed["down"] == "vault sealed"
    assert "boom" in str(failed["raises"])
    assert "instead of FetchResult" in str(failed["wrong"])
    # create_manager applied them to os.environ too, after the plugins loaded.
    assert os.environ.get("SHARED_KEY") == "from-vault"


def test_no_enabled_source_leaves_the_environment_as_dotenv_made_it(
    home: PluginHome,
) -> None:
    home.add_plugin("vault", VAULT)
    _config(home, secrets={"vault": {"enabled": False, "values": {"X_KEY": "v"}}})
    pm = home.load()
    environ: dict[str, str] = {}
    report = apply_secret_sources(pm, environ)
    assert environ == {}
    assert report.sources == []
    _config(home, secrets={"sources": "vault"})
    assert "secrets.sources must be a list" in str(apply_secret_sources(pm, environ).error)


HOW_TO = Path(__file__).resolve().parents[1] / "docs" / "how-to" / "terminal-and-secrets.md"
_BLOCK = re.compile(r"^```\w+\n# file: (\S+)\n(.*?)^```$", re.MULTILINE | re.DOTALL)
_YAML = re.compile(r"^```yaml\n# config.yaml\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def test_the_how_tos_plugins_run_the_terminal_and_fill_a_secret(
    home: PluginHome, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TERMINAL_ENV", raising=False)
    monkeypatch.setenv("MY_API_KEY", "set")
    monkeypatch.delenv("MY_API_KEY")
    text_ = HOW_TO.read_text("utf-8")
    for path, body in _BLOCK.findall(text_):
        target = home.plugins / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(body, encoding="utf-8")
    merged: dict[str, Any] = {}
    for block in _YAML.findall(text_):
        for key, value in yaml.safe_load(block).items():
            if key == "plugins":
                merged.setdefault("plugins", {"enabled": []})["enabled"] += value["enabled"]
            else:
                merged[key] = value
    (home.root / "config.yaml").write_text(yaml.safe_dump(merged))
    pm = create_manager(home.root)
    home.managers.append(pm)
    [ran] = _terminal(pm, tmp_path, "echo inside")
    assert ran == {"output": "[box] inside\n", "exit_code": 0}
    assert os.environ["MY_API_KEY"] == "value-of-team/my-api"
