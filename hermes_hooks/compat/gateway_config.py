"""Hermes' ``gateway.config``: platforms, their config, and the gateway's settings.

``Platform`` is Hermes' enum: its built-in members, and a member made on demand for a plugin
platform (``Platform("irc")``), identity-stable, when the name is registered on the current
manager or is a discovered plugin's key. ``load_gateway_config()`` reads ``config.yaml``'s
``gateway:`` section of the current home (``gateway.platforms.<name>`` with ``enabled``,
``token``, ``api_key``, ``home_channel``, ``reply_to_mode`` and ``extra``), then lets each
registered platform's ``apply_yaml_config_fn`` and ``env_enablement_fn`` seed ``extra`` and
enable it from the environment, as Hermes does.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from hermes_hooks.compat.hermes_cli_config import load_config
from hermes_hooks.compat.utils import is_truthy_value
from hermes_hooks.plugins import active

__all__ = [
    "GatewayConfig",
    "HomeChannel",
    "Platform",
    "PlatformConfig",
    "load_gateway_config",
]

logger = logging.getLogger(__name__)

_PLUGIN_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")


def _known_plugin_platform(value: str) -> bool:
    manager = active.current_manager()
    if manager is None:
        return False
    if value in manager.platforms:
        return True
    if any(value in (info.key, info.name) for info in manager.list_plugins()):
        return True
    # Hermes also knows the folder names of the platform plugins it ships before they register
    # (a module may name ``Platform("google_chat")`` at import): here, the folder of the
    # kind: platform plugin loading now.
    loading = active.current_plugin(manager)
    if loading is None:
        return False
    manifest = manager.get_manifest(loading)
    module = manager.get_plugin_module(loading)  # being imported: its __init__ is known
    where = getattr(module, "__file__", None)
    return (
        manifest is not None
        and manifest.kind == "platform"
        and where is not None
        and Path(where).parent.name.lower() == value
    )


class Platform(Enum):
    """Messaging platforms: Hermes' built-in members, and plugin platforms on demand."""

    LOCAL = "local"
    TELEGRAM = "telegram"
    DISCORD = "discord"
    WHATSAPP = "whatsapp"
    WHATSAPP_CLOUD = "whatsapp_cloud"
    SLACK = "slack"
    SIGNAL = "signal"
    MATTERMOST = "mattermost"
    MATRIX = "matrix"
    HOMEASSISTANT = "homeassistant"
    EMAIL = "email"
    SMS = "sms"
    DINGTALK = "dingtalk"
    API_SERVER = "api_server"
    WEBHOOK = "webhook"
    MSGRAPH_WEBHOOK = "msgraph_webhook"
    FEISHU = "feishu"
    WECOM = "wecom"
    WECOM_CALLBACK = "wecom_callback"
    WEIXIN = "weixin"
    BLUEBUBBLES = "bluebubbles"
    QQBOT = "qqbot"
    YUANBAO = "yuanbao"
    RELAY = "relay"

    @classmethod
    def _missing_(cls, value: object) -> Platform | None:
        if not isinstance(value, str) or not value.strip():
            return None
        name = value.strip().lower()
        cached = cls._value2member_map_.get(name)
        if isinstance(cached, Platform):
            return cached
        if not _PLUGIN_NAME.match(name) or not _known_plugin_platform(name):
            return None
        return _pseudo_member(name)


def _pseudo_member(name: str) -> Platform:
    cached = Platform._value2member_map_.get(name)
    if isinstance(cached, Platform):
        return cached
    pseudo = object.__new__(Platform)
    pseudo._value_ = name
    pseudo._name_ = name.upper().replace("-", "_")
    Platform._value2member_map_[name] = pseudo
    Platform._member_map_[pseudo._name_] = pseudo
    return pseudo


def host_platform(name: str) -> Platform:
    """Return the member for a platform name the host itself supplies (``hermes gateway
    replay``'s events), made on demand like a plugin platform's. Not one of Hermes' names.

    :raises ValueError: ``name`` is not a platform name (lowercase letters, digits, ``_``,
        ``-``).
    """
    value = name.strip().lower()
    try:
        return Platform(value)
    except ValueError:
        if not _PLUGIN_NAME.match(value):
            raise ValueError(f"not a platform name: {name!r}") from None
        return _pseudo_member(value)


@dataclass
class HomeChannel:
    """Where cron results and notices for a platform go."""

    platform: Platform
    chat_id: str
    name: str = "Home"

    def to_dict(self) -> dict[str, Any]:
        return {"platform": self.platform.value, "chat_id": self.chat_id, "name": self.name}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> HomeChannel:
        return cls(
            platform=Platform(data["platform"]),
            chat_id=str(data["chat_id"]),
            name=str(data.get("name", "Home")),
        )


@dataclass
class PlatformConfig:
    """One platform's settings: ``gateway.platforms.<name>`` in ``config.yaml``."""

    enabled: bool = False
    token: str | None = None
    api_key: str | None = None
    home_channel: HomeChannel | None = None
    reply_to_mode: str = "first"
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "enabled": self.enabled,
            "extra": dict(self.extra),
            "reply_to_mode": self.reply_to_mode,
        }
        if self.token:
            data["token"] = self.token
        if self.api_key:
            data["api_key"] = self.api_key
        if self.home_channel is not None:
            data["home_channel"] = self.home_channel.to_dict()
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PlatformConfig:
        home = data.get("home_channel")
        extra = data.get("extra")
        return cls(
            enabled=is_truthy_value(data.get("enabled"), default=False),
            token=data.get("token") or None,
            api_key=data.get("api_key") or None,
            home_channel=HomeChannel.from_dict(home) if isinstance(home, dict) else None,
            reply_to_mode=str(data.get("reply_to_mode") or "first"),
            extra=dict(extra) if isinstance(extra, dict) else {},
        )


