"""Hermes' ``gateway.platforms.access_policy_mixin``: the DM and group intake policy of the
adapters that gate access themselves (WhatsApp, Weixin, WeCom, QQBot, Yuanbao).

The host adapter sets ``_dm_policy`` and ``_group_policy`` (``open``, ``allowlist``,
``disabled`` or ``pairing``), ``_allow_from`` and ``_group_allow_from`` on itself, and the class
attribute ``ALLOW_ALL_ENV_PREFIX`` (``"WHATSAPP"``...). An open DM policy still needs the
operator's opt-in: ``GATEWAY_ALLOW_ALL_USERS`` or ``<PREFIX>_ALLOW_ALL_USERS`` true. A class
mixing this in without a prefix is refused when it is defined, as in Hermes.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from hermes_hooks.compat.gateway_platforms_shared import get_scoped_secret

__all__ = ["OPTIN_TRUTHY", "OwnAccessPolicyMixin"]

OPTIN_TRUTHY: frozenset[str] = frozenset({"true", "1", "yes"})
"""The values of an ``*_ALLOW_ALL_USERS`` variable that open the DMs."""


class OwnAccessPolicyMixin:
    """DM and group intake checks over the attributes the host adapter sets."""

    ALLOW_ALL_ENV_PREFIX: str = ""
    _dm_policy: str
    _group_policy: str
    _allow_from: Any
    _group_allow_from: Any

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if not str(cls.ALLOW_ALL_ENV_PREFIX or "").strip():
            raise TypeError(
                f"{cls.__qualname__} mixes in OwnAccessPolicyMixin but sets no ALLOW_ALL_ENV_PREFIX"
            )

    @property
    def enforces_own_access_policy(self) -> bool:
        """True: the gateway leaves intake authorization to the adapter."""
        return True

    def _allow_all_env_names(self) -> tuple[str, ...]:
        return ("GATEWAY_ALLOW_ALL_USERS", f"{self.ALLOW_ALL_ENV_PREFIX}_ALLOW_ALL_USERS")

    def _open_dm_opted_in(self) -> bool:
        return any(
            str(get_scoped_secret(name, "") or "").strip().lower() in OPTIN_TRUTHY
            for name in self._allow_all_env_names()
        )

    def _entry_matches(self, entries: Iterable[str], target: str) -> bool:
        return target in entries

    def _live_dm_allow_from(self) -> Iterable[str]:
        return self._allow_from  # type: ignore[no-any-return]

    def _is_dm_allowed(self, sender_id: str) -> bool:
        """Strict DM authorization: an allow-listed sender, or an opted-in open policy."""
        if self._dm_policy == "allowlist":
            return self._entry_matches(self._live_dm_allow_from(), sender_id)
        return self._dm_policy == "open" and self._open_dm_opted_in()

    def _is_dm_intake_allowed(self, sender_id: str) -> bool:
        """Whether a DM reaches the gateway: under ``pairing`` every non-blank sender does (the
        pairing handshake runs later); otherwise :meth:`_is_dm_allowed` decides."""
        principal = str(sender_id or "").strip()
        if not principal:
            return False
        return self._dm_policy == "pairing" or self._is_dm_allowed(principal)

    def _is_group_allowed(self, chat_id: str, sender_id: str = "") -> bool:
        """Group traffic passes an ``allowlist`` that names the chat, or an ``open`` policy."""
        if self._group_policy == "allowlist":
            return self._entry_matches(self._group_allow_from, chat_id)
        return self._group_policy == "open"
