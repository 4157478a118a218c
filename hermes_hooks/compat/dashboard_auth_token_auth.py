"""Hermes' ``hermes_cli.dashboard_auth.token_auth``: the bearer-token routes.

The seam itself (Hermes' ``token_auth_middleware``) is the dashboard's gate; a plugin uses
``register_token_route`` to opt an exact path into token auth.
"""

from __future__ import annotations

from hermes_hooks.backends.dashboard_auth.registry import (
    authenticate_token,
    clear_token_routes,
    extract_bearer_token,
    is_token_route,
    register_token_route,
)

__all__ = [
    "authenticate_token",
    "clear_token_routes",
    "extract_bearer_token",
    "is_token_route",
    "register_token_route",
]
