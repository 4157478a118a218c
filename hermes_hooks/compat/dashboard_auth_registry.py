"""Hermes' ``hermes_cli.dashboard_auth.registry``: the registered providers.

``list_providers()`` gives the current manager's providers (those plugins registered with
``ctx.register_dashboard_auth_provider``) and those registered here process-wide.
"""

from __future__ import annotations

from hermes_hooks.backends.dashboard_auth.registry import (
    clear_providers,
    get_provider,
    list_providers,
    list_session_providers,
    list_token_providers,
    register_provider,
)

__all__ = [
    "clear_providers",
    "get_provider",
    "list_providers",
    "list_session_providers",
    "list_token_providers",
    "register_provider",
]
