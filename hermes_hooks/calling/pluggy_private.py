"""Every private name of pluggy that hermes-hooks still uses, in one place, each with its reason.

Every hook call runs through pluggy's own hook caller and loop, and every plugin is registered
and unregistered by pluggy's own ``register`` and ``unregister``; nothing here replaces or copies
them. What is left are the seams of a hook's list of implementations: pluggy adds an
implementation by scanning the whole list for its first wrapper (so ``n`` implementations of one
hook cost ``n**2``), has no way to guard an implementation before another thread can call it, and
publishes a reload one implementation at a time. The guarded manager
(:mod:`hermes_hooks.calling.guarded`) needs those, so it reaches into pluggy here and nowhere
else. ``tests/test_pluggy_private.py`` checks each name against the installed pluggy and fails
with a message naming it when pluggy changes it; ``docs/explanation/pluggy-internals.md``
explains each one.

The names, as of pluggy 1.7:

- ``HookCaller._hookimpls``: the live list of a hook's implementations, which insertion writes
  and a staged reload replaces with one slice assignment.
- ``HookCaller._add_hookimpl``, ``HookCaller._remove_plugin``: what pluggy's ``register`` and
  ``unregister`` call to change that list; :class:`ContractHookCaller` overrides them to guard
  an implementation before it is added, to insert it at a cost that does not grow with the
  list, and to stage the change.
- ``HookCaller._maybe_apply_history``: overridden to guard an implementation before a historic
  hook's replay calls it (pluggy replays before it adds).
- ``PluginManager._hookexec``: given to each :class:`ContractHookCaller`, as pluggy gives it to
  its own (a hook caller cannot be made without it), and ``HookCaller._hookexec``, which
  :meth:`ContractHookCaller.__call__` calls exactly as pluggy's ``__call__`` does once it has
  filled in the contract's defaults (pluggy's would warn about them first).
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
    "OVERRIDDEN_METHODS",
    "PRIVATE_ATTRIBUTES",
    "ContractHookCaller",
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

OVERRIDDEN_METHODS: Final[tuple[str, ...]] = ()
"""The private methods of ``pluggy.PluginManager`` that :class:`PluggySeams` overrides: none."""

CALLED_METHODS: Final[tuple[str, ...]] = ()
"""The private methods of pluggy called other than by an override of the same name: none."""

CALLER_OVERRIDES: Final = ("_add_hookimpl", "_remove_plugin", "_maybe_apply_history")
"""The private methods of ``pluggy.HookCaller`` that :class:`ContractHookCaller` overrides."""

_HISTORIC: Final = "Cannot directly call a historic hook - use call_historic instead."
_NEVER: Final = object()

_IMMUTABLE, _FRESH_LIST, _FRESH_DICT = 0, 1, 2


def live_hookimpls(caller: pluggy.HookCaller) -> list[pluggy.HookImpl]:
    """Return the list of implementations pluggy holds for a hook: not a copy, never mutate it."""
    return caller._hookimpls


def insert_in_call_order(impls: list[pluggy.HookImpl], hookimpl: pluggy.HookImpl) -> None:
    """Insert ``hookimpl`` where pluggy's ``HookCaller._add_hookimpl`` would.

    pluggy finds the first wrapper by scanning from the start, which makes adding ``n``
    implementations of one hook quadratic. Wrappers always sit after every other
    implementation (that is the order pluggy keeps), so the same split point is found by
    stepping back over the trailing wrappers: the list ends the same, at a cost that does not
    grow with the plain implementations before it.
    """
    end = len(impls)
    split = end
    while split and (impls[split - 1].wrapper or impls[split - 1].hookwrapper):
        split -= 1
    if hookimpl.hookwrapper or hookimpl.wrapper:
        start, end = split, end
    else:
        start, end = 0, split
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
    """Changes to hooks' lists of implementations, published all at once.

    While a stage is open, adding and removing implementations works on copies of the lists;
    calls keep seeing the live lists, which :meth:`publish` replaces in one assignment each.
    Removals are kept as a set of plugins and applied once per hook, before its next
    addition or at publication, so that removing ``n`` plugins costs one pass per hook.
    """

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
            # Slice assignment: one step for a caller in another thread, which copies the
            # list (HookCaller.__call__) either before it or after it.
            caller._hookimpls[:] = self.working(caller)
            if isinstance(caller, ContractHookCaller):
                caller.forget_batches()
        self.lists.clear()


class ContractHookCaller(pluggy.HookCaller):
    """pluggy's ``HookCaller``, filling the arguments a host leaves out from the hook's contract.

    ``pm.hook.X(**kwargs)`` behaves as pluggy's, except that an argument of the spec that the
    call omits takes its default from :meth:`PluggySeams.hook_defaults` (a fresh ``[]`` or
    ``{}`` per call) instead of making pluggy warn; only arguments without a default are
    reported missing, in pluggy's words. A call that passes every argument is handed on as it
    came, without a copy. Implementations are added and removed through the manager, which
    keeps them in pluggy's order at a cost that does not grow with the hook's other
    implementations, and can publish several changes at once.
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
        self._fill: tuple[tuple[str, object, int], ...] = ()
        self._firstresult = False
        self._kwdefaults: Mapping[str, object] = {}
        self._bounded = False
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
        self._fill = tuple(
            (
                name,
                defaults[name],
                _FRESH_LIST
                if type(defaults[name]) is list
                else _FRESH_DICT
                if type(defaults[name]) is dict
                else _IMMUTABLE,
            )
            for name in self._argnames
            if name in defaults
        )

    def __call__(self, **kwargs: object) -> Any:
        """Call the hook, as pluggy does; arguments left out take the contract's defaults.

        A bounded hook's call, off a worker, opens a
        :class:`~hermes_hooks.calling.handoff.PendingCall` around pluggy's loop, so that its
        guards hand the call to one worker.
        """
        assert not self.is_historic(), _HISTORIC
        for argname in self._argnames:
            if argname not in kwargs:
                self._complete(kwargs)  # kwargs is this call's own dict: filled in place
                break
        if self._kwdefaults:
            kwargs = {**self._kwdefaults, **kwargs}
        if not self._bounded or self._seams.callback_bound.seconds <= 0 or handoff.on_worker():
            return self._hookexec(self.name, self._hookimpls.copy(), kwargs, self._firstresult)
        impls = self._hookimpls.copy()
        exact = len(kwargs) == len(self._argnames)
        call = handoff.PendingCall(
            self.name, impls, kwargs, self._firstresult, exact, self._batches
        )
        handoff.push_pending(call)
        try:
            return self._hookexec(self.name, impls, kwargs, self._firstresult)
        finally:
            handoff.pop_pending()

    def _complete(self, kwargs: dict[str, object]) -> None:
        """Fill in the defaults a call left out; warn, as pluggy does, about the others."""
        for name, default, kind in self._fill:
            if name not in kwargs:
                kwargs[name] = [] if kind == _FRESH_LIST else {} if kind == _FRESH_DICT else default
        missing = [name for name in self._argnames if name not in kwargs]
        if missing:
            notincall = ", ".join(repr(name) for name in missing)
            warnings.warn(
                f"Argument(s) {notincall} which are declared in the hookspec "
                "cannot be found in this hook call",
                stacklevel=3,
            )

    def _filled(self, kwargs: Mapping[str, object] | None) -> Mapping[str, object]:
        """The caller's mapping, or a copy with the contract's defaults (never changed itself)."""
        kwargs = kwargs or {}
        if any(name not in kwargs for name, _, _ in self._fill):
            filled = dict(kwargs)
            for name, default, kind in self._fill:
                if name not in filled:
                    fresh = [] if kind == _FRESH_LIST else {} if kind == _FRESH_DICT else default
                    filled[name] = fresh
            return filled
        return kwargs

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

    def forget_batches(self) -> None:
        """Drop the batches kept for the list as it was (it has just changed)."""
        self._batches.clear()


