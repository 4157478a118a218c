"""Hermes' ``gateway.pairing``: code-based approval of unknown users on chat platforms.

An unknown user who writes to the bot in a direct chat gets a one-time pairing code; the owner
approves it with ``hermes pairing approve <platform> <code>`` and from then on that user is
authorized (the pairing store is a grant of its own, beside the platform's allow-list). As in
Hermes: 8 characters from a 32-character alphabet without 0/O/1/I, drawn with ``secrets``; a
code lives one hour; at most 3 pending codes per platform; one request per user per 10
minutes; 5 failed approvals lock the platform's approvals for an hour; only a salted SHA-256
of a code is stored, in 0600 files under ``<home>/platforms/pairing/`` (or the legacy
``<home>/pairing/``): ``<platform>-pending.json``, ``<platform>-approved.json`` and
``_rate_limits.json``, each written atomically.

Approving a user also adds them to the platform's allow-list variable when one is configured
(``TELEGRAM_ALLOWED_USERS``..., or the platform entry's ``allowed_users_env``), in the home's
``.env``; revoking removes them. WhatsApp ids are compared through their phone and LID aliases.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import secrets
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from hermes_hooks.compat.gateway_whatsapp_identity import (
    expand_whatsapp_aliases,
    normalize_whatsapp_identifier,
)
from hermes_hooks.compat.hermes_constants import get_hermes_dir, get_hermes_home
from hermes_hooks.compat.utils import atomic_json_write

__all__ = [
    "ALPHABET",
    "CODE_LENGTH",
    "CODE_TTL_SECONDS",
    "LOCKOUT_SECONDS",
    "MAX_FAILED_ATTEMPTS",
    "MAX_PENDING_PER_PLATFORM",
    "PAIRING_DIR",
    "RATE_LIMIT_SECONDS",
    "PairingStore",
]

logger = logging.getLogger(__name__)

ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 8
CODE_TTL_SECONDS = 3600
RATE_LIMIT_SECONDS = 600
LOCKOUT_SECONDS = 3600
MAX_PENDING_PER_PLATFORM = 3
MAX_FAILED_ATTEMPTS = 5

PAIRING_DIR: Path | None = None
"""A fixed folder for the store (tests set it); ``None``: resolved from the home on each use."""

_ALLOWLIST_ENV = {
    "telegram": "TELEGRAM_ALLOWED_USERS",
    "discord": "DISCORD_ALLOWED_USERS",
    "whatsapp": "WHATSAPP_ALLOWED_USERS",
    "whatsapp_cloud": "WHATSAPP_CLOUD_ALLOWED_USERS",
    "slack": "SLACK_ALLOWED_USERS",
    "signal": "SIGNAL_ALLOWED_USERS",
    "email": "EMAIL_ALLOWED_USERS",
    "sms": "SMS_ALLOWED_USERS",
    "mattermost": "MATTERMOST_ALLOWED_USERS",
    "matrix": "MATRIX_ALLOWED_USERS",
    "dingtalk": "DINGTALK_ALLOWED_USERS",
    "feishu": "FEISHU_ALLOWED_USERS",
    "wecom": "WECOM_ALLOWED_USERS",
    "wecom_callback": "WECOM_CALLBACK_ALLOWED_USERS",
    "weixin": "WEIXIN_ALLOWED_USERS",
    "bluebubbles": "BLUEBUBBLES_ALLOWED_USERS",
    "qqbot": "QQ_ALLOWED_USERS",
    "yuanbao": "YUANBAO_ALLOWED_USERS",
}
_WHATSAPP_LIKE = {"whatsapp", "whatsapp_cloud"}


def _pairing_dir() -> Path:
    return (
        PAIRING_DIR if PAIRING_DIR is not None else get_hermes_dir("platforms/pairing", "pairing")
    )


def _allowlist_env(platform: str) -> str | None:
    """The allow-list variable of ``platform``: Hermes' table, else its registry entry's."""
    platform = (platform or "").strip().lower()
    if platform in _ALLOWLIST_ENV:
        return _ALLOWLIST_ENV[platform]
    with contextlib.suppress(Exception):
        from hermes_hooks.compat.gateway_platform_registry import platform_registry

        entry = platform_registry.get(platform)
        return getattr(entry, "allowed_users_env", None) or None
    return None


def _normalize(platform: str, user_id: str) -> str:
    raw = str(user_id or "").strip()
    if platform.strip().lower() in _WHATSAPP_LIKE:
        return normalize_whatsapp_identifier(raw) or raw
    return raw


def _aliases(platform: str, user_id: str) -> set[str]:
    raw = str(user_id or "").strip()
    if not raw:
        return set()
    found = {raw, _normalize(platform, raw)}
    if platform.strip().lower() in _WHATSAPP_LIKE:
        found |= expand_whatsapp_aliases(raw)
    found.discard("")
    return found


def _same_user(platform: str, left: str, right: str) -> bool:
    mine = _aliases(platform, left)
    return bool(mine and mine & _aliases(platform, right))


def _matching(platform: str, approved: Iterable[str], user_id: str) -> list[str]:
    return [uid for uid in approved if _same_user(platform, uid, user_id)]


def _split(raw: str) -> list[str]:
    return [part.strip() for part in raw.split(",") if part.strip()]


def _configured_allowlist(platform: str) -> tuple[str, list[str]] | None:
    """``(variable, ids)`` when the platform's allow-list is set; ``None`` (an open gateway,
    which approving must not close) otherwise."""
    env = _allowlist_env(platform)
    current = (os.environ.get(env) or "").strip() if env else ""
    return (env, _split(current)) if env and current else None


def _write_allowlist(env: str, ids: list[str]) -> None:
    """Best effort: the home's ``.env`` and this process (the store still grants access)."""
    from hermes_hooks.compat.hermes_cli_config import remove_env_value, save_env_value

    try:  # both also update os.environ
        if ids:
            save_env_value(env, ",".join(ids))
        else:
            remove_env_value(env)
    except Exception as exc:  # a ConfigError or an OSError: the grant stands all the same
        logger.warning("pairing: cannot update %s in the home's .env: %s", env, exc)


