"""Every private name of pluggy that hermes-hooks still uses, in one place, each with its reason.

Every hook call runs through pluggy's own hook caller and loop; nothing here replaces or
copies it. What is left is registration: pluggy's ``register``/``unregister`` grow with
everything registered before (a scan of the hook's implementations per insertion, of every
plugin per look-up), give no way to guard an implementation before another thread can call
it, and publish a reload one implementation at a time. The guarded manager
(:mod:`hermes_hooks.calling.guarded`) needs those, so it reaches into pluggy here and nowhere
else. ``tests/test_pluggy_private.py`` checks each name against the installed pluggy and fails
with a message naming it when pluggy changes it; ``docs/explanation/pluggy-internals.md``
explains each one.

The names, as of pluggy 1.7:

- ``HookCaller._hookimpls``: the live list of a hook's implementations, which registration
  inserts into and a staged reload replaces with one slice assignment.
- ``HookCaller._hookexec``, ``HookCaller._call_history``, ``HookCaller._maybe_apply_history``,
  ``HookCaller._apply_defaults``, ``HookCaller._add_hookimpl``, ``HookCaller._remove_plugin``:
  what :class:`ContractHookCaller` builds on or overrides (it fills the arguments a host
  leaves out from the hook's contract, and adds and removes implementations in one step);
  its ``__call__`` hands the call to ``_hookexec`` exactly as pluggy's does.
- ``PluginManager._hookexec``: given to each :class:`ContractHookCaller`, as pluggy gives it
  to its own (never replaced: tracing and monitoring wrap pluggy's loop as usual).
- ``PluginManager._verify_hook(hook, hookimpl)``: pluggy's check of an implementation against
  its spec, called by our ``register`` as by pluggy's.
- ``PluginManager._name2plugin``: pluggy's registry of names, which ``get_plugin``,
  ``is_blocked`` and the others read; our ``register``/``unregister`` keep it as pluggy's do.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator, Mapping
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
    "HookCaller._call_history",
    "PluginManager._hookexec",
    "PluginManager._name2plugin",
)
"""The private attributes read or written (checked by ``tests/test_pluggy_private.py``)."""

OVERRIDDEN_METHODS: Final[tuple[str, ...]] = ()
"""The private methods of ``pluggy.PluginManager`` that :class:`PluggySeams` overrides: none."""

CALLED_METHODS: Final = ("PluginManager._verify_hook", "HookCaller._maybe_apply_history")
"""The private methods of pluggy that are called as pluggy calls them."""

CALLER_OVERRIDES: Final = ("_apply_defaults", "_add_hookimpl", "_remove_plugin")
"""The private methods of ``pluggy.HookCaller`` that :class:`ContractHookCaller` overrides."""

_HISTORIC: Final = "Cannot directly call a historic hook - use call_historic instead."

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
        assert self._call_history is None, _HISTORIC
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

    def _apply_defaults(self, kwargs: Mapping[str, object]) -> Mapping[str, object]:
        # call_historic and call_extra: the caller's own mapping is never changed.
        kwargs = super()._apply_defaults(kwargs)
        if any(name not in kwargs for name, _, _ in self._fill):
            filled = dict(kwargs)
            self._complete(filled)
            return filled
        return kwargs

    def _add_hookimpl(self, hookimpl: pluggy.HookImpl) -> None:
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
        """Register a plugin and return its name, exactly as pluggy 1.7's ``register`` does.

        Every implementation is checked before anything changes; an implementation of a hook
        with a spec passes pluggy's ``_verify_hook``, each then :meth:`on_hookimpl_added`.
        """
        if plugin is None:
            return None  # as pluggy (its #731, #749)
        plugin_name = name or self.get_canonical_name(plugin)
        names = self._name2plugin
        if plugin_name in names:
            if names.get(plugin_name, -1) is None:
                return None  # a blocked name
            raise ValueError(f"Plugin name already registered: {plugin_name}={plugin}\n{names}")
        if self._is_registered_object(plugin):
            raise ValueError(
                f"Plugin already registered under a different name: {plugin_name}={plugin}\n{names}"
            )
        hookimpls: list[tuple[str, pluggy.HookImpl, bool]] = []
        for attr_name in dir(plugin):
            opts = self.parse_hookimpl_opts(plugin, attr_name)
            if opts is None:
                continue
            for key, default in _IMPL_DEFAULTS:
                opts.setdefault(key, default)  # type: ignore[misc]
            method = getattr(plugin, attr_name)
            hookimpl = pluggy.HookImpl(plugin, plugin_name, method, opts)
            hook_name = opts.get("specname") or attr_name
            hook = getattr(self.hook, hook_name, None)
            verified = False
            if hook is not None and hook.has_spec():
                self._verify_hook(hook, hookimpl)
                verified = True
            hookimpls.append((hook_name, hookimpl, verified))
        names[plugin_name] = plugin
        hooks: dict[pluggy.HookCaller, None] = {}
        self._registered[id(plugin)] = (plugin, plugin_name, hooks)
        if type(plugin).__eq__ is not object.__eq__:
            self._custom_eq += 1
        for hook_name, hookimpl, verified in hookimpls:
            hook = getattr(self.hook, hook_name, None)
            if hook is None:
                hook = ContractHookCaller(hook_name, self)
                setattr(self.hook, hook_name, hook)
            elif not verified and hook.has_spec():
                self._verify_hook(hook, hookimpl)  # a historic replay added the spec meanwhile
            self.on_hookimpl_added(hook, hookimpl)
            hook._maybe_apply_history(hookimpl)
            hook._add_hookimpl(hookimpl)
        return plugin_name

    def unregister(self, plugin: object | None = None, name: str | None = None) -> Any | None:
        """Unregister a plugin and all its implementations, exactly as pluggy does.

        Returns the unregistered plugin, or ``None`` when there was none.
        """
        if name is None:
            assert plugin is not None, "one of name or plugin needs to be specified"
            name = self.get_name(plugin)
            assert name is not None, "plugin is not registered"
        if plugin is None:
            plugin = self.get_plugin(name)
            if plugin is None:
                return None
        else:
            registered_plugin = self._name2plugin.get(name)
            registered_name = self.get_name(plugin)
            if (registered_plugin is not None and registered_plugin is not plugin) or (
                registered_name is not None and registered_name != name
            ):
                raise ValueError(
                    f"Plugin name {name!r} and plugin {plugin!r} do not agree"
                    f" (name is registered to {registered_plugin!r},"
                    f" plugin is registered as {registered_name!r})"
                )
        # The object registered under that name (pluggy finds it by ==, then by identity).
        registered = self._name2plugin.get(name)
        target = registered if registered is not None else plugin
        entry = self._registered.pop(id(target), None)
        if entry is not None:
            for hook in entry[2]:
                hook._remove_plugin(target)
            if type(target).__eq__ is not object.__eq__:
                self._custom_eq -= 1
        if self._name2plugin.get(name) is not None:
            del self._name2plugin[name]
        return plugin

    def _is_registered_object(self, plugin: object) -> bool:
        """``plugin in self._name2plugin.values()``, by identity where that gives the same."""
        entry = self._registered.get(id(plugin))
        if entry is not None and entry[0] is plugin:
            return True
        if self._custom_eq or type(plugin).__eq__ is not object.__eq__:
            return plugin in self._name2plugin.values()
        return False

    def is_registered(self, plugin: object) -> bool:
        """Return whether the plugin is registered (as pluggy, without scanning every plugin)."""
        return self._is_registered_object(plugin)

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


_IMPL_DEFAULTS: Final[tuple[tuple[str, object], ...]] = (
    ("tryfirst", False),
    ("trylast", False),
    ("wrapper", False),
    ("hookwrapper", False),
    ("optionalhook", False),
    ("specname", None),
)
"""pluggy's ``normalize_hookimpl_opts``: what an option left out of ``@hookimpl`` means."""
