"""Hermes' ``agent.web_search_provider``: the web search provider ABC and ``get_provider_env``.

``WebSearchProvider`` is the web search family's ABC, so a provider written for Hermes
registers with ``ctx.register_web_search_provider`` unchanged. ``get_provider_env`` reads the
environment, then the ``.env`` of the home whose tool is running, else the current manager's.
"""

from __future__ import annotations

import os

from hermes_hooks.backends.home import get_active_home
from hermes_hooks.backends.web_search.provider import WebSearchProvider
from hermes_hooks.compat.current import current_home
from hermes_hooks.plugins.envfile import read_env_file

__all__ = ["WebSearchProvider", "get_provider_env"]


def get_provider_env(name: str) -> str:
    """Return variable ``name`` stripped: the environment, then ``$HERMES_HOME/.env``; ``""``."""
    value = os.environ.get(name)
    if value is None or not value.strip():
        try:
            value = read_env_file(get_active_home() or current_home()).get(name)
        except Exception:  # as Hermes: an unreadable config layer is no value
            value = None
    return (value or "").strip()
