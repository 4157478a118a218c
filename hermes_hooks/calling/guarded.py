"""``GuardedManager``: a pluggy manager whose every implementation runs under its hook's contract.

Each implementation is guarded (:mod:`hermes_hooks.calling.guards`) before pluggy adds it; calls
run through pluggy's own loop; failures are counted per plugin and logged once each. The plugin
manager (:class:`hermes_hooks.plugins.manager.PluginManager`) adds discovery and loading.
"""

from __future__ import annotations

import collections
import difflib
import logging
import threading
from collections.abc import Callable, Mapping
from logging import DEBUG
from typing import Any, Final, Protocol

import attrs
import pluggy

from hermes_hooks.calling.guards import guard_hookimpl
from hermes_hooks.calling.handoff import CallObserver
from hermes_hooks.calling.pluggy_private import PluggySeams
from hermes_hooks.calling.results import ResultLimit
from hermes_hooks.calling.tracebacks import hide_in_pytest, trimmed
from hermes_hooks.errors import HookTimeoutError
from hermes_hooks.spec.contract import HookContract, get_contract

__tracebackhide__ = hide_in_pytest  # a plugin's failure: pytest leaves these frames out

__all__ = ["FailureCount", "FailureSlot", "GuardedManager"]

logger = logging.getLogger("hermes_hooks")

_MAX_LOGGED_FAILURES: Final = 1024
"""Distinct failures remembered (to log each once), and plugins counted without a record."""
_MAX_MESSAGE_CHARS: Final = 1000


def clip(message: str) -> str:
    """Bound a failure message kept on a status: a plugin's exception text can be any size."""
    if len(message) <= _MAX_MESSAGE_CHARS:
        return message
    return message[:_MAX_MESSAGE_CHARS] + "… [truncated]"


@attrs.frozen
class FailureCount:
    """How often a plugin's code failed (hooks, tool and command handlers), and the last time."""

    count: int = 0
    last: str | None = None


# What invoke_hook fills in for one hook: its caller, the impls seen, the names, firstresult.
_InvokeFill = tuple[pluggy.HookCaller, list[pluggy.HookImpl], tuple[str, ...], bool]


class FailureSlot(Protocol):
    """Where the failures of one plugin are counted (the plugin manager's status record)."""

    hook_errors: int
    last_hook_error: str | None
    hook_timeouts: int


