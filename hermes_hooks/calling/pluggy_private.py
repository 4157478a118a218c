"""Every private name of pluggy that hermes-hooks uses, in one place; the reasons are in
docs/explanation/pluggy-internals.md, and ``tests/test_pluggy_private.py`` fails naming the one
pluggy changed.

Calls run through pluggy's own hook caller and loop; plugins are registered by pluggy's own
``register`` and ``unregister``. What is left are the seams of a hook's list of implementations
(pluggy 1.7): ``HookCaller._hookimpls`` (the live list), the overrides of
``HookCaller._add_hookimpl`` and ``_remove_plugin`` (guard an implementation before it is added,
insert and remove at a cost that does not grow with the list, stage a change) and of
``_maybe_apply_history`` (guard before a historic replay), and ``_hookexec`` (pluggy's, given to
each :class:`ContractHookCaller` and called as pluggy's ``__call__`` calls it).
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Final

import pluggy

from hermes_hooks.calling import handoff
from hermes_hooks.calling.bounds import BoundSetting
from hermes_hooks.calling.tracebacks import hide_in_pytest

__tracebackhide__ = hide_in_pytest  # a plugin's failure: pytest leaves these frames out

__all__ = [
    "PRIVATE_ATTRIBUTES",
    "ContractHookCaller",
    "Monitor",
    "PluggySeams",
    "insert_in_call_order",
    "live_hookimpls",
]

PRIVATE_ATTRIBUTES: Final = (
    "HookCaller._hookimpls",
    "HookCaller._hookexec",
    "PluginManager._hookexec",
)
"""The private attributes read or written (checked by ``tests/test_pluggy_private.py``)."""
CALLER_OVERRIDES: Final = ("_add_hookimpl", "_remove_plugin", "_maybe_apply_history")
"""The private methods of ``pluggy.HookCaller`` that :class:`ContractHookCaller` overrides."""

Before = Callable[[str, Sequence[pluggy.HookImpl], Mapping[str, Any]], None]
After = Callable[[pluggy.Result[Any], str, Sequence[pluggy.HookImpl], Mapping[str, Any]], None]
Monitor = tuple[Before, After]
"""A ``(before, after)`` pair given to ``add_hookcall_monitoring``."""

_HISTORIC: Final = "Cannot directly call a historic hook - use call_historic instead."
_FRESH: Final = (list, dict)  # defaults copied for each call


def live_hookimpls(caller: pluggy.HookCaller) -> list[pluggy.HookImpl]:
    """Return the list of implementations pluggy holds for a hook: not a copy, never mutate it."""
    return caller._hookimpls


def insert_in_call_order(impls: list[pluggy.HookImpl], hookimpl: pluggy.HookImpl) -> None:
    """Insert ``hookimpl`` where pluggy's ``_add_hookimpl`` would, without its scan from the start.

    Wrappers always sit after the other implementations, so the split point is found by stepping
    back over the trailing wrappers: the cost does not grow with the plain implementations.
    """
    split = len(impls)
    while split and (impls[split - 1].wrapper or impls[split - 1].hookwrapper):
        split -= 1
    start, end = (split, len(impls)) if hookimpl.hookwrapper or hookimpl.wrapper else (0, split)
    if hookimpl.trylast:
        impls.insert(start, hookimpl)
    elif hookimpl.tryfirst:
        impls.insert(end, hookimpl)
    else:
        i = end - 1
        while i >= start and impls[i].tryfirst:
            i -= 1
        impls.insert(i + 1, hookimpl)


class _Stage:
    """Changes to hooks' lists, made on copies and published at once (removals once per hook)."""

    __slots__ = ("lists", "removed")

    def __init__(self) -> None:
        self.lists: dict[pluggy.HookCaller, list[pluggy.HookImpl]] = {}
        self.removed: dict[pluggy.HookCaller, set[int]] = {}

    def working(self, caller: pluggy.HookCaller) -> list[pluggy.HookImpl]:
        impls = self.lists.get(caller)
        if impls is None:
            impls = self.lists[caller] = list(caller._hookimpls)
        removed = self.removed.pop(caller, None)
        if removed:
            impls[:] = [i for i in impls if id(i.plugin) not in removed]
        return impls

    def remove(self, caller: pluggy.HookCaller, plugin: object) -> None:
        if caller not in self.lists:
            self.lists[caller] = list(caller._hookimpls)
        self.removed.setdefault(caller, set()).add(id(plugin))

    def publish(self) -> None:
        for caller in list(self.lists):
            # One slice assignment: a call in another thread copies the list before or after it.
            caller._hookimpls[:] = self.working(caller)
            if isinstance(caller, ContractHookCaller):
                caller.forget_batches()
        self.lists.clear()


