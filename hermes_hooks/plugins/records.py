"""What the plugin manager knows of each plugin: the public :class:`PluginInfo`, and the
mutable :class:`Record` and :class:`LoadGate` it keeps while it discovers, gates, loads and
unloads (:mod:`hermes_hooks.plugins.manager`).
"""

from __future__ import annotations

import threading
import types
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

import attrs

from hermes_hooks.errors import PluginLoadError

if TYPE_CHECKING:
    from hermes_hooks.plugins.context import PluginContext
    from hermes_hooks.plugins.discovery import Candidate, Source
    from hermes_hooks.plugins.loading import PluginHooks
    from hermes_hooks.registries.base import Handle

__all__ = ["LoadGate", "PluginInfo", "Record", "Status"]

Status = Literal["enabled", "disabled", "not enabled", "error"]
"""What happened to a discovered plugin (see :class:`PluginInfo`)."""


@attrs.frozen
class PluginInfo:
    """What is known of one discovered plugin: its manifest, its status and what it registered.

    ``status`` is what actually happened: ``enabled`` (loaded), ``disabled`` (in
    ``plugins.disabled``), ``not enabled`` (not opted in, or a kind this manager does not load),
    or ``error`` (it could not be read or loaded; ``error`` says why).
    """

    key: str
    name: str
    version: str
    kind: str
    source: Source
    status: Status
    error: str | None
    path: str | None
    description: str = ""
    reason: str | None = None
    tools: tuple[str, ...] = ()
    hooks: tuple[str, ...] = ()
    commands: tuple[str, ...] = ()
    cli_commands: tuple[str, ...] = ()
    skills: tuple[str, ...] = ()
    providers: tuple[str, ...] = ()
    """The providers it registered, as ``family:name`` (``image_gen:local``)."""
    hook_errors: int = 0
    last_hook_error: str | None = None
    warnings: tuple[str, ...] = ()
    load_ms: float | None = None
    hook_timeouts: int = 0
    """Calls of its hook implementations that exceeded ``plugins.hook_callback_timeout``, or
    were skipped after one (also counted in ``hook_errors``)."""
    aliases: tuple[str, ...] = ()
    """Older names config may use for it: the folder name of a flat plugin keyed by its
    manifest name."""
    kind_inferred: bool = False
    """Its kind was inferred from its ``__init__.py`` (the manifest declares none)."""
    served_by: str | None = None
    """For a plugin a provider family serves (``exclusive``, ``model-provider``): the config
    key that selects it, e.g. ``memory.provider``."""
    platforms: tuple[str, ...] = ()
    """The gateway platforms it registered with ``ctx.register_platform``."""
    replacement: str | None = None
    """Said when another plugin has its key: the one it replaced (an entry point over a user
    plugin, a trusted project plugin over the user's), or the untrusted project plugin that
    wanted to replace it and was refused."""

    def to_dict(self) -> dict[str, Any]:
        """Return the fields as a JSON-ready dict (tuples become lists)."""
        return {k: list(v) if isinstance(v, tuple) else v for k, v in attrs.asdict(self).items()}

    # -- Hermes' list_plugins() dicts: info["name"], info["enabled"], info["tools"] (a count) --

    def hermes_dict(self) -> dict[str, Any]:
        """Return the dict Hermes' ``PluginManager.list_plugins()`` gives for this plugin.

        ``tools``, ``hooks`` and ``commands`` are counts there, as Hermes' ``hermes plugins
        list`` shows them; ``enabled`` is whether it loaded.
        """
        return {
            "name": self.name,
            "key": self.key,
            "kind": self.kind,
            "version": self.version,
            "description": self.description,
            "source": self.source,
            "enabled": self.status == "enabled",
            "tools": len(self.tools),
            "hooks": len(self.hooks),
            "commands": len(self.commands),
            "error": self.error,
        }

    def __getitem__(self, key: str) -> Any:
        """``info["name"]``: the value of :meth:`hermes_dict`, for code written for Hermes."""
        return self.hermes_dict()[key]

    def __contains__(self, key: object) -> bool:
        return key in self.hermes_dict()

    def get(self, key: str, default: Any = None) -> Any:
        """``info.get("error")``, as on Hermes' dict."""
        return self.hermes_dict().get(key, default)

    def keys(self) -> list[str]:
        """The keys of Hermes' dict (so ``dict(info)`` is that dict)."""
        return list(self.hermes_dict())


class LoadGate:
    """Between a plugin's load on a worker and the manager, which may give up on it.

    Once closed (at ``plugins.load_timeout``), the abandoned load may run on but may no longer
    hand its module or a context to the record, so nothing it registers later is accepted.
    """

    __slots__ = ("closed", "lock", "thread_id")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.closed = False
        self.thread_id: int | None = None

    def close(self) -> None:
        with self.lock:
            self.closed = True

    def check(self, key: str) -> None:
        """Raise when the manager gave up on this load (called holding :attr:`lock`)."""
        if self.closed:
            raise PluginLoadError(key, "its load was given up (plugins.load_timeout)")


@attrs.define(eq=False)
class Record:
    """The manager's mutable state for one plugin."""

    candidate: Candidate
    status: Status = "not enabled"
    error: str | None = None
    reason: str | None = None
    module: types.ModuleType | None = None
    holder: PluginHooks | None = None
    context: PluginContext | None = None
    loading: bool = False
    pending: list[tuple[str, Callable[..., Any]]] = attrs.Factory(list)
    hook_errors: int = 0
    last_hook_error: str | None = None
    warnings: list[str] = attrs.Factory(list)
    load_ms: float | None = None
    hook_timeouts: int = 0
    import_name: str | None = None
    """The module name its folder is being imported as, known before the import finishes."""
    platforms: list[str] = attrs.Factory(list)
    served_by: str | None = None
    unload_callbacks: list[tuple[Callable[[], Any], Handle]] = attrs.Factory(list)
    deferred: bool = False
    """Its kind is imported on its family's first lookup (``PluginManager.load_deferred``)."""
    checked: Any = None
    """A trusted project plugin's content as its trust check read it (a ``TrustedContent``)."""
    replacement: str | None = None
    """What its status says about another plugin of its key it replaced, or that stays."""
    host_modules: frozenset[str] | None = None
    """An entry-point plugin's: the modules of its top-level package loaded before it was (the
    host's, or another plugin's), which its unload leaves alone."""
