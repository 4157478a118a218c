"""The environment Hermes' ``gateway.config`` itself reads for its built-in platforms.

Twelve of the platform plugins Hermes ships (Telegram, Discord, Slack, WhatsApp, Mattermost,
Matrix, Home Assistant, email, SMS, DingTalk, Feishu, WeCom) have no ``env_enablement_fn``:
Hermes' core enables them from their credentials (``TELEGRAM_BOT_TOKEN``, ``HASS_TOKEN``...)
and seeds their ``PlatformConfig``. :func:`apply_core_env` does the same, platform by platform,
as ``load_gateway_config`` builds each one. A platform the config disables explicitly
(``enabled: false``) stays disabled where Hermes keeps it so (the token-enabled ones); Home
Assistant, email, SMS, DingTalk, Feishu and WeCom are enabled by their variables regardless, as
in Hermes.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from hermes_hooks.compat.utils import is_truthy_value

if TYPE_CHECKING:
    from hermes_hooks.compat.gateway_config import PlatformConfig

__all__ = ["CORE_ENV_PLATFORMS", "apply_core_env"]

logger = logging.getLogger(__name__)


def _env(name: str, default: str = "") -> str:
    value = os.environ.get(name)
    return value if value is not None else default


def _enable(cfg: PlatformConfig, explicit: bool, *, force: bool = False) -> None:
    if force or not (explicit and not cfg.enabled):
        cfg.enabled = True


def _reply_mode(cfg: PlatformConfig, variable: str) -> None:
    mode = _env(variable).lower()
    if mode in {"off", "first", "all"}:
        cfg.reply_to_mode = mode


def _token(variable: str) -> Callable[[PlatformConfig, bool], bool]:
    def apply(cfg: PlatformConfig, explicit: bool) -> bool:
        token = _env(variable)
        if token:
            _enable(cfg, explicit)
            cfg.token = token
        return bool(token)

    return apply


def _telegram(cfg: PlatformConfig, explicit: bool) -> bool:
    found = _token("TELEGRAM_BOT_TOKEN")(cfg, explicit)
    _reply_mode(cfg, "TELEGRAM_REPLY_TO_MODE")
    ips = [ip.strip() for ip in _env("TELEGRAM_FALLBACK_IPS").split(",") if ip.strip()]
    if ips:
        cfg.extra["fallback_ips"] = ips
    return found


def _discord(cfg: PlatformConfig, explicit: bool) -> bool:
    found = _token("DISCORD_BOT_TOKEN")(cfg, explicit)
    _reply_mode(cfg, "DISCORD_REPLY_TO_MODE")
    return found


def _whatsapp(cfg: PlatformConfig, explicit: bool) -> bool:
    raw = _env("WHATSAPP_ENABLED")
    if raw.lower() in {"false", "0", "no"}:
        cfg.enabled = False
    elif is_truthy_value(raw):
        cfg.enabled = True
    return is_truthy_value(raw)


def _mattermost(cfg: PlatformConfig, explicit: bool) -> bool:
    token = _env("MATTERMOST_TOKEN")
    if token:
        url = _env("MATTERMOST_URL")
        if not url:
            logger.warning("MATTERMOST_TOKEN set but MATTERMOST_URL is missing")
        _enable(cfg, explicit)
        cfg.token = token
        cfg.extra["url"] = url
    return bool(token)


def _matrix(cfg: PlatformConfig, explicit: bool) -> bool:
    token, password = _env("MATRIX_ACCESS_TOKEN"), _env("MATRIX_PASSWORD")
    if not (token or password):
        return False
    homeserver = _env("MATRIX_HOMESERVER")
    if not homeserver:
        logger.warning("MATRIX_ACCESS_TOKEN/MATRIX_PASSWORD set but MATRIX_HOMESERVER is missing")
    _enable(cfg, explicit)
    if token:
        cfg.token = token
    cfg.extra["homeserver"] = homeserver
    for variable, key in (
        ("MATRIX_USER_ID", "user_id"),
        ("MATRIX_PASSWORD", "password"),
        ("MATRIX_DEVICE_ID", "device_id"),
    ):
        if _env(variable):
            cfg.extra[key] = _env(variable)
    mode = _env("MATRIX_E2EE_MODE").strip().lower()
    cfg.extra["encryption"] = mode in {
        "required",
        "require",
        "optional",
        "prefer",
        "preferred",
    } or is_truthy_value(_env("MATRIX_ENCRYPTION"))
    if mode:
        cfg.extra["e2ee_mode"] = mode
    return True


def _homeassistant(cfg: PlatformConfig, explicit: bool) -> bool:
    token = _env("HASS_TOKEN")
    if token:
        _enable(cfg, explicit, force=True)
        cfg.token = token
        if _env("HASS_URL"):
            cfg.extra["url"] = _env("HASS_URL")
    return bool(token)


def _email(cfg: PlatformConfig, explicit: bool) -> bool:
    names = ("EMAIL_ADDRESS", "EMAIL_PASSWORD", "EMAIL_IMAP_HOST", "EMAIL_SMTP_HOST")
    if not all(_env(name) for name in names):
        return False
    _enable(cfg, explicit, force=True)
    cfg.extra.update(
        address=_env("EMAIL_ADDRESS"),
        imap_host=_env("EMAIL_IMAP_HOST"),
        smtp_host=_env("EMAIL_SMTP_HOST"),
    )
    return True


def _sms(cfg: PlatformConfig, explicit: bool) -> bool:
    if not _env("TWILIO_ACCOUNT_SID"):
        return False
    _enable(cfg, explicit, force=True)
    cfg.api_key = _env("TWILIO_AUTH_TOKEN")
    return True


def _pair(
    first: str, second: str, keys: tuple[str, str], more: Callable[[PlatformConfig], None]
) -> Callable[[PlatformConfig, bool], bool]:
    def apply(cfg: PlatformConfig, explicit: bool) -> bool:
        if not (_env(first) and _env(second)):
            return False
        _enable(cfg, explicit, force=True)
        cfg.extra.update({keys[0]: _env(first), keys[1]: _env(second)})
        more(cfg)
        return True

    return apply


def _no_more(cfg: PlatformConfig) -> None:
    """Nothing more to seed."""


def _feishu_more(cfg: PlatformConfig) -> None:
    cfg.extra["domain"] = _env("FEISHU_DOMAIN", "feishu")
    cfg.extra["connection_mode"] = _env("FEISHU_CONNECTION_MODE", "websocket")
    for variable, key in (
        ("FEISHU_ENCRYPT_KEY", "encrypt_key"),
        ("FEISHU_VERIFICATION_TOKEN", "verification_token"),
    ):
        if _env(variable):
            cfg.extra[key] = _env(variable)


def _wecom_more(cfg: PlatformConfig) -> None:
    if _env("WECOM_WEBSOCKET_URL"):
        cfg.extra["websocket_url"] = _env("WECOM_WEBSOCKET_URL")


# platform: (enable and seed, home channel variable, its default name)
CORE_ENV_PLATFORMS: dict[str, tuple[Callable[[PlatformConfig, bool], bool], str, str]] = {
    "telegram": (_telegram, "TELEGRAM_HOME_CHANNEL", "Home"),
    "discord": (_discord, "DISCORD_HOME_CHANNEL", "Home"),
    "whatsapp": (_whatsapp, "WHATSAPP_HOME_CHANNEL", "Home"),
    "slack": (_token("SLACK_BOT_TOKEN"), "SLACK_HOME_CHANNEL", ""),
    "mattermost": (_mattermost, "MATTERMOST_HOME_CHANNEL", "Home"),
    "matrix": (_matrix, "MATRIX_HOME_ROOM", "Home"),
    "homeassistant": (_homeassistant, "", ""),
    "email": (_email, "EMAIL_HOME_ADDRESS", "Home"),
    "sms": (_sms, "SMS_HOME_CHANNEL", "Home"),
    "dingtalk": (
        _pair(
            "DINGTALK_CLIENT_ID", "DINGTALK_CLIENT_SECRET", ("client_id", "client_secret"), _no_more
        ),
        "DINGTALK_HOME_CHANNEL",
        "Home",
    ),
    "feishu": (
        _pair("FEISHU_APP_ID", "FEISHU_APP_SECRET", ("app_id", "app_secret"), _feishu_more),
        "FEISHU_HOME_CHANNEL",
        "Home",
    ),
    "wecom": (
        _pair("WECOM_BOT_ID", "WECOM_SECRET", ("bot_id", "secret"), _wecom_more),
        "WECOM_HOME_CHANNEL",
        "Home",
    ),
}
"""The platforms whose credentials Hermes' core reads, and how."""


def apply_core_env(name: str, cfg: PlatformConfig, explicit: bool) -> None:
    """Enable and seed ``cfg`` (platform ``name``) from Hermes' core variables; ``explicit``:
    the config itself says ``enabled``. A platform not of :data:`CORE_ENV_PLATFORMS` is left."""
    spec = CORE_ENV_PLATFORMS.get(name)
    if spec is None:
        return
    apply, home_variable, home_name = spec
    found = apply(cfg, explicit)
    home = _env(home_variable) if home_variable else ""
    if home and (found or cfg.enabled):
        from hermes_hooks.compat.gateway_config import HomeChannel, Platform

        cfg.home_channel = HomeChannel(
            platform=Platform(name), chat_id=home, name=_env(f"{home_variable}_NAME", home_name)
        )
