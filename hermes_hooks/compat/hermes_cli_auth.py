"""Hermes' ``hermes_cli.auth``, the part plugins read: the stored provider logins.

Hermes keeps them in ``<home>/auth.json`` (``{"providers": {NAME: {"access_token": ...}}}``);
this reads that file of the current home and never refreshes a token or reaches the network.
Logging in is Hermes' own (``hermes login``) and is not served.
"""

from __future__ import annotations

import json
from typing import Any

from hermes_hooks.compat.current import current_home

__all__ = ["AuthError", "get_provider_auth_state", "read_auth_store", "resolve_nous_access_token"]


class AuthError(RuntimeError):
    """No usable login for a provider."""


def read_auth_store() -> dict[str, Any]:
    """Return the current home's ``auth.json`` (empty when it is missing or unreadable)."""
    try:
        data = json.loads((current_home() / "auth.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def get_provider_auth_state(provider_id: str) -> dict[str, Any] | None:
    """Return the stored login state of ``provider_id`` (``nous``...), or ``None``."""
    providers = read_auth_store().get("providers")
    state = providers.get(provider_id) if isinstance(providers, dict) else None
    return dict(state) if isinstance(state, dict) else None


def resolve_nous_access_token() -> str:
    """Return the stored Nous Portal access token (never refreshed here).

    :raises AuthError: there is none.
    """
    token = (get_provider_auth_state("nous") or {}).get("access_token")
    if not isinstance(token, str) or not token:
        raise AuthError("no Nous Portal login in auth.json (run 'hermes login' in Hermes)")
    return token
