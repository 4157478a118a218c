"""Hermes' ``tools.xai_http``: what plugins calling xAI's HTTP API directly share.

Credentials: a stored xAI OAuth login of the current home (``auth.json``'s
``providers.xai-oauth.tokens.access_token``, read only: never refreshed here), else
``XAI_API_KEY`` from the environment or the home's ``.env``. The Imagine storage settings are
read from ``image_gen.xai.storage`` / ``video_gen.xai.storage`` in ``config.yaml``, with
Hermes' defaults (storage on, public URLs, no expiry).
"""

from __future__ import annotations

import datetime
import os
import uuid
from typing import Any, Final

from hermes_hooks.compat import hermes_cli_auth, hermes_cli_config
from hermes_hooks.compat.current import current_home
from hermes_hooks.spec.contract import HERMES_CONTRACT_VERSION

__all__ = [
    "MAX_XAI_STORAGE_EXPIRES_AFTER_SECONDS",
    "SAFE_XAI_STORAGE_EXPIRES_AFTER_SECONDS",
    "build_xai_storage_options",
    "get_env_value",
    "has_xai_credentials",
    "hermes_xai_user_agent",
    "maybe_mark_xai_storage_notice_seen",
    "read_xai_imagine_storage_config",
    "resolve_xai_http_credentials",
    "xai_storage_notice_text",
]

MAX_XAI_STORAGE_EXPIRES_AFTER_SECONDS: Final = 30 * 24 * 60 * 60
SAFE_XAI_STORAGE_EXPIRES_AFTER_SECONDS: Final = 2 * 24 * 60 * 60
_DEFAULT_BASE_URL: Final = "https://api.x.ai/v1"
_TRUE: Final = frozenset({"1", "true", "yes", "on", "enabled"})
_FALSE: Final = frozenset({"0", "false", "no", "off", "disabled"})
_PERMANENT: Final = frozenset({"none", "null", "never", "permanent", "forever", "0"})


def get_env_value(name: str, default: str | None = None) -> str | None:
    """Return ``name`` from the environment, else the home's ``.env``, else ``default``."""
    value = hermes_cli_config.get_env_value(name)
    return value if value is not None else default


def _oauth_token() -> str:
    store = hermes_cli_auth.read_auth_store()
    state = (store.get("providers") or {}).get("xai-oauth") if isinstance(store, dict) else None
    tokens = state.get("tokens") if isinstance(state, dict) else None
    token = tokens.get("access_token") if isinstance(tokens, dict) else None
    if str(token or "").strip():
        return str(token).strip()
    pool = store.get("credential_pool") if isinstance(store, dict) else None
    entries = pool.get("xai-oauth") if isinstance(pool, dict) else None
    for entry in entries if isinstance(entries, list) else ():
        if isinstance(entry, dict) and str(entry.get("access_token") or "").strip():
            return str(entry["access_token"]).strip()
    return ""


def has_xai_credentials() -> bool:
    """Return whether xAI credentials are likely usable (no network, no refresh)."""
    if os.environ.get("XAI_API_KEY", "").strip():
        return True
    try:
        return bool(_oauth_token())
    except Exception:
        return False


def hermes_xai_user_agent() -> str:
    """Return the User-Agent of xAI calls: ``Hermes-Agent/<the Hermes version served>``."""
    return f"Hermes-Agent/{HERMES_CONTRACT_VERSION}"


def resolve_xai_http_credentials(
    *, force_refresh: bool = False, api_key_hint: str | None = None
) -> dict[str, str]:
    """Return ``{"provider", "api_key", "base_url"}`` for xAI's HTTP endpoints.

    A stored xAI OAuth login wins (``provider: xai-oauth``; ``HERMES_XAI_BASE_URL`` or
    ``XAI_BASE_URL`` may move its endpoint); otherwise ``XAI_API_KEY`` (``provider: xai``),
    empty when unset. ``force_refresh`` and ``api_key_hint`` are accepted as Hermes takes
    them; no token is refreshed here.
    """
    try:
        token = _oauth_token()
    except Exception:
        token = ""
    if token:
        override = get_env_value("HERMES_XAI_BASE_URL") or get_env_value("XAI_BASE_URL") or ""
        base = override.strip().rstrip("/") or _DEFAULT_BASE_URL
        return {"provider": "xai-oauth", "api_key": token, "base_url": base}
    api_key = str(get_env_value("XAI_API_KEY") or "").strip()
    base = str(get_env_value("XAI_BASE_URL") or _DEFAULT_BASE_URL).strip().rstrip("/")
    return {"provider": "xai", "api_key": api_key, "base_url": base}