class GuardedManager(PluggySeams):
    """A ``pluggy.PluginManager`` that guards every implementation by its hook's contract.

    :param project_name: pluggy's project name (the hookimpl marker's).
    :param strict: re-raise an implementation's failure instead of isolating it.
    """

    def __init__(self, project_name: str, *, strict: bool = False) -> None:
        super().__init__(project_name)
        self.strict = strict
        #: ``plugins.max_hook_result_bytes``, as every guard of this manager reads it.
        self.result_limit = ResultLimit()
        self._invoke_fill: dict[str, _InvokeFill] = {}
        self._contracts: dict[str, tuple[HookContract, bool]] = {}
        #: Every guard holds this list and tells what is in it of each call (none: no cost).
        self.call_observers: list[CallObserver] = []
        self._lock = threading.RLock()
        self._failures_lock = threading.Lock()
        self._logged_failures: collections.OrderedDict[tuple[str, str, str], None] = (
            collections.OrderedDict()
        )
        self._other_failures: collections.OrderedDict[str, FailureCount] = collections.OrderedDict()

    def add_hookspecs(self, module_or_class: Any) -> None:
        """Add hookspecs (as pluggy does) and remember each one's contract."""
        super().add_hookspecs(module_or_class)
        self._contracts.clear()

    def get_hook_contract(self, name: str) -> HookContract:
        """Return the contract of hook ``name`` (observe/open for unknown hooks)."""
        return self._contract_of(name)[0]

    def _contract_of(self, name: str) -> tuple[HookContract, bool]:
        cached = self._contracts.get(name)
        if cached is None:
            caller = getattr(self.hook, name, None)
            spec = caller.spec if caller is not None else None
            if spec is None:
                cached = (get_contract(None), False)
            else:
                cached = (get_contract(spec.function), bool(spec.opts.get("firstresult")))
            if spec is not None:
                self._contracts[name] = cached
        return cached

    def hook_argnames(self, name: str) -> tuple[str, ...] | None:
        """Return the argument names of hook ``name``, or ``None`` for an unknown hook."""
        caller = getattr(self.hook, name, None)
        if caller is None or caller.spec is None:
            return None
        return tuple(caller.spec.argnames)

    def known_hooks(self) -> list[str]:
        """Return the names of every hook with a spec, sorted."""
        return sorted(
            name
            for name, caller in vars(self.hook).items()
            if isinstance(caller, pluggy.HookCaller) and caller.spec is not None
        )

    def register(self, plugin: object, name: str | None = None) -> str | None:
        """Register a plugin (pluggy's ``register``), guarding each implementation.

        Its implementations become callable together: a call meanwhile runs none or all of them.
        """
        with self._lock, self.staged():
            before = self.is_registered(plugin)
            try:
                return super().register(plugin, name)
            except BaseException:
                # Past pluggy's checks (a historic replay that raised, say): leave nothing.
                if not before and self.is_registered(plugin):
                    self.unregister(plugin)
                raise

    def unregister(self, plugin: object | None = None, name: str | None = None) -> Any | None:
        """Unregister a plugin and its hookimpls, as pluggy does."""
        with self._lock:
            return super().unregister(plugin, name)

    def hook_defaults(self, spec_function: object) -> Mapping[str, object]:
        """Return the defaults the hook's contract declares for the arguments a call omits."""
        return get_contract(spec_function).defaults

    def hook_bounded(self, spec_function: object) -> bool:
        """Return whether the hook's contract bounds its implementations (``timeout=True``)."""
        return get_contract(spec_function).timeout

    def on_hookimpl_added(self, hook: pluggy.HookCaller, hookimpl: pluggy.HookImpl) -> None:
        """Guard an implementation before it is added, so no thread ever runs it unguarded."""
        self._guard(hookimpl, hook.name)
        if hook.spec is None:
            self._warn_unknown_hook(hookimpl.plugin_name, hook.name)

    def _guard(self, impl: pluggy.HookImpl, hook_name: str) -> None:
        contract, firstresult = self._contract_of(hook_name)
        guard_hookimpl(
            impl,
            hook_name,
            contract,
            self._report_failure,
            strict=self.strict,
            firstresult=firstresult,
            setting=self.callback_bound,
            limit=self.result_limit,
            observers=self.call_observers,
        )

    def add_call_observer(self, observer: CallObserver) -> Callable[[], None]:
        """Tell ``observer(hook, plugin_key, seconds, outcome)`` of each plain implementation call.

        ``outcome`` is ``"ok"``, ``"error"`` (raised, or its result refused) or ``"timeout"``;
        what an observer raises is logged, never felt. Returns the undo (no arguments).
        """
        with self._lock:
            self.call_observers.append(observer)

        def undo() -> None:
            with self._lock:
                if observer in self.call_observers:
                    self.call_observers.remove(observer)

        return undo

    def _warn_unknown_hook(self, plugin_key: str, hook_name: str) -> None:
        close = difflib.get_close_matches(hook_name, self.known_hooks(), n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
        message = f"implements unknown hook {hook_name!r} (kept for newer hosts){hint}"
        self._note_unknown_hook(plugin_key, hook_name, message)

    def _note_unknown_hook(self, plugin_key: str, hook_name: str, message: str) -> None:
        """Record that a plugin implements a hook without a spec; logged here."""
        logger.warning("plugin %r %s", plugin_key, message)

    def _failure_slot(self, plugin_key: str) -> FailureSlot | None:
        """Return where plugin ``plugin_key``'s failures are counted, or ``None`` (kept here)."""
        return None

    def _report_failure(
        self, plugin_key: str, hook_name: str, message: str, exc: BaseException | None
    ) -> None:
        message = clip(message)
        self.count_failure(plugin_key, hook_name, message)
        if isinstance(exc, HookTimeoutError):
            with self._failures_lock:
                slot = self._failure_slot(plugin_key)
                if slot is not None:
                    slot.hook_timeouts += 1
        fingerprint = (plugin_key, hook_name, message)
        with self._failures_lock:
            if fingerprint in self._logged_failures:
                return
            # Bounded: messages that vary (ids, timestamps) must not grow it without end.
            self._logged_failures[fingerprint] = None
            if len(self._logged_failures) > _MAX_LOGGED_FAILURES:
                self._logged_failures.popitem(last=False)
        logger.warning(
            "plugin %r failed in hook %r: %s",
            plugin_key,
            hook_name,
            message,
            exc_info=trimmed(exc) if exc is not None and logger.isEnabledFor(DEBUG) else None,
        )

    def count_failure(self, plugin_key: str, where: str, message: str) -> None:
        """Count one failure of plugin ``plugin_key``'s code, without logging it.

        :param where: the hook, or ``tool 'name'`` / ``command '/name'`` for a handler.
        """
        last = f"{where}: {clip(message)}"
        with self._failures_lock:
            slot = self._failure_slot(plugin_key)
            if slot is not None:
                slot.hook_errors += 1
                slot.last_hook_error = last
                return
            count = self._other_failures.pop(plugin_key, FailureCount()).count
            self._other_failures[plugin_key] = FailureCount(count + 1, last)
            if len(self._other_failures) > _MAX_LOGGED_FAILURES:
                self._other_failures.popitem(last=False)

    def get_failures(self, name: str) -> FailureCount:
        """Return how often plugin ``name``'s code failed (discovered or registered directly)."""
        with self._failures_lock:
            slot = self._failure_slot(name)
            if slot is not None:
                return FailureCount(slot.hook_errors, slot.last_hook_error)
            return self._other_failures.get(name, FailureCount())

    def has_hook(self, name: str) -> bool:
        """Return whether any implementation of hook ``name`` is registered."""
        caller = getattr(self.hook, name, None)
        return isinstance(caller, pluggy.HookCaller) and bool(caller.get_hookimpls())

    def invoke_hook(self, name: str, **kwargs: Any) -> list[Any]:
        """Call hook ``name`` as Hermes does and return the non-``None`` results.

        Arguments left out take their contract's default, else ``None``; an unknown hook or one
        with no implementations returns ``[]``.
        """
        fill = self._invoke_fill.get(name)
        if fill is None or fill[1] != fill[0].get_hookimpls():
            fill = self._make_invoke_fill(name)
            if fill is None:
                return []
        caller, impls, names, firstresult = fill
        if not impls:
            return []
        for argname in names:
            if argname not in kwargs:
                kwargs[argname] = None  # kwargs is this call's own dict
        result = caller(**kwargs)
        if firstresult:
            return [] if result is None else [result]
        return [r for r in result if r is not None]

    def _make_invoke_fill(self, name: str) -> _InvokeFill | None:
        """What :meth:`invoke_hook` fills in for hook ``name``, kept while its impls stay."""
        caller = getattr(self.hook, name, None)
        if not isinstance(caller, pluggy.HookCaller):
            return None
        impls = caller.get_hookimpls()
        # pluggy needs every argument an impl names; those with a contract default get it from
        # the hook caller.
        defaults = self.hook_defaults(caller.spec.function) if caller.spec is not None else {}
        names: dict[str, None] = {}
        for argname in caller.spec.argnames if caller.spec is not None else ():
            if argname not in defaults:
                names[argname] = None
        for impl in impls:
            for argname in impl.argnames:
                if argname not in defaults:
                    names[argname] = None
        fill = (caller, impls, tuple(names), self._contract_of(name)[1])
        self._invoke_fill[name] = fill
        return fill