@dataclass
class GatewayConfig:
    """The gateway's settings (``config.yaml``'s ``gateway:`` section).

    ``connect_timeout``, ``reconnect_backoff_base``, ``reconnect_backoff_cap`` and
    ``drain_timeout`` (seconds) are this host's names for the bounds Hermes hard-codes.
    """

    platforms: dict[Platform, PlatformConfig] = field(default_factory=dict)
    group_sessions_per_user: bool = True
    thread_sessions_per_user: bool = False
    unauthorized_dm_behavior: str = "pair"
    connect_timeout: float = 30.0
    reconnect_backoff_base: float = 30.0
    reconnect_backoff_cap: float = 300.0
    drain_timeout: float = 30.0

    def get_connected_platforms(self) -> list[Platform]:
        """Return the enabled platforms."""
        return [platform for platform, cfg in self.platforms.items() if cfg.enabled]

    def get_home_channel(self, platform: Platform) -> HomeChannel | None:
        """Return ``platform``'s home channel, if it has one."""
        cfg = self.platforms.get(platform)
        return cfg.home_channel if cfg is not None else None


def _number(section: dict[str, Any], key: str, default: float) -> float:
    value = section.get(key, default)
    try:
        number = float(value)
    except (TypeError, ValueError):
        logger.warning("gateway.%s: expected a number of seconds, found %r", key, value)
        return default
    return number if number >= 0 else default


def _core_env(name: str, cfg: PlatformConfig, explicit: bool) -> None:
    # Imported here: that module builds HomeChannel and Platform of this one.
    from hermes_hooks.compat.gateway_env_overrides import apply_core_env

    apply_core_env(name, cfg, explicit)


def load_gateway_config() -> GatewayConfig:
    """Read the current home's ``gateway:`` section and the platforms' environment."""
    raw = load_config().get("gateway")
    section: dict[str, Any] = raw if isinstance(raw, dict) else {}
    platforms_raw = section.get("platforms")
    platforms_data: dict[str, Any] = platforms_raw if isinstance(platforms_raw, dict) else {}
    config = GatewayConfig(
        group_sessions_per_user=is_truthy_value(
            section.get("group_sessions_per_user"), default=True
        ),
        thread_sessions_per_user=is_truthy_value(
            section.get("thread_sessions_per_user"), default=False
        ),
        unauthorized_dm_behavior=str(section.get("unauthorized_dm_behavior") or "pair"),
        connect_timeout=_number(section, "connect_timeout", 30.0),
        reconnect_backoff_base=_number(section, "reconnect_backoff_base", 30.0),
        reconnect_backoff_cap=_number(section, "reconnect_backoff_cap", 300.0),
        drain_timeout=_number(section, "drain_timeout", 30.0),
    )
    manager = active.current_manager()
    names = set(platforms_data)
    if manager is not None:
        names |= set(manager.platforms.names())
    for name in sorted(names):
        data = platforms_data.get(name)
        explicit = isinstance(data, dict) and "enabled" in data
        cfg = PlatformConfig.from_dict(data) if isinstance(data, dict) else PlatformConfig()
        _core_env(name, cfg, explicit)  # what Hermes' core reads for its built-ins
        entry = manager.platforms.get(name) if manager is not None else None
        if entry is not None:
            _apply_entry_hooks(entry, data if isinstance(data, dict) else {}, cfg, explicit)
        try:
            platform = Platform(name)
        except ValueError:
            logger.warning("gateway.platforms.%s: no plugin registers this platform; ignored", name)
            continue
        config.platforms[platform] = cfg
    return config


def _apply_entry_hooks(
    entry: Any, data: dict[str, Any], cfg: PlatformConfig, explicit: bool
) -> None:
    """Let a registered platform bridge its YAML and enable itself from the environment."""
    bridge = entry.apply_yaml_config_fn
    if bridge is not None:
        try:
            seeded = bridge(data, cfg.to_dict())
        except Exception:
            logger.warning("platform %r: apply_yaml_config_fn raised", entry.name, exc_info=True)
            seeded = None
        if isinstance(seeded, dict):
            cfg.extra.update(seeded)
    enable = entry.env_enablement_fn
    if enable is None or (explicit and not cfg.enabled):
        return
    try:
        seeded = enable()
    except Exception:
        logger.warning("platform %r: env_enablement_fn raised", entry.name, exc_info=True)
        return
    if isinstance(seeded, dict):
        for key, value in seeded.items():
            if key == "home_channel" and isinstance(value, dict):
                try:
                    cfg.home_channel = HomeChannel.from_dict({"platform": entry.name, **value})
                except (KeyError, ValueError):
                    logger.warning("platform %r: home_channel %r not understood", entry.name, value)
            else:
                cfg.extra.setdefault(key, value)
        cfg.enabled = True
