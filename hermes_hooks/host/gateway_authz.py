"""Who may talk to the agent through the gateway, and what an unknown user gets: Hermes'
``_is_user_authorized`` and ``_get_unauthorized_dm_behavior``, in their order.

Authorization, first match wins:

1. Home Assistant and webhook events are always authorized (the connection's token or the
   adapter's HMAC check authenticated them; they are not a person's messages).
2. A group, forum or channel in ``TELEGRAM_GROUP_ALLOWED_CHATS`` (QQ: ``QQ_GROUP_ALLOWED_USERS``)
   is open to everyone in it (``*``: every group).
3. No user id: refused.
4. The platform's allow-all variable is true (``TELEGRAM_ALLOW_ALL_USERS``..., or the plugin's
   ``allow_all_env``).
5. The user was approved with ``hermes pairing approve``.
6. No allow-list is set at all (the platform's, the group ones, ``GATEWAY_ALLOWED_USERS``): an
   adapter that gates access itself with an ``allowlist`` policy already admitted the sender;
   otherwise ``GATEWAY_ALLOW_ALL_USERS`` decides.
7. Otherwise the user id (exactly; ``user@host`` also as ``user``; WhatsApp ids through their
   phone/LID aliases; a SimpleX display name) must be on one of the lists, or a list holds
   ``*``.

An unknown user in a direct chat gets a pairing code (``pair``) or nothing (``ignore``): the
platform's own ``extra.unauthorized_dm_behavior`` if set; ``ignore`` for email; the global
``gateway.unauthorized_dm_behavior`` when not ``pair``; the adapter's DM policy (``pairing``:
pair, ``allowlist``/``disabled``: ignore); ``ignore`` when an allow-list is configured (the
owner restricted access on purpose); else ``pair``.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from hermes_hooks.compat.gateway_pairing import PairingStore
from hermes_hooks.compat.utils import is_truthy_value

if TYPE_CHECKING:
    from hermes_hooks.compat.gateway_config import GatewayConfig
    from hermes_hooks.compat.gateway_session import SessionSource
    from hermes_hooks.plugins.manager import PluginManager

__all__ = [
    "ALLOWED_USERS_ENV",
    "ALLOW_ALL_ENV",
    "is_authorized",
    "unauthorized_dm_behavior",
]

_ALWAYS_AUTHORIZED = {"homeassistant", "webhook"}
_ENV_PREFIX = {"qqbot": "QQ"}
_BUILT_IN = (
    "telegram",
    "discord",
    "whatsapp",
    "whatsapp_cloud",
    "slack",
    "signal",
    "email",
    "sms",
    "mattermost",
    "matrix",
    "dingtalk",
    "feishu",
    "wecom",
    "wecom_callback",
    "weixin",
    "bluebubbles",
    "qqbot",
    "yuanbao",
)
ALLOWED_USERS_ENV = {
    name: f"{_ENV_PREFIX.get(name, name.upper())}_ALLOWED_USERS" for name in _BUILT_IN
}
"""Hermes' own allow-list variable of each built-in platform (a plugin's for the others)."""
ALLOW_ALL_ENV = {
    name: f"{_ENV_PREFIX.get(name, name.upper())}_ALLOW_ALL_USERS" for name in _BUILT_IN
}
"""Hermes' own allow-all variable of each built-in platform."""
_GROUP_CHATS_ENV = {"telegram": "TELEGRAM_GROUP_ALLOWED_CHATS", "qqbot": "QQ_GROUP_ALLOWED_USERS"}
_GROUP_USERS_ENV = {"telegram": "TELEGRAM_GROUP_ALLOWED_USERS"}
_GROUPS = {"group", "forum"}


def _env(name: str) -> str:
    return (os.environ.get(name) or "").strip() if name else ""


def _ids(raw: str) -> set[str]:
    return {part.strip() for part in raw.split(",") if part.strip()}


def _variables(pm: PluginManager, name: str) -> tuple[str, str]:
    entry = pm.platforms.get(name)
    allowed = ALLOWED_USERS_ENV.get(name) or (entry.allowed_users_env if entry else "") or ""
    allow_all = ALLOW_ALL_ENV.get(name) or (entry.allow_all_env if entry else "") or ""
    return allowed, allow_all