class ContractHookCaller(pluggy.HookCaller):
    """pluggy's ``HookCaller``; arguments a call leaves out take the hook contract's defaults.

    Only arguments without a default are reported missing, in pluggy's words; a full call is
    handed on without a copy. A bounded hook's call, off a worker, opens a
    :class:`~hermes_hooks.calling.handoff.PendingCall` around pluggy's loop.
    """

    __slots__ = (
        "_argnames",
        "_batches",
        "_bounded",
        "_fill",
        "_firstresult",
        "_kwdefaults",
        "_seams",
    )

    def __init__(
        self,
        name: str,
        seams: PluggySeams,
        specmodule_or_class: object | None = None,
        spec_opts: pluggy.HookspecOpts | None = None,
    ) -> None:
        self._seams = seams
        self._argnames: tuple[str, ...] = ()
        self._fill: tuple[tuple[str, object], ...] = ()
        self._firstresult = self._bounded = False
        self._kwdefaults: Mapping[str, object] = {}
        self._batches: handoff.StepsCache = {}
        super().__init__(name, seams._hookexec, specmodule_or_class, spec_opts)  # type: ignore[arg-type]

    def set_specification(self, specmodule_or_class: Any, spec_opts: pluggy.HookspecOpts) -> None:
        """Set the spec (as pluggy does) and read its argument defaults."""
        super().set_specification(specmodule_or_class, spec_opts)
        spec = self.spec
        assert spec is not None
        self._argnames = tuple(spec.argnames)
        self._firstresult = bool(spec.opts.get("firstresult", False))
        self._kwdefaults = spec.kwargdefaults
        defaults = self._seams.hook_defaults(spec.function)
        self._bounded = self._seams.hook_bounded(spec.function)
        self._fill = tuple((name, defaults[name]) for name in self._argnames if name in defaults)

    def __call__(self, **kwargs: object) -> Any:
        """Call the hook as pluggy does; arguments left out take the contract's defaults."""
        assert not self.is_historic(), _HISTORIC
        for argname in self._argnames:
            if argname not in kwargs:
                self._complete(kwargs)  # this call's own dict: filled in place
                break
        if self._kwdefaults:
            kwargs = {**self._kwdefaults, **kwargs}
        impls = self._hookimpls.copy()
        thread = handoff.THREAD
        if not self._bounded or self._seams.callback_bound.seconds <= 0 or thread.batch:
            return self._hookexec(self.name, impls, kwargs, self._firstresult)
        exact = len(kwargs) == len(self._argnames)
        call = handoff.PendingCall(
            self.name, impls, kwargs, self._firstresult, exact, self._batches
        )
        call.outer, thread.call = thread.call, call  # opened around pluggy's loop, this thread
        try:
            return self._hookexec(self.name, impls, kwargs, self._firstresult)
        finally:
            thread.call = call.outer

    def arguments(self, kwargs: Mapping[str, object]) -> Mapping[str, object]:
        """What a call with ``kwargs`` runs with, completed as :meth:`__call__` completes them
        (for the async path): ``kwargs`` itself, or a completed copy."""
        if any(name not in kwargs for name in self._argnames):
            kwargs = dict(kwargs)
            self._complete(kwargs, stacklevel=4)  # the frame awaiting acall_hook
        return {**self._kwdefaults, **kwargs} if self._kwdefaults else kwargs

    def _complete(
        self, kwargs: dict[str, object], *, warn: bool = True, stacklevel: int = 3
    ) -> None:
        """Fill in the defaults a call left out; warn, in pluggy's words, about the others."""
        for name, default in self._fill:
            if name not in kwargs:
                kwargs[name] = default.copy() if type(default) in _FRESH else default  # type: ignore[attr-defined]
        missing = ", ".join(repr(name) for name in self._argnames if name not in kwargs)
        if missing and warn:
            warnings.warn(
                f"Argument(s) {missing} which are declared in the hookspec "
                "cannot be found in this hook call",
                stacklevel=stacklevel,
            )

    def _filled(self, kwargs: Mapping[str, object] | None) -> Mapping[str, object]:
        """The caller's mapping, or a filled copy of it (the caller's is never changed)."""
        kwargs = kwargs or {}
        if all(name in kwargs for name, _ in self._fill):
            return kwargs
        filled = dict(kwargs)
        self._complete(filled, warn=False)
        return filled

    def call_extra(
        self, methods: Sequence[Callable[..., object]], kwargs: Mapping[str, object]
    ) -> Any:
        """pluggy's ``call_extra``; arguments left out take the contract's defaults."""
        return super().call_extra(methods, self._filled(kwargs))

    def call_historic(
        self,
        result_callback: Callable[[Any], None] | None = None,
        kwargs: Mapping[str, object] | None = None,
    ) -> None:
        """pluggy's ``call_historic``; arguments left out take the contract's defaults."""
        super().call_historic(result_callback, self._filled(kwargs))

    def _maybe_apply_history(self, method: pluggy.HookImpl) -> None:
        # pluggy's register replays a historic hook's calls before it adds the implementation.
        if self.is_historic():
            self._seams.on_hookimpl_added(self, method)
        super()._maybe_apply_history(method)

    def _add_hookimpl(self, hookimpl: pluggy.HookImpl) -> None:
        self._seams.on_hookimpl_added(self, hookimpl)
        self._seams._insert_hookimpl(self, hookimpl)
        self._batches.clear()

    def _remove_plugin(self, plugin: object) -> None:
        self._seams._remove_hookimpls(self, plugin)
        self._batches.clear()

    @property
    def monitors(self) -> tuple[Monitor, ...]:
        """The manager's call monitors, oldest first (for the async path, which pluggy's loop
        is not)."""
        return self._seams.monitors

    def forget_batches(self) -> None:
        """Drop the batches kept for the list as it was (it has just changed)."""
        self._batches.clear()


