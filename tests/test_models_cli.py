"""``hermes models`` and ``hermes models use``, and ``hermes -z`` answering through a bundled
profile whose endpoint is a local HTTP server."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import clean_env, hermes, home, invoke, read_config
from host_helpers import ChatServer, chat_server
from plugin_builders import user_plugin, write_config

__all__ = ["chat_server", "home"]

PROVIDERS = ["anthropic", "deepseek", "fireworks", "groq", "lmstudio", "mistral", "offline",
             "ollama", "openai", "openai-compatible", "openrouter", "together", "xai"]  # fmt: skip


@pytest.fixture
def shipped(home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The home, with the shipped plugins (the bundled model providers) discoverable."""
    monkeypatch.delenv("HERMES_BUNDLED_PLUGINS")
    for name in ("OPENROUTER_API_KEY", "ANTHROPIC_API_KEY", "OPENROUTER_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    return home


def test_the_listing_shows_every_provider_its_aliases_mode_and_key(
    shipped: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-test")
    result = invoke("models", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert (data["provider"], data["active"], data["error"]) == ("offline", "offline", None)
    rows = {row["name"]: row for row in data["providers"]}
    assert sorted(rows) == PROVIDERS
    openrouter, anthropic, ollama = rows["openrouter"], rows["anthropic"], rows["ollama"]
    assert (openrouter["aliases"], openrouter["api_mode"]) == (["or"], "chat_completions")
    assert (openrouter["key"], openrouter["key_variable"]) == ("set", "OPENROUTER_API_KEY")
    assert openrouter["plugin"] == "model-providers/openrouter"
    assert (anthropic["api_mode"], anthropic["key"]) == ("anthropic_messages", "missing")
    assert anthropic["key_variables"] == ["ANTHROPIC_API_KEY"]
    assert (ollama["key"], ollama["base_url"]) == ("not needed", "http://127.0.0.1:11434/v1")
    assert rows["offline"]["active"] is True
    assert sorted(r["name"] for r in data["providers"] if r["plugin"] == "host") == [
        "offline",
        "openai-compatible",
    ]

    text = invoke("models").stdout
    assert "model.provider: offline    model.default: (not set)" in text
    assert "* offline" in text
    line = next(line for line in text.splitlines() if line.strip().startswith("openrouter"))
    assert line.split()[:4] == ["openrouter", "or", "chat_completions", "set"]
    line = next(line for line in text.splitlines() if line.strip().startswith("anthropic"))
    assert "missing: ANTHROPIC_API_KEY" in line


def test_use_writes_the_provider_and_model_atomically_by_name_or_alias(shipped: Path) -> None:
    write_config(
        shipped,
        ["x"],
        model={"provider": "openai-compatible", "name": "old", "base_url": "http://h/v1",
               "api_key_env": "OLD_KEY", "timeout": 30},
    )  # fmt: skip
    result = invoke("models", "use", "claude", "--model", "claude-haiku-4-5")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[:2] == [
        "model.provider = anthropic, model.default = claude-haiku-4-5",
        "removed model.name, model.base_url, model.api_key_env from config.yaml",
    ]
    assert "needs its API key in ANTHROPIC_API_KEY" in result.stderr
    config = read_config(shipped)
    assert isinstance(config, dict)
    assert config["model"] == {
        "provider": "anthropic",
        "default": "claude-haiku-4-5",
        "timeout": 30,
    }
    assert config["plugins"]["enabled"] == ["x"]  # the rest of the file is kept

    # Without --model: the profile's first suggestion when the provider changes...
    assert invoke("models", "use", "or").stdout.startswith(
        "model.provider = openrouter, model.default = anthropic/claude-sonnet-4.5"
    )
    # ... the model written when it does not.
    invoke("models", "use", "openrouter", "--model", "openai/gpt-4.1")
    written = json.loads(invoke("models", "use", "openrouter", "--json").stdout)
    assert written == {"provider": "openrouter", "model": "openai/gpt-4.1", "removed": []}


def test_use_refuses_unknown_names_unspoken_modes_and_a_missing_model(shipped: Path) -> None:
    user_plugin(
        shipped,
        "model-providers/codexish",
        "from providers import ProviderProfile, register_provider\n"
        "register_provider(ProviderProfile(name='codexish', api_mode='codex_responses'))\n",
        manifest={"kind": "model-provider"},
    )
    before = (shipped / "config.yaml").read_text() if (shipped / "config.yaml").exists() else None
    unknown = invoke("models", "use", "openruoter")
    assert unknown.exit_code == 2
    assert "no model provider is called 'openruoter'; did you mean 'openrouter'," in unknown.stderr
    assert "did you mean 'claude'" in invoke("models", "use", "claud").stderr  # aliases count
    mode = invoke("models", "use", "codexish")
    assert mode.exit_code == 2
    assert "uses api_mode 'codex_responses', which this version does not speak" in mode.stderr
    local = invoke("models", "use", "ollama")
    assert local.exit_code == 2
    assert "'ollama' suggests no model: give one with --model ID" in local.stderr
    after = (shipped / "config.yaml").read_text() if (shipped / "config.yaml").exists() else None
    assert after == before
    listed = {r["name"]: r for r in json.loads(invoke("models", "--json").stdout)["providers"]}
    assert (listed["codexish"]["api_mode"], listed["codexish"]["supported"]) == (
        "codex_responses",
        False,
    )
    assert "codex_responses (not supported)" in invoke("models").stdout


def test_plugins_list_imports_no_model_provider(shipped: Path) -> None:
    result = hermes(shipped, "plugins", "list", "--all", "--json")
    assert result.returncode == 0, result.stderr
    rows = {row["key"]: row for row in json.loads(result.stdout)}
    openrouter = rows["model-providers/openrouter"]
    assert (openrouter["status"], openrouter["kind"]) == ("not enabled", "model-provider")
    assert "imported on the first profile lookup" in openrouter["reason"]
    assert openrouter["providers"] == []


def test_oneshot_answers_through_a_profile_served_by_a_local_server(
    shipped: Path, chat_server: ChatServer
) -> None:
    write_config(
        shipped,
        model={"provider": "or", "default": "openai/gpt-4.1", "retry_backoff": 0},
        providers={"openrouter": {"base_url": chat_server.base_url}},
    )
    (shipped / ".env").write_text("OPENROUTER_API_KEY=sk-or-local-test\n", encoding="utf-8")
    chat_server.reply_tool_call("terminal", {"command": "echo via-openrouter"})
    chat_server.reply_text("It printed via-openrouter.")
    result = hermes(shipped, "-z", "run something", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert (data["provider"], data["model"], data["answer"]) == (
        "openrouter",
        "openai/gpt-4.1",
        "It printed via-openrouter.",
    )
    first, second = chat_server.requests
    assert first["path"] == "/v1/chat/completions"
    assert first["headers"]["Authorization"] == "Bearer sk-or-local-test"
    assert first["headers"]["X-Title"] == "hermes-hooks"  # the profile's default header
    assert first["json"]["model"] == "openai/gpt-4.1"
    assert "terminal" in [t["function"]["name"] for t in first["json"]["tools"]]
    tool_message = second["json"]["messages"][-1]
    assert tool_message["role"] == "tool"
    assert json.loads(tool_message["content"])["output"] == "via-openrouter\n"
    assert "sk-or-local-test" not in result.stdout + result.stderr


def test_oneshot_without_the_key_says_which_variable(shipped: Path) -> None:
    write_config(shipped, model={"provider": "anthropic"})
    result = invoke("-z", "hi")
    assert result.exit_code == 1
    assert result.stderr.startswith(
        "Error: model provider 'anthropic' needs an API key in ANTHROPIC_API_KEY, which is not set"
    )


def test_chat_runs_on_the_anthropic_profile_with_a_tool_use_turn(
    shipped: Path, chat_server: ChatServer
) -> None:
    write_config(
        shipped,
        model={"provider": "claude", "default": "claude-haiku-4-5", "retry_backoff": 0},
        providers={"anthropic": {"base_url": chat_server.root}},
    )
    (shipped / ".env").write_text("ANTHROPIC_API_KEY=sk-ant-local-test\n", encoding="utf-8")
    chat_server.reply_tool_use("terminal", {"command": "echo via-claude"})
    chat_server.reply_message({"type": "text", "text": "It printed via-claude."})
    result = subprocess.run(
        [sys.executable, "-m", "hermes_hooks", "chat"],
        env=clean_env(shipped),
        input="run something\n/exit\n",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("hermes chat on anthropic/claude-haiku-4-5")
    assert "It printed via-claude." in lines
    first, second = chat_server.requests
    assert first["path"] == "/v1/messages"
    assert first["headers"]["x-api-key"] == "sk-ant-local-test"
    assert first["json"]["model"] == "claude-haiku-4-5"
    (result_block,) = second["json"]["messages"][-1]["content"]
    assert (result_block["type"], result_block["tool_use_id"]) == ("tool_result", "toolu_1")
    assert "via-claude" in result_block["content"]
    assert "sk-ant-local-test" not in result.stdout + result.stderr
