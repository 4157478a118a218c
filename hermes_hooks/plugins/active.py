"""Which manager, and which plugin, a piece of plugin code is running for.

Hermes' plugin-facing modules answer "which home, which registry" from process globals.
Here a process may hold several managers (a host and a trial load, two test homes), so the
compatibility layer asks this module: the manager that is loading the plugin (set while its
module is imported and its ``register(ctx)`` runs), else the one a host made current with
:meth:`PluginManager.activate` (a context variable, so bounded hook calls carry it onto their
worker), else the manager whose plugin code is on the calling stack, else the most recently
created manager still alive.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
import weakref
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hermes_hooks.plugins.manager import PluginManager

__all__ = [
    "activated",
    "current_manager",
    "current_plugin",
    "engaged_manager",
    "live_managers",
    "loading",
    "note_created",
]

_loading: contextvars.ContextVar[tuple[PluginManager, str] | None] = contextvars.ContextVar(
    "hermes_hooks_loading_plugin", default=None
)
_active: contextvars.ContextVar[PluginManager | None] = contextvars.ContextVar(
    "hermes_hooks_active_manager", default=None
)
_lock = threading.Lock()
_created: list[weakref.ref[PluginManager]] = []


def note_created(manager: PluginManager) -> None:
    """Remember ``manager`` (weakly) as the most recently created one."""
    with _lock:
        _created[:] = [ref for ref in _created if ref() is not None]
        _created.append(weakref.ref(manager))


def live_managers() -> list[PluginManager]:
    """Return the managers still alive, the most recently created first."""
    with _lock:
        refs = list(_created)
    return [pm for ref in reversed(refs) if (pm := ref()) is not None]


@contextlib.contextmanager
def loading(manager: PluginManager, key: str) -> Iterator[None]:
    """Within the block, plugin ``key`` of ``manager`` is the one being loaded."""
    token = _loading.set((manager, key))
    try:
        yield
    finally:
        _loading.reset(token)


@contextlib.contextmanager
def activated(manager: PluginManager) -> Iterator[None]:
    """Within the block (this thread or task, and the workers it hands calls to), ``manager``
    is the current one."""
    token = _active.set(manager)
    try:
        yield
    finally:
        _active.reset(token)


def _on_stack() -> tuple[PluginManager, str] | None:
    """Return a live manager with plugin code on the calling stack, and that plugin's key."""
    for manager in live_managers():
        keys = manager.acting_plugins()
        if keys:
            return manager, sorted(keys)[0]
    return None


def current_manager() -> PluginManager | None:
    """Return the manager plugin code is running for now (see the module's docstring)."""
    found = _loading.get()
    if found is not None:
        return found[0]
    active = _active.get()
    if active is not None:
        return active
    on_stack = _on_stack()
    if on_stack is not None:
        return on_stack[0]
    managers = live_managers()
    return managers[0] if managers else None


def engaged_manager() -> PluginManager | None:
    """Return the manager loading, activated for, or calling plugin code now, or ``None``.

    As :func:`current_manager`, without its last resort (the most recently created manager):
    what Hermes' home override is, so that outside any manager ``$HERMES_HOME`` decides.
    """
    found = _loading.get()
    if found is not None:
        return found[0]
    active = _active.get()
    if active is not None:
        return active
    on_stack = _on_stack()
    return on_stack[0] if on_stack is not None else None


def current_plugin(manager: PluginManager | None = None) -> str | None:
    """Return the key of the plugin whose code is running for ``manager`` now, or ``None``.

    The plugin being loaded, else the plugin of ``manager`` (the current one by default)
    with code on the calling stack; ``None`` when only host code is running.
    """
    found = _loading.get()
    manager = manager if manager is not None else current_manager()
    if found is not None and (manager is None or found[0] is manager):
        return found[1]
    if manager is None:
        return None
    keys = manager.acting_plugins()
    return sorted(keys)[0] if keys else None
