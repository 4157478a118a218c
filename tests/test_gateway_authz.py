"""Who may talk through the gateway, and what an unknown user gets, in Hermes' order."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from plugin_builders import isolated_home

from hermes_hooks.compat.gateway_config import GatewayConfig, Platform, PlatformConfig
from hermes_hooks.compat.gateway_pairing import PairingStore
from hermes_hooks.compat.gateway_session import SessionSource
from hermes_hooks.host import create_manager
from hermes_hooks.host.gateway_authz import is_authorized, unauthorized_dm_behavior
from hermes_hooks.plugins.manager import PluginManager

_CLEAR = (
    "GATEWAY_ALLOWED_USERS",
    "GATEWAY_ALLOW_ALL_USERS",
    "TELEGRAM_ALLOWED_USERS",
    "TELEGRAM_ALLOW_ALL_USERS",
    "TELEGRAM_GROUP_ALLOWED_CHATS",
    "SLACK_ALLOWED_USERS",
)


@pytest.fixture
def pm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> PluginManager:
    for name in _CLEAR:
        monkeypatch.delenv(name, raising=False)
    return create_manager(isolated_home(tmp_path, monkeypatch))


def who(platform: str, user: str, chat_type: str = "dm", chat: str = "c1") -> SessionSource:
    return SessionSource(
        platform=Platform(platform), chat_id=chat, chat_type=chat_type, user_id=user
    )


def test_the_order_of_hermes_rules(pm: PluginManager, monkeypatch: pytest.MonkeyPatch) -> None:
    assert is_authorized(pm, "homeassistant", who("homeassistant", "anyone"))
    assert not is_authorized(pm, "telegram", who("telegram", "42"))  # nothing set: closed
    monkeypatch.setenv("GATEWAY_ALLOW_ALL_USERS", "true")
    assert is_authorized(pm, "telegram", who("telegram", "42"))  # no list: open to all
    monkeypatch.setenv("TELEGRAM_ALLOWED_USERS", "7,8")
    assert not is_authorized(pm, "telegram", who("telegram", "42"))  # a list closes it again
    assert is_authorized(pm, "telegram", who("telegram", "7"))
    monkeypatch.setenv("TELEGRAM_GROUP_ALLOWED_CHATS", "-100")
    assert is_authorized(pm, "telegram", who("telegram", "42", "group", "-100"))
    assert not is_authorized(pm, "telegram", who("telegram", "42", "group", "-200"))
    monkeypatch.setenv("TELEGRAM_ALLOW_ALL_USERS", "yes")
    assert is_authorized(pm, "telegram", who("telegram", "42"))
    monkeypatch.delenv("TELEGRAM_ALLOW_ALL_USERS")
    with pm.activate():
        store = PairingStore()
        code = store.generate_code("telegram", "42")
        assert code is not None
        store.approve_code("telegram", code)
    assert is_authorized(pm, "telegram", who("telegram", "42"))  # paired
    assert not is_authorized(pm, "telegram", who("telegram", ""))


def test_ids_match_exactly_with_hermes_extras(
    pm: PluginManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SLACK_ALLOWED_USERS", "U123")
    assert is_authorized(pm, "slack", who("slack", "U123"))
    assert not is_authorized(pm, "slack", who("slack", "u123"))  # exact, as Hermes
    monkeypatch.setenv("GATEWAY_ALLOWED_USERS", "ann")
    assert is_authorized(pm, "slack", who("slack", "ann@example.org"))  # user@host as user
    monkeypatch.setenv("GATEWAY_ALLOWED_USERS", "*")
    assert is_authorized(pm, "slack", who("slack", "anyone"))


def test_what_an_unknown_user_gets(pm: PluginManager, monkeypatch: pytest.MonkeyPatch) -> None:
    with pm.activate():
        config = GatewayConfig(
            platforms={
                Platform("telegram"): PlatformConfig(enabled=True),
                Platform("slack"): PlatformConfig(
                    enabled=True, extra={"unauthorized_dm_behavior": "pair"}
                ),
            }
        )
    assert unauthorized_dm_behavior(pm, config, "telegram") == "pair"  # an open gateway
    assert unauthorized_dm_behavior(pm, config, "email") == "ignore"  # inbox-shaped
    monkeypatch.setenv("TELEGRAM_ALLOWED_USERS", "7")
    assert unauthorized_dm_behavior(pm, config, "telegram") == "ignore"  # restricted on purpose
    monkeypatch.setenv("SLACK_ALLOWED_USERS", "U1")
    assert unauthorized_dm_behavior(pm, config, "slack") == "pair"  # the platform asks for it
    gated = SimpleNamespace(enforces_own_access_policy=True, _dm_policy="pairing")
    monkeypatch.delenv("TELEGRAM_ALLOWED_USERS")
    assert unauthorized_dm_behavior(pm, config, "telegram", gated) == "pair"
    gated._dm_policy = "allowlist"
    assert unauthorized_dm_behavior(pm, config, "telegram", gated) == "ignore"
    config.unauthorized_dm_behavior = "ignore"
    assert unauthorized_dm_behavior(pm, config, "telegram") == "ignore"
