"""What Hermes' shipped platform plugins need at load time, on plugins of their shape: a
``Platform("<folder>")`` at import, ``plugins.platforms.<folder>`` self-imports, and the helper
names of ``gateway.platforms.base`` / ``helpers``, ``agent.async_utils`` and
``agent.secret_scope`` they call."""

from __future__ import annotations

import asyncio
import importlib
from pathlib import Path
from typing import Any

import pytest
from homes import compat_home as home  # noqa: F401  (the fixture)
from plugin_builders import user_plugin, write_config

from hermes_hooks.host import create_manager

# The shape of Hermes' plugins/platforms/<name>/: a thin __init__, the adapter module naming
# its platform at import, a sibling module imported by Hermes' package path.
INIT = "from .adapter import register\n"
ADAPTER = """
from gateway.config import Platform
from gateway.platforms.base import BasePlatformAdapter, SendResult, utf16_len
from plugins.platforms.chatbox.ids import normalize_id

Platform("chatbox")  # before register(): Hermes knows its shipped platform folders


class ChatboxAdapter(BasePlatformAdapter):
    def __init__(self, config):
        super().__init__(config, Platform.CHATBOX)

    async def connect(self):
        return True

    async def disconnect(self):
        pass

    async def send(self, chat_id, content, reply_to=None, metadata=None):
        return SendResult(success=True)

    async def get_chat_info(self, chat_id):
        return {"name": normalize_id(chat_id), "type": "dm"}


def register(ctx):
    ctx.register_platform(
        name="chatbox", label="Chatbox", adapter_factory=ChatboxAdapter, check_fn=lambda: True
    )
"""
IDS = "def normalize_id(value):\n    return str(value).strip().lower()\n"


def served(name: str) -> Any:
    """Import a Hermes module the compatibility layer serves (untyped, as plugins see it)."""
    return importlib.import_module(name)


def test_a_platform_plugin_names_its_folder_and_imports_itself_by_hermes_path(home: Path) -> None:
    user_plugin(
        home,
        "chatbox",
        INIT,
        manifest={"name": "chatbox-platform", "kind": "platform"},
        files={"adapter.py": ADAPTER, "ids.py": IDS},
    )
    write_config(home, ["chatbox-platform"])
    pm = create_manager(home)
    info = pm.get_plugin_info("chatbox-platform")
    assert info is not None
    assert (info.status, info.error, info.platforms) == ("enabled", None, ("chatbox",))
    with pm.activate():
        platform = served("gateway.config").Platform
        assert platform("chatbox").value == "chatbox"
        with pytest.raises(ValueError, match="not a valid Platform"):
            platform("nosuchchat")
        ids = served("plugins.platforms.chatbox.ids")
        assert ids.normalize_id(" Ann ") == "ann"