class PluggySeams(pluggy.PluginManager):
    """pluggy's manager with registration linear and atomic (:meth:`staged`).

    Every hook is a :class:`ContractHookCaller`; each implementation passes
    :meth:`on_hookimpl_added` after pluggy's checks and before it is added; a plugin's name and
    hooks are found in an index (objects whose type defines ``__eq__`` by ``==``, as pluggy).
    """

    def __init__(self, project_name: str) -> None:
        super().__init__(project_name)
        #: ``plugins.hook_callback_timeout``, as every guard and hook caller reads it.
        self.callback_bound = BoundSetting(0.0)
        # id(plugin) -> (plugin, its name, the hooks it implements).
        self._registered: dict[int, tuple[object, str, dict[pluggy.HookCaller, None]]] = {}
        self._custom_eq = 0  # registered plugins whose type defines __eq__
        self._stage: _Stage | None = None
        #: What ``add_hookcall_monitoring`` was given and not undone, oldest first.
        self.monitors: tuple[Monitor, ...] = ()

    def add_hookcall_monitoring(self, before: Before, after: After) -> Callable[[], None]:
        """pluggy's, around its loop; the async path (:mod:`~hermes_hooks.calling.aio`) tells the
        same monitors of its calls. The undo, as pluggy's, also drops monitors added after."""
        undo_pluggys = super().add_hookcall_monitoring(before, after)
        kept, self.monitors = self.monitors, (*self.monitors, (before, after))

        def undo() -> None:
            undo_pluggys()
            self.monitors = kept

        return undo

    def hook_defaults(self, spec_function: object) -> Mapping[str, object]:
        """Return the defaults of the arguments a call of this hook may leave out; none here."""
        return {}

    def hook_bounded(self, spec_function: object) -> bool:
        """Return whether the hook's implementations run within ``callback_bound``; no here."""
        return False

    def on_hookimpl_added(self, hook: pluggy.HookCaller, hookimpl: pluggy.HookImpl) -> None:
        """Called for each implementation after pluggy's checks, before it is added."""

    def add_hookspecs(self, module_or_class: Any) -> None:
        """Add hook specifications, as pluggy does; every hook is a :class:`ContractHookCaller`."""
        for name in dir(module_or_class):
            if self.parse_hookspec_opts(module_or_class, name) is not None:
                self._caller(name)  # pluggy sets the spec on a caller it finds
        super().add_hookspecs(module_or_class)

    def parse_hookimpl_opts(self, plugin: object, name: str) -> pluggy.HookimplOpts | None:
        """pluggy's; the hook an implementation names becomes a :class:`ContractHookCaller`."""
        opts = super().parse_hookimpl_opts(plugin, name)
        if opts is not None:
            self._caller(opts.get("specname") or name)
        return opts

    def _caller(self, name: str) -> None:
        if getattr(self.hook, name, None) is None:
            setattr(self.hook, name, ContractHookCaller(name, self))

    def register(self, plugin: object, name: str | None = None) -> str | None:
        """pluggy's own ``register``; the plugin's name and hooks also go into the index."""
        if plugin is None:
            return None  # as pluggy (its #731, #749)
        key, plugin_name = id(plugin), name or self.get_canonical_name(plugin)
        known = self._registered.get(key)
        new = known is None or known[0] is not plugin
        if new:  # filled by _insert_hookimpl while pluggy adds the implementations
            self._registered[key] = (plugin, plugin_name, {})
        try:
            registered = super().register(plugin, name)
        except BaseException:
            # Past pluggy's checks (a historic replay raised): kept for unregister to undo.
            if new and self.get_plugin(plugin_name) is not plugin:
                self._drop(plugin)
            elif new:
                self._count_eq(plugin, 1)
            raise
        if registered is None:
            self._drop(plugin)  # a blocked name
        else:
            self._count_eq(plugin, 1)
        return registered

    def unregister(self, plugin: object | None = None, name: str | None = None) -> Any | None:
        """pluggy's own ``unregister``."""
        removed = super().unregister(plugin, name)
        entry = self._registered.get(id(removed))
        if entry is not None and entry[0] is removed and self.get_plugin(entry[1]) is None:
            self._drop(removed)
            self._count_eq(removed, -1)
        return removed

    def _count_eq(self, plugin: object, change: int) -> None:
        if type(plugin).__eq__ is not object.__eq__:
            self._custom_eq += change  # while one is registered, look-ups fall back to ==

    def _drop(self, plugin: object) -> None:
        entry = self._registered.get(id(plugin))
        if entry is not None and entry[0] is plugin:
            del self._registered[id(plugin)]

    def _entry(self, plugin: object) -> tuple[object, str, dict[pluggy.HookCaller, None]] | None:
        entry = self._registered.get(id(plugin))
        return entry if entry is not None and entry[0] is plugin else None

    def _by_eq(self, plugin: object) -> bool:
        return bool(self._custom_eq) or type(plugin).__eq__ is not object.__eq__

    def is_registered(self, plugin: object) -> bool:
        """Return whether the plugin is registered (as pluggy, without scanning every plugin)."""
        if self.get_name(plugin) is not None:
            return True
        return self._by_eq(plugin) and super().is_registered(plugin)

    def get_name(self, plugin: object) -> str | None:
        """Return the name the plugin is registered under, or ``None`` (as pluggy)."""
        entry = self._entry(plugin)
        if entry is not None:
            return entry[1]
        return super().get_name(plugin) if self._by_eq(plugin) else None

    def get_hookcallers(self, plugin: object) -> list[pluggy.HookCaller] | None:
        """Return the hooks the plugin implements, or ``None`` when it is not registered."""
        if self.get_name(plugin) is None:
            return None
        entry = self._entry(plugin)
        mine = entry[2] if entry is not None else {}
        if len(mine) <= 1:
            return list(mine)
        return [caller for caller in vars(self.hook).values() if caller in mine]  # pluggy's order

    def _insert_hookimpl(self, hook: pluggy.HookCaller, hookimpl: pluggy.HookImpl) -> None:
        entry = self._entry(hookimpl.plugin)
        if entry is not None:
            entry[2][hook] = None
        stage = self._stage
        # In place otherwise: one list.insert, a single step for a call in another thread.
        insert_in_call_order(hook._hookimpls if stage is None else stage.working(hook), hookimpl)

    def _remove_hookimpls(self, hook: pluggy.HookCaller, plugin: object) -> None:
        if self._stage is not None:
            self._stage.remove(hook, plugin)
            return
        remaining = [impl for impl in hook._hookimpls if impl.plugin is not plugin]
        if len(remaining) == len(hook._hookimpls):
            raise ValueError(f"plugin {plugin!r} not found")
        hook._hookimpls[:] = remaining

    @contextlib.contextmanager
    def staged(self) -> Iterator[None]:
        """Publish every change to the hooks' implementations made in the block at its end.

        A call meanwhile, from any thread, runs the implementations the hook had before; after,
        those it has at the end; never a mix. Nested blocks: the outermost publishes. Callers
        hold the manager's lock.
        """
        if self._stage is not None:
            yield
            return
        stage = self._stage = _Stage()
        try:
            yield
        finally:
            self._stage = None
            stage.publish()
