"""The gateway's Hermes names: session keys, the Platform enum, config from YAML and the
environment, the registry's create_adapter, and the helpers adapters call."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest
from plugin_builders import isolated_home, user_plugin, write_config

from hermes_hooks.host import create_manager
from hermes_hooks.plugins.manager import PluginManager


def served(name: str) -> Any:
    """Import a Hermes module the compatibility layer serves (untyped, as plugins see it)."""
    return importlib.import_module(name)


ENV_PLATFORM = """
from gateway.config import Platform
from gateway.platforms._shared import get_scoped_secret, seed_extra_from_env
from gateway.platforms.base import BasePlatformAdapter, SendResult


class Adapter(BasePlatformAdapter):
    def __init__(self, config):
        super().__init__(config, Platform("envchat"))

    async def connect(self):
        return True

    async def disconnect(self):
        pass

    async def send(self, chat_id, content, reply_to=None, metadata=None):
        return SendResult(success=True)

    async def get_chat_info(self, chat_id):
        return {"name": chat_id, "type": "dm"}


def _enable():
    if not get_scoped_secret("ENVCHAT_SERVER"):
        return None
    return {"server": get_scoped_secret("ENVCHAT_SERVER"),
            **seed_extra_from_env((("ENVCHAT_PORT", "port", int),), home_env="ENVCHAT_HOME")}


INSTALLED = []


def register(ctx):
    ctx.register_platform("envchat", "Env chat", Adapter, lambda: bool(INSTALLED),
                          ensure_deps_fn=lambda: INSTALLED.append(1) or True,
                          validate_config=lambda cfg: "server" in cfg.extra,
                          env_enablement_fn=_enable, required_env=["ENVCHAT_SERVER"])
"""


@pytest.fixture
def pm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> PluginManager:
    home = isolated_home(tmp_path, monkeypatch)
    user_plugin(home, "envchat", ENV_PLATFORM, manifest={"kind": "platform"})
    write_config(home, ["envchat"])
    return create_manager(home)


def test_session_keys_are_hermes_keys(pm: PluginManager) -> None:
    _m = served("gateway.config")
    Platform = _m.Platform
    _m = served("gateway.session")
    SessionSource = _m.SessionSource
    build_session_key = _m.build_session_key

    dm = SessionSource(platform=Platform.TELEGRAM, chat_id="42", user_id="42")
    group = SessionSource(platform=Platform.DISCORD, chat_id="c1", chat_type="group", user_id="ann")
    thread = SessionSource(
        platform=Platform.DISCORD, chat_id="c1", chat_type="group", user_id="ann", thread_id="t9"
    )
    assert build_session_key(dm) == "agent:main:telegram:dm:42"
    assert build_session_key(group) == "agent:main:discord:group:c1:ann"
    assert build_session_key(group, group_sessions_per_user=False) == "agent:main:discord:group:c1"
    assert build_session_key(thread) == "agent:main:discord:group:c1:t9"
    assert build_session_key(thread, thread_sessions_per_user=True) == (
        "agent:main:discord:group:c1:t9:ann"
    )


def test_a_plugin_platform_is_an_identity_stable_member_and_others_are_refused(
    pm: PluginManager,
) -> None:
    _m = served("gateway.config")
    Platform = _m.Platform

    with pm.activate():
        assert Platform("envchat") is Platform("ENVCHAT")
        assert Platform("envchat").value == "envchat"
        with pytest.raises(ValueError, match="not a valid Platform"):
            Platform("no-such-platform")


def test_the_environment_enables_a_platform_and_create_adapter_installs_its_deps(
    pm: PluginManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    _m = served("gateway.config")
    Platform = _m.Platform
    load_gateway_config = _m.load_gateway_config
    _m = served("gateway.platform_registry")
    platform_registry = _m.platform_registry

    with pm.activate():
        assert load_gateway_config().get_connected_platforms() == []
        monkeypatch.setenv("ENVCHAT_SERVER", "chat.example")
        monkeypatch.setenv("ENVCHAT_PORT", "not a number")  # skipped, as in Hermes
        monkeypatch.setenv("ENVCHAT_HOME", "lobby")
        config = load_gateway_config()
        cfg = config.platforms[Platform("envchat")]
        assert cfg.enabled
        assert cfg.extra == {"server": "chat.example"}
        assert config.get_home_channel(Platform("envchat")).chat_id == "lobby"
        entry = platform_registry.get("envchat")
        assert entry is not None
        assert entry.owner == "envchat"
        adapter = platform_registry.create_adapter("envchat", cfg)  # check_fn False: installs
        assert adapter is not None
        assert adapter.platform is Platform("envchat")
        cfg.extra.clear()
        assert platform_registry.create_adapter("envchat", cfg) is None  # validate_config


def test_an_explicit_enabled_false_wins_over_the_environment(
    pm: PluginManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    _m = served("gateway.config")
    load_gateway_config = _m.load_gateway_config

    home = pm.hermes_home
    (home / "config.yaml").write_text(
        "plugins: {enabled: [envchat]}\ngateway: {platforms: {envchat: {enabled: false}}}\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("ENVCHAT_SERVER", "chat.example")
    with pm.activate():
        assert load_gateway_config().get_connected_platforms() == []


def test_adapter_helpers_behave_as_hermes(pm: PluginManager, tmp_path: Path) -> None:
    _m = served("gateway.platforms.base")
    BasePlatformAdapter = _m.BasePlatformAdapter
    MessageEvent = _m.MessageEvent
    _m = served("gateway.platforms.helpers")
    MessageDeduplicator = _m.MessageDeduplicator
    redact_phone = _m.redact_phone
    strip_markdown = _m.strip_markdown
    _m = served("gateway.status")
    acquire_scoped_lock = _m.acquire_scoped_lock
    release_scoped_lock = _m.release_scoped_lock
    _m = served("hermes_cli.colors")
    Colors = _m.Colors
    color = _m.color

    image = tmp_path / "cat.png"
    image.write_bytes(b"png")
    media, text = BasePlatformAdapter.extract_media(f"here\nMEDIA:{image}")
    assert (media, text) == ([(str(image), False)], "here")
    files, text = BasePlatformAdapter.extract_local_files(f"see {image} and `/no/such.png`")
    assert files == [str(image)]  # an existing path outside code only
    assert text == "see  and `/no/such.png`"
    chunks = BasePlatformAdapter.truncate_message("word " * 50, max_length=60)
    assert len(chunks) > 1
    assert chunks[0].endswith(f"(1/{len(chunks)})")
    assert MessageEvent(text="/Model@bot gpt").get_command() == "model"
    dedup = MessageDeduplicator()
    assert (dedup.is_duplicate("m1"), dedup.is_duplicate("m1")) == (False, True)
    assert strip_markdown("**bold** `code`") == "bold code"
    assert redact_phone("+15551234567") == "+155****4567"
    assert color("x", Colors.RED) == "x"  # not a terminal
    with pm.activate():
        first = acquire_scoped_lock("irc", "server:bot")
        assert first
        assert acquire_scoped_lock("irc", "server:bot")  # this process already holds it
        release_scoped_lock("irc", "server:bot")
        assert list((pm.hermes_home / "gateway-locks").glob("*.lock")) == []