def test_proxy_resolution_and_no_proxy(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base = served("gateway.platforms.base")
    for name in ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "https_proxy", "http_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("all_proxy", raising=False)
    monkeypatch.setenv("HTTPS_PROXY", "socks://127.0.0.1:1080")
    assert base.resolve_proxy_url() == "socks5://127.0.0.1:1080"
    monkeypatch.setenv("DISCORD_PROXY", "http://127.0.0.1:3128")
    assert base.resolve_proxy_url("DISCORD_PROXY") == "http://127.0.0.1:3128"
    monkeypatch.setenv("NO_PROXY", "localhost,.example.com,10.0.0.0/8")
    assert base.resolve_proxy_url(target_hosts="api.example.com") is None
    assert base.resolve_proxy_url(target_hosts=["10.1.2.3"]) is None
    assert base.resolve_proxy_url(target_hosts="discord.com") == "socks5://127.0.0.1:1080"
    assert base.is_host_excluded_by_no_proxy("a.b.example.com")
    assert not base.is_host_excluded_by_no_proxy("example.org")
    assert base.proxy_kwargs_for_aiohttp(None) == ({}, {})
    session_kwargs, request_kwargs = base.proxy_kwargs_for_aiohttp("http://127.0.0.1:3128")
    assert "connector" in session_kwargs or request_kwargs == {"proxy": "http://127.0.0.1:3128"}


def test_text_and_error_helpers(home: Path) -> None:
    base = served("gateway.platforms.base")
    helpers = served("gateway.platforms.helpers")
    assert base.utf16_len("a😀") == 3
    assert base._prefix_within_utf16_limit("ab😀c", 3) == "ab"  # never half an emoji
    assert (
        base.safe_url_for_log("https://u:p@h.io/a/b/file.png?token=x")
        == "https://h.io/.../file.png"
    )
    assert base.classify_send_error(RuntimeError("Bad Request: message is too long")) == "too_long"
    assert base.classify_send_error(None, "Forbidden: bot was blocked by the user") == "forbidden"
    assert base.classify_send_error(ConnectionResetError()) == "transient"
    assert base.classify_send_error(None, "Too Many Requests: retry after 5") == "rate_limited"
    assert base.classify_send_error(ValueError("odd")) == "unknown"
    assert base.is_chat_level_not_found(None, "Bad Request: chat not found")
    assert not base.is_chat_level_not_found(None, "chat not found: thread not found")
    table = "before\n| name | age |\n|---|---|\n| ann | 31 |\n```\n| a | b |\n|---|---|\n```"
    assert helpers.convert_table_to_bullets(table) == (
        "before\n**ann**\n• age: 31\n```\n| a | b |\n|---|---|\n```"
    )
    with pytest.raises(ValueError, match="too large"):
        base.validate_inbound_media_size(11, media_type="video", max_bytes=10)


def test_pending_events_merge_as_hermes_does(home: Path) -> None:
    base = served("gateway.platforms.base")
    event, kind = base.MessageEvent, base.MessageType
    pending: dict[str, Any] = {}
    base.merge_pending_message_event(
        pending,
        "k",
        event(text="one", message_type=kind.PHOTO, media_urls=["a"], media_types=["image/png"]),
    )
    base.merge_pending_message_event(
        pending,
        "k",
        event(text="two", message_type=kind.PHOTO, media_urls=["b"], media_types=["image/png"]),
    )
    assert (pending["k"].media_urls, pending["k"].text) == (["a", "b"], "one\n\ntwo")
    base.merge_pending_message_event(pending, "t", event(text="hi"))
    base.merge_pending_message_event(pending, "t", event(text="there"), merge_text=True)
    assert pending["t"].text == "hi\nthere"
    base.merge_pending_message_event(pending, "t", event(text="new"))  # replaces
    assert pending["t"].text == "new"


def test_cache_media_bytes_classifies(home: Path) -> None:
    base = served("gateway.platforms.base")
    video = base.cache_media_bytes(b"\x00\x00", filename="clip.mov")
    assert (video.kind, video.media_type) == ("video", "video/quicktime")
    assert Path(video.path).read_bytes() == b"\x00\x00"
    document = base.cache_media_bytes(b"%PDF-1.7", mime_type="application/pdf")
    assert (document.kind, document.media_type) == ("document", "application/pdf")
    assert document.context_note().startswith("[document 'pdf' saved at: ")


def test_secret_scope_and_async_utils(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scope = served("agent.secret_scope")
    monkeypatch.setenv("SLACK_BOT_TOKEN", "from-env")
    assert scope.get_secret("SLACK_BOT_TOKEN") == "from-env"
    token = scope.set_secret_scope({"SLACK_BOT_TOKEN": "scoped"})
    try:
        assert scope.get_secret("SLACK_BOT_TOKEN") == "scoped"
        assert scope.get_secret("OTHER", "d") == "d"
    finally:
        scope.reset_secret_scope(token)
    scope.set_multiplex_active(True)
    try:
        with pytest.raises(scope.UnscopedSecretError):
            scope.get_secret("SLACK_BOT_TOKEN")
        assert scope.get_secret("PATH") is not None  # deployment-wide: always the environment
    finally:
        scope.set_multiplex_active(False)
    (home / ".env").write_text('A=1\nexport B="two words"\n# c\n', encoding="utf-8")
    assert scope.build_profile_secret_scope(home) == {"A": "1", "B": "two words"}

    tools = served("agent.async_utils")

    async def answer() -> int:
        return 42

    assert tools.safe_schedule_threadsafe(answer(), None) is None  # closed, no warning

    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        future = await asyncio.to_thread(tools.safe_schedule_threadsafe, answer(), loop)
        assert await asyncio.wrap_future(future) == 42

    asyncio.run(scenario())


def test_is_connected_checks_read_the_home_env_through_hermes_cli_gateway(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TWILIO_ACCOUNT_SID", raising=False)
    (home / ".env").write_text("TWILIO_ACCOUNT_SID=AC123\n", encoding="utf-8")
    pm = create_manager(home)
    with pm.activate():
        gateway_mod = served("hermes_cli.gateway")  # as Hermes' sms plugin's _is_connected does
        assert gateway_mod.get_env_value("TWILIO_ACCOUNT_SID") == "AC123"
        assert gateway_mod.get_env_value("NOT_SET_ANYWHERE") is None


def test_process_helpers_tell_live_dead_and_zombie_processes(home: Path) -> None:
    import os
    import subprocess
    import sys
    import time

    status = served("gateway.status")
    me = os.getpid()
    assert status._pid_exists(me)
    started = status.get_process_start_time(me)
    assert started is not None
    assert started == status.get_process_start_time(me)  # a stable fingerprint
    assert "python" in (status._read_process_cmdline(me) or "").lower()
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    deadline = 50
    while deadline and status._pid_exists(child.pid):  # exits, then is a zombie until reaped
        deadline -= 1
        time.sleep(0.05)
    assert not status._pid_exists(child.pid)
    child.wait()


def test_channel_settings_and_lazy_binding(home: Path) -> None:
    base = served("gateway.platforms.base")
    extra = {
        "channel_prompts": {"C1": " be brief ", "C2": "  "},
        "channel_skill_bindings": [{"id": "C9", "skills": ["a", "b", "a", 3]}, {"id": "C1"}],
    }
    assert base.resolve_channel_prompt(extra, "C1") == "be brief"
    assert base.resolve_channel_prompt(extra, "T5", "C1") == "be brief"  # a thread inherits
    assert base.resolve_channel_prompt(extra, "C2") is None
    assert base.resolve_channel_skills(extra, "T1", "C9") == ["a", "b"]
    assert base.resolve_channel_skills({}, "C9") is None
    lazy = served("tools.lazy_deps")
    bound: dict[str, Any] = {}
    assert lazy.ensure_and_bind("platform.nosuch", lambda: {"X": 1}, bound) is False
    assert not bound
    assert lazy.feature_missing("platform.nosuch") == ()
    assert lazy.ensure_and_bind("tool.dashboard", lambda: {"X": 1}, bound) is (
        not lazy.missing_packages("tool.dashboard")
    )


BUILT_IN = """
from gateway.platforms.base import BasePlatformAdapter


def register(ctx):
    for name in ("telegram", "homeassistant", "email"):
        ctx.register_platform(
            name=name, label=name, adapter_factory=lambda cfg: None, check_fn=lambda: True
        )
"""


def test_hermes_core_environment_enables_its_built_in_platforms(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user_plugin(home, "builtins", BUILT_IN, manifest={"kind": "platform"})
    (home / "config.yaml").write_text(
        "plugins: {enabled: [builtins]}\n"
        "gateway: {platforms: {homeassistant: {enabled: false}, email: {enabled: false}}}\n",
        encoding="utf-8",
    )
    for name in ("EMAIL_ADDRESS", "EMAIL_PASSWORD", "EMAIL_IMAP_HOST", "EMAIL_SMTP_HOST"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", "123:abc")
    monkeypatch.setenv("TELEGRAM_HOME_CHANNEL", "-1001")
    monkeypatch.setenv("TELEGRAM_REPLY_TO_MODE", "all")
    monkeypatch.setenv("HASS_TOKEN", "llat")
    monkeypatch.setenv("HASS_URL", "http://127.0.0.1:8123")
    pm = create_manager(home)
    with pm.activate():
        config = served("gateway.config")
        loaded = config.load_gateway_config()
        telegram = loaded.platforms[config.Platform.TELEGRAM]
        hass = loaded.platforms[config.Platform.HOMEASSISTANT]
        email = loaded.platforms[config.Platform.EMAIL]
    assert (telegram.enabled, telegram.token, telegram.reply_to_mode) == (True, "123:abc", "all")
    assert telegram.home_channel is not None
    assert telegram.home_channel.chat_id == "-1001"
    # Hermes enables Home Assistant from HASS_TOKEN even over an explicit false...
    assert (hass.enabled, hass.token, hass.extra["url"]) == (True, "llat", "http://127.0.0.1:8123")
    assert not email.enabled  # ...and email only with all four variables