def _lists(pm: PluginManager, name: str, chat_type: str | None) -> dict[str, str]:
    allowed, _ = _variables(pm, name)
    grouped = chat_type in _GROUPS
    return {
        "platform": _env(allowed),
        "group_users": _env(_GROUP_USERS_ENV.get(name, "")) if grouped else "",
        "group_chats": _env(_GROUP_CHATS_ENV.get(name, "")) if grouped else "",
        "global": _env("GATEWAY_ALLOWED_USERS"),
    }


def _own_policy(adapter: Any, attribute: str) -> str:
    if adapter is None or not getattr(adapter, "enforces_own_access_policy", False):
        return ""
    return str(getattr(adapter, attribute, "") or "").strip().lower()


def _candidate_ids(name: str, source: SessionSource) -> set[str]:
    user_id = str(source.user_id or "")
    ids = {user_id}
    if "@" in user_id:
        ids.add(user_id.split("@")[0])
    if name == "whatsapp":
        from hermes_hooks.compat.gateway_whatsapp_identity import (
            expand_whatsapp_aliases,
            normalize_whatsapp_identifier,
        )

        ids |= expand_whatsapp_aliases(user_id)
        ids.add(normalize_whatsapp_identifier(user_id))
    if name == "simplex" and source.user_name:
        ids.add(source.user_name)
    ids.discard("")
    return ids


def is_authorized(
    pm: PluginManager, name: str, source: SessionSource | None, adapter: Any = None
) -> bool:
    """Whether ``source``'s user may talk to the agent on platform ``name`` (see the module)."""
    if source is None or name in _ALWAYS_AUTHORIZED:
        return True
    chat_list = _env(_GROUP_CHATS_ENV.get(name, ""))
    if chat_list and source.chat_type in {*_GROUPS, "channel"} and source.chat_id:
        chats = _ids(chat_list)
        if "*" in chats or source.chat_id in chats:
            return True
    if not source.user_id:
        return False
    _, allow_all = _variables(pm, name)
    if _env(allow_all).lower() in {"true", "1", "yes"}:
        return True
    with pm.activate():  # the pairing store of this manager's home, from any thread
        if PairingStore().is_approved(name, str(source.user_id)):
            return True
    lists = _lists(pm, name, source.chat_type)
    if not any(lists.values()):
        policy_attribute = (
            "_group_policy" if source.chat_type in {*_GROUPS, "channel"} else "_dm_policy"
        )
        if _own_policy(adapter, policy_attribute) == "allowlist":
            return True  # the adapter's own allow-list admitted the sender at intake
        return is_truthy_value(os.environ.get("GATEWAY_ALLOW_ALL_USERS"))
    if lists["group_chats"] and source.chat_type in _GROUPS and source.chat_id:
        chats = _ids(lists["group_chats"])
        if "*" in chats or source.chat_id in chats:
            return True
    allowed = _ids(lists["platform"]) | _ids(lists["group_users"]) | _ids(lists["global"])
    if name == "whatsapp":
        from hermes_hooks.compat.gateway_whatsapp_identity import expand_whatsapp_aliases

        allowed |= {alias for entry in set(allowed) for alias in expand_whatsapp_aliases(entry)}
    return "*" in allowed or bool(_candidate_ids(name, source) & allowed)


def unauthorized_dm_behavior(
    pm: PluginManager, config: GatewayConfig, name: str, adapter: Any = None
) -> str:
    """``pair`` or ``ignore``: what an unknown user who writes in a direct chat gets."""
    from hermes_hooks.compat.gateway_config import Platform

    try:
        platform_cfg = config.platforms.get(Platform(name))
    except ValueError:
        platform_cfg = None
    extra = platform_cfg.extra if platform_cfg is not None else {}
    if "unauthorized_dm_behavior" in extra:
        return "ignore" if str(extra["unauthorized_dm_behavior"]).lower() == "ignore" else "pair"
    if name == "email":
        return "ignore"
    if config.unauthorized_dm_behavior != "pair":
        return config.unauthorized_dm_behavior
    policy = _own_policy(adapter, "_dm_policy") or str(extra.get("dm_policy") or "").lower()
    if policy == "pairing":
        return "pair"
    if policy in {"allowlist", "disabled"}:
        return "ignore"
    if any(_lists(pm, name, "group").values()):
        return "ignore"
    return "pair"
