"""Which manager, home and plugin a Hermes module's function answers for.

Hermes' modules answer from process globals (one home, one tool registry). Here they answer
for the manager that is loading or calling the plugin (a context variable, carried onto the
workers of bounded hook calls), else the most recently created one: see
:mod:`hermes_hooks.plugins.active`.
"""

from __future__ import annotations

import contextvars
from pathlib import Path
from typing import TYPE_CHECKING

from hermes_hooks.errors import HermesHooksError
from hermes_hooks.plugins import active
from hermes_hooks.plugins.config import get_hermes_home
from hermes_hooks.registries.base import HOST

if TYPE_CHECKING:
    from hermes_hooks.plugins.manager import PluginManager

__all__ = [
    "HOME_OVERRIDE",
    "NoManagerError",
    "current_home",
    "current_owner",
    "require_manager",
]

HOME_OVERRIDE: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "hermes_constants_home_override", default=None
)
"""Hermes' context-local home override (``hermes_constants.set_hermes_home_override``)."""


class NoManagerError(HermesHooksError, RuntimeError):
    """A Hermes function that needs a manager ran in a process that has none."""


def require_manager(what: str) -> PluginManager:
    """Return the current manager.

    :param what: the Hermes name asking, for the message.
    :raises NoManagerError: no ``PluginManager`` is alive in this process.
    """
    manager = active.current_manager()
    if manager is None:
        raise NoManagerError(
            f"{what} answers for a hermes-hooks PluginManager, and none exists in this process: "
            f"create one first (from hermes_hooks import PluginManager; PluginManager())"
        )
    return manager


def current_home() -> Path:
    """Return Hermes' home override when set, else the home of the manager loading, activated
    for or calling plugin code, else ``$HERMES_HOME`` read now (or ``~/.hermes``), as Hermes'
    ``get_hermes_home`` does.

    A manager merely alive does not count: a plugin's test suite that sets ``HERMES_HOME``
    between tests reads the new home, whatever managers earlier tests left behind.
    """
    override = HOME_OVERRIDE.get()
    if override:
        return Path(override)
    manager = active.engaged_manager()
    return manager.hermes_home if manager is not None else get_hermes_home().absolute()


def current_owner(manager: PluginManager) -> str:
    """Return who a registration through a Hermes module is for: the plugin whose code is
    running (loading, or on the stack), else the host."""
    return active.current_plugin(manager) or HOST
