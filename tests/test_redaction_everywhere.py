"""``ctx.register_redaction_patterns``: the patterns a plugin (loaded from a folder) registers
apply to every redaction the host does: the terminal's output, the model transport's errors
and request log, the log records, approval requests; and stop when the plugin unloads.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from host_helpers import ChatServer, ScriptedModel, chat_server, text, tool_call
from plugin_builders import PluginHome, home

from hermes_hooks.backends.models import ModelError
from hermes_hooks.backends.models.openai_compat import OpenAICompatibleModel
from hermes_hooks.host import Session, create_manager
from hermes_hooks.plugins.manager import PluginManager
from hermes_hooks.plugins.newer_ctx import redact_everywhere

__all__ = ["chat_server", "home"]

SECRET = "rdx9_abcdef12"

PATTERNS = """
def register(ctx):
    ctx.register_redaction_patterns([r"rdx9_[a-z0-9]{8}", ".*", "ab("])
"""


def _loaded(home: PluginHome) -> PluginManager:
    home.add_plugin("redactor", PATTERNS)
    home.write_config()
    pm = create_manager(home.root)  # with the host's tools
    home.managers.append(pm)
    info = pm.get_plugin_info("redactor")
    assert info is not None
    assert info.status == "enabled", info.error
    return pm


def test_the_terminals_output_is_redacted_after_the_hook(home: PluginHome, tmp_path: Path) -> None:
    pm = _loaded(home)
    model = ScriptedModel(tool_call("terminal", {"command": f"echo key={SECRET}"}), text("ok"))
    result = Session(pm, model, cwd=tmp_path).run_turn("go")
    answer = json.loads(result.tool_calls[0].result)
    assert "output" in answer, answer
    output = answer["output"]
    assert output == "key=***\n"
    tool_messages = [m for m in model.requests[-1]["messages"] if m["role"] == "tool"]
    assert SECRET not in json.dumps(tool_messages)  # the model is shown the redacted output


def test_the_model_transports_errors_and_the_log_are_redacted(
    home: PluginHome, chat_server: ChatServer, caplog: pytest.LogCaptureFixture
) -> None:
    pm = _loaded(home)
    chat_server.reply({"error": {"message": f"bad token {SECRET}"}}, status=400)
    model = OpenAICompatibleModel(chat_server.base_url, "m", api_key="sk-real-key-123456")
    try:
        with pytest.raises(ModelError) as raised:
            model.complete([{"role": "user", "content": "x"}])
    finally:
        model.close()
    assert SECRET not in str(raised.value)
    assert "bad token ***" in str(raised.value)
    with caplog.at_level(logging.INFO, logger="hermes_hooks.test"):
        logging.getLogger("hermes_hooks.test").info("seen %s here", SECRET)
    assert caplog.records[-1].getMessage() == "seen *** here"
    pm.unload_all()
    assert redact_everywhere(f"x {SECRET}") == f"x {SECRET}"  # gone with its plugin


def test_bad_patterns_are_refused_alone(home: PluginHome, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        _loaded(home)
    messages = " ".join(r.getMessage() for r in caplog.records)
    assert "'.*'" in messages  # no literal start: it could match everything
    assert "does not compile" in messages
    assert redact_everywhere(f"a {SECRET} b") == "a *** b"


def test_security_redact_secrets_false_turns_the_plugins_patterns_off(home: PluginHome) -> None:
    import yaml

    home.add_plugin("redactor", PATTERNS)
    home.write_config()
    config = home.root / "config.yaml"
    data = yaml.safe_load(config.read_text())
    data["security"] = {"redact_secrets": False}
    config.write_text(yaml.safe_dump(data))
    pm = create_manager(home.root)
    home.managers.append(pm)
    assert redact_everywhere(f"a {SECRET}") == f"a {SECRET}"  # as Hermes: off for all