def _load(path: Path) -> dict[str, Any]:
    """A JSON object from ``path``; ``{}`` when missing, malformed or not an object."""
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except PermissionError as exc:
        logger.warning("pairing: %s exists but cannot be read (%s)", path, exc)
        return {}
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _save(path: Path, data: dict[str, Any]) -> None:
    atomic_json_write(path, data, mode=0o600)


def _created_at(info: Any) -> float | None:
    value = info.get("created_at") if isinstance(info, dict) else None
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _hashed(entry: Any) -> bool:
    return isinstance(entry, dict) and "salt" in entry and "hash" in entry


class PairingStore:
    """Pending pairing codes and approved users, per platform, in the home's pairing folder.

    :param profile: Hermes' profile name; here only ``None`` or ``"default"`` (this home) and
        another name (``<home>/profiles/<name>``) are told apart.
    """

    def __init__(self, profile: str | None = None) -> None:
        home = None
        if profile and profile != "default":
            home = get_hermes_home() / "profiles" / profile
        self._dir = (
            get_hermes_dir("platforms/pairing", "pairing", home=home) if home else _pairing_dir()
        )
        self._dir.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self._profile = profile

    @property
    def profile(self) -> str | None:
        """The profile this store belongs to, or ``None``."""
        return self._profile

    def _pending_path(self, platform: str) -> Path:
        return self._dir / f"{platform}-pending.json"

    def _approved_path(self, platform: str) -> Path:
        return self._dir / f"{platform}-approved.json"

    def _rate_limit_path(self) -> Path:
        return self._dir / "_rate_limits.json"

    def _cleanup_expired(self, platform: str) -> None:
        path = self._pending_path(platform)
        pending = _load(path)
        now = time.time()
        live = {
            key: value
            for key, value in pending.items()
            if (created := _created_at(value)) is not None and now - created <= CODE_TTL_SECONDS
        }
        if len(live) != len(pending):
            _save(path, live)

    def _platforms(self, platform: str | None, suffix: str) -> list[str]:
        if platform:
            return [platform]
        tail = f"-{suffix}.json"
        names = (
            path.name[: -len(tail)] for path in self._dir.iterdir() if path.name.endswith(tail)
        )
        return sorted(name for name in names if not name.startswith("_"))

    # -- approved users -------------------------------------------------------------------

    def is_approved(self, platform: str, user_id: str) -> bool:
        """Whether ``user_id`` (under any alias) is approved on ``platform``."""
        return bool(_matching(platform, _load(self._approved_path(platform)), user_id))

    def list_approved(self, platform: str | None = None) -> list[dict[str, Any]]:
        """``{"platform", "user_id", "user_name", "approved_at"}`` for each approved user."""
        return [
            {"platform": name, "user_id": uid, **info}
            for name in self._platforms(platform, "approved")
            for uid, info in _load(self._approved_path(name)).items()
            if isinstance(info, dict)
        ]

    def _approve_user(self, platform: str, user_id: str, user_name: str = "") -> None:
        approved = _load(self._approved_path(platform))
        normalized = _normalize(platform, user_id)
        for uid in _matching(platform, approved, normalized):
            del approved[uid]
        approved[normalized] = {"user_name": user_name, "approved_at": time.time()}
        _save(self._approved_path(platform), approved)
        configured = _configured_allowlist(platform)
        if configured is not None:
            env, ids = configured
            if "*" not in ids and normalized not in ids:
                _write_allowlist(env, [*ids, normalized])

    def revoke(self, platform: str, user_id: str) -> bool:
        """Remove ``user_id`` (every alias) from the approved users; ``True`` if it was there."""
        path = self._approved_path(platform)
        with self._lock:
            approved = _load(path)
            found = _matching(platform, approved, user_id)
            if not found:
                return False
            for uid in found:
                del approved[uid]
            _save(path, approved)
            configured = _configured_allowlist(platform)
            if configured is not None:
                env, ids = configured
                kept = [uid for uid in ids if uid == "*" or not _same_user(platform, uid, user_id)]
                if len(kept) != len(ids):
                    _write_allowlist(env, kept)
            return True

    # -- pending codes --------------------------------------------------------------------

    @staticmethod
    def _hash_code(code: str, salt: bytes) -> str:
        return hashlib.sha256(salt + code.encode("utf-8")).hexdigest()

    def _finish_approval(
        self, platform: str, pending: dict[str, Any], key: str, entry: dict[str, Any]
    ) -> dict[str, str]:
        del pending[key]
        _save(self._pending_path(platform), pending)
        self._reset_failed_attempts(platform)
        result = {"user_id": str(entry["user_id"]), "user_name": str(entry.get("user_name", ""))}
        self._approve_user(platform, result["user_id"], result["user_name"])
        return result

    def generate_code(self, platform: str, user_id: str, user_name: str = "") -> str | None:
        """A new pairing code for ``user_id``, or ``None`` when the user asked less than 10
        minutes ago, the platform has 3 codes pending, or its approvals are locked."""
        with self._lock:
            self._cleanup_expired(platform)
            if self._is_locked_out(platform) or self._is_rate_limited(platform, user_id):
                return None
            pending = _load(self._pending_path(platform))
            if len(pending) >= MAX_PENDING_PER_PLATFORM:
                return None
            code = "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH))
            salt = os.urandom(16)
            pending[secrets.token_hex(8)] = {
                "hash": self._hash_code(code, salt),
                "salt": salt.hex(),
                "user_id": _normalize(platform, user_id),
                "user_name": user_name,
                "created_at": time.time(),
            }
            _save(self._pending_path(platform), pending)
            self._record_rate_limit(platform, user_id)
            return code

    def approve_code(self, platform: str, code: str) -> dict[str, str] | None:
        """Approve the user of ``code``: ``{"user_id", "user_name"}``, or ``None`` for an
        unknown or expired code (counted as a failure) or a locked platform."""
        with self._lock:
            self._cleanup_expired(platform)
            code = code.upper().strip()
            if self._is_locked_out(platform):
                return None
            pending = _load(self._pending_path(platform))
            for key, entry in pending.items():
                if not _hashed(entry):
                    continue
                try:
                    salt = bytes.fromhex(entry["salt"])
                except (TypeError, ValueError):
                    continue
                if secrets.compare_digest(self._hash_code(code, salt), str(entry["hash"])):
                    return self._finish_approval(platform, pending, key, entry)
            self._record_failed_attempt(platform)
            return None

    @staticmethod
    def looks_like_request_id(value: str) -> bool:
        """Whether ``value`` has the shape of a request id (16 hex digits), not of a code."""
        value = str(value or "").strip()
        return len(value) == 16 and all(char in "0123456789abcdefABCDEF" for char in value)

    def approve_request(self, platform: str, request_id: str) -> dict[str, str] | None:
        """Approve a pending request by its id (as ``list_pending`` shows it); never counted
        toward the lockout."""
        with self._lock:
            self._cleanup_expired(platform)
            request_id = str(request_id or "").strip().lower()
            if not request_id:
                return None
            pending = _load(self._pending_path(platform))
            for key, entry in pending.items():
                if _hashed(entry) and secrets.compare_digest(str(key).lower(), request_id):
                    return self._finish_approval(platform, pending, key, entry)
            return None

    def list_pending(self, platform: str | None = None) -> list[dict[str, Any]]:
        """The live requests: ``platform``, ``request_id``, ``user_id``, ``user_name``,
        ``age_minutes`` (the codes themselves are never kept)."""
        rows: list[dict[str, Any]] = []
        with self._lock:
            for name in self._platforms(platform, "pending"):
                self._cleanup_expired(name)
                for key, info in _load(self._pending_path(name)).items():
                    created = _created_at(info)
                    if created is None:
                        continue
                    rows.append(
                        {
                            "platform": name,
                            "request_id": str(key) if _hashed(info) else "",
                            "user_id": info.get("user_id", ""),
                            "user_name": info.get("user_name", ""),
                            "age_minutes": int((time.time() - created) / 60),
                        }
                    )
        return rows

    def clear_pending(self, platform: str | None = None) -> int:
        """Drop every pending request; how many there were."""
        with self._lock:
            count = 0
            for name in self._platforms(platform, "pending"):
                count += len(_load(self._pending_path(name)))
                _save(self._pending_path(name), {})
        return count

    # -- rate limits and lockout ----------------------------------------------------------

    def _limits(self) -> dict[str, Any]:
        return _load(self._rate_limit_path())

    def _is_rate_limited(self, platform: str, user_id: str) -> bool:
        limits = self._limits()
        now = time.time()
        return any(
            now - float(limits.get(f"{platform}:{alias}", 0)) < RATE_LIMIT_SECONDS
            for alias in _aliases(platform, user_id)
        )

    def _record_rate_limit(self, platform: str, user_id: str) -> None:
        limits = self._limits()
        now = time.time()
        for alias in _aliases(platform, user_id):
            limits[f"{platform}:{alias}"] = now
        _save(self._rate_limit_path(), limits)

    def _is_locked_out(self, platform: str) -> bool:
        return time.time() < float(self._limits().get(f"_lockout:{platform}", 0))

    def _record_failed_attempt(self, platform: str) -> None:
        limits = self._limits()
        key = f"_failures:{platform}"
        failures = int(limits.get(key, 0)) + 1
        limits[key] = failures
        if failures >= MAX_FAILED_ATTEMPTS:
            limits[f"_lockout:{platform}"] = time.time() + LOCKOUT_SECONDS
            limits[key] = 0
            logger.warning(
                "pairing: platform %s locked out for %ss after %s failed attempts",
                platform,
                LOCKOUT_SECONDS,
                MAX_FAILED_ATTEMPTS,
            )
        _save(self._rate_limit_path(), limits)

    def _reset_failed_attempts(self, platform: str) -> None:
        limits = self._limits()
        key = f"_failures:{platform}"
        if limits.get(key):
            limits[key] = 0
            _save(self._rate_limit_path(), limits)
