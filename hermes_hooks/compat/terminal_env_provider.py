"""Hermes' ``agent.terminal_env_provider``: the terminal environment provider ABC.

The same class as :mod:`hermes_hooks.backends.terminal_env.provider`, so a provider written
for Hermes registers with ``ctx.register_terminal_environment_provider`` unchanged.
"""

from __future__ import annotations

from hermes_hooks.backends.terminal_env.provider import TerminalEnvironmentProvider

__all__ = ["TerminalEnvironmentProvider"]
