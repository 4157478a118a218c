"""Hermes' ``agent.terminal_env_registry``: the built-in backend names a plugin may not take.

The providers themselves are per manager here (``pm.backend("terminal_env")``); Hermes'
process-wide ``register_provider``/``get_provider`` are reached through ``ctx``.
"""

from __future__ import annotations

from hermes_hooks.backends.terminal_env.provider import (
    BUILTIN_BACKEND_NAMES,
    TerminalEnvironmentProvider,
)

__all__ = ["BUILTIN_BACKEND_NAMES", "TerminalEnvironmentProvider"]
