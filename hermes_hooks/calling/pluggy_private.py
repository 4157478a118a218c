"""Every private name of pluggy that hermes-hooks uses, in one place, each with its reason.

pluggy's public API calls hooks, but it gives no way to run a hook's implementations other
than through its own loop, nor to see its list of implementations without a copy. The call
plans (:mod:`hermes_hooks.calling.plans`), the async runner (:mod:`hermes_hooks.calling.aio`)
and the guarded manager (:mod:`hermes_hooks.calling.guarded`) need both, so they reach into
pluggy here and nowhere else. ``tests/test_pluggy_private.py`` checks each name against the
installed pluggy and fails with a message naming it when pluggy changes it;
``docs/explanation/pluggy-internals.md`` explains each one.

The names, as of pluggy 1.7:

- ``pluggy._callers._raise_wrapfail(gen, msg)``: the ``RuntimeError`` a wrapper that does not
  yield, or yields twice, raises. Used so that our loops fail exactly as pluggy's does.
- ``pluggy._callers.run_old_style_hookwrapper(impl, hook_name, args, kwargs)``: pluggy's
  adapter of an old-style ``hookwrapper=True`` into a new-style one, so that its
  :class:`pluggy.Result` and its teardown warning are pluggy's own.
- ``HookCaller._hookimpls``: the live list of a hook's implementations.
  ``get_hookimpls()`` copies it, which costs more than the rest of a small hook call.
- ``PluginManager._hookexec(hook_name, methods, kwargs, firstresult)``: what every
  ``HookCaller`` calls; overridden to serve calls from call plans.
- ``PluginManager._inner_hookexec``: pluggy's loop, replaced by ``enable_tracing`` and
  ``add_hookcall_monitoring``; compared with the loop seen at start to know whether a call
  may skip it.
- ``PluginManager._verify_hook(hook, hookimpl)``: called for each implementation before
  pluggy adds it to its hook; overridden to guard it first, so that no other thread can call
  it unguarded.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping, Sequence
from typing import TYPE_CHECKING, Final, NoReturn

import pluggy
from pluggy._callers import _raise_wrapfail
from pluggy._callers import run_old_style_hookwrapper as _run_old_style

if TYPE_CHECKING:
    from hermes_hooks.calling.plans import CallPlan

__all__ = [
    "OVERRIDDEN_METHODS",
    "PRIVATE_ATTRIBUTES",
    "PluggySeams",
    "live_hookimpls",
    "raise_wrapfail",
    "run_old_style_hookwrapper",
]

PRIVATE_ATTRIBUTES: Final = ("HookCaller._hookimpls", "PluginManager._inner_hookexec")
"""The private attributes read (checked by ``tests/test_pluggy_private.py``)."""

OVERRIDDEN_METHODS: Final = ("_hookexec", "_verify_hook")
"""The private methods of ``pluggy.PluginManager`` that :class:`PluggySeams` overrides."""


def raise_wrapfail(wrapper: Generator[None, object, object], message: str) -> NoReturn:
    """Raise the ``RuntimeError`` pluggy raises for a wrapper that misbehaves.

    :param message: ``"did not yield"`` or ``"has second yield"``, as pluggy words them.
    """
    _raise_wrapfail(wrapper, message)


def run_old_style_hookwrapper(
    impl: pluggy.HookImpl,
    hook_name: str,
    args: Sequence[object],
    kwargs: Mapping[str, object] | None = None,
) -> Generator[None, object, object]:
    """Run an old-style ``hookwrapper=True`` implementation as a new-style wrapper, as pluggy does.

    :param args: the positional arguments of the implementation.
    :param kwargs: its keyword arguments, or ``None`` when it takes only positional ones.
    """
    return _run_old_style(impl, hook_name, args, kwargs)


def live_hookimpls(caller: pluggy.HookCaller) -> list[pluggy.HookImpl]:
    """Return the list of implementations pluggy holds for a hook: not a copy, never mutate it."""
    return caller._hookimpls


class PluggySeams(pluggy.PluginManager):
    """pluggy's manager with its private seams given names, and calls served by call plans.

    Every ``HookCaller`` calls the manager's ``_hookexec``; here it is the bound
    :meth:`run_hook_call`, assigned before any hook exists, so that a call costs no frame more
    than under pluggy. Each implementation passes :meth:`on_hookimpl_verified` after pluggy has
    checked it and before pluggy adds it to its hook.
    """

    def __init__(self, project_name: str) -> None:
        super().__init__(project_name)
        self._plans: dict[str, CallPlan] = {}
        # pluggy's own loop, told apart from the wrapper tracing or monitoring puts on it.
        self._pluggy_loop = self._inner_hookexec
        # HookCallers keep the manager's _hookexec when they are made: none exists yet.
        self._hookexec = self.run_hook_call  # type: ignore[method-assign]

    def run_hook_call(
        self,
        hook_name: str,
        methods: Sequence[pluggy.HookImpl],
        kwargs: Mapping[str, object],
        firstresult: bool,
    ) -> object | list[object]:
        """Run one hook call: by the hook's call plan when one serves it, else by pluggy's loop.

        Every ``HookCaller`` calls this (``pm.hook.X(...)``, ``call_historic``, ``call_extra``).
        The plan serves the hook's own list of implementations (wrappers included) when no
        tracing or monitoring is on; it gives what pluggy's loop gives (see
        :mod:`hermes_hooks.calling.plans`).
        """
        if self._inner_hookexec is self._pluggy_loop:  # is_untraced(), inlined: every call
            plan = self._plans.get(hook_name)
            if plan is None or plan.impls != methods:  # plan.serves(methods), inlined
                plan = self._make_plan(hook_name, methods)
            if plan is not None and plan.firstresult is firstresult:
                if plan.is_fast:
                    return plan.call(kwargs)
                if plan.is_planned:
                    return plan.call_wrapped(hook_name, kwargs)
        return self._inner_hookexec(hook_name, methods, kwargs, firstresult)

    def _make_plan(self, hook_name: str, impls: Sequence[pluggy.HookImpl]) -> CallPlan | None:
        """Make and keep the plan of hook ``hook_name``, if ``impls`` are all its implementations.

        Any other list (a subset caller's, ``call_extra``'s, a historic replay's) runs through
        pluggy's loop, and the hook's plan is kept for its next ordinary call.
        """
        from hermes_hooks.calling.plans import CallPlan  # plans imports this module

        caller = getattr(self.hook, hook_name, None)
        if not isinstance(caller, pluggy.HookCaller) or caller._hookimpls != list(impls):
            return None
        spec = caller.spec
        plan = CallPlan(impls, firstresult=bool(spec is not None and spec.opts.get("firstresult")))
        self._plans[hook_name] = plan
        return plan

    def run_pluggy_loop(
        self,
        hook_name: str,
        methods: Sequence[pluggy.HookImpl],
        kwargs: Mapping[str, object],
        firstresult: bool,
    ) -> object | list[object]:
        """Run one hook call through pluggy's loop, with tracing and monitoring if they are on."""
        return self._inner_hookexec(hook_name, methods, kwargs, firstresult)

    def is_untraced(self) -> bool:
        """Return whether neither tracing nor call monitoring has wrapped pluggy's loop."""
        return self._inner_hookexec is self._pluggy_loop

    def _verify_hook(self, hook: pluggy.HookCaller, hookimpl: pluggy.HookImpl) -> None:
        super()._verify_hook(hook, hookimpl)
        self.on_hookimpl_verified(hook, hookimpl)

    def on_hookimpl_verified(self, hook: pluggy.HookCaller, hookimpl: pluggy.HookImpl) -> None:
        """Called for an implementation of a hook with a spec, before it is added; no-op here."""