class PluggySeams(pluggy.PluginManager):
    """pluggy's manager with its registration made linear and atomic.

    Every hook is a :class:`ContractHookCaller`; calls go through pluggy's loop. ``register`` and
    ``unregister`` are pluggy's, rewritten so that their cost does not grow with what was
    registered before: each implementation passes :meth:`on_hookimpl_added` after pluggy's
    checks and before it is added, a plugin's hooks and name are found in an index, and
    :meth:`staged` publishes many changes to the hooks at once.
    """

    def __init__(self, project_name: str) -> None:
        super().__init__(project_name)
        #: ``plugins.hook_callback_timeout``, as every guard and hook caller reads it.
        self.callback_bound = BoundSetting(0.0)
        # id(plugin) -> (plugin, its name, the hooks it implements).
        self._registered: dict[int, tuple[object, str, dict[pluggy.HookCaller, None]]] = {}
        self._custom_eq = 0  # registered plugins whose type defines __eq__
        self._stage: _Stage | None = None

    # -- what subclasses add ------------------------------------------------------------------

    def hook_defaults(self, spec_function: object) -> Mapping[str, object]:
        """Return the defaults of the arguments a call of this hook may leave out; none here."""
        return {}

    def hook_bounded(self, spec_function: object) -> bool:
        """Return whether the hook's implementations run within ``callback_bound``; no here."""
        return False

    def on_hookimpl_added(self, hook: pluggy.HookCaller, hookimpl: pluggy.HookImpl) -> None:
        """Called for each implementation after pluggy's checks, before it is added; no-op here."""

    # -- hook specs --------------------------------------------------------------------------

    def add_hookspecs(self, module_or_class: Any) -> None:
        """Add hook specifications, as pluggy does; every hook is a :class:`ContractHookCaller`."""
        for name in dir(module_or_class):
            if self.parse_hookspec_opts(module_or_class, name) is not None and not hasattr(
                self.hook, name
            ):
                # pluggy sets the spec on a caller it finds, rather than making its own.
                setattr(self.hook, name, ContractHookCaller(name, self))
        super().add_hookspecs(module_or_class)

    # -- registration -------------------------------------------------------------------------

    def register(self, plugin: object, name: str | None = None) -> str | None:
        """Register a plugin and return its name: pluggy's own ``register``.

        Every hook the plugin implements is a :class:`ContractHookCaller` (a hook without a spec
        too: :meth:`parse_hookimpl_opts`), so that each implementation passes
        :meth:`on_hookimpl_added` before it is added; the plugin's name and hooks go into an
        index (see :meth:`get_name`).
        """
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
            # Past pluggy's checks (a historic replay that raised): registered in part, so
            # kept in the index for unregister to undo.
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

    def parse_hookimpl_opts(self, plugin: object, name: str) -> pluggy.HookimplOpts | None:
        """pluggy's; and the hook an implementation names becomes a :class:`ContractHookCaller`.

        pluggy's ``register`` asks this of each attribute before it looks the hook up, so a hook
        without a spec gets our caller rather than pluggy's plain one.
        """
        opts = super().parse_hookimpl_opts(plugin, name)
        if opts is not None:
            hook_name = opts.get("specname") or name
            if getattr(self.hook, hook_name, None) is None:
                setattr(self.hook, hook_name, ContractHookCaller(hook_name, self))
        return opts

    def unregister(self, plugin: object | None = None, name: str | None = None) -> Any | None:
        """Unregister a plugin and all its implementations: pluggy's own ``unregister``."""
        removed = super().unregister(plugin, name)
        if removed is not None:
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

    def is_registered(self, plugin: object) -> bool:
        """Return whether the plugin is registered (as pluggy, without scanning every plugin).

        Found by identity in the index; an object whose type defines ``__eq__`` (or while one
        is registered) is looked up by ``==``, as pluggy does.
        """
        if self.get_name(plugin) is not None:
            return True
        if self._custom_eq or type(plugin).__eq__ is not object.__eq__:
            return super().is_registered(plugin)
        return False

    def get_name(self, plugin: object) -> str | None:
        """Return the name the plugin is registered under, or ``None`` (as pluggy)."""
        entry = self._registered.get(id(plugin))
        if entry is not None and entry[0] is plugin:
            return entry[1]
        if self._custom_eq or type(plugin).__eq__ is not object.__eq__:
            return super().get_name(plugin)
        return None

    def get_hookcallers(self, plugin: object) -> list[pluggy.HookCaller] | None:
        """Return the hooks the plugin implements, or ``None`` when it is not registered."""
        if self.get_name(plugin) is None:
            return None
        entry = self._registered.get(id(plugin))
        mine = entry[2] if entry is not None and entry[0] is plugin else {}
        if len(mine) <= 1:
            return list(mine)  # in pluggy's order (that of the relay's attributes) trivially
        return [caller for caller in vars(self.hook).values() if caller in mine]

    def _insert_hookimpl(self, hook: pluggy.HookCaller, hookimpl: pluggy.HookImpl) -> None:
        entry = self._registered.get(id(hookimpl.plugin))
        if entry is not None and entry[0] is hookimpl.plugin:
            entry[2][hook] = None
        stage = self._stage
        # In place otherwise: the one list.insert is a single step for a caller in another
        # thread, as in pluggy.
        insert_in_call_order(hook._hookimpls if stage is None else stage.working(hook), hookimpl)

    def _remove_hookimpls(self, hook: pluggy.HookCaller, plugin: object) -> None:
        stage = self._stage
        if stage is not None:
            stage.remove(hook, plugin)
            return
        remaining = [impl for impl in hook._hookimpls if impl.plugin is not plugin]
        if len(remaining) == len(hook._hookimpls):
            raise ValueError(f"plugin {plugin!r} not found")
        hook._hookimpls[:] = remaining

    @contextlib.contextmanager
    def staged(self) -> Iterator[None]:
        """Publish every change to the hooks' implementations made in the block at its end.

        A hook called meanwhile, from any thread, runs the implementations it had before the
        block; after it, those it has at the end; never a mix. Blocks nest: the outermost one
        publishes. Not thread-safe by itself: callers hold the manager's lock.
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