def _coerce_bool(value: Any, default: bool) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        text = value.strip().lower()
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
    return default


def _coerce_expires_after(value: Any) -> int | None:
    if value is None or isinstance(value, bool):
        return None if value is None else SAFE_XAI_STORAGE_EXPIRES_AFTER_SECONDS
    if isinstance(value, str):
        text = value.strip().lower()
        if text in {"", "default"} or text in _PERMANENT:
            return None
        try:
            value = int(text)
        except ValueError:
            return SAFE_XAI_STORAGE_EXPIRES_AFTER_SECONDS
    if isinstance(value, int | float):
        seconds = int(value)
        return None if seconds <= 0 else min(seconds, MAX_XAI_STORAGE_EXPIRES_AFTER_SECONDS)
    return SAFE_XAI_STORAGE_EXPIRES_AFTER_SECONDS


def read_xai_imagine_storage_config(section_name: str) -> dict[str, Any]:
    """Return ``{"enabled", "public_url", "expires_after"}`` of ``<section>.xai.storage``.

    Storage is on by default with public URLs and no expiry (``expires_after`` ``None``); an
    expiry is capped at 30 days, and one that cannot be read becomes two days.
    """
    try:
        section = hermes_cli_config.load_config().get(section_name)
    except Exception:
        section = None
    xai = section.get("xai") if isinstance(section, dict) else None
    storage = xai.get("storage") if isinstance(xai, dict) else None
    storage = storage if isinstance(storage, dict) else {}
    return {
        "enabled": _coerce_bool(storage.get("enabled"), True),
        "public_url": _coerce_bool(storage.get("public_url"), True),
        "expires_after": _coerce_expires_after(storage.get("expires_after")),
    }


def build_xai_storage_options(
    section_name: str, *, filename_prefix: str, extension: str
) -> dict[str, Any] | None:
    """Return xAI's ``storage_options`` payload for one file, or ``None`` when storage is off."""
    config = read_xai_imagine_storage_config(section_name)
    if not config["enabled"]:
        return None
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y%m%d-%H%M%S")
    ext = extension.lstrip(".") or "bin"
    payload: dict[str, Any] = {
        "filename": f"{filename_prefix}-{stamp}-{uuid.uuid4().hex[:8]}.{ext}",
        "public_url": bool(config["public_url"]),
    }
    if config["expires_after"] is not None:
        payload["expires_after"] = config["expires_after"]
    return payload


def xai_storage_notice_text(section_name: str) -> str:
    """Return the notice shown on first use of xAI storage (empty when storage is off)."""
    config = read_xai_imagine_storage_config(section_name)
    if not config["enabled"]:
        return ""
    if config["expires_after"] is None:
        retention = "without an automatic expiry"
    else:
        days = config["expires_after"] / (24 * 60 * 60)
        retention = f"for about {days:g} day{'s' if days != 1 else ''}"
    return (
        "xAI Imagine storage is enabled so generated media gets a reusable "
        f"public URL {retention}. xAI may bill for stored files and public URL "
        f"hosting. Disable this with `{section_name}.xai.storage.enabled: false` "
        "or set `expires_after` to change the retention."
    )


def maybe_mark_xai_storage_notice_seen(section_name: str) -> str | None:
    """Return the storage notice once per home (``<home>/state/`` remembers), then ``None``."""
    notice = xai_storage_notice_text(section_name)
    if not notice:
        return None
    try:
        marker_dir = current_home() / "state"
        marker_dir.mkdir(parents=True, exist_ok=True)
        marker = marker_dir / f"{section_name}_xai_storage_notice_seen"
        if marker.exists():
            return None
        marker.write_text(datetime.datetime.now(datetime.UTC).isoformat() + "\n")
    except OSError:
        pass
    return notice
