"""Hermes' ``tools.tool_backend_helpers``, the part plugins use: direct keys or the Nous gateway.

Hermes routes some tools (Firecrawl, Browser Use, FAL, Krea...) through the Nous Tool Gateway
for Nous Portal subscribers; whether a user is entitled is an account look-up at the Portal,
which hermes-hooks does not make, so ``managed_nous_tools_enabled()`` is always ``False`` and
the plugins use their direct API keys, as they do for every Hermes user without a
subscription.
"""

from __future__ import annotations

import os

from hermes_hooks.compat import hermes_cli_config
from hermes_hooks.compat.utils import is_truthy_value

__all__ = [
    "fal_key_is_configured",
    "managed_nous_tools_enabled",
    "nous_tool_gateway_unavailable_message",
    "prefers_gateway",
    "resolve_openai_audio_api_key",
]


def managed_nous_tools_enabled(*, force_fresh: bool = False) -> bool:
    """Return ``False``: the Nous Tool Gateway entitlement is not looked up here."""
    return False


def nous_tool_gateway_unavailable_message(
    capability: str = "the Nous Tool Gateway", *, force_fresh: bool = False
) -> str:
    """Return the guidance shown when a managed-gateway path is unavailable."""
    return (
        f"{capability} is unavailable: hermes-hooks does not route tools through the Nous Tool "
        "Gateway; configure the provider's own API key instead."
    )


def prefers_gateway(config_section: str) -> bool:
    """Return whether ``<section>.use_gateway`` is truthy in ``config.yaml`` (never raises)."""
    try:
        section = hermes_cli_config.load_config().get(config_section)
    except Exception:
        return False
    if isinstance(section, dict):
        return is_truthy_value(section.get("use_gateway"), default=False)
    return False


def fal_key_is_configured() -> bool:
    """Return whether ``FAL_KEY`` is set to something other than blanks (environment, then
    the home's ``.env``)."""
    value = os.environ.get("FAL_KEY")
    if value is None:
        value = hermes_cli_config.get_env_value("FAL_KEY")
    return bool(value and value.strip())


def resolve_openai_audio_api_key() -> str:
    """Return ``VOICE_TOOLS_OPENAI_KEY``, else ``OPENAI_API_KEY``, else ``""``."""
    return (
        os.environ.get("VOICE_TOOLS_OPENAI_KEY", "") or os.environ.get("OPENAI_API_KEY", "")
    ).strip()
